//! `fpcheck ack --dir`: section 7's clearing with the installed runtime
//! known (its fingerprint, else its version, proves the process current),
//! and fpcheck's refusals of a process shown to run other code.

use serde_json::{json, Value};

use super::{host_with_marker, release_a, Host, BASE_FP, MARKER, V2_FP};
use crate::support::Run;

/// A marker as the reference writes it when it had no fingerprint to
/// record: no `to_fingerprint`, codex still to restart.
const NO_TO: &str = "{\"required\": true, \"clients\": {\"codex\": \"restart_session_required\"}}";

/// `ack --dir app/src --json` for codex with `extra` flags.
fn ack(h: &Host, extra: &[&str]) -> Run {
    let mut args = vec![
        "ack", "--marker", MARKER, "--client", "codex", "--dir", "app/src", "--json",
    ];
    args.extend_from_slice(extra);
    h.fpcheck(&args)
}

fn host_with_no_to_marker() -> Host {
    let h = Host::new();
    h.install(&release_a());
    h.write(MARKER, NO_TO);
    h
}

fn outcome(run: &Run) -> (i32, Value, Value) {
    let j = run.json();
    (run.code, j["action"].clone(), j["because"].clone())
}

#[test]
fn the_installed_fingerprint_proves_the_process_current_without_to_fingerprint() {
    let h = host_with_no_to_marker();
    let run = ack(&h, &["--process-fingerprint", BASE_FP]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json(),
        json!({
            "schema_version": 1,
            "marker": MARKER,
            "client": "codex",
            "action": "removed",
            "marker_removed": true,
            "clients": {"codex": "ok"},
            "because": null,
            "pending_reason": null,
            "installed_fingerprint": BASE_FP,
            "installed_version": "1.0.0",
            "warnings": [],
            "warning_codes": [],
        })
    );
    assert!(h.marker().is_none());
}

#[test]
fn a_process_running_other_code_than_installed_is_refused() {
    let h = host_with_no_to_marker();
    let before = h.marker_bytes();
    // Its version agrees, but the fingerprints are usable and differ.
    let run = ack(
        &h,
        &["--process-fingerprint", V2_FP, "--process-version", "1.0.0"],
    );
    assert_eq!(
        outcome(&run),
        (
            1,
            json!("refused"),
            json!(format!(
                "the process fingerprint {V2_FP} is not the installed runtime's {BASE_FP}: \
                 this client runs other code than is installed; restart it"
            ))
        )
    );
    assert_eq!(h.marker_bytes(), before);
}

#[test]
fn without_usable_fingerprints_the_versions_decide() {
    let h = host_with_no_to_marker();
    let before = h.marker_bytes();
    let run = ack(
        &h,
        &[
            "--process-fingerprint",
            "unknown",
            "--process-version",
            "0.9.0",
        ],
    );
    assert_eq!(
        outcome(&run),
        (
            1,
            json!("refused"),
            json!(
                "the process version 0.9.0 is not the installed version 1.0.0: \
                 this client runs another release than is installed; restart it"
            )
        )
    );
    assert_eq!(h.marker_bytes(), before);
    // No version given: nothing proves it (the reference would clear).
    let run = ack(&h, &["--process-fingerprint", "unknown"]);
    assert_eq!(
        outcome(&run),
        (
            0,
            json!("acknowledged"),
            json!(
                "the marker has no to_fingerprint, and neither the fingerprints nor the versions \
                 show that the process runs the installed release"
            )
        )
    );
    assert_eq!(h.marker().unwrap()["clients"], json!({"codex": "ok"}));
    h.write(MARKER, NO_TO);
    let run = ack(&h, &["--process-version", " 1.0.0 "]);
    assert_eq!(outcome(&run), (0, json!("removed"), Value::Null));
    assert!(h.marker().is_none());
}

#[test]
fn a_gate_marker_is_cleared_by_the_installed_and_marker_fingerprints() {
    let h = host_with_marker();
    // codex first: desktop still pending.
    let run = ack(
        &h,
        &["--process-fingerprint", V2_FP, "--process-version", "1.1.0"],
    );
    let j = run.json();
    assert_eq!(
        (
            &j["action"],
            &j["installed_fingerprint"],
            &j["installed_version"]
        ),
        (&json!("acknowledged"), &json!(V2_FP), &json!("1.1.0"))
    );
    // The old code is refused, whatever the version says.
    let desktop = |fp: &str| {
        h.fpcheck(&[
            "ack",
            "--marker",
            MARKER,
            "--client",
            "desktop",
            "--dir",
            "app/src",
            "--process-fingerprint",
            fp,
            "--process-version",
            "1.1.0",
            "--json",
        ])
    };
    let run = desktop(BASE_FP);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(outcome(&run).1, json!("refused"));
    let run = desktop(V2_FP);
    assert_eq!(outcome(&run), (0, json!("removed"), Value::Null));
    assert!(h.marker().is_none());
}

#[test]
fn an_unavailable_installed_fingerprint_proves_nothing() {
    let h = host_with_no_to_marker();
    // The runtime root is a FIFO now: its fingerprint is unavailable (""),
    // never waited on.
    std::fs::remove_dir_all(h.join("app/src")).unwrap();
    crate::support::mkfifo(&h.join("app/src"), 0o600);
    let run = ack(&h, &["--process-fingerprint", BASE_FP]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (
            &j["action"],
            &j["installed_fingerprint"],
            &j["installed_version"]
        ),
        (&json!("acknowledged"), &json!(""), &json!(""))
    );
    assert_eq!(h.marker().unwrap()["clients"], json!({"codex": "ok"}));
}

/// `--dir` names nothing: the ack answers as section 7's clearing allows
/// (the marker's `to_fingerprint` still proves the process current), and
/// says the installed runtime proved nothing, `installed_unavailable`, in
/// JSON and in text.
#[test]
fn ack_says_when_the_installed_runtime_is_unavailable() {
    let h = Host::new();
    h.install(&release_a());
    let with_to = format!(
        "{{\"required\": true, \"to_fingerprint\": \"{BASE_FP}\", \"clients\": {{\"codex\": \"restart_session_required\"}}}}"
    );
    let args = |json: bool| {
        let mut a = vec![
            "ack",
            "--marker",
            MARKER,
            "--client",
            "codex",
            "--dir",
            "gone/src",
            "--process-fingerprint",
            BASE_FP,
        ];
        if json {
            a.push("--json");
        }
        a
    };
    h.write(MARKER, &with_to);
    let run = h.fpcheck(&args(true));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["action"], &j["installed_fingerprint"]),
        (&json!("removed"), &json!(""))
    );
    assert_eq!(j["warning_codes"], json!(["installed_unavailable"]), "{j}");
    let message = j["warnings"][0].as_str().unwrap();
    assert!(
        message.starts_with(
            "the installed runtime's fingerprint is unavailable (gone/src does not exist)"
        ),
        "{message}"
    );
    assert!(run.stderr.contains(message), "{}", run.stderr);

    h.write(MARKER, &with_to);
    let text = h.fpcheck(&args(false));
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert_eq!(
        text.stdout,
        format!(
            "codex acknowledged; marker removed\n  warning    installed_unavailable: {message}\n"
        )
    );
}

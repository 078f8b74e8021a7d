//! `ack` and the marker's format: the clearing rules, and markers the
//! reference writes and reads.

use super::*;

#[test]
fn ack_clears_the_marker_only_when_every_client_proved_the_new_code() {
    let h = host_with_marker();
    let ack = |client: &str, fp: Option<&str>| {
        let mut args = vec!["ack", "--marker", MARKER, "--client", client, "--json"];
        if let Some(fp) = fp {
            args.extend(["--process-fingerprint", fp]);
        }
        h.fpcheck(&args)
    };

    // Without proof: marked, kept.
    let run = ack("codex", None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.json(),
        json!({
            "schema_version": 1,
            "marker": MARKER,
            "client": "codex",
            "action": "acknowledged",
            "marker_removed": false,
            "clients": {"claude_desktop": "restart_client_required", "codex": "ok"},
            "because": "clients still to restart: claude_desktop",
            "pending_reason": null,
            "installed_fingerprint": null,
            "installed_version": null,
            "warnings": [],
            "warning_codes": [],
        })
    );
    assert_eq!(
        h.marker().unwrap()["clients"],
        json!({"claude_desktop": "restart_client_required", "codex": "ok"})
    );
    // codex runs on; the desktop client still restarts.
    let s = h.status(V2_FP, "1.1.0", &["--client", "codex"]).json();
    assert_eq!(s["restart_required"], false);
    let s = h
        .status(V2_FP, "1.1.0", &["--client", "claude_desktop"])
        .json();
    assert_eq!(
        (&s["restart_required"], &s["reason"]),
        (&json!(true), &json!("marker_required"))
    );

    // The old code: refused, nothing changes.
    let before = h.marker_bytes();
    let run = ack("claude-desktop", Some(BASE_FP));
    assert_eq!(run.code, 1);
    let j = run.json();
    assert_eq!(j["action"], "refused");
    assert_eq!(
        j["because"],
        format!("the process fingerprint {BASE_FP} is not the marker's to_fingerprint {V2_FP}: this client has not loaded the release the marker asks for; restart it")
    );
    assert_eq!(h.marker_bytes(), before);

    // "unknown" proves nothing: marked, kept.
    let j = ack("claude-desktop", Some("unknown")).json();
    assert_eq!(
        (&j["action"], &j["marker_removed"]),
        (&json!("acknowledged"), &json!(false))
    );
    assert_eq!(
        j["because"],
        "the process has not proven it loaded the marker's to_fingerprint (pass --process-fingerprint)"
    );
    assert!(h.marker().is_some());

    // The last client with proof: removed.
    let run = ack("claude-desktop", Some(V2_FP));
    assert_eq!(run.code, 0);
    let j = run.json();
    assert_eq!(
        (&j["action"], &j["marker_removed"]),
        (&json!("removed"), &json!(true))
    );
    assert!(!h.join(MARKER).exists());

    // No marker: nothing to do.
    let run = ack("claude-desktop", Some(V2_FP));
    assert_eq!((run.code, &run.json()["action"]), (0, &json!("no_marker")));

    // A name that is no known client acknowledges nobody: a usage error.
    h.write(MARKER, "{\"required\": true}");
    let run = ack("desk", Some(V2_FP));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("\"desk\" is not a known client"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read(h.join(MARKER)).unwrap(),
        b"{\"required\": true}"
    );

    // A corrupt marker is left alone.
    h.write(MARKER, "{oops");
    let run = ack("claude-desktop", Some(V2_FP));
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.starts_with(&format!(
            "fpcheck: error: the marker {MARKER} is not valid JSON"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(h.join(MARKER)).unwrap(), b"{oops");
}

#[test]
fn a_marker_without_to_fingerprint_is_never_cleared_by_ack() {
    let h = Host::new();
    h.write(
        MARKER,
        "{\"required\": true, \"clients\": {\"codex\": \"restart\"}}",
    );
    let run = h.fpcheck(&[
        "ack",
        "--marker",
        MARKER,
        "--client",
        "codex",
        "--process-fingerprint",
        V2_FP,
    ]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "codex acknowledged; marker kept: the marker has no to_fingerprint, so no process can prove it loaded the release (pass the installed runtime and the process's fingerprint or version)\n"
    );
    assert_eq!(
        h.marker().unwrap(),
        json!({"required": true, "clients": {"codex": "ok"}})
    );
}

#[test]
fn markers_the_reference_writes_are_read_and_kept_whole() {
    let h = Host::new();
    h.install(&release_a());
    // What the Python gate writes: json.dump, compact, maybe more keys.
    let script = format!(
        "import json\nm = {{'schema_version': 3, 'required': True, 'from_version': '0.9.0', 'to_version': '1.0.0', 'from_fingerprint': '', 'to_fingerprint': '{BASE_FP}', 'reason': 'brain_update_force', 'updated_at': '2026-04-27T10:00:00Z', 'clients': {{'claude_code': 'ok', 'codex': 'restart'}}, 'pid': 4242}}\njson.dump(m, open('{MARKER}', 'w'))\n"
    );
    python(&h, &script);
    let s = h
        .status(BASE_FP, "1.0.0", &["--client", "claude_code"])
        .json();
    assert_eq!(
        (&s["restart_required"], &s["client_action"]),
        (&json!(false), &json!("ok"))
    );
    let s = h.status(BASE_FP, "1.0.0", &["--client", "codex"]).json();
    assert_eq!(
        (&s["restart_required"], &s["reason"]),
        (&json!(true), &json!("marker_required"))
    );
    // ack keeps what it does not know about.
    let run = h.fpcheck(&["ack", "--marker", MARKER, "--client", "codex"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let m = h.marker().unwrap();
    assert_eq!(m["pid"], 4242);
    assert_eq!(m["reason"], "brain_update_force");
    assert_eq!(m["clients"], json!({"claude_code": "ok", "codex": "ok"}));
}

#[test]
fn markers_fpcheck_writes_parse_as_the_reference_expects() {
    let h = host_with_marker();
    // The reference reads the marker with json.load and these types.
    let script = format!(
        r#"import json, re
m = json.load(open('{MARKER}'))
assert type(m) is dict
assert type(m['schema_version']) is int and m['schema_version'] == 3
assert m['required'] is True
for k in ('from_version', 'to_version', 'from_fingerprint', 'to_fingerprint', 'reason', 'updated_at'):
    assert type(m[k]) is str, k
assert re.fullmatch(r'\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ', m['updated_at'])
assert m['reason'] in ('brain_update', 'brain_update_force')
assert m['clients'] == {{'claude_desktop': 'restart_client_required', 'codex': 'restart_session_required'}}
assert m['to_fingerprint'] == '{V2_FP}' and m['from_fingerprint'] == '{BASE_FP}'
# Byte for byte what the reference's writer produces for the same payload.
raw = open('{MARKER}', encoding='utf-8').read()
assert raw == json.dumps(m, indent=2, ensure_ascii=False) + '\n', raw
print('ok')
"#
    );
    assert_eq!(python(&h, &script), "ok\n");
}

fn python(h: &Host, script: &str) -> String {
    let out = Command::new("python3")
        .current_dir(h.path())
        .args(["-c", script])
        .output()
        .expect("python3 runs (the CI script installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

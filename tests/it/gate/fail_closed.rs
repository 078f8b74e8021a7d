//! Inputs that cannot be trusted (an unreadable or foreign snapshot, an
//! unreadable runtime, an unusable marker directory, other settings):
//! the gate fails closed.

use super::*;

#[test]
fn an_unreadable_or_foreign_snapshot_asks_for_a_restart() {
    let h = host_at_a();
    let good = std::fs::read_to_string(h.join(BEFORE)).unwrap();
    h.install(&bumped()); // docs-only: with a good snapshot, no marker
                          // (what the snapshot is, how to make it so, the error it gives)
    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>, String);
    let cases: Vec<Case> = vec![
        (
            "missing",
            Box::new(|| {
                let _ = std::fs::remove_file(h.join(BEFORE));
            }),
            format!("cannot read the snapshot {BEFORE}: does not exist"),
        ),
        (
            "a directory",
            Box::new(|| {
                let _ = std::fs::remove_file(h.join(BEFORE));
                std::fs::create_dir(h.join(BEFORE)).unwrap();
            }),
            format!("cannot read the snapshot {BEFORE}: is a directory, not a regular file"),
        ),
        (
            "truncated",
            Box::new(|| h.write(BEFORE, &good[..good.len() / 2])),
            format!("{BEFORE} is not a usable snapshot: not valid JSON"),
        ),
        (
            "a marker",
            Box::new(|| h.write(BEFORE, "{\"schema_version\": 3, \"required\": true}")),
            format!("{BEFORE} is not a usable snapshot: not an fpcheck snapshot (no \"kind\": \"fpcheck-snapshot\")"),
        ),
        (
            "another schema",
            Box::new(|| h.write(BEFORE, &good.replace("\"schema_version\": 2", "\"schema_version\": 9"))),
            format!("{BEFORE} is not a usable snapshot: snapshot schema_version 9, this fpcheck reads 2"),
        ),
    ];
    for (name, setup, error) in cases {
        let _ = std::fs::remove_dir(h.join(BEFORE));
        let _ = std::fs::remove_file(h.join(MARKER));
        setup();
        let run = h.gate(&[]);
        assert_eq!(run.code, 4, "{name}: {}", run.stderr);
        let j = run.json();
        assert!(
            j["error"].as_str().unwrap().starts_with(&error),
            "{name}: {}",
            j["error"]
        );
        assert_eq!(
            run.stderr,
            format!("fpcheck: error: {}\n", j["error"].as_str().unwrap()),
            "{name}"
        );
        assert_eq!(
            (&j["restart_required"], &j["marker_written"]),
            (&json!(true), &json!(true)),
            "{name}"
        );
        assert_eq!(
            j["conservative"],
            "the gate could not decide, so it asks for a restart"
        );
        let m = h.marker().unwrap();
        assert_schema_3(&m);
        assert_eq!(
            without_time(&m),
            json!({
                "schema_version": 3,
                "required": true,
                "from_version": "",
                "to_version": "1.1.0",
                "from_fingerprint": "",
                "to_fingerprint": BASE_FP,
                "reason": "brain_update",
                "clients": {"claude_code": "restart_session_required"},
            }),
            "{name}"
        );
    }
}

#[test]
fn an_unreadable_runtime_asks_for_a_restart() {
    let h = host_at_a();
    // The runtime path runs through a file: it cannot be read at all.
    let run = h.fpcheck(&[
        "gate",
        "--dir",
        "app/src/server.py/src",
        "--before",
        BEFORE,
        "--marker",
        MARKER,
        "--json",
    ]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["marker_written"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(j["to_fingerprint"], "");
    assert_eq!(
        j["to_unavailable_reason"],
        "app/src/server.py/src cannot be read: Not a directory"
    );
    assert_eq!(h.marker().unwrap()["to_fingerprint"], "");

    // Permissions, where they bind (not for root).
    let src = h.join("app/src/plugins");
    set_mode(&src, 0o000);
    let unreadable = std::fs::read_dir(&src).is_err();
    if unreadable {
        std::fs::remove_file(h.join(MARKER)).unwrap();
        let run = h.gate(&[]);
        let j = run.json();
        assert_eq!(
            (run.code, &j["restart_required"], &j["marker_written"]),
            (3, &json!(true), &json!(true))
        );
        assert_eq!(
            j["to_unavailable_reason"],
            "app/src/plugins: Permission denied"
        );
        let s = h.status(BASE_FP, "1.0.0", &[]);
        assert_eq!(
            (s.code, &s.json()["reason"]),
            (1, &json!("marker_required"))
        );
    }
    set_mode(&src, 0o755);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn an_unusable_marker_directory_fails_closed() {
    let h = host_at_a();
    h.install(&bumped()); // docs-only: no marker would be needed
                          // (A missing directory is no longer unusable: it is created when a
                          // marker is needed; see edges::a_fresh_install_gets_its_marker_directory.)
    #[allow(clippy::single_element_loop)]
    for marker in ["state/before.json/mcp-restart-required.json"] {
        let run = h.fpcheck(&Host::gate_args_for(marker, &["--json"]));
        assert_eq!(run.code, 5, "{marker}: {}", run.stderr);
        let j = run.json();
        assert_eq!(
            (&j["restart_required"], &j["marker_written"]),
            (&json!(true), &json!(false)),
            "{marker}"
        );
        assert!(
            j["error"]
                .as_str()
                .unwrap()
                .starts_with(&format!("cannot lock {marker}.lock: ")),
            "{}",
            j["error"]
        );
        let run = h.fpcheck(&Host::gate_args_for(marker, &[]));
        assert!(
            run.stdout
                .starts_with("restart required: the gate could not decide: cannot lock"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .contains(&format!("  marker       NOT written: {marker}\n")),
            "{}",
            run.stdout
        );
    }
    // The running process cannot rule a marker out either: restart.
    let run = h.fpcheck(&Host::status_args(
        "state/before.json/m.json",
        BASE_FP,
        "1.0.0",
        &["--json"],
    ));
    let j = run.json();
    assert_eq!(
        (run.code, &j["reason"], &j["marker_corrupt"]),
        (1, &json!("marker_corrupt"), &json!(true))
    );
    assert_eq!(
        j["marker_problem"],
        "state/before.json/m.json cannot be read: Not a directory"
    );
}

#[test]
fn settings_that_differ_from_the_snapshot_are_refused_conservatively() {
    let h = host_at_a();
    h.install(&bumped());
    let run = h.gate(&["--exclude", "tests"]);
    // 4, not 2: a usage error (2) means nothing was written; here the
    // marker was.
    assert_eq!(run.code, 4, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["marker_written"]),
        (&json!(true), &json!(true))
    );
    assert!(
        j["error"].as_str().unwrap().starts_with(
            "the snapshot was taken with other settings (extensions .py, exclude scripts,tests,"
        ),
        "{}",
        j["error"]
    );
    // The snapshot's own settings are used when none are given.
    let h = Host::new();
    h.install(&release_a());
    let run = h.fpcheck(&[
        "snapshot",
        "--dir",
        "app/src",
        "--out",
        BEFORE,
        "--exclude",
        "",
    ]);
    assert_eq!(run.code, 0);
    h.install(&bumped());
    let run = h.gate(&[]);
    let j = run.json();
    assert_eq!((run.code, &j["restart_required"]), (0, &json!(false)));
    assert_eq!(j["from_fingerprint"], j["to_fingerprint"]);
    assert_ne!(
        j["to_fingerprint"], BASE_FP,
        "scripts/, tests/ and migrations/ count now"
    );
}

/// Release A or B without any version file, in the root or the install's
/// home: only the tags of its repository knew its version.
fn without_version_files(mut r: Release) -> Release {
    r.remove("src/version.json");
    r.remove("version.json");
    r
}

/// No version file on either side: the versions (both empty) cannot tell
/// a release from none, so a code change writes the marker; unchanged code
/// writes none. With a version file the reference's rule holds (an
/// unchanged version writes no marker for the same code change).
#[test]
fn without_a_version_file_a_code_change_writes_the_marker() {
    let h = Host::new();
    h.install(&without_version_files(release_a()));
    h.snapshot();
    h.install(&without_version_files(release_b()));
    let run = h.gate(&[]);
    // 4: the marker written by a rule beyond section 6 (docs/gate.md).
    assert_eq!(run.code, 4, "{}", run.stderr);
    let report = run.json();
    assert_eq!(
        (&report["restart_required"], &report["reason"]),
        (&json!(true), &json!("brain_update"))
    );
    assert_eq!(
        report["conservative"],
        "neither side has a version file (version.json, package.json): the versions cannot tell a release from none, so the code change writes the marker"
    );
    assert!(h.join(MARKER).exists());

    let h = Host::new();
    h.install(&without_version_files(release_a()));
    h.snapshot();
    let run = h.gate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["restart_required"], false);
    assert!(!h.join(MARKER).exists());

    // A version file at both ends, the version unchanged: section 6 alone.
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    let mut b = release_b();
    b.insert("src/version.json", "{\"version\": \"1.0.0\"}\n".into());
    b.insert("version.json", "{\"version\": \"1.0.0\"}\n".into());
    h.install(&b);
    let run = h.gate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["restart_required"], false);
    assert!(!h.join(MARKER).exists());
}

//! Crash safety: failures and kills between write and rename, racing
//! gates.

use super::*;

/// A host whose marker holds A → B and whose runtime now holds C, so that
/// the next gate replaces the marker.
fn host_ready_for_a_second_marker() -> Host {
    let h = host_with_marker();
    let mut c = bumped();
    c.insert("src/version.json", "{\"version\": \"1.2.0\"}\n".into());
    c.insert("version.json", "{\"version\": \"1.2.0\"}\n".into());
    c.insert("src/plugins/memory.py", "def hello(): return 'v3'\n".into());
    h.install(&c);
    h
}

#[test]
fn a_failure_between_temp_write_and_rename_leaves_the_old_marker() {
    let h = host_ready_for_a_second_marker();
    let old = h.marker_bytes();
    let out = h
        .spawn(
            &Host::gate_args(&[]),
            &[("FPCHECK_TEST_BEFORE_RENAME", "fail")],
        )
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&j["restart_required"], &j["marker_written"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(
        j["error"],
        format!("cannot write {MARKER}: injected failure before rename")
    );
    assert_eq!(h.marker_bytes(), old);
    assert_eq!(h.temp_files(), Vec::<String>::new());
}

#[test]
fn a_gate_killed_mid_write_leaves_the_old_marker_and_no_stale_lock() {
    let h = host_ready_for_a_second_marker();
    let old = h.marker_bytes();
    // The hook holds the gate after its temporary file is complete and
    // flushed, just before the rename: kill -9 it there.
    let mut child = h.spawn(
        &Host::gate_args(&[]),
        &[("FPCHECK_TEST_BEFORE_RENAME", "pause:20000")],
    );
    let start = Instant::now();
    while h.temp_files().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the gate never wrote its temporary file"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(h.marker_bytes(), old);
    assert_schema_3(&h.marker().unwrap());
    assert_eq!(
        h.temp_files().len(),
        1,
        "the dead gate's temporary file stays"
    );

    // The kernel released the lock with the process: the next gate runs at
    // once, and sweeps the dead gate's temporary file.
    let run = h.fpcheck(&Host::gate_args(&["--lock-timeout", "1"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let m = h.marker().unwrap();
    assert_schema_3(&m);
    assert_eq!(
        (&m["from_version"], &m["to_version"]),
        (&json!("1.0.0"), &json!("1.2.0"))
    );
    // A new marker replaces the old one whole: its clients are this gate's
    // (none named: the reference's default).
    assert_eq!(
        m["clients"],
        json!({"claude_code": "restart_session_required"})
    );
    assert_eq!(h.temp_files(), Vec::<String>::new());
}

#[test]
fn gates_killed_at_any_moment_never_leave_a_torn_marker() {
    let h = host_ready_for_a_second_marker();
    let old = h.marker().unwrap();
    for i in 0..24u64 {
        let mut child = h.spawn(&Host::gate_args(&[]), &[]);
        std::thread::sleep(Duration::from_micros(i * 700));
        let _ = child.kill();
        child.wait().unwrap();
        let m = h.marker().expect("a marker is always there");
        assert_schema_3(&m);
        let to = m["to_version"].as_str().unwrap();
        assert!(to == "1.1.0" || to == "1.2.0", "iteration {i}: {m}");
        if to == "1.1.0" {
            assert_eq!(m, old, "iteration {i}");
        }
    }
}

#[test]
fn concurrent_gates_serialise_and_all_leave_a_valid_marker() {
    let h = host_at_a();
    h.install(&release_b());
    // Each gate pauses inside its critical section (just before its
    // rename); the lock makes them take turns, and every marker left is
    // whole and one of theirs.
    let names: Vec<String> = [
        "codex",
        "claude",
        "desktop",
        "Codex",
        "claude-code",
        "DESKTOP",
    ]
    .iter()
    .map(|n| n.to_string())
    .collect();
    let children: Vec<Child> = names
        .iter()
        .map(|name| {
            h.spawn(
                &Host::gate_args(&["--client", name]),
                &[("FPCHECK_TEST_BEFORE_RENAME", "pause:40")],
            )
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["marker_written"], true);
    }
    let m = h.marker().unwrap();
    assert_schema_3(&m);
    let possible = [
        json!({"codex": "restart_session_required"}),
        json!({"claude_code": "restart_session_required"}),
        json!({"claude_desktop": "restart_client_required"}),
    ];
    assert!(possible.contains(&m["clients"]), "{}", m["clients"]);
    assert_eq!(h.temp_files(), Vec::<String>::new());
}

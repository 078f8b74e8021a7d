//! The gate's edges from docs/spec.md sections 5-7 and the hostile
//! files, through the CLI: expected answers are written from the spec.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{bumped, host_at_a, release_a, release_b, Host, BASE_FP, BEFORE, MARKER, V2_FP};
use crate::support::Run;

mod version_files;

/// Runs fpcheck, failing the test instead of hanging when it blocks (a FIFO
/// that is opened for reading blocks forever).
fn run_bounded(h: &Host, args: &[&str]) -> Run {
    let mut child = h.spawn(args, &[]);
    let start = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            return Run::finished(child.wait_with_output().unwrap());
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("fpcheck {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn c_path(p: &Path) -> std::ffi::CString {
    std::ffi::CString::new(p.to_str().unwrap()).unwrap()
}

fn mkfifo(p: &Path) {
    let _ = std::fs::remove_file(p);
    crate::support::mkfifo(p, 0o600);
}

/// A character device like /dev/zero (1, 5), made inside a temp dir: an
/// endless source of bytes that never touches the real /dev.
fn mkzero(p: &Path) {
    let _ = std::fs::remove_file(p);
    let dev = libc::makedev(1, 5);
    // SAFETY: a valid NUL-terminated path; tests run as root.
    let rc = unsafe { libc::mknod(c_path(p).as_ptr(), libc::S_IFCHR | 0o600, dev) };
    assert_eq!(
        rc,
        0,
        "mknod needs root: {}",
        std::io::Error::last_os_error()
    );
}

/// A file one byte over the 16 MiB cap (sparse: no real disk used).
fn huge(p: &Path) {
    let f = std::fs::File::create(p).unwrap();
    f.set_len(16 * 1024 * 1024 + 1).unwrap();
}

fn gate_code_change(h: &Host) -> Run {
    h.install(&release_b());
    h.gate(&[])
}

#[test]
fn a_fresh_install_gets_its_marker_directory() {
    let h = host_at_a();
    h.install(&{
        let mut b = bumped();
        b.insert("src/plugins/memory.py", "x = 2\n".into());
        b
    });
    let marker = "home/.nexo/operations/mcp-restart-required.json";
    let run = h.fpcheck(&Host::gate_args_for(marker, &["--json"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["marker_written"], &j["marker_dir_created"]),
        (&json!(true), &json!(true))
    );
    assert!(h.join(marker).is_file());
    // No marker to write: no directory made.
    let run = h.fpcheck(&Host::gate_args_for("other/m.json", &["--json"]));
    assert_eq!(run.json()["marker_written"], true);
    h.snapshot();
    let run = h.fpcheck(&Host::gate_args_for("third/m.json", &["--json"]));
    assert_eq!(
        (run.code, &run.json()["marker_written"]),
        (0, &json!(false)),
        "{}",
        run.stderr
    );
    assert!(!h.join("third").exists());
}

#[test]
fn hostile_markers_never_hang_and_read_as_corrupt() {
    let h = Host::new();
    h.install(&release_a());
    let m = h.join(MARKER);
    for (name, make) in [
        ("FIFO", mkfifo as fn(&Path)),
        ("device", mkzero),
        ("huge", huge),
    ] {
        make(&m);
        let run = run_bounded(
            &h,
            &Host::status_args(MARKER, BASE_FP, "1.0.0", &["--json"]),
        );
        let j = run.json();
        assert_eq!(
            (run.code, &j["reason"]),
            (1, &json!("marker_corrupt")),
            "{name}"
        );
        let _ = std::fs::remove_file(&m);
    }
    // A link to a device elsewhere is followed, then refused.
    let outside = tempfile::tempdir().unwrap();
    mkzero(&outside.path().join("zero"));
    std::os::unix::fs::symlink(outside.path().join("zero"), &m).unwrap();
    let run = run_bounded(
        &h,
        &Host::status_args(MARKER, BASE_FP, "1.0.0", &["--json"]),
    );
    assert_eq!(
        run.json()["marker_problem"],
        format!("{MARKER} is a character device, not a regular file")
    );
}

#[test]
fn hostile_snapshots_fail_closed_and_still_write_the_marker() {
    for (name, make, why) in [
        ("FIFO", mkfifo as fn(&Path), "is a FIFO, not a regular file"),
        (
            "device",
            mkzero,
            "is a character device, not a regular file",
        ),
        ("huge", huge, "is larger than 16777216 bytes"),
    ] {
        let h = Host::new();
        h.install(&release_a());
        make(&h.join(BEFORE));
        h.install(&bumped());
        let run = run_bounded(&h, &Host::gate_args(&[]));
        assert_eq!(run.code, 4, "{name}: {}", run.stderr);
        let j = run.json();
        assert_eq!(
            j["error"],
            format!("cannot read the snapshot {BEFORE}: {why}"),
            "{name}"
        );
        assert_eq!(
            (&j["restart_required"], &j["marker_written"]),
            (&json!(true), &json!(true))
        );
        assert!(h.marker().is_some(), "{name}");
    }
}

#[test]
fn a_link_planted_at_the_lock_is_never_followed() {
    let h = host_at_a();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("created-by-root");
    std::os::unix::fs::symlink(&target, h.join(&format!("{MARKER}.lock"))).unwrap();
    let run = gate_code_change(&h);
    assert_eq!(run.code, 5, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["marker_written"], false);
    assert_eq!(
        j["error"],
        format!("cannot lock {MARKER}.lock: it is a symbolic link, which fpcheck does not follow for a lock: remove it")
    );
    assert!(!target.exists(), "the link's target was created");
    // A FIFO there is refused too, without hanging.
    std::fs::remove_file(h.join(&format!("{MARKER}.lock"))).unwrap();
    mkfifo(&h.join(&format!("{MARKER}.lock")));
    let run = run_bounded(&h, &Host::gate_args(&[]));
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(run.json()["error"]
        .as_str()
        .unwrap()
        .ends_with("it is a FIFO, not a regular file: remove it"));
}

#[test]
fn control_characters_are_escaped_for_people_and_exact_in_json() {
    let h = host_at_a();
    let mut b = bumped();
    b.insert(
        "src/version.json",
        "{\"version\": \"1.1.0\\u001b[2J\\u0007\", \"force_restart\": \"\\u001b\"}\n".into(),
    );
    h.install(&b);
    let run = h.fpcheck(&Host::gate_args_for(MARKER, &[]));
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stderr.contains('\u{1b}'),
        "{run:?}",
        run = (&run.stdout, &run.stderr)
    );
    assert!(
        run.stdout.contains("1.0.0 -> 1.1.0\\x1b[2J\\x07"),
        "{}",
        run.stdout
    );
    let run = h.gate(&[]);
    assert_eq!(run.json()["to_version"], "1.1.0\u{1b}[2J\u{7}");
    let run = h.status(BASE_FP, "1.0.0\u{1b}", &[]);
    assert_eq!(
        run.json()["process_version"],
        "1.0.0\u{1b}",
        "JSON keeps the exact text"
    );
    let run = h.fpcheck(&Host::status_args(MARKER, "\u{1b}]0;x\u{7}", "1.0.0", &[]));
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
    assert!(run.stdout.contains("\\x1b]0;x\\x07"), "{}", run.stdout);
}

#[test]
fn snapshot_of_a_missing_runtime_exits_4_and_still_records_it() {
    let h = Host::new();
    let run = h.fpcheck(&["snapshot", "--dir", "nonexistent", "--out", BEFORE]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .ends_with("fpcheck: error: the runtime nonexistent does not exist\n"),
        "{}",
        run.stderr
    );
    let snap: Value = serde_json::from_slice(&std::fs::read(h.join(BEFORE)).unwrap()).unwrap();
    assert_eq!(snap["fingerprint"], "");
    // The gate after a fresh install then asks for a restart.
    h.install(&release_a());
    let run = h.gate(&[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(run.json()["marker_written"], true);
}

#[test]
fn a_usage_error_writes_nothing() {
    let h = Host::new();
    h.install(&release_a());
    let run = h.fpcheck(&["gate", "--dir", "app/src", "--marker", MARKER]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(h.marker().is_none());
}

#[test]
fn status_and_gate_answer_every_client_alias() {
    // Written from section 6: the name as given, what it means.
    let rows = [
        ("claude_code", Some("claude_code")),
        ("claude", Some("claude_code")),
        ("claudecode", Some("claude_code")),
        ("Claude-Code", Some("claude_code")),
        (" CLAUDE CODE ", Some("claude_code")),
        ("claude_desktop", Some("claude_desktop")),
        ("claude_desktop_app", Some("claude_desktop")),
        ("Claude Desktop App", Some("claude_desktop")),
        ("desktop", Some("claude_desktop")),
        ("codex", Some("codex")),
        ("CODEX", Some("codex")),
        ("foo", None),
    ];
    let h = host_at_a();
    h.install(&release_b());
    for (name, want) in rows {
        let run = h.gate(&["--client", name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let action = |c: &str| {
            if c == "claude_desktop" {
                "restart_client_required"
            } else {
                "restart_session_required"
            }
        };
        let clients = match want {
            Some(c) => json!({ c: action(c) }),
            // An unknown name counts as none: the default client.
            None => json!({"claude_code": "restart_session_required"}),
        };
        assert_eq!(h.marker().unwrap()["clients"], clients, "{name}");
        if want.is_none() {
            assert!(
                run.stderr.contains("is not a known client"),
                "{}",
                run.stderr
            );
        }
        // The client acknowledges under its normalised name...
        let mut m = h.marker().unwrap();
        if let Some(c) = want {
            m["clients"][c] = json!("ok");
        } else {
            m["clients"]["foo"] = json!("ok");
        }
        h.write(MARKER, &m.to_string());
        // ...and its status then runs on; an unknown name stays bound.
        let s = h.status(V2_FP, "1.1.0", &["--client", name]).json();
        assert_eq!(s["restart_required"], want.is_none(), "{name}");
        assert_eq!(
            s["client"],
            want.map_or(Value::Null, |c| json!(c)),
            "{name}"
        );
    }
}

/// The range's `updater` and `process_check` fields come from the same
/// sections 6 and 7 as the gate: written from the spec, row by row.
#[test]
fn the_range_reports_sections_6_and_7_as_the_gate_decides() {
    use crate::support::TestRepo;
    // (root version.json, home version.json, code changes?, updater, process check)
    type Row = (
        &'static str,
        &'static str,
        bool,
        Option<&'static str>,
        Option<&'static str>,
    );
    #[rustfmt::skip]
    let rows: &[Row] = &[
        // Section 5 sees 1.0.0 both times (the root's file wins); the
        // updater's raw reading in the home changes: a version change.
        ("{\"version\": \"1.0.0\"}", "{\"version\": \" 1.0.0 \"}", true, Some("brain_update"), Some("fingerprint_mismatch")),
        ("{\"version\": \"1.0.0\"}", "{\"version\": 8}", false, None, None),
        ("{\"version\": \"1.0.0\", \"force_restart\": 1}", "{\"version\": 8}", false, Some("brain_update_force"), None),
        // Neither reading changes: no marker; the process still sees new code.
        ("{\"version\": \"1.0.0\"}", "{\"version\": 7}", true, None, Some("fingerprint_mismatch")),
        // " 1.0.0 " is 1.0.0 for section 5; the home is unchanged.
        ("{\"version\": \" 1.0.0 \"}", "{\"version\": 7}", true, None, Some("fingerprint_mismatch")),
    ];
    for (n, &(root, home, code, updater, process)) in rows.iter().enumerate() {
        let repo = TestRepo::new();
        repo.write("src/server.py", "def main(): pass\n")
            .write("src/version.json", "{\"version\": \"1.0.0\"}")
            .write("version.json", "{\"version\": 7}");
        repo.commit("1.0.0");
        repo.tag("v1.0.0");
        repo.write("src/version.json", root)
            .write("version.json", home);
        if code {
            repo.write("src/server.py", "def main(): return 2\n");
        }
        repo.commit("next");
        let run = repo.fpcheck(&["v1.0.0..", "--format", "json"]);
        assert_eq!(run.code, 0, "row {n}: {}", run.stderr);
        let j = run.json();
        assert_eq!(
            (
                &j["updater"]["writes_marker"],
                &j["updater"]["marker_reason"]
            ),
            (&json!(updater.is_some()), &json!(updater)),
            "row {n}"
        );
        assert_eq!(
            (&j["process_check"]["fires"], &j["process_check"]["reason"]),
            (&json!(process.is_some()), &json!(process)),
            "row {n}"
        );
    }
}

/// A link at the cache's name, to a file outside the state directory.
fn link_out(p: &Path) {
    let outside = p.with_file_name("outside.json");
    std::fs::write(&outside, b"outside").unwrap();
    std::os::unix::fs::symlink(&outside, p).unwrap();
}

/// The cache's name is the user's: a FIFO, a device or a link there is a
/// miss, never waited on, and is left as it was (never replaced, never
/// written through), with a warning saying so; an oversized
/// regular file is a miss and is replaced.
#[test]
fn a_hostile_status_cache_is_a_miss_not_a_hang() {
    use std::os::unix::fs::FileTypeExt;
    let h = Host::new();
    h.install(&release_a());
    let kind = |p: &Path| {
        let t = std::fs::symlink_metadata(p).unwrap().file_type();
        (t.is_fifo(), t.is_char_device(), t.is_symlink(), t.is_file())
    };
    for make in [mkfifo as fn(&Path), mkzero, link_out, huge] {
        make(&h.join("state/fp.cache"));
        let before = kind(&h.join("state/fp.cache"));
        let run = run_bounded(
            &h,
            &Host::status_args(
                MARKER,
                BASE_FP,
                "1.0.0",
                &["--cache", "state/fp.cache", "--json"],
            ),
        );
        let j = run.json();
        // A link is read through (to a file that is no cache), never
        // written through.
        let read = if before.2 { "corrupt" } else { "miss" };
        assert_eq!((run.code, &j["cache"]), (0, &json!(read)), "{}", run.stderr);
        assert_eq!(j["installed_fingerprint"], BASE_FP);
        let after = kind(&h.join("state/fp.cache"));
        assert_eq!(after, before);
        if before.3 {
            // A regular file: replaced by the cache.
            assert_eq!(j["warnings"], json!([]));
            assert!(std::fs::metadata(h.join("state/fp.cache")).unwrap().len() < 1 << 20);
        } else {
            let what = match before {
                (true, ..) => "a FIFO",
                (_, true, ..) => "a character device",
                _ => "a symbolic link",
            };
            assert_eq!(
                j["warnings"],
                json!([format!(
                    "cannot write the cache state/fp.cache: it is {what}, not a regular file, and is left alone"
                )])
            );
        }
        assert_eq!(
            std::fs::read(h.join("state/outside.json")).unwrap_or_default(),
            if before.2 { &b"outside"[..] } else { b"" }
        );
        let _ = std::fs::remove_file(h.join("state/fp.cache"));
        let _ = std::fs::remove_file(h.join("state/outside.json"));
    }
}

/// The lock is taken only to write a marker: with the lock held by another
/// process (a gate or `ack` mid-write), a gate with nothing to write answers
/// at once, while one that must write still waits its turn and, at the
/// timeout, fails closed without writing (exit 5).
#[test]
fn only_a_gate_that_writes_waits_for_the_lock() {
    use std::os::fd::AsRawFd;
    let h = host_at_a();
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(h.join(&format!("{MARKER}.lock")))
        .unwrap();
    // SAFETY: flock on a descriptor this test owns; released when dropped.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    h.install(&bumped()); // version only: no marker needed
    let run = h.gate(&["--lock-timeout", "1"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["marker_written"], &j["error"]),
        (&json!(false), &json!(false), &Value::Null)
    );
    h.install(&release_b());
    let run = h.gate(&["--lock-timeout", "1"]);
    assert_eq!(run.code, 5, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["marker_written"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(
        j["error"],
        format!("cannot lock {MARKER}.lock: another fpcheck still holds it after 1s")
    );
    assert!(h.marker().is_none());
    drop(lock);
    assert_eq!(h.gate(&[]).code, 0);
    assert!(h.marker().is_some());
}

/// A socket bound at `p` (anyone can make one where they can write).
fn mksocket(p: &Path) {
    let _ = std::fs::remove_file(p);
    let listener = std::os::unix::net::UnixListener::bind(p).unwrap();
    // The node stays after the listener is gone; nobody accepts on it.
    drop(listener);
}

fn mkdir(p: &Path) {
    let _ = std::fs::remove_file(p);
    std::fs::create_dir(p).unwrap();
}

/// Makes a node at the path given.
type Make = fn(&Path);

/// A named way to put a hostile node at a path.
type Planter = (String, Box<dyn Fn(&Path)>);

/// Each node that is not a regular file, made at `at`, directly or as a
/// link (in `elsewhere`) to it; the name says which.
fn hostile_nodes(elsewhere: &Path) -> Vec<Planter> {
    let kinds: [(&str, Make); 4] = [
        ("FIFO", mkfifo),
        ("character device", mkzero),
        ("socket", mksocket),
        ("directory", mkdir),
    ];
    let mut nodes: Vec<Planter> = Vec::new();
    for (kind, make) in kinds {
        nodes.push((kind.to_string(), Box::new(make)));
        let target = elsewhere.join(kind.replace(' ', "-"));
        nodes.push((
            format!("link to a {kind}"),
            Box::new(move |at: &Path| {
                if std::fs::symlink_metadata(&target).is_err() {
                    make(&target);
                }
                let _ = std::fs::remove_file(at);
                std::os::unix::fs::symlink(&target, at).unwrap();
            }),
        ));
    }
    nodes
}

/// Removes whatever `make` put at `p` (a directory included).
fn clear(p: &Path) {
    if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(p).unwrap();
    } else {
        let _ = std::fs::remove_file(p);
    }
}

fn node_kind(p: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    let t = std::fs::symlink_metadata(p).unwrap().file_type();
    let kind = if t.is_symlink() {
        "link"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_socket() {
        "socket"
    } else if t.is_dir() {
        "directory"
    } else {
        "file"
    };
    kind.into()
}

#[test]
fn gate_replaces_or_refuses_a_marker_that_is_not_a_regular_file() {
    let h = host_at_a();
    h.install(&release_b());
    let elsewhere = tempfile::tempdir().unwrap();
    let m = h.join(MARKER);
    for (name, make) in hostile_nodes(elsewhere.path()) {
        make(&m);
        let before = node_kind(&m);
        let target_before = std::fs::metadata(&m)
            .ok()
            .map(|_| node_kind(&std::fs::canonicalize(&m).unwrap()));
        let start = Instant::now();
        let run = run_bounded(&h, &Host::gate_args(&[]));
        assert!(start.elapsed() < Duration::from_secs(5), "{name}: slow");
        let j = run.json();
        if name == "character device" || name == "directory" {
            // Replacing it would destroy something: refused, restart.
            assert_eq!(
                (run.code, &j["restart_required"], &j["marker_written"]),
                (5, &json!(true), &json!(false)),
                "{name}: {}",
                run.stderr
            );
            let error = j["error"].as_str().unwrap();
            assert!(
                error.contains(&format!("it is a {name}, not a regular file")),
                "{name}: {error}"
            );
            assert_eq!(node_kind(&m), before, "{name}: the node was replaced");
        } else {
            // A FIFO, a socket or a link is replaced, never opened.
            assert_eq!(
                (run.code, &j["restart_required"], &j["marker_written"]),
                (0, &json!(true), &json!(true)),
                "{name}: {}",
                run.stderr
            );
            assert_eq!(node_kind(&m), "file", "{name}");
            let marker: Value = serde_json::from_slice(&std::fs::read(&m).unwrap()).unwrap();
            assert_eq!(marker["required"], true, "{name}");
        }
        if let Some(kind) = target_before.filter(|_| name.starts_with("link")) {
            let target = elsewhere
                .path()
                .join(name.trim_start_matches("link to a ").replace(' ', "-"));
            assert_eq!(
                node_kind(&target),
                kind,
                "{name}: the link's target changed"
            );
        }
        clear(&m);
    }
}

#[test]
fn ack_and_status_never_read_or_write_through_a_hostile_marker() {
    let h = host_at_a();
    let elsewhere = tempfile::tempdir().unwrap();
    let m = h.join(MARKER);
    for (name, make) in hostile_nodes(elsewhere.path()) {
        make(&m);
        let before = node_kind(&m);
        let ack = run_bounded(
            &h,
            &[
                "ack", "--marker", MARKER, "--client", "codex", "--dir", "app/src", "--json",
            ],
        );
        assert_ne!(ack.code, 0, "{name}: ack accepted it");
        assert_eq!(node_kind(&m), before, "{name}: ack replaced it");
        let status = run_bounded(
            &h,
            &Host::status_args(MARKER, BASE_FP, "1.0.0", &["--json"]),
        );
        assert_eq!(
            (status.code, &status.json()["reason"]),
            (1, &json!("marker_corrupt")),
            "{name}: {}",
            status.stderr
        );
        assert_eq!(node_kind(&m), before, "{name}: status replaced it");
        clear(&m);
    }
}

/// The reference reads `clients` as `dict(marker.get("clients") or {})`:
/// a `clients` Python finds false is no clients, so a required marker is
/// `marker_required` (not corrupt), a marker not required asks nothing,
/// and `ack` acknowledges as with `{}`, writing the client's `"ok"`.
#[test]
fn a_marker_whose_clients_is_false_has_no_clients_as_in_the_reference() {
    let h = host_at_a();
    for clients in ["null", "false", "0", "\"\"", "[]"] {
        for (required, restart, reason) in [("true", true, "marker_required"), ("false", false, "")]
        {
            h.write(
                MARKER,
                &format!("{{\"required\": {required}, \"clients\": {clients}}}"),
            );
            let run = h.status(BASE_FP, "1.0.0", &["--client", "codex"]);
            let j = run.json();
            assert_eq!(
                (&j["restart_required"], &j["reason"], &j["marker_corrupt"]),
                (&json!(restart), &json!(reason), &json!(false)),
                "clients {clients}, required {required}: {}",
                run.stdout
            );
        }
        h.write(
            MARKER,
            &format!("{{\"required\": true, \"clients\": {clients}}}"),
        );
        let ack = h.fpcheck(&[
            "ack",
            "--marker",
            MARKER,
            "--client",
            "codex",
            "--dir",
            "app/src",
            "--process-fingerprint",
            BASE_FP,
            "--json",
        ]);
        assert_eq!(ack.code, 0, "clients {clients}: {}", ack.stderr);
        assert_eq!(ack.json()["action"], json!("removed"), "{}", ack.stdout);
        assert!(h.marker().is_none(), "clients {clients}: the marker stayed");
        // Another client still to restart: the marker stays, with the
        // acknowledging client's `"ok"` where the reference writes it.
        h.write(
            MARKER,
            &format!(
                "{{\"required\": true, \"to_fingerprint\": \"{BASE_FP}\", \"clients\": {clients}}}"
            ),
        );
        let ack = h.fpcheck(&["ack", "--marker", MARKER, "--client", "codex", "--json"]);
        assert_eq!(ack.code, 0, "clients {clients}: {}", ack.stderr);
        let status = h.status(BASE_FP, "1.0.0", &["--client", "codex"]).json();
        assert_eq!(status["marker_corrupt"], json!(false), "{status}");
    }
}

#[test]
fn a_marker_whose_clients_is_not_an_object_is_corrupt() {
    let h = host_at_a();
    for clients in [
        "[\"codex\"]",
        "[[\"codex\", \"ok\"]]",
        "\"codex\"",
        "7",
        "true",
    ] {
        h.write(
            MARKER,
            &format!("{{\"required\": false, \"clients\": {clients}}}"),
        );
        let run = h.status(BASE_FP, "1.0.0", &["--client", "codex"]);
        let j = run.json();
        assert_eq!(
            (run.code, &j["restart_required"], &j["reason"]),
            (1, &json!(true), &json!("marker_corrupt")),
            "clients {clients}: {}",
            run.stdout
        );
        let ack = h.fpcheck(&["ack", "--marker", MARKER, "--client", "codex", "--json"]);
        assert_ne!(ack.code, 0, "clients {clients}: ack took it");
        assert!(
            ack.stderr.contains("`clients` that is not a JSON object"),
            "{}",
            ack.stderr
        );
    }
}

//! An update as the gate sees it: the snapshot, the marker naming the
//! changed files, the behaviour matrix as simulated updates, and a
//! recorded fingerprint that does not match.

use super::*;

#[test]
fn snapshot_records_the_release_and_every_file_digest() {
    let h = Host::new();
    h.install(&release_a());
    let run = h.snapshot();
    assert_eq!(
        run.stdout,
        format!(
            "snapshot of app/src written to {BEFORE}\n  version      1.0.0 (app/src/version.json)\n  fingerprint  {BASE_FP} (4 files)\n"
        )
    );
    let snap: Value = serde_json::from_slice(&std::fs::read(h.join(BEFORE)).unwrap()).unwrap();
    assert_eq!(snap["kind"], "fpcheck-snapshot");
    assert_eq!(snap["schema_version"], 2);
    assert_eq!(snap["updater_version"], "\"1.0.0\"");
    assert_eq!(snap["version"], "1.0.0");
    assert_eq!(snap["version_file"], "app/src/version.json");
    assert_eq!(snap["force_restart"], false);
    assert_eq!(snap["force_restart_raw"], Value::Null);
    assert_eq!(snap["fingerprint"], BASE_FP);
    assert_eq!(snap["unavailable_reason"], Value::Null);
    assert_eq!(
        snap["files"],
        json!({
            "cli.py": sha("# cli\n"),
            "plugins/__init__.py": sha(""),
            "plugins/memory.py": sha("def hello(): return 'v1'\n"),
            "server.py": sha("# entrypoint\n"),
        })
    );
    assert_eq!(snap["settings"]["extensions"], json!([".py"]));
    assert_eq!(snap["settings"]["exclude"][7], "versions");

    // Without --out the snapshot itself goes to stdout.
    let run = h.fpcheck(&["snapshot", "--dir", "app/src"]);
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["fingerprint"], BASE_FP);
    assert_eq!(run.json()["files"], snap["files"]);
}

#[test]
fn a_code_change_writes_the_marker_naming_the_changed_file() {
    let h = host_at_a();
    h.install(&release_b());

    let run = h.gate(&["--client", "codex", "--client", "claude_code"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "brain_update");
    assert_eq!(j["marker_written"], true);
    assert_eq!(j["marker"], MARKER);
    assert_eq!(
        (&j["version_changed"], &j["code_changed"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(
        (&j["from_fingerprint"], &j["to_fingerprint"]),
        (&json!(BASE_FP), &json!(V2_FP))
    );
    assert_eq!(changes(&j), pairs(&[("plugins/memory.py", "modified")]));
    assert_eq!(j["conservative"], Value::Null);
    assert_eq!(j["error"], Value::Null);

    let m = h.marker().unwrap();
    assert_schema_3(&m);
    assert_eq!(
        without_time(&m),
        json!({
            "schema_version": 3,
            "required": true,
            "from_version": "1.0.0",
            "to_version": "1.1.0",
            "from_fingerprint": BASE_FP,
            "to_fingerprint": V2_FP,
            "reason": "brain_update",
            "clients": {"claude_code": "restart_session_required", "codex": "restart_session_required"},
        })
    );

    // The human report names the file too.
    std::fs::remove_file(h.join(MARKER)).unwrap();
    let run = h.fpcheck(&Host::gate_args_for(MARKER, &[]));
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        format!(
            "restart required (brain_update): the runtime code changed\n  version      1.0.0 -> 1.1.0\n  fingerprint  {} -> {}\n  files        modified plugins/memory.py\n  marker       written: {MARKER} (clients: claude_code)\n",
            &BASE_FP[..12],
            &V2_FP[..12]
        )
    );
}

/// One row of section 8: what the release does to release A.
struct Row {
    name: &'static str,
    change: fn(&mut Release),
    marker: Option<&'static str>,
    exit: i32,
    changed: Option<&'static [(&'static str, &'static str)]>,
}

impl Row {
    /// A release the server takes without a restart: no marker, exit 0, no
    /// runtime file changed.
    fn free(name: &'static str, change: fn(&mut Release)) -> Row {
        Row {
            name,
            change,
            marker: None,
            exit: 0,
            changed: Some(&[]),
        }
    }

    /// A release whose runtime code changed: `brain_update`, exit 0, the
    /// `changed` files listed.
    fn code_change(
        name: &'static str,
        change: fn(&mut Release),
        changed: &'static [(&'static str, &'static str)],
    ) -> Row {
        Row {
            name,
            change,
            marker: Some("brain_update"),
            exit: 0,
            changed: Some(changed),
        }
    }
}

#[test]
fn the_behaviour_matrix_as_simulated_updates() {
    let rows = [
        Row::code_change(
            "a real fix in src/plugins/memory.py",
            |r| {
                r.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
            },
            &[("plugins/memory.py", "modified")],
        ),
        Row::code_change(
            "a new tool module",
            |r| {
                r.insert("src/plugins/new_tool.py", "def tool(): pass\n".into());
            },
            &[("plugins/new_tool.py", "added")],
        ),
        Row::code_change(
            "a rename under the root",
            |r| {
                let body = r.remove("src/plugins/memory.py").unwrap();
                r.insert("src/plugins/recall.py", body);
            },
            &[
                ("plugins/memory.py", "removed"),
                ("plugins/recall.py", "added"),
            ],
        ),
        Row::free("README only", |r| {
            r.insert("README.md", "# docs, reworded\n".into());
        }),
        Row::free("CHANGELOG.md only", |r| {
            r.insert("CHANGELOG.md", "# 1.1.0\n".into());
        }),
        Row::free("a new file under src/scripts/", |r| {
            r.insert("src/scripts/backfill.py", "print('once')\n".into());
        }),
        Row::free("a migration in src/migrations/", |r| {
            r.insert("src/migrations/0002.py", "ALTER = 1\n".into());
        }),
        Row {
            name: "version.json with force_restart",
            change: |r| {
                r.insert(
                    "src/version.json",
                    "{\"version\": \"1.1.0\", \"force_restart\": true}\n".into(),
                );
            },
            marker: Some("brain_update_force"),
            exit: 0,
            changed: Some(&[]),
        },
        Row {
            name: "the fingerprint cannot be computed",
            change: |r| {
                r.insert("src/plugins/gone.py", "-> nowhere.py".into());
            },
            marker: Some("brain_update"),
            exit: 3,
            changed: None,
        },
    ];
    for row in rows {
        let h = host_at_a();
        let mut b = bumped();
        (row.change)(&mut b);
        h.install(&b);
        let run = h.gate(&[]);
        let j = run.json();
        assert_eq!(run.code, row.exit, "{}: {}", row.name, run.stderr);
        assert_eq!(
            (j["reason"].as_str(), j["marker_written"].as_bool()),
            (row.marker, Some(row.marker.is_some())),
            "{}",
            row.name
        );
        assert_eq!(j["version_changed"], true, "{}", row.name);
        match row.changed {
            Some(list) => assert_eq!(changes(&j), pairs(list), "{}", row.name),
            None => assert_eq!(j["changed_files"], Value::Null, "{}", row.name),
        }
        let want_fp = fpcheck::compute(
            &fpcheck::DirSource::new(h.join("app/src")),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(j["to_fingerprint"], want_fp.as_gate_str(), "{}", row.name);
        match (row.marker, h.marker()) {
            (None, None) => {}
            (Some(reason), Some(m)) => {
                assert_schema_3(&m);
                assert_eq!(
                    without_time(&m),
                    json!({
                        "schema_version": 3,
                        "required": true,
                        "from_version": "1.0.0",
                        "to_version": "1.1.0",
                        "from_fingerprint": BASE_FP,
                        "to_fingerprint": want_fp.as_gate_str(),
                        "reason": reason,
                        "clients": {"claude_code": "restart_session_required"},
                    }),
                    "{}",
                    row.name
                );
            }
            (want, got) => panic!("{}: marker {want:?}, found {got:?}", row.name),
        }
        // A client started on release A: restarts exactly when the matrix says.
        let run = h.status(BASE_FP, "1.0.0", &[]);
        let s = run.json();
        let restart = row.marker.is_some();
        assert_eq!(s["restart_required"], restart, "{}", row.name);
        assert_eq!(
            s["reason"],
            if restart { "marker_required" } else { "" },
            "{}",
            row.name
        );
        assert_eq!(run.code, if restart { 1 } else { 0 }, "{}", row.name);
    }
}

#[test]
fn no_version_change_writes_no_marker_unless_a_fingerprint_is_unavailable() {
    // Code changed without a version bump: section 6 writes no marker; the
    // running processes' own check still sees the mismatch.
    let h = host_at_a();
    let mut b = release_a();
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
    let run = h.gate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["reason"]),
        (&json!(false), &Value::Null)
    );
    assert_eq!(
        (&j["version_changed"], &j["code_changed"]),
        (&json!(false), &json!(true))
    );
    assert!(h.marker().is_none());
    let s = h.status(BASE_FP, "1.0.0", &[]).json();
    assert_eq!(
        (&s["restart_required"], &s["reason"]),
        (&json!(true), &json!("fingerprint_mismatch"))
    );

    // An unavailable fingerprint with the same version: fpcheck writes the
    // marker anyway (section 3: unavailable forces a restart) and says why.
    let mut b = release_a();
    b.insert(
        "src/plugins/pkg.py/inner.txt",
        "a directory named *.py\n".into(),
    );
    h.install(&b);
    let run = h.gate(&[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["reason"]),
        (&json!(true), &json!("brain_update"))
    );
    assert_eq!(j["marker_written"], true);
    assert_eq!(
        j["conservative"],
        "a fingerprint is unavailable: the marker is written although the version did not change"
    );
    assert_eq!(
        j["to_unavailable_reason"],
        "app/src/plugins/pkg.py is a directory"
    );
    let m = h.marker().unwrap();
    assert_eq!(
        (&m["from_version"], &m["to_version"], &m["to_fingerprint"]),
        (&json!("1.0.0"), &json!("1.0.0"), &json!(""))
    );
}

#[test]
fn a_recorded_runtime_fingerprint_that_does_not_match_counts_as_changed() {
    let h = host_at_a();
    // A docs-only release whose version.json says its code hashes to V2_FP:
    // the installed bytes (BASE_FP) are not what was released.
    let mut b = bumped();
    b.insert(
        "src/version.json",
        format!("{{\"version\": \"1.1.0\", \"runtime_fingerprint\": \"{V2_FP}\"}}\n"),
    );
    h.install(&b);
    let run = h.gate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["reason"], &j["code_changed"]),
        (&json!("brain_update"), &json!(true))
    );
    assert_eq!(
        j["recorded_fingerprint"],
        json!({"file": "app/src/version.json", "value": V2_FP, "matches": false})
    );
    let warning = format!(
        "fpcheck: warning: THE INSTALLED RUNTIME DOES NOT MATCH ITS RELEASE: app/src/version.json records runtime_fingerprint \"{V2_FP}\", the installed files hash to {BASE_FP}: treating the code as changed\n"
    );
    assert_eq!(run.stderr, warning);
    assert_eq!(j["changed_files"], json!([]));

    // The same release recording the right value: a free docs-only update.
    std::fs::remove_file(h.join(MARKER)).unwrap();
    b.insert(
        "src/version.json",
        format!("{{\"version\": \"1.1.0\", \"runtime_fingerprint\": \"{BASE_FP}\"}}\n"),
    );
    h.install(&b);
    let run = h.gate(&[]);
    let j = run.json();
    assert_eq!((run.code, &j["restart_required"]), (0, &json!(false)));
    assert_eq!(j["recorded_fingerprint"]["matches"], true);
    assert_eq!(run.stderr, "");
    assert!(h.marker().is_none());
}

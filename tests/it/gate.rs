//! `fpcheck snapshot | gate | status | ack` on real directories: the
//! behaviour matrix as simulated updates, every reason code of section 7,
//! the clearing rules, crash safety with killed processes, racing gates,
//! unreadable inputs, markers in the reference's own format, and the cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::Digest;

use crate::support::{fpcheck_in, Run};

mod ack;
mod edges;
mod model;

/// The vectors' `base` tree and its `plugin-changed` sibling.
const BASE_FP: &str = "3c43745c84d45b3a91549d9f364119f930f26b9b87ab5772fd95040bd8d043d6";
const V2_FP: &str = "7e11f47df4a9b650ebefd470c871f4726d28e8e17cfec79fb8bd4d1271f9aa22";
const MARKER: &str = "state/mcp-restart-required.json";
const BEFORE: &str = "state/before.json";

/// A release as installed under `app/`: path to content; a content of
/// `-> TARGET` is a symbolic link.
type Release = BTreeMap<&'static str, String>;

/// Release A: the vectors' base tree at version 1.0.0, with docs around it.
fn release_a() -> Release {
    [
        ("src/server.py", "# entrypoint\n"),
        ("src/cli.py", "# cli\n"),
        ("src/plugins/__init__.py", ""),
        ("src/plugins/memory.py", "def hello(): return 'v1'\n"),
        ("src/scripts/noise.py", "# excluded\n"),
        ("src/tests/noise.py", "# excluded\n"),
        ("src/migrations/0001.py", "# excluded\n"),
        ("src/version.json", "{\"version\": \"1.0.0\"}\n"),
        // The install's home: where the updater itself reads the version.
        ("version.json", "{\"version\": \"1.0.0\"}\n"),
        ("README.md", "# docs\n"),
        ("CHANGELOG.md", "# changes\n"),
    ]
    .into_iter()
    .map(|(p, c)| (p, c.to_string()))
    .collect()
}

/// Release A with its version bumped to 1.1.0 and nothing else.
fn bumped() -> Release {
    let mut r = release_a();
    r.insert("src/version.json", "{\"version\": \"1.1.0\"}\n".into());
    r.insert("version.json", "{\"version\": \"1.1.0\"}\n".into());
    r
}

fn sha(bytes: &str) -> String {
    hex::encode(sha2::Sha256::digest(bytes.as_bytes()))
}

/// A production host: the installed runtime in `app/src`, the updater's
/// state (snapshot, marker) in `state/`.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fpcheck-gate")
            .tempdir()
            .unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        Host { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn join(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    /// Replaces `app/` with `release`, as an installer would.
    fn install(&self, release: &Release) -> &Self {
        let app = self.join("app");
        if app.exists() {
            std::fs::remove_dir_all(&app).unwrap();
        }
        for (rel, content) in release {
            let path = app.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match content.strip_prefix("-> ") {
                Some(target) => std::os::unix::fs::symlink(target, &path).unwrap(),
                None => std::fs::write(&path, content).unwrap(),
            }
        }
        self
    }

    fn fpcheck(&self, args: &[&str]) -> Run {
        fpcheck_in(self.path(), args)
    }

    fn snapshot(&self) -> Run {
        let run = self.fpcheck(&["snapshot", "--dir", "app/src", "--out", BEFORE]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    }

    fn gate_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "gate", "--dir", "app/src", "--before", BEFORE, "--marker", MARKER, "--json",
        ];
        args.extend_from_slice(extra);
        args
    }

    fn gate(&self, extra: &[&str]) -> Run {
        self.fpcheck(&Self::gate_args(extra))
    }

    /// `status --json` for a process that started with `fp` and `version`.
    fn status(&self, fp: &str, version: &str, extra: &[&str]) -> Run {
        let mut args = vec![
            "status",
            "--dir",
            "app/src",
            "--marker",
            MARKER,
            "--process-fingerprint",
            fp,
            "--process-version",
            version,
            "--json",
        ];
        args.extend_from_slice(extra);
        self.fpcheck(&args)
    }

    fn marker(&self) -> Option<Value> {
        let bytes = std::fs::read(self.join(MARKER)).ok()?;
        Some(serde_json::from_slice(&bytes).expect("the marker is JSON"))
    }

    fn marker_bytes(&self) -> Vec<u8> {
        std::fs::read(self.join(MARKER)).unwrap()
    }

    fn write(&self, rel: &str, content: &str) {
        std::fs::write(self.join(rel), content).unwrap();
    }

    /// The fpcheck binary, for runs the test must spawn or kill itself.
    fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fpcheck"));
        cmd.current_dir(self.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.spawn().unwrap()
    }

    fn temp_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect();
        names.sort();
        names
    }
}

/// Checks a marker has the reference's schema 3 shape and returns it.
fn assert_schema_3(m: &Value) {
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "required",
            "from_version",
            "to_version",
            "from_fingerprint",
            "to_fingerprint",
            "reason",
            "updated_at",
            "clients"
        ]
    );
    assert_eq!(
        (&m["schema_version"], &m["required"]),
        (&json!(3), &json!(true))
    );
    let at = m["updated_at"].as_str().unwrap();
    let shape: String = at
        .chars()
        .map(|c| if c.is_ascii_digit() { 'D' } else { c })
        .collect();
    assert_eq!(shape, "DDDD-DD-DDTDD:DD:DDZ", "{at}");
}

/// The marker without its timestamp, for exact comparison.
fn without_time(m: &Value) -> Value {
    let mut m = m.clone();
    m.as_object_mut().unwrap().remove("updated_at");
    m
}

fn changes(j: &Value) -> Vec<(String, String)> {
    j["changed_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    let mut b = bumped();
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);

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
    let run = h.fpcheck(&[
        "gate", "--dir", "app/src", "--before", BEFORE, "--marker", MARKER,
    ]);
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

#[test]
fn the_behaviour_matrix_as_simulated_updates() {
    let rows = [
        Row {
            name: "a real fix in src/plugins/memory.py",
            change: |r| {
                r.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
            },
            marker: Some("brain_update"),
            exit: 0,
            changed: Some(&[("plugins/memory.py", "modified")]),
        },
        Row {
            name: "a new tool module",
            change: |r| {
                r.insert("src/plugins/new_tool.py", "def tool(): pass\n".into());
            },
            marker: Some("brain_update"),
            exit: 0,
            changed: Some(&[("plugins/new_tool.py", "added")]),
        },
        Row {
            name: "a rename under the root",
            change: |r| {
                let body = r.remove("src/plugins/memory.py").unwrap();
                r.insert("src/plugins/recall.py", body);
            },
            marker: Some("brain_update"),
            exit: 0,
            changed: Some(&[
                ("plugins/memory.py", "removed"),
                ("plugins/recall.py", "added"),
            ]),
        },
        Row {
            name: "README only",
            change: |r| {
                r.insert("README.md", "# docs, reworded\n".into());
            },
            marker: None,
            exit: 0,
            changed: Some(&[]),
        },
        Row {
            name: "CHANGELOG.md only",
            change: |r| {
                r.insert("CHANGELOG.md", "# 1.1.0\n".into());
            },
            marker: None,
            exit: 0,
            changed: Some(&[]),
        },
        Row {
            name: "a new file under src/scripts/",
            change: |r| {
                r.insert("src/scripts/backfill.py", "print('once')\n".into());
            },
            marker: None,
            exit: 0,
            changed: Some(&[]),
        },
        Row {
            name: "a migration in src/migrations/",
            change: |r| {
                r.insert("src/migrations/0002.py", "ALTER = 1\n".into());
            },
            marker: None,
            exit: 0,
            changed: Some(&[]),
        },
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
        let h = Host::new();
        h.install(&release_a());
        h.snapshot();
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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
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

#[test]
fn status_gives_every_reason_code_of_section_7() {
    let h = Host::new();
    h.install(&release_a()); // installed: 1.0.0, BASE_FP
    let marker = |body: &str| h.write(MARKER, body);
    let no_marker = || {
        let _ = std::fs::remove_file(h.join(MARKER));
    };
    let ok_marker = format!(
        "{{\"schema_version\": 3, \"required\": true, \"to_fingerprint\": \"{BASE_FP}\", \"clients\": {{\"codex\": \"ok\", \"claude_desktop\": \"restart_client_required\"}}}}"
    );
    // (setup, process fp, process version, client, restart, reason, exit)
    type Setup<'a> = Box<dyn Fn() + 'a>;
    type Row<'a> = (
        Setup<'a>,
        &'a str,
        &'a str,
        Option<&'a str>,
        bool,
        &'a str,
        i32,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (Box::new(no_marker), BASE_FP, "1.0.0", None, false, "", 0),
        (Box::new(no_marker), V2_FP, "0.9.0", None, true, "fingerprint_mismatch", 1),
        (Box::new(no_marker), V2_FP, "1.0.0", None, true, "fingerprint_mismatch", 1),
        (Box::new(no_marker), BASE_FP, "0.9.0", None, false, "", 0),
        (Box::new(no_marker), "unknown", "0.9.0", None, true, "version_mismatch", 1),
        (Box::new(no_marker), "", "0.9.0", None, true, "version_mismatch", 1),
        (Box::new(no_marker), "unknown", "1.0.0", None, false, "", 0),
        (Box::new(no_marker), "unknown", "", None, false, "", 0),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", None, true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("desktop"), true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("desk"), true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("codex"), false, "", 0),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some(" CODEX "), false, "", 0),
        // An acknowledged client: the marker no longer speaks for it, but
        // the other signals do (the reference as of v7.38.7).
        (Box::new(|| marker(&ok_marker)), "unknown", "1.0.0", Some("codex"), false, "", 0),
        (Box::new(|| marker(&ok_marker)), V2_FP, "1.0.0", Some("codex"), true, "fingerprint_mismatch", 1),
        (Box::new(|| marker(&ok_marker)), "unknown", "0.9.0", Some("codex"), true, "version_mismatch", 1),
        // Not acknowledged, and the process cannot show its fingerprint.
        (Box::new(|| marker(&ok_marker)), "unknown", "1.0.0", Some("desktop"), true, "marker_required", 1),
        (Box::new(|| marker("{}")), BASE_FP, "1.0.0", None, true, "marker_required", 1),
        (Box::new(|| marker("{\"required\": false}")), BASE_FP, "1.0.0", None, false, "", 0),
        (Box::new(|| marker("{oops")), BASE_FP, "1.0.0", Some("codex"), true, "marker_corrupt", 1),
        (Box::new(|| marker("[3]")), BASE_FP, "1.0.0", None, true, "marker_corrupt", 1),
        (Box::new(|| marker("")), BASE_FP, "1.0.0", None, true, "marker_corrupt", 1),
    ];
    for (n, (setup, fp, version, client, restart, reason, exit)) in rows.into_iter().enumerate() {
        setup();
        let mut extra = vec![];
        if let Some(c) = client {
            extra = vec!["--client", c];
        }
        let run = h.status(fp, version, &extra);
        let j = run.json();
        assert_eq!(
            (
                &j["restart_required"],
                j["reason"].as_str().unwrap(),
                run.code
            ),
            (&json!(restart), reason, exit),
            "row {n}: {}",
            run.stdout
        );
    }

    // Every field, once.
    marker(&ok_marker);
    let j = h.status(BASE_FP, "", &["--client", "codex"]).json();
    assert_eq!(
        j,
        json!({
            "schema_version": 1,
            "restart_required": false,
            "reason": "",
            "installed_fingerprint": BASE_FP,
            "process_fingerprint": BASE_FP,
            "fingerprint_match": true,
            "installed_version": "1.0.0",
            "process_version": "1.0.0",
            "version_match": true,
            "marker_exists": true,
            "marker_corrupt": false,
            "client": "codex",
            "client_action": "ok",
            "installed_unavailable_reason": null,
            "marker_problem": null,
            "conservative": null,
            "warnings": [],
        })
    );
    marker("{oops");
    let j = h.status(BASE_FP, "1.0.0", &[]).json();
    assert_eq!(
        (&j["marker_exists"], &j["marker_corrupt"]),
        (&json!(true), &json!(true))
    );
    assert!(j["marker_problem"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{MARKER} is not valid JSON")));

    // An unavailable installed fingerprint: the versions decide (rule 4);
    // "no restart" is exit 0 whatever it rests on.
    no_marker();
    let mut broken = release_a();
    broken.insert("src/plugins/gone.py", "-> nowhere.py".into());
    h.install(&broken);
    let run = h.status(BASE_FP, "0.9.0", &[]);
    let j = run.json();
    assert_eq!((run.code, &j["reason"]), (1, &json!("version_mismatch")));
    assert_eq!(j["installed_fingerprint"], "");
    assert_eq!(
        j["installed_unavailable_reason"],
        "app/src/plugins/gone.py: symlink to nowhere.py is broken"
    );
    let run = h.status(BASE_FP, "1.0.0", &[]);
    assert_eq!(
        (run.code, &run.json()["restart_required"]),
        (0, &json!(false))
    );
}

#[test]
fn status_prints_a_human_answer() {
    let h = Host::new();
    h.install(&release_a());
    let run = h.fpcheck(&[
        "status",
        "--dir",
        "app/src",
        "--marker",
        MARKER,
        "--process-fingerprint",
        V2_FP,
        "--process-version",
        "0.9.0",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        format!("restart required (fingerprint_mismatch)\n  installed  1.0.0  {BASE_FP}\n  process    0.9.0  {V2_FP}\n  marker     absent\n")
    );
}

/// A marker from A to B for clients `codex` and `claude_desktop` (named
/// by an alias).
fn host_with_marker() -> Host {
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    let mut b = bumped();
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
    let run = h.gate(&["--client", "codex", "--client", "Desktop"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    h
}

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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    let mut b = bumped();
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
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

#[test]
fn an_unreadable_or_foreign_snapshot_asks_for_a_restart() {
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    h.install(&bumped()); // docs-only: no marker would be needed
                          // (A missing directory is no longer unusable: it is created when a
                          // marker is needed; see edges::a_fresh_install_gets_its_marker_directory.)
    #[allow(clippy::single_element_loop)]
    for marker in ["state/before.json/mcp-restart-required.json"] {
        let run = h.fpcheck(&[
            "gate", "--dir", "app/src", "--before", BEFORE, "--marker", marker, "--json",
        ]);
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
        let run = h.fpcheck(&[
            "gate", "--dir", "app/src", "--before", BEFORE, "--marker", marker,
        ]);
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
    let run = h.fpcheck(&[
        "status",
        "--dir",
        "app/src",
        "--marker",
        "state/before.json/m.json",
        "--process-fingerprint",
        BASE_FP,
        "--process-version",
        "1.0.0",
        "--json",
    ]);
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
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
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

#[test]
fn status_cache_skips_reads_but_never_misses_a_rename() {
    let h = Host::new();
    h.install(&release_a());
    // Files changed within 2 s of the cached stats are never trusted: wait
    // so that this tree is old enough to be cached.
    std::thread::sleep(Duration::from_millis(2100));
    let status = |fp: &str| {
        h.status(fp, "1.0.0", &["--cache", "state/cache.json"])
            .json()
    };

    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("miss"), &json!(BASE_FP))
    );
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("hit"), &json!(BASE_FP))
    );
    assert_eq!(j["restart_required"], false);

    // Same count, same total size, same newest mtime, same inode: a rename.
    let plugins = h.join("app/src/plugins");
    std::fs::rename(plugins.join("memory.py"), plugins.join("recall.py")).unwrap();
    let renamed = fpcheck::compute(
        &fpcheck::DirSource::new(h.join("app/src")),
        &Default::default(),
    )
    .unwrap();
    let renamed = renamed.as_gate_str().to_string();
    assert_ne!(renamed, BASE_FP);
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("miss"), &json!(renamed))
    );
    assert_eq!(
        (&j["restart_required"], &j["reason"]),
        (&json!(true), &json!("fingerprint_mismatch"))
    );

    // Once the rename is old enough, the cache is trusted again...
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(status(BASE_FP)["cache"], "miss"); // cached right after the rename: racy
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("hit"), &json!(renamed))
    );

    // ...until a file is rewritten with the same size and its old mtime put
    // back: its ctime moved, and no one can set that back.
    let file = plugins.join("recall.py");
    let old_mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "def hello(): return 'v9'\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old_mtime)
        .unwrap();
    let j = status(BASE_FP);
    assert_eq!(j["cache"], "miss");
    assert_ne!(j["installed_fingerprint"], json!(renamed));

    // A corrupt cache is ignored and rewritten.
    h.write(
        "state/cache.json",
        "{\"kind\": \"fpcheck-status-cache\", \"files\": [",
    );
    let j = status(BASE_FP);
    assert_eq!(j["cache"], "corrupt");
    let cache: Value =
        serde_json::from_slice(&std::fs::read(h.join("state/cache.json")).unwrap()).unwrap();
    assert_eq!(cache["fingerprint"], j["installed_fingerprint"]);
}

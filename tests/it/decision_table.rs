//! One decision, whatever asks: the same two releases given to the range
//! (`fpcheck v1..v2`), to `history` and to the production gate (a snapshot
//! of v1's checkout, then v2's checkout installed over it) give the same
//! restart, the same reason and the same marker reason for every row, the
//! unreadable version file included; and `status`, asked by a process
//! still running v1 once the gate is done, tells it to restart exactly
//! when the others say so. python/tests/test_decision_table.py holds the
//! same table for the Python package.

use serde_json::Value;

use crate::support::{git_in, TestRepo};

/// A release: files written (path, content) and paths removed first.
struct Release {
    remove: &'static [&'static str],
    write: &'static [(&'static str, &'static str)],
}

/// One row: v2 over v1, and what every caller must answer for it.
struct Row {
    name: &'static str,
    release: Release,
    /// The range's and `history`'s `restart_required` and `reason`.
    restart: bool,
    reason: &'static str,
    /// The marker reason, or none when no marker is written.
    marker: Option<&'static str>,
    /// `status`'s `restart_required` and `reason` for a process still
    /// running v1 once the gate is done.
    status: (bool, &'static str),
}

const ROWS: &[Row] = &[
    Row {
        name: "code and version changed",
        release: Release {
            remove: &[],
            write: &[
                ("src/app.py", "x = 2\n"),
                ("version.json", "{\"version\": \"1.1.0\"}\n"),
            ],
        },
        restart: true,
        reason: "code_changed",
        marker: Some("brain_update"),
        status: (true, "marker_required"),
    },
    Row {
        name: "only the version changed",
        release: Release {
            remove: &[],
            write: &[
                ("README.md", "docs\n"),
                ("version.json", "{\"version\": \"1.1.0\"}\n"),
            ],
        },
        restart: false,
        reason: "no_runtime_change",
        marker: None,
        status: (false, ""),
    },
    Row {
        name: "force_restart without a code change",
        release: Release {
            remove: &[],
            write: &[(
                "version.json",
                "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
            )],
        },
        restart: true,
        reason: "forced",
        marker: Some("brain_update_force"),
        status: (true, "marker_required"),
    },
    // What the file says cannot be ruled out: a version change and
    // force_restart are assumed, and the code did not change.
    Row {
        name: "a version file that cannot be read",
        release: Release {
            remove: &["src/version.json"],
            write: &[("src/version.json/keep", "")],
        },
        restart: true,
        reason: "forced",
        marker: Some("brain_update_force"),
        status: (true, "marker_required"),
    },
    Row {
        name: "an unreadable version file and changed code",
        release: Release {
            remove: &["src/version.json"],
            write: &[("src/version.json/keep", ""), ("src/app.py", "x = 3\n")],
        },
        restart: true,
        reason: "code_changed",
        marker: Some("brain_update"),
        status: (true, "marker_required"),
    },
];

#[test]
fn range_history_gate_and_status_give_the_same_answer_for_the_same_releases() {
    for row in ROWS {
        let name = row.name;
        let repo = TestRepo::new();
        repo.write("src/app.py", "x = 1\n")
            .write("src/version.json", "{\"version\": \"1.0.0\"}\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n")
            .commit_and_tag("v1", "v1.0.0");
        for path in row.release.remove {
            repo.remove(path);
        }
        for (path, content) in row.release.write {
            repo.write(path, content);
        }
        repo.commit_and_tag("v2", "v2.0.0");

        let range = repo.verdict_json(&["v1.0.0..v2.0.0"]);
        let history = repo.history_json(&[]);
        let step = &history["releases"][0];
        let host = Host::updated(&repo);

        let want = (Value::Bool(row.restart), Value::from(row.reason));
        let verdict = |v: &Value| (v["restart_required"].clone(), v["reason"].clone());
        assert_eq!(verdict(&range), want, "{name}: range");
        assert_eq!(verdict(step), want, "{name}: history");

        let marker = |v: &Value| v.as_str().map(String::from);
        let want = row.marker.map(String::from);
        assert_eq!(
            marker(&range["updater"]["marker_reason"]),
            want,
            "{name}: range"
        );
        assert_eq!(marker(&step["marker_reason"]), want, "{name}: history");
        assert_eq!(marker(&host.gate["reason"]), want, "{name}: gate");
        assert_eq!(host.gate["marker_written"], want.is_some(), "{name}: gate");
        assert_eq!(host.marker.exists(), want.is_some(), "{name}: gate");
        assert_eq!(host.gate["restart_required"], row.restart, "{name}: gate");

        let status = host.status(&repo);
        let (restart, reason) = row.status;
        assert_eq!(
            verdict(&status),
            (Value::Bool(restart), Value::from(reason)),
            "{name}: status"
        );
        assert_eq!(status["marker_exists"], want.is_some(), "{name}: status");
    }
}

/// A host that ran v1's checkout, snapshotted it, then installed v2's and
/// ran the gate.
struct Host {
    _dir: tempfile::TempDir,
    runtime: std::path::PathBuf,
    marker: std::path::PathBuf,
    /// The snapshot of v1: what the running process loaded.
    before: Value,
    /// The gate's report.
    gate: Value,
}

impl Host {
    fn updated(repo: &TestRepo) -> Host {
        let dir = tempfile::tempdir().unwrap();
        let install = dir.path().join("app");
        let checkout = |rev: &str| {
            if install.exists() {
                std::fs::remove_dir_all(&install).unwrap();
            }
            std::fs::create_dir(&install).unwrap();
            let work_tree = format!("--work-tree={}", install.display());
            git_in(repo.path(), &[&work_tree, "checkout", rev, "--", "."]);
        };
        let runtime = install.join("src");
        let rt = runtime.to_str().unwrap();
        let snapshot = dir.path().join("before.json");
        let snap = snapshot.to_str().unwrap();
        let marker = dir.path().join("marker.json");
        let mark = marker.to_str().unwrap();
        checkout("v1.0.0");
        let run = repo.fpcheck(&["snapshot", "--dir", rt, "--out", snap]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let before: Value = serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
        checkout("v2.0.0");
        let run = repo.fpcheck(&[
            "gate", "--dir", rt, "--before", snap, "--marker", mark, "--json",
        ]);
        assert!([0, 3, 4].contains(&run.code), "{}", run.stderr);
        let gate = run.json();
        Host {
            _dir: dir,
            runtime,
            marker,
            before,
            gate,
        }
    }

    /// `fpcheck status --json` for the process still running v1; its exit
    /// code must say the same as its `restart_required`.
    fn status(&self, repo: &TestRepo) -> Value {
        let run = repo.fpcheck(&[
            "status",
            "--dir",
            self.runtime.to_str().unwrap(),
            "--marker",
            self.marker.to_str().unwrap(),
            "--process-fingerprint",
            self.before["fingerprint"].as_str().unwrap(),
            "--process-version",
            self.before["version"].as_str().unwrap(),
            "--json",
        ]);
        let j = run.json();
        let want = if j["restart_required"] == true { 1 } else { 0 };
        assert_eq!(run.code, want, "{}", run.stderr);
        j
    }
}

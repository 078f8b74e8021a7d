//! One decision, whatever asks: the same two releases given to the range
//! (`fpcheck v1..v2`), to `history` and to the production gate (a snapshot
//! of v1's checkout, then v2's checkout installed over it) give the same
//! restart, the same marker and the same marker reason for every row,
//! the unreadable version file included.

use serde_json::Value;

use crate::support::{git_in, TestRepo};

/// A release: files written (path, content) and paths removed first.
struct Release {
    remove: &'static [&'static str],
    write: &'static [(&'static str, &'static str)],
}

/// (name, v2 over v1, the marker reason, or none when no marker).
const ROWS: &[(&str, Release, Option<&str>)] = &[
    (
        "code and version changed",
        Release {
            remove: &[],
            write: &[
                ("src/app.py", "x = 2\n"),
                ("version.json", "{\"version\": \"1.1.0\"}\n"),
            ],
        },
        Some("brain_update"),
    ),
    (
        "only the version changed",
        Release {
            remove: &[],
            write: &[
                ("README.md", "docs\n"),
                ("version.json", "{\"version\": \"1.1.0\"}\n"),
            ],
        },
        None,
    ),
    (
        "force_restart without a code change",
        Release {
            remove: &[],
            write: &[(
                "version.json",
                "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
            )],
        },
        Some("brain_update_force"),
    ),
    (
        // What the file says cannot be ruled out: a version change and
        // force_restart are assumed, and the code did not change.
        "a version file that cannot be read",
        Release {
            remove: &["src/version.json"],
            write: &[("src/version.json/keep", "")],
        },
        Some("brain_update_force"),
    ),
    (
        "an unreadable version file and changed code",
        Release {
            remove: &["src/version.json"],
            write: &[("src/version.json/keep", ""), ("src/app.py", "x = 3\n")],
        },
        Some("brain_update"),
    ),
];

#[test]
fn range_history_and_gate_give_the_same_marker_for_the_same_releases() {
    for (name, release, want) in ROWS {
        let repo = TestRepo::new();
        repo.write("src/app.py", "x = 1\n")
            .write("src/version.json", "{\"version\": \"1.0.0\"}\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n")
            .commit_and_tag("v1", "v1.0.0");
        for path in release.remove {
            repo.remove(path);
        }
        for (path, content) in release.write {
            repo.write(path, content);
        }
        repo.commit_and_tag("v2", "v2.0.0");

        let range = repo.verdict_json(&["v1.0.0..v2.0.0"]);
        let history = repo.history_json(&[]);
        let step = &history["releases"][0];
        let gate = gate_over_checkouts(&repo);

        let marker = |v: &Value| v.as_str().map(String::from);
        let want = want.map(String::from);
        assert_eq!(
            marker(&range["updater"]["marker_reason"]),
            want,
            "{name}: range"
        );
        assert_eq!(marker(&step["marker_reason"]), want, "{name}: history");
        assert_eq!(marker(&gate["reason"]), want, "{name}: gate");
        assert_eq!(gate["marker_written"], want.is_some(), "{name}: gate");
        assert_eq!(
            range["restart_required"], step["restart_required"],
            "{name}: history"
        );
    }
}

/// The gate's report for an install of v1's checkout updated to v2's.
fn gate_over_checkouts(repo: &TestRepo) -> Value {
    let host = tempfile::tempdir().unwrap();
    let install = host.path().join("app");
    let checkout = |rev: &str| {
        if install.exists() {
            std::fs::remove_dir_all(&install).unwrap();
        }
        std::fs::create_dir(&install).unwrap();
        let work_tree = format!("--work-tree={}", install.display());
        git_in(repo.path(), &[&work_tree, "checkout", rev, "--", "."]);
    };
    let dir = install.join("src");
    let dir = dir.to_str().unwrap();
    let snapshot = host.path().join("before.json");
    let snapshot = snapshot.to_str().unwrap();
    let marker = host.path().join("marker.json");
    let marker = marker.to_str().unwrap();
    checkout("v1.0.0");
    let run = repo.fpcheck(&["snapshot", "--dir", dir, "--out", snapshot]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    checkout("v2.0.0");
    let run = repo.fpcheck(&[
        "gate", "--dir", dir, "--before", snapshot, "--marker", marker, "--json",
    ]);
    assert!([0, 3, 4].contains(&run.code), "{}", run.stderr);
    run.json()
}

//! Version files at the gate's edges: the updater's raw reading, Python's
//! parse, unreadable files and files only some Pythons read.

use super::*;

/// A host updated from release A to a code fix, with the install's home
/// `version.json` reading `from` before and `to` after.
fn home_version_update(from: &str, to: &str) -> Host {
    let h = Host::new();
    let mut a = release_a();
    a.insert("version.json", from.into());
    h.install(&a);
    h.snapshot();
    let mut b = release_a();
    b.insert("version.json", to.into());
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
    h
}

#[test]
fn the_updater_reads_raw_values_in_the_home() {
    // {"version": 7} -> {"version": 8} in the install's home, section 5's
    // text unchanged in the root: a version change (section 6).
    let h = home_version_update("{\"version\": 7}\n", "{\"version\": 8}\n");
    let run = h.gate(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["version_changed"], &j["reason"]),
        (&json!(true), &json!("brain_update"))
    );
    assert_eq!(
        (&j["from_version"], &j["to_version"]),
        (&json!("1.0.0"), &json!("1.0.0"))
    );
    assert_eq!(
        (&j["updater_from_version"], &j["updater_to_version"]),
        (&json!("7"), &json!("8"))
    );
    let m = h.marker().unwrap();
    assert_eq!(
        (&m["from_version"], &m["to_version"]),
        (&json!("7"), &json!("8"))
    );

    // " 7.38.7 " -> "7.38.7": the updater sees a change (no strip); the
    // marker records stripped text.
    let h = home_version_update(
        "{\"version\": \" 7.38.7 \"}\n",
        "{\"version\": \"7.38.7\"}\n",
    );
    let j = h.gate(&[]).json();
    assert_eq!(j["version_changed"], true);
    let m = h.marker().unwrap();
    assert_eq!(
        (&m["from_version"], &m["to_version"]),
        (&json!("7.38.7"), &json!("7.38.7"))
    );

    // A version.json without "version" reads "unknown" and hides
    // package.json; null gives "" in the marker.
    let h = Host::new();
    let mut a = release_a();
    a.insert("version.json", "{\"name\": \"x\"}\n".into());
    a.insert("package.json", "{\"version\": \"1.0.0\"}\n".into());
    h.install(&a);
    h.snapshot();
    let mut b = a.clone();
    b.insert("package.json", "{\"version\": \"2.0.0\"}\n".into());
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
    let j = h.gate(&[]).json();
    assert_eq!(j["updater_to_version"], "\"unknown\"");
    assert_eq!(j["version_changed"], false, "neither reading changed");
    let mut c = b.clone();
    c.insert("version.json", "{\"version\": null}\n".into());
    h.install(&c);
    let j = h.gate(&[]).json();
    assert_eq!(j["version_changed"], true, "\"unknown\" -> None");
    let m = h.marker().unwrap();
    assert_eq!(
        (&m["from_version"], &m["to_version"]),
        (&json!("unknown"), &json!(""))
    );
}

#[test]
fn version_files_parse_as_python_does() {
    // Nested 200 deep: valid for Python. The release forces a restart.
    let h = host_at_a();
    let mut b = release_a();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    b.insert(
        "src/version.json",
        format!("{{\"deep\": {deep}, \"version\": \"1.1.0\", \"force_restart\": true}}\n"),
    );
    b.insert("src/package.json", "{\"version\": \"1.0.0\"}\n".into());
    h.install(&b);
    let j = h.gate(&[]).json();
    assert_eq!(
        (&j["to_version"], &j["reason"]),
        (&json!("1.1.0"), &json!("brain_update_force"))
    );
    assert_eq!(j["marker_written"], true);

    // Lone surrogates are different strings: a version change.
    let h = Host::new();
    let mut a = release_a();
    a.insert("src/version.json", "{\"version\": \"\\ud800\"}\n".into());
    h.install(&a);
    h.snapshot();
    let mut b = a.clone();
    b.insert("src/version.json", "{\"version\": \"\\udc00\"}\n".into());
    b.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    h.install(&b);
    let j = h.gate(&[]).json();
    assert_eq!(
        (&j["version_changed"], &j["reason"]),
        (&json!(true), &json!("brain_update"))
    );

    // -NaN is not JSON for Python: the file is skipped (with a warning), and
    // package.json gives the version.
    let h = Host::new();
    let mut a = release_a();
    a.insert(
        "src/version.json",
        "{\"version\": \"9.9.9\", \"force_restart\": -NaN}\n".into(),
    );
    a.insert("src/package.json", "{\"version\": \"1.0.0\"}\n".into());
    h.install(&a);
    let run = h.status(BASE_FP, "1.0.0", &[]);
    let j = run.json();
    assert_eq!(j["installed_version"], "1.0.0");
    assert!(
        j["warnings"][0]
            .as_str()
            .unwrap()
            .contains("not valid JSON for Python"),
        "{}",
        j["warnings"]
    );

    // null and true read as "None" and "True" (str(value)).
    for (raw, text) in [
        ("null", "None"),
        ("true", "True"),
        ("7", "7"),
        ("\" 7.38.7 \"", "7.38.7"),
    ] {
        let mut a = release_a();
        a.insert("src/version.json", format!("{{\"version\": {raw}}}\n"));
        h.install(&a);
        let j = h.status(BASE_FP, "", &[]).json();
        assert_eq!(j["installed_version"], text, "{raw}");
    }
}

#[test]
fn unreadable_version_files_are_warned_about_and_ask_for_a_restart() {
    for (name, make) in [
        ("FIFO", (|p: &Path| mkfifo(p)) as fn(&Path)),
        ("device", |p: &Path| mkzero(p)),
        ("huge", |p: &Path| huge(p)),
        ("directory", |p: &Path| std::fs::create_dir(p).unwrap()),
    ] {
        // A docs-only update (no marker by section 6) whose package.json
        // cannot be read: fpcheck cannot rule out what it says.
        let h = host_at_a();
        h.install(&bumped());
        let bad = h.join("app/src/package.json");
        make(&bad);
        let run = run_bounded(&h, &Host::gate_args(&[]));
        assert_eq!(run.code, 4, "{name}: {}", run.stderr);
        let j = run.json();
        assert_eq!(
            (&j["restart_required"], &j["marker_written"]),
            (&json!(true), &json!(true)),
            "{name}"
        );
        assert_eq!(
            j["conservative"],
            "version files cannot be read (app/src/package.json): a version change or force_restart cannot be ruled out",
            "{name}"
        );
        assert!(
            run.stderr
                .contains("fpcheck: warning: app/src/package.json "),
            "{name}: {}",
            run.stderr
        );
        // status answers (bounded) and says why.
        let run = run_bounded(
            &h,
            &Host::status_args("none.json", BASE_FP, "1.1.0", &["--json"]),
        );
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(
            run.json()["warnings"][0]
                .as_str()
                .unwrap()
                .starts_with("app/src/package.json "),
            "{name}"
        );
        // Without a usable process fingerprint, section 7 would fall back
        // to the versions, which the unreadable file may hide: restart.
        let run = run_bounded(
            &h,
            &Host::status_args("none.json", "unknown", "1.1.0", &["--json"]),
        );
        let j = run.json();
        assert_eq!(
            (run.code, &j["reason"]),
            (1, &json!("version_mismatch")),
            "{name}"
        );
        assert_eq!(
            j["conservative"],
            "version files cannot be read (app/src/package.json) and the fingerprints cannot prove the process current",
            "{name}"
        );
    }
}

#[test]
fn a_version_file_only_some_pythons_read_asks_for_a_restart() {
    // 2,000 levels: Python 3.11 raises RecursionError, 3.12+ reads it.
    let h = host_at_a();
    let mut b = bumped();
    let deep = format!("{}1{}", "[".repeat(2000), "]".repeat(2000));
    b.insert(
        "src/package.json",
        format!("{{\"deep\": {deep}, \"force_restart\": true}}\n"),
    );
    h.install(&b);
    let run = h.gate(&[]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["marker_written"], true);
    assert!(
        j["conservative"]
            .as_str()
            .unwrap()
            .starts_with("version files cannot be read (app/src/package.json)"),
        "{}",
        j["conservative"]
    );
}

#[test]
fn the_range_errs_toward_restart_on_an_unreadable_worktree_version_file() {
    use crate::support::TestRepo;
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): pass\n")
        .write("version.json", "{\"version\": \"1.0.0\"}");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    // Docs-only change, and a FIFO where package.json would be read.
    repo.write("README.md", "# docs\n");
    mkfifo(&repo.join("src/package.json"));
    let run = repo.fpcheck(&["v1.0.0..", "--worktree", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        (&j["restart_required"], &j["updater"]["marker_reason"]),
        (&json!(true), &json!("brain_update_force"))
    );
    let codes = crate::support::warning_codes(&j);
    assert!(codes.contains(&"version_file_unreadable"), "{codes:?}");
}

/// `version.json` a directory: the installed reading (`--dir`, what the
/// gate snapshots) reports it as unreadable and errs toward "restart"
/// (docs/gate.md), and `--worktree` and the commit now say the same, in the
/// same words. Before, the working tree and the commit skipped it
/// silently, so the range's prediction was not the gate's reading.
#[test]
fn a_directory_at_version_json_is_unreadable_in_every_reading() {
    let repo = crate::support::TestRepo::new();
    repo.write("src/app.py", "x = 1\n")
        .write("src/version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1");
    repo.tag("v1.0.0");
    repo.remove("src/version.json")
        .write("src/version.json/keep", "");
    let message = "src/version.json is a directory, not a regular file: fpcheck cannot rule out \
                   a version change or force_restart in it, so the gate asks for a restart";
    let warning = json!([{"code": "version_file_unreadable", "message": message}]);

    let run = repo.fpcheck(&["snapshot", "--dir", "src"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let snap = run.json();
    assert_eq!(
        (
            &snap["unreadable_version_files"],
            &snap["warnings"],
            &snap["warning_codes"]
        ),
        (
            &json!(["src/version.json"]),
            &json!([message]),
            &json!(["version_file_unreadable"])
        )
    );
    let range = |args: &[&str]| {
        let run = repo.fpcheck(args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let j = run.json();
        assert_eq!(j["warnings"], warning, "{args:?}");
        assert_eq!(j["restart_required"], true, "{args:?}");
    };
    range(&["v1.0.0..", "--worktree", "--format", "json"]);
    repo.commit("a directory at version.json");
    range(&["v1.0.0..HEAD", "--format", "json"]);
}

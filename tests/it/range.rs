//! `fpcheck A..B`: verdicts, explanations, formats and bad input, on
//! repositories built with the git CLI.

use serde_json::{json, Value};

use crate::support::{fpcheck_in, git_in, warning_codes, TestRepo};

/// v1.0.0 (lightweight tag) with a runtime, docs, and an excluded folder.
fn released() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): pass\n")
        .write("src/plugins/__init__.py", "")
        .write("src/plugins/memory.py", "v = 1\n")
        .write("src/tests/test_x.py", "t\n")
        .write("README.md", "# readme\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn analyse(repo: &TestRepo, range: &str) -> Value {
    let run = repo.fpcheck(&[range, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn a_real_fix_forces_a_restart_and_names_the_file() {
    let repo = released();
    repo.write("src/plugins/memory.py", "v = 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("fix");
    repo.tag_annotated("v1.1.0");
    let j = analyse(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(
        j["matrix_row"],
        json!({"number": 1, "touches": "a real fix in a runtime file"})
    );
    assert_eq!(
        j["updater"],
        json!({"writes_marker": true, "marker_reason": "brain_update"})
    );
    assert_eq!(
        j["process_check"],
        json!({"fires": true, "reason": "fingerprint_mismatch"})
    );
    assert_eq!(j["from"]["ref"], "v1.0.0");
    assert_eq!(j["to"]["ref"], "v1.1.0");
    assert_eq!(j["to"]["commit"], repo.git(&["rev-parse", "HEAD"]));
    assert_eq!(j["from"]["version"], "1.0.0");
    assert_eq!(j["to"]["version"], "1.1.0");
    assert_eq!(j["to"]["version_file"], "version.json");
    assert_eq!(j["to"]["force_restart"], false);
    assert_eq!(j["to"]["runtime_files"], 3);
    let to_fp = repo.fpcheck(&["fingerprint", "--rev", "v1.1.0"]).stdout;
    assert_eq!(j["to"]["fingerprint"], to_fp.trim());
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/plugins/memory.py", "status": "modified", "change_kind": "code"}])
    );
    assert_eq!(
        j["changes"]["ignored"],
        json!([{"path": "version.json", "status": "modified", "why": "outside_root"}])
    );
    assert_eq!(j["warnings"], json!([]));
}

#[test]
fn docs_scripts_and_excluded_changes_do_not_count_and_say_why() {
    let repo = released();
    repo.write("README.md", "# new readme\n")
        .write("src/scripts/backfill.py", "b\n")
        .write("src/tests/test_x.py", "t2\n")
        .write("src/notes.md", "n\n")
        .write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit("docs");
    let j = analyse(&repo, "v1.0.0..");
    assert_eq!(j["to"]["ref"], "HEAD");
    assert_eq!(
        (j["restart_required"].clone(), j["reason"].clone()),
        (json!(false), json!("no_runtime_change"))
    );
    assert_eq!(j["updater"]["writes_marker"], false);
    assert_eq!(j["process_check"]["fires"], false);
    assert_eq!(j["from"]["fingerprint"], j["to"]["fingerprint"]);
    assert_eq!(j["changes"]["runtime"], json!([]));
    assert_eq!(
        j["changes"]["ignored"],
        json!([
            {"path": "README.md", "status": "modified", "why": "outside_root"},
            {"path": "src/notes.md", "status": "added", "why": "not_runtime_extension"},
            {"path": "src/scripts/backfill.py", "status": "added", "why": "excluded", "excluded_name": "scripts"},
            {"path": "src/tests/test_x.py", "status": "modified", "why": "excluded", "excluded_name": "tests"},
            {"path": "version.json", "status": "modified", "why": "outside_root"},
        ])
    );
    assert_eq!(j["matrix_row"]["number"], 5);
}

#[test]
fn renames_and_mode_changes() {
    let repo = released();
    repo.git(&["mv", "src/plugins/memory.py", "src/plugins/store.py"]);
    make_executable(&repo.join("src/server.py"));
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("rename");
    let j = analyse(&repo, "v1.0.0..HEAD");
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/plugins/store.py", "status": "renamed", "old_path": "src/plugins/memory.py", "change_kind": "code"},
            {"path": "src/server.py", "status": "mode_changed", "change_kind": "code"},
        ])
    );
}

#[test]
fn mode_only_change_does_not_restart() {
    let repo = released();
    make_executable(&repo.join("src/server.py"));
    repo.write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit("chmod");
    let j = analyse(&repo, "v1.0.0..");
    assert_eq!(j["restart_required"], false);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/server.py", "status": "mode_changed", "change_kind": "code"}])
    );
}

#[test]
fn force_restart_cases_and_their_warnings() {
    let repo = released();
    repo.write(
        "version.json",
        "{\"version\": \"1.1.0\", \"force_restart\": \"false\"}\n",
    );
    repo.commit_and_tag("forced by a string", "v1.1.0");
    let j = analyse(&repo, "v1.0.0..v1.1.0");
    assert_eq!(
        (j["restart_required"].clone(), j["reason"].clone()),
        (json!(true), json!("forced"))
    );
    assert_eq!(j["updater"]["marker_reason"], "brain_update_force");
    assert_eq!(j["to"]["force_restart"], true);
    assert_eq!(j["to"]["force_restart_raw"], "false");
    assert_eq!(j["matrix_row"]["number"], 7);
    assert_eq!(j["warnings"][0]["code"], "force_restart_not_boolean");
    assert_eq!(
        j["warnings"][0]["message"],
        "version.json: \"force_restart\" is \"false\", not a JSON boolean: the gate reads it as on"
    );

    repo.write(
        "version.json",
        "{\"version\": \"1.2.0\", \"force_restart\": true}\n",
    );
    repo.commit("still forced");
    let j = analyse(&repo, "v1.1.0..");
    let codes = warning_codes(&j);
    assert!(codes.contains(&"force_restart_carried_over"), "{codes:?}");
}

#[test]
fn code_change_without_version_bump_and_backwards_versions_warn() {
    let repo = released();
    repo.write("src/server.py", "def main(): return 2\n");
    repo.commit("same version");
    let j = analyse(&repo, "v1.0.0..");
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["updater"]["writes_marker"], false);
    assert_eq!(j["process_check"]["reason"], "fingerprint_mismatch");
    assert_eq!(j["matrix_row"], Value::Null);
    assert_eq!(j["warnings"][0]["code"], "code_changed_version_unchanged");

    repo.write("version.json", "{\"version\": \"0.9.0\"}\n");
    repo.commit("backwards");
    let j = analyse(&repo, "v1.0.0..");
    let codes = warning_codes(&j);
    assert_eq!(codes, ["version_went_backwards"]);
}

#[test]
fn version_files_missing_empty_invalid_or_not_a_string() {
    let repo = released();
    for (content, code, version) in [
        (None, None, Value::Null),
        (Some(""), Some("version_file_invalid"), Value::Null),
        (Some("{not json"), Some("version_file_invalid"), Value::Null),
        (Some("[1, 2]"), Some("version_file_invalid"), Value::Null),
        // Section 5: the gate reads str(7) = "7".
        (
            Some("{\"version\": 7}"),
            Some("version_not_string"),
            json!("7"),
        ),
    ] {
        match content {
            Some(c) => {
                repo.write("version.json", c);
            }
            None => {
                let _ = std::fs::remove_file(repo.join("version.json"));
            }
        }
        repo.write("package.json", "{\"name\": \"x\"}\n");
        repo.commit("version file");
        let j = analyse(&repo, "v1.0.0..");
        assert_eq!(j["to"]["version"], version, "{content:?}");
        let codes = warning_codes(&j);
        assert_eq!(codes.first().copied(), code, "{content:?}: {codes:?}");
        // The version went from 1.0.0 to none: that is a change the gate sees.
        assert_eq!(j["version_changed"], true);
    }
    repo.write("package.json", "{\"version\": \"2.0.0\"}\n");
    repo.remove("version.json");
    repo.commit("package.json carries the version");
    let j = analyse(&repo, "v1.0.0..");
    assert_eq!(
        (j["to"]["version"].clone(), j["to"]["version_file"].clone()),
        (json!("2.0.0"), json!("package.json"))
    );
}

#[test]
fn unrelated_histories_compare_by_trees() {
    let repo = released();
    repo.git(&["checkout", "-q", "--orphan", "other"]);
    repo.git(&["rm", "-rq", "--cached", "."]);
    repo.write("src/app.py", "other\n")
        .write("version.json", "{\"version\": \"9.0.0\"}\n");
    repo.remove("src/server.py")
        .remove("src/plugins")
        .remove("src/tests")
        .remove("README.md");
    repo.commit("unrelated");
    let j = analyse(&repo, "v1.0.0..other");
    assert_eq!(j["reason"], "code_changed");
    let statuses: Vec<(&str, &str)> = j["changes"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("src/app.py", "added"),
            ("src/plugins/__init__.py", "deleted"),
            ("src/plugins/memory.py", "deleted"),
            ("src/server.py", "deleted")
        ]
    );
}

#[test]
fn no_range_uses_the_latest_tag_and_explains_when_there_is_none() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n");
    repo.commit("untagged");
    let run = repo.fpcheck(&[]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.contains("no tag is reachable from `HEAD`")
            && run.stderr.contains("tag the last release"),
        "{}",
        run.stderr
    );

    let repo = released();
    repo.write("src/server.py", "def main(): return 3\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("next");
    let j = repo.fpcheck(&["--format", "json"]).json();
    assert_eq!(
        (j["from"]["ref"].clone(), j["to"]["ref"].clone()),
        (json!("v1.0.0"), json!("HEAD"))
    );
    assert_eq!(
        j["notes"][0],
        "no range given: comparing v1.0.0, the highest version of the tags reachable from HEAD, with HEAD"
    );
    repo.tag("v1.1.0");
    let j = repo.fpcheck(&["--format", "json"]).json();
    assert_eq!(j["from"]["ref"], "v1.0.0");
    assert!(j["notes"][0]
        .as_str()
        .unwrap()
        .contains("HEAD is tagged v1.1.0"));
}

#[test]
fn bad_ranges_and_unknown_refs_are_clear_errors() {
    let repo = released();
    let run = repo.fpcheck(&["v1.0.0..v9"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr
            .starts_with("fpcheck: error: unknown revision `v9`"),
        "{}",
        run.stderr
    );
    let run = repo.fpcheck(&["v1.0.0...HEAD"]);
    run.assert_error(2, "symmetric ranges");
    let run = repo.fpcheck(&["v1.0.0"]);
    run.assert_error(2, "is not a range");
    let run = repo.fpcheck(&["v1.0.0..HEAD", "--worktree"]);
    assert_eq!(run.code, 2);
}

#[test]
fn shallow_clone_lacking_one_end_says_how_to_fetch_it() {
    let repo = released();
    repo.write("src/server.py", "def main(): return 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let parent = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    git_in(
        parent.path(),
        &[
            "clone",
            "-q",
            "--depth=1",
            "--branch",
            "v1.1.0",
            &url,
            "shallow",
        ],
    );
    let shallow = parent.path().join("shallow");
    let run = fpcheck_in(&shallow, &["v1.0.0..v1.1.0"]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stderr.contains("`v1.0.0`")
            && run.stderr.contains("git fetch --depth=1 origin tag v1.0.0"),
        "{}",
        run.stderr
    );
    git_in(
        &shallow,
        &["fetch", "-q", "--depth=1", "origin", "tag", "v1.0.0"],
    );
    let run = fpcheck_in(&shallow, &["v1.0.0..v1.1.0", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["reason"], "code_changed");
}

#[test]
fn exit_code_separates_restart_from_errors() {
    let repo = released();
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit_and_tag("docs", "v1.0.1");
    repo.write("src/server.py", "changed\n")
        .write("version.json", "{\"version\": \"1.0.2\"}\n");
    repo.commit("code");
    assert_eq!(repo.fpcheck(&["v1.0.0..v1.0.1", "--exit-code"]).code, 0);
    assert_eq!(repo.fpcheck(&["v1.0.1..", "--exit-code"]).code, 1);
    assert_eq!(repo.fpcheck(&["v1.0.1..nope", "--exit-code"]).code, 4);
    assert_eq!(
        repo.fpcheck(&["v1.0.1..", "--exit-code", "--format", "bogus"])
            .code,
        2
    );
}

#[test]
fn markdown_is_safe_for_pull_requests() {
    let repo = released();
    let hostile = [
        "src/a|b.py",
        "src/`tick`.py",
        "src/*star*.py",
        "src/<img src=x onerror=alert(1)>.py",
        "src/@someone.py",
        "src/new\nline.py",
        "docs/[link](http:evil).md",
    ];
    for p in hostile {
        repo.write(p, "x\n");
    }
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("hostile names");
    let run = repo.fpcheck(&["v1.0.0..", "--format", "markdown"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let md = run.stdout;
    assert!(md.starts_with("<!-- fpcheck:report -->\n"), "{md}");
    assert!(!md.contains("<img"), "{md}");
    assert!(!md.contains("@someone"), "{md}");
    assert!(!md.contains("`tick`"), "{md}");
    assert!(!md.contains("*star*"), "{md}");
    assert!(!md.contains("[link]"), "{md}");
    // Every table row keeps its three cells: no path added a `|` or a newline.
    for line in md
        .lines()
        .filter(|l| l.starts_with("| added") || l.starts_with("| modified"))
    {
        assert_eq!(
            line.matches('|').count(),
            if line.contains("outside") || line.contains("under") || line.contains("not a runtime")
            {
                4
            } else {
                3
            },
            "{line}"
        );
    }
    assert!(md.contains("<code>src/a&#124;b.py</code>"), "{md}");
    assert!(md.contains("<code>src/new␤line.py</code>"), "{md}");
    assert!(
        md.contains("<code>src/&#64;&#8288;someone.py</code>"),
        "{md}"
    );
}

#[test]
fn templates_render_the_json_context_and_output_goes_to_a_file() {
    let repo = released();
    repo.write("src/server.py", "changed\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("code");
    repo.write("my.tera", "{{ reason }} {{ from.version }}->{{ to.version }} {% for c in changes.runtime %}{{ c.path }}{% endfor %}\n");
    let run = repo.fpcheck(&["v1.0.0..", "--template", "my.tera", "--output", "out.txt"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(repo.join("out.txt")).unwrap(),
        "code_changed 1.0.0->1.1.0 src/server.py\n"
    );

    repo.write("bad.tera", "{{ nope.field }}");
    let run = repo.fpcheck(&["v1.0.0..", "--template", "bad.tera"]);
    run.assert_error(2, "bad.tera");
}

/// A template path that is a FIFO no one writes is refused at once, not
/// waited on.
#[test]
fn a_template_that_is_a_fifo_is_refused_without_hanging() {
    let repo = released();
    let fifo = repo.join("pipe.tera");
    crate::support::mkfifo(&fifo, 0o600);
    let run = repo.fpcheck(&["v1.0.0..", "--template", "pipe.tera"]);
    run.assert_error(2, "cannot read the template pipe.tera");
}

#[test]
fn worktree_mode_asks_before_committing() {
    let repo = released();
    repo.write("src/plugins/memory.py", "v = 99\n")
        .write("src/plugins/new.py", "n\n");
    repo.git(&["mv", "src/server.py", "src/main.py"]);
    let j = repo
        .fpcheck(&["v1.0.0..", "--worktree", "--format", "json"])
        .json();
    assert_eq!(j["to"]["ref"], "WORKTREE");
    assert_eq!(j["to"]["worktree"], true);
    assert_eq!(j["to"]["version_file"], "version.json");
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/main.py", "status": "renamed", "old_path": "src/server.py", "change_kind": "code"},
            {"path": "src/plugins/memory.py", "status": "modified", "change_kind": "code"},
            {"path": "src/plugins/new.py", "status": "added", "change_kind": "code"},
        ])
    );
    let dir_fp = repo.fpcheck(&["fingerprint", "--dir", "src"]).stdout;
    assert_eq!(j["to"]["fingerprint"], dir_fp.trim());
}

#[test]
fn the_demo_agrees_with_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let run = fpcheck_in(dir.path(), &["demo", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = run.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let verdicts: Vec<(u64, bool, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["row"].as_u64().unwrap(),
                r["analysis"]["restart_required"].as_bool().unwrap(),
                r["analysis"]["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (1, true, "code_changed"),
            (2, true, "code_changed"),
            (3, false, "no_runtime_change"),
            (4, false, "no_runtime_change"),
            (5, false, "no_runtime_change"),
            (6, false, "no_runtime_change"),
            (7, true, "forced"),
            (8, true, "fingerprint_unavailable"),
        ]
    );
    assert!(rows.iter().all(|r| r["agrees"] == true));
    let human = fpcheck_in(dir.path(), &["demo"]);
    assert!(
        human.stdout.contains("Every verdict agrees with the spec."),
        "{}",
        human.stdout
    );
}

#[test]
fn an_unavailable_end_with_the_same_files_still_restarts() {
    let repo = released();
    repo.symlink("src/broken.py", "missing.py");
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("broken link");
    let run = repo.fpcheck(&["v1.0.0..", "--format", "json", "--exit-code"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let j = run.json();
    assert_eq!(j["reason"], "fingerprint_unavailable");
    assert_eq!(j["to"]["fingerprint"], "");
    assert_eq!(
        j["to"]["unavailable_reason"],
        "src/broken.py: symlink to missing.py is broken"
    );
    let table = repo.fpcheck(&["v1.0.0.."]).stdout;
    assert!(table.contains("a fingerprint is unavailable"), "{table}");
}

#[test]
fn a_closed_pipe_never_reads_as_no_restart() {
    let repo = released();
    repo.write("src/server.py", "changed\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("code");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fpcheck"))
        .current_dir(repo.path())
        .args(["v1.0.0..", "--exit-code", "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before fpcheck writes
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(0));
}

#[test]
fn python_json_extensions_in_version_files_are_read_as_the_gate_reads_them() {
    let repo = released();
    repo.write(
        "version.json",
        "{\"version\": \"1.1.0\", \"force_restart\": NaN}\n",
    );
    repo.commit("NaN");
    let j = analyse(&repo, "v1.0.0..");
    assert_eq!(
        (j["reason"].clone(), j["to"]["force_restart"].clone()),
        (json!("forced"), json!(true))
    );
    assert_eq!(j["to"]["version"], "1.1.0");
    let codes = warning_codes(&j);
    assert!(codes.contains(&"version_file_python_json"), "{codes:?}");
}

#[test]
fn roots_must_stay_inside_the_repository_and_the_top_has_no_parent() {
    let repo = released();
    for bad in ["/src", "../x"] {
        let run = repo.fpcheck(&["v1.0.0..", "--root", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
    }
    // A version file above the working tree is not part of the release.
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(
        outer.path().join("package.json"),
        "{\"version\": \"9.9.9\", \"force_restart\": true}",
    )
    .unwrap();
    let top = outer.path().join("repo");
    std::fs::create_dir(&top).unwrap();
    git_in(&top, &["init", "-q"]);
    std::fs::write(top.join("a.py"), "a\n").unwrap();
    std::fs::write(top.join("version.json"), "{\"version\": \"1.0.0\"}").unwrap();
    git_in(&top, &["add", "-A"]);
    git_in(&top, &["commit", "-q", "-m", "top-level runtime"]);
    git_in(&top, &["tag", "v1"]);
    for root in [".", "./"] {
        let run = fpcheck_in(
            &top,
            &["v1..", "--worktree", "--root", root, "--format", "json"],
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        let j = run.json();
        assert_eq!(
            (j["to"]["force_restart"].clone(), j["to"]["version"].clone()),
            (json!(false), json!("1.0.0")),
            "{root}"
        );
        assert_eq!(j["reason"], "no_runtime_change");
    }
}

#[test]
fn the_table_escapes_control_characters_in_names() {
    let repo = released();
    repo.write("src/evil\u{1b}[2J\u{7}.py", "x\n");
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("a name with ESC and BEL");
    let run = repo.fpcheck(&["v1.0.0.."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
    assert!(!run.stdout.contains('\u{7}'), "{}", run.stdout);
    assert!(
        run.stdout.contains("src/evil\\x1b[2J\\x07.py"),
        "{}",
        run.stdout
    );
}

/// A template may come with a pull request and be rendered in CI: it sees
/// the report, never the environment (where `GITHUB_TOKEN` lives).
#[test]
fn a_template_cannot_read_the_environment() {
    let repo = released();
    repo.write(
        "leak.tera",
        "E={{ get_env(name=\"SECRET_TOKEN\", default=\"none\") }}\n",
    );
    for args in [
        vec!["v1.0.0..", "--template", "leak.tera"],
        vec!["v1.0.0..", "--template", "leak.tera", "-o", "out.md"],
    ] {
        let out = crate::support::fpcheck_command(repo.path())
            .args(&args)
            .env("SECRET_TOKEN", "hunter2")
            .output()
            .unwrap();
        let run = crate::support::Run::finished(out);
        assert_ne!(run.code, 0, "{args:?}: {}", run.stdout);
        assert!(!run.stdout.contains("hunter2"), "{args:?}: {}", run.stdout);
        assert!(
            run.stderr.contains("get_env is not available"),
            "{args:?}: {}",
            run.stderr
        );
        let written = std::fs::read_to_string(repo.join("out.md")).unwrap_or_default();
        assert!(!written.contains("hunter2"), "{args:?}: {written}");
    }
}

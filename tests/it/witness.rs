//! The witness: a "no restart" on a tree whose checkout fpcheck emulates
//! is confirmed by git's own checkout of both ends (docs/spec.md section
//! 4.2), in the range and in `history`.

use std::path::Path;

use crate::support::{fpcheck_command, git_in, Run, TestRepo};

/// A release that changes no runtime file of a tree whose `.gitattributes`
/// converts its runtime files (v1.0.0 → v1.1.0), then one that changes
/// `src/a.py` from `0` to `1` (v1.1.0 → v1.2.0).
fn attributes_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitattributes", "*.py text eol=crlf\n")
        .write("src/a.py", "0\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("one", "v1.0.0");
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n")
        .commit_and_tag("docs", "v1.1.0");
    repo.write("src/a.py", "1\n")
        .write("version.json", "{\"version\": \"1.2.0\"}\n")
        .commit_and_tag("code", "v1.2.0");
    repo
}

/// A tree with nothing fpcheck emulates: its checkout is its blobs.
fn ordinary_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("one", "v1.0.0");
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n")
        .commit_and_tag("docs", "v1.1.0");
    repo
}

/// The fingerprint of `rev`'s runtime as installed from a real `git
/// clone` of it: `fpcheck fingerprint --dir` on the clone's `src`.
fn cloned_fingerprint(repo: &TestRepo, rev: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("clone");
    git_in(
        dir.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "clone"],
    );
    git_in(&clone, &["checkout", "-q", rev]);
    let run =
        crate::support::fpcheck_in(&clone, &["fingerprint", "--dir", "src", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["fingerprint"].as_str().unwrap().to_string()
}

fn range_json(repo: &TestRepo, args: &[&str]) -> (Run, serde_json::Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json", "--no-cache"]);
    let run = repo.fpcheck(&all);
    let json = run.json();
    (run, json)
}

#[test]
fn git_confirms_a_no_restart_on_an_attributes_tree() {
    let repo = attributes_repo();
    let (run, j) = range_json(&repo, &["v1.0.0..v1.1.0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["reason"], "no_runtime_change");
    let w = &j["witness"];
    assert_eq!(w["mode"], "auto");
    assert_eq!(w["status"], "confirmed", "{w}");
    assert_eq!(
        w["why"],
        "a .gitattributes can apply to its runtime or version files at v1.0.0"
    );
    assert_eq!(w["restart_required"], false);
    assert_eq!(w["reason"], "no_runtime_change");
    assert!(w["git"].as_str().unwrap().starts_with("git version "));
    // git's checkout in the witness is a real clone's, CRLF and all.
    assert_eq!(
        w["fingerprints"]["from"],
        cloned_fingerprint(&repo, "v1.0.0")
    );
    assert_eq!(w["fingerprints"]["to"], cloned_fingerprint(&repo, "v1.1.0"));
    // One line in the table and in Markdown.
    let table = repo.fpcheck(&["v1.0.0..v1.1.0", "--no-cache"]);
    assert!(
        table.stdout.contains(
            "\nwitness: confirmed: git's own checkout of each end gives the same fingerprint and the same verdict\n"
        ),
        "{}",
        table.stdout
    );
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--no-cache", "--format", "markdown"]);
    assert!(
        md.stdout
            .contains("does not fire  \n**Witness:** confirmed: git"),
        "{}",
        md.stdout
    );
    // A restart needs no witness.
    let (_, j) = range_json(&repo, &["v1.1.0..v1.2.0"]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["witness"]["status"], "not_needed");
    // history confirms its free release, and only that one.
    let h = repo.history_json(&["--no-cache"]);
    let updates = h["releases"].as_array().unwrap();
    assert_eq!(updates[0]["witness"]["status"], "confirmed");
    assert!(updates[1].get("witness").is_none(), "{}", updates[1]);
}

#[test]
fn always_runs_on_an_ordinary_tree_auto_and_never_do_not() {
    let repo = ordinary_repo();
    let (_, auto) = range_json(&repo, &["v1.0.0..v1.1.0"]);
    assert_eq!(auto["witness"]["status"], "not_needed");
    assert_eq!(auto["witness"]["why"], serde_json::Value::Null);
    let (_, always) = range_json(&repo, &["v1.0.0..v1.1.0", "--witness", "always"]);
    assert_eq!(always["witness"]["status"], "confirmed");
    assert_eq!(always["witness"]["why"], "--witness always");
    assert_eq!(
        always["witness"]["fingerprints"]["to"],
        cloned_fingerprint(&repo, "v1.1.0")
    );
    let (_, never) = range_json(&repo, &["v1.0.0..v1.1.0", "--witness", "never"]);
    assert_eq!(never["witness"]["status"], "off");
    // On an ordinary tree, the table and Markdown are as they were.
    for format in ["table", "markdown"] {
        let shown = |witness: &str| {
            let run = repo.fpcheck(&[
                "v1.0.0..v1.1.0",
                "--no-cache",
                "--format",
                format,
                "--witness",
                witness,
            ]);
            assert_eq!(run.code, 0, "{}", run.stderr);
            run.stdout
        };
        assert_eq!(shown("auto"), shown("never"), "{format}");
        assert!(!shown("auto").to_lowercase().contains("witness"));
    }
    let h = repo.history_json(&["--no-cache", "--witness", "always"]);
    assert_eq!(h["releases"][0]["witness"]["status"], "confirmed");
    let h = repo.history_json(&["--no-cache"]);
    assert!(h["releases"][0].get("witness").is_none());
    // never: not even on a tree that calls for it.
    let repo = attributes_repo();
    let (_, never) = range_json(&repo, &["v1.0.0..v1.1.0", "--witness", "never"]);
    assert_eq!(never["witness"]["status"], "off");
    assert_eq!(never["restart_required"], false);
}

/// fpcheck with `PATH` naming only an empty directory: no `git` to run.
fn without_git(repo: &TestRepo, args: &[&str]) -> Run {
    let empty = tempfile::tempdir().unwrap();
    let out = fpcheck_command(repo.path())
        .env("PATH", empty.path())
        .args(args)
        .output()
        .unwrap();
    Run::finished(out)
}

#[test]
fn without_git_on_path_the_verdict_is_unconfirmed() {
    let repo = attributes_repo();
    let run = without_git(&repo, &["v1.0.0..v1.1.0", "--no-cache", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["witness"]["status"], "unconfirmed");
    assert_eq!(j["witness"]["summary"], "unconfirmed: no `git` on PATH");
    let codes = crate::support::warning_codes(&j);
    assert!(codes.contains(&"witness_unconfirmed"), "{codes:?}");
    let table = without_git(&repo, &["v1.0.0..v1.1.0", "--no-cache"]);
    assert!(table
        .stdout
        .contains("\nwitness: unconfirmed: no `git` on PATH\n"));
    assert!(
        table.stdout.contains("! witness_unconfirmed: fpcheck's \"no restart\" from v1.0.0 to v1.1.0 is unconfirmed: no `git` on PATH"),
        "{}",
        table.stdout
    );
    let h = without_git(&repo, &["history", "--no-cache", "--format", "json"]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    assert_eq!(h.json()["releases"][0]["witness"]["status"], "unconfirmed");
}

/// fpcheck with a `git` on `PATH` that answers `git version` and fails
/// every other command, as a git that refuses a tree (a name it will not
/// check out) does.
fn with_failing_git(repo: &TestRepo, args: &[&str]) -> Run {
    let bin = tempfile::tempdir().unwrap();
    let git = bin.path().join("git");
    std::fs::write(
        &git,
        "#!/bin/sh\nif [ \"$1\" = version ]; then echo 'git version 2.47.3'; exit 0; fi\n\
         echo 'error: invalid path' >&2; exit 128\n",
    )
    .unwrap();
    std::fs::set_permissions(&git, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = fpcheck_command(repo.path())
        .env("PATH", bin.path())
        .args(args)
        .output()
        .unwrap();
    Run::finished(out)
}

/// A git that is there but fails on a tree fpcheck emulates confirms
/// nothing: the "no restart" becomes a restart, in the range and in
/// `history`, with a warning saying what to check.
#[test]
fn a_git_that_fails_to_check_out_turns_no_restart_into_a_restart() {
    let repo = attributes_repo();
    let run = with_failing_git(&repo, &["v1.0.0..v1.1.0", "--no-cache", "--format", "json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "witness_disagrees");
    assert_eq!(j["witness"]["status"], "failed");
    let codes = crate::support::warning_codes(&j);
    assert!(codes.contains(&"witness_unconfirmed"), "{codes:?}");
    let h = with_failing_git(&repo, &["history", "--no-cache", "--format", "json"]);
    assert_eq!(h.code, 3, "{}", h.stderr);
    let update = &h.json()["releases"][0];
    assert_eq!(update["witness"]["status"], "failed", "{update}");
    assert_eq!(update["restart_required"], true, "{update}");
}

/// fpcheck with the test-only fault that flips the first byte of blob
/// `blob`'s stream (debug builds only).
fn with_fault(repo: &TestRepo, blob: &str, args: &[&str]) -> Run {
    let out = fpcheck_command(repo.path())
        .env("FPCHECK_TEST_FAULT_STREAM", blob)
        .args(args)
        .output()
        .unwrap();
    Run::finished(out)
}

#[test]
fn a_wrong_byte_in_the_fast_path_is_caught_by_the_witness() {
    // `0` becomes `1`: the fault flips the new `1` back to `0`, so that
    // fpcheck's reading sees no change.
    let repo = attributes_repo();
    let blob = repo.git(&["rev-parse", "v1.2.0:src/a.py"]);
    let args = ["v1.1.0..v1.2.0", "--no-cache", "--format", "json"];
    let blind = with_fault(&repo, &blob, &[&args[..], &["--witness", "never"]].concat());
    assert_eq!(blind.code, 0, "{}", blind.stderr);
    assert_eq!(blind.json()["reason"], "no_runtime_change");
    let run = with_fault(&repo, &blob, &args);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "witness_disagrees");
    assert_eq!(j["witness"]["status"], "disagreed");
    assert_eq!(j["witness"]["restart_required"], true);
    assert_eq!(j["witness"]["reason"], "code_changed");
    let ours = j["to"]["fingerprint"].as_str().unwrap().to_string();
    let theirs = cloned_fingerprint(&repo, "v1.2.0");
    assert_eq!(j["witness"]["fingerprints"]["to"], theirs.as_str());
    assert_ne!(ours, theirs);
    let warning = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "witness_disagrees")
        .expect("the disagreement is a warning");
    let message = warning["message"].as_str().unwrap();
    assert!(message.contains(&ours[..12]), "{message}");
    assert!(message.contains(&theirs[..12]), "{message}");
    assert!(message.contains("please report it as a bug"), "{message}");
    // The same through history: the free release turns into a restart.
    let h = with_fault(&repo, &blob, &["history", "--no-cache", "--format", "json"]);
    assert_eq!(h.code, 3, "{}", h.stderr);
    let h = h.json();
    let update = &h["releases"][1];
    assert_eq!(update["restart_required"], true, "{update}");
    assert_eq!(update["reason"], "witness_disagrees");
    assert_eq!(update["witness"]["fingerprints"]["to"], theirs.as_str());
    let blind = with_fault(
        &repo,
        &blob,
        &[
            "history",
            "--no-cache",
            "--format",
            "json",
            "--witness",
            "never",
        ],
    );
    assert_eq!(blind.json()["releases"][1]["reason"], "no_runtime_change");
}

/// A filter whose smudge command leaves `sentinel` behind.
fn smudge_writing(sentinel: &Path) -> String {
    format!(
        "[filter \"x\"]\n\tsmudge = \"touch '{}'; cat\"\n\trequired = true\n",
        sentinel.display()
    )
}

#[test]
fn the_witness_never_reads_the_users_config_or_runs_a_filter() {
    let repo = TestRepo::new();
    repo.write(".gitattributes", "*.txt filter=x\n*.py text eol=crlf\n")
        .write("src/a.py", "a = 1\n")
        .write("src/notes.txt", "notes\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("one", "v1.0.0");
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n")
        .commit_and_tag("docs", "v1.1.0");
    let home = tempfile::tempdir().unwrap();
    let sentinel = home.path().join("smudged");
    // The repository's config, the user's (global and XDG), and the
    // repository's own info/attributes all ask for the filter.
    let config = repo.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&smudge_writing(&sentinel));
    std::fs::write(&config, text).unwrap();
    std::fs::write(repo.join(".git/info/attributes"), "* filter=x\n").unwrap();
    let global = home.path().join("gitconfig");
    std::fs::write(&global, smudge_writing(&sentinel)).unwrap();
    std::fs::create_dir_all(home.path().join(".config/git")).unwrap();
    std::fs::write(home.path().join(".config/git/attributes"), "* filter=x\n").unwrap();
    std::fs::write(home.path().join(".gitconfig"), smudge_writing(&sentinel)).unwrap();
    let run = fpcheck_command(repo.path())
        .env("GIT_CONFIG_GLOBAL", &global)
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "filter.x.smudge")
        .env(
            "GIT_CONFIG_VALUE_0",
            format!("touch '{}'; cat", sentinel.display()),
        )
        .args([
            "v1.0.0..v1.1.0",
            "--no-cache",
            "--format",
            "json",
            "--witness",
            "always",
        ])
        .output()
        .unwrap();
    let run = Run::finished(run);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["witness"]["status"], "confirmed", "{}", j["witness"]);
    assert!(!sentinel.exists(), "the witness ran the user's filter");
    // The sentinel works: git with the user's config runs the filter.
    let out = crate::support::git_cmd(repo.path())
        .env("GIT_CONFIG_GLOBAL", &global)
        .args(["checkout-index", "-f", "--prefix=out/", "src/notes.txt"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sentinel.exists(), "the filter did not run under git itself");
}

#[test]
fn info_attributes_alone_calls_for_the_witness() {
    let repo = ordinary_repo();
    std::fs::write(repo.join(".git/info/attributes"), "*.py eol=crlf\n").unwrap();
    let (_, j) = range_json(&repo, &["v1.0.0..v1.1.0"]);
    assert_eq!(j["witness"]["status"], "confirmed");
    assert_eq!(
        j["witness"]["why"],
        "the repository has an info/attributes file"
    );
}

#[test]
fn a_link_out_of_the_checkout_is_never_followed() {
    // An absolute link: fpcheck's reading makes both ends unavailable;
    // the version is unchanged, so no restart, which the witness confirms
    // without reading the link's target.
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .symlink("src/pw.py", "/etc/passwd")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("one", "v1.0.0");
    repo.write("README.md", "docs\n")
        .commit_and_tag("docs", "v1.1.0");
    let (run, j) = range_json(&repo, &["v1.0.0..v1.1.0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(j["reason"], "unavailable_version_unchanged");
    let w = &j["witness"];
    assert_eq!(w["status"], "confirmed", "{w}");
    assert_eq!(
        w["why"],
        "a symbolic link is in or leads to its selection at v1.0.0"
    );
    assert_eq!(w["fingerprints"]["from"], "");
    assert_eq!(w["fingerprints"]["to"], "");
}

//! `.gitattributes`: a revision's fingerprint is the fingerprint of a fresh
//! `git clone` of it (git's defaults on Linux), hashed by the reference
//! (`tests/reference_fingerprint.py`), and a range restarts exactly when
//! the two clones hash differently.

use std::path::Path;
use std::process::Command;

use crate::support::{git_cmd, warning_codes, TestRepo};

/// The reference fingerprint of `src/` in a fresh clone of `rev`: `""`
/// when unavailable.
fn checkout_fingerprint(repo: &Path, rev: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("c");
    let out = git_cmd(dir.path())
        .args(["clone", "-q", "-b", rev])
        .arg(repo)
        .arg(&dest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clone: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/reference_fingerprint.py"
        ))
        .arg(dest.join("src"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Lets the index forget that the files were written in the second it was:
/// `git add` then does not read them again (through attributes that, like
/// a `working-tree-encoding` the UTF-8 file does not match, make git refuse
/// them), as a release that adds attributes to committed files is made.
fn settle(repo: &TestRepo) {
    std::thread::sleep(std::time::Duration::from_millis(1100));
    repo.git(&["update-index", "--refresh"]);
}

/// `fingerprint --rev rev --json`.
fn fingerprint_at(repo: &TestRepo, rev: &str) -> serde_json::Value {
    repo.fpcheck(&["fingerprint", "--rev", rev, "--json"])
        .json()
}

/// Both ends' `fingerprint --rev` equal their checkouts', and the range
/// restarts exactly when the checkouts differ; the range's report.
fn agrees_with_checkouts(repo: &TestRepo, from: &str, to: &str) -> serde_json::Value {
    let a = checkout_fingerprint(repo.path(), from);
    let b = checkout_fingerprint(repo.path(), to);
    assert!(!a.is_empty() && !b.is_empty());
    assert_eq!(
        fingerprint_at(repo, from)["fingerprint"],
        a.as_str(),
        "{from}"
    );
    assert_eq!(fingerprint_at(repo, to)["fingerprint"], b.as_str(), "{to}");
    let j = repo.verdict_json(&[&format!("{from}..{to}")]);
    assert_eq!(j["restart_required"], a != b, "{j}");
    j
}

/// v1 without attributes, v2 with `attributes` written (a list of
/// path, text) and nothing else changed: the release restarts, the file is
/// listed as changed through attributes with kind `code`, and a note says so.
fn attributes_alone(files: &[(&str, &str)], attributes: &[(&str, &str)], changed: &[&str]) {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_and_tag("v1", "v1");
    settle(&repo);
    for (path, text) in attributes {
        repo.write(path, text);
    }
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "code_changed", "{j}");
    let listed: Vec<(&str, &str, &str)> = j["changes"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
                c["change_kind"].as_str().unwrap(),
            )
        })
        .collect();
    let want: Vec<(&str, &str, &str)> = changed
        .iter()
        .map(|p| (*p, "attributes_changed", "code"))
        .collect();
    assert_eq!(listed, want, "{j}");
    assert!(
        j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["message"]
                .as_str()
                .unwrap()
                .contains("changed through .gitattributes alone")),
        "{j}"
    );
}

#[test]
fn ident_added_restarts() {
    attributes_alone(
        &[("src/a.py", "REV = \"$Id$\"\n")],
        &[(".gitattributes", "*.py ident\n")],
        &["src/a.py"],
    );
}

#[test]
fn ident_added_by_a_macro_restarts() {
    attributes_alone(
        &[("src/a.py", "REV = \"$Id$\"\n"), ("src/b.py", "b = 1\n")],
        &[(".gitattributes", "[attr]m ident\n*.py m\n")],
        &["src/a.py"],
    );
}

#[test]
fn eol_crlf_at_the_top_restarts() {
    for line in [
        "*.py eol=crlf\n",
        "*.py text eol=crlf\n",
        "src/** eol=crlf\n",
    ] {
        attributes_alone(
            &[("src/a.py", "a = 1\n"), ("src/b.py", "")],
            &[(".gitattributes", line)],
            &["src/a.py"],
        );
    }
}

/// `text` (and its old name `crlf`) alone writes LF on Linux: the same
/// bytes, no restart, a note.
#[test]
fn text_alone_changes_nothing_on_linux() {
    for line in ["*.py text\n", "*.py crlf\n", "* text=auto\n"] {
        let repo = TestRepo::new();
        repo.write("src/a.py", "a = 1\n");
        repo.commit_and_tag("v1", "v1");
        repo.write(".gitattributes", line);
        repo.commit_and_tag("v2", "v2");
        let j = agrees_with_checkouts(&repo, "v1", "v2");
        assert_eq!(j["restart_required"], false, "{j}");
        assert_eq!(warning_codes(&j), ["gitattributes_conversion"], "{j}");
    }
}

#[test]
fn eol_crlf_inside_the_root_restarts() {
    attributes_alone(
        &[("src/a.py", "a = 1\n"), ("src/p/b.py", "b = 1\n")],
        &[("src/p/.gitattributes", "*.py eol=crlf\n")],
        &["src/p/b.py"],
    );
}

#[test]
fn eol_crlf_on_a_link_target_outside_the_root_restarts() {
    let repo = TestRepo::new();
    repo.write("lib/real.py", "r = 1\n")
        .write("src/b.py", "b = 1\n")
        .symlink("src/a.py", "../lib/real.py");
    repo.commit_and_tag("v1", "v1");
    repo.write("lib/.gitattributes", "*.py eol=crlf\n");
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["changes"]["runtime"][0]["path"], "src/a.py", "{j}");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code", "{j}");
}

#[test]
fn working_tree_encoding_utf16_is_applied() {
    attributes_alone(
        &[("src/a.py", "s = 'h\u{e9}'\n")],
        &[(".gitattributes", "*.py working-tree-encoding=UTF-16\n")],
        &["src/a.py"],
    );
}

#[test]
fn an_unknown_working_tree_encoding_is_unavailable() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n");
    repo.commit("v1");
    settle(&repo);
    repo.write(
        ".gitattributes",
        "*.py working-tree-encoding=no-such-encoding\n",
    );
    repo.commit("v2");
    let j = fingerprint_at(&repo, "HEAD");
    assert_eq!(j["fingerprint"], "", "{j}");
    let why = j["unavailable_reason"].as_str().unwrap();
    assert!(
        why.contains("src/a.py") && why.contains("no-such-encoding"),
        "{why}"
    );
}

/// A filter driver is never run, configured or not: the value is
/// unavailable, naming the file and the attribute.
#[test]
fn a_filter_driver_makes_the_fingerprint_unavailable() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write("src/b.py", "b = 1\n");
    repo.commit_and_tag("v1", "v1");
    repo.write(".gitattributes", "src/b.py filter=lfs\n");
    repo.commit_and_tag("v2", "v2");
    let expect = "src/b.py: its attributes name the filter driver `filter=lfs`";
    let j = fingerprint_at(&repo, "v2");
    assert_eq!(j["fingerprint"], "", "{j}");
    assert!(
        j["unavailable_reason"].as_str().unwrap().contains(expect),
        "{j}"
    );
    // Configured in the clone (a program that would change the bytes):
    // still never run, still unavailable.
    repo.git(&["config", "filter.lfs.smudge", "tr a-z A-Z"]);
    let j = fingerprint_at(&repo, "v2");
    assert_eq!(j["fingerprint"], "", "{j}");
    assert!(
        j["unavailable_reason"].as_str().unwrap().contains(expect),
        "{j}"
    );
    let j = repo.verdict_json(&["v1..v2"]);
    assert!(
        j["to"]["unavailable_reason"]
            .as_str()
            .unwrap()
            .contains(expect),
        "{j}"
    );
}

#[test]
fn attributes_removed_in_the_release_restart() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write(".gitattributes", "*.py eol=crlf ident\n");
    repo.commit_and_tag("v1", "v1");
    repo.remove(".gitattributes");
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["changes"]["runtime"][0]["status"], "attributes_changed");
}

#[test]
fn attributes_at_both_ends_follow_the_code() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write("src/b.py", "REV = '$Id$'\n")
        .write("docs/x.md", "x\n")
        .write(".gitattributes", "* text=auto eol=crlf\n*.py ident\n");
    repo.commit_and_tag("v1", "v1");
    repo.write("docs/x.md", "y\n");
    repo.commit_and_tag("v2", "v2");
    repo.write("src/a.py", "a = 2\n");
    repo.commit_and_tag("v3", "v3");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], false, "{j}");
    assert!(
        warning_codes(&j).contains(&"gitattributes_conversion"),
        "{j}"
    );
    let j = agrees_with_checkouts(&repo, "v2", "v3");
    assert_eq!(j["restart_required"], true, "{j}");
}

/// Neither the clone's `info/attributes` nor its config (`core.autocrlf`)
/// changes a revision's value: an installer's clone elsewhere has neither.
#[test]
fn local_attributes_and_config_are_not_read() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write(".gitattributes", "*.py text\n");
    repo.commit_and_tag("v1", "v1");
    let want = checkout_fingerprint(repo.path(), "v1");
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    std::fs::write(repo.join(".git/info/attributes"), "*.py eol=crlf ident\n").unwrap();
    repo.git(&["config", "core.autocrlf", "true"]);
    repo.git(&["config", "core.eol", "crlf"]);
    assert_eq!(fingerprint_at(&repo, "v1")["fingerprint"], want.as_str());
}

/// `history` and `patch` read the same bytes: the checkout's.
#[test]
fn history_and_patch_record_the_checkouts_fingerprint() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "REV = \"$Id$\"\n");
    repo.commit_and_tag("v1", "v1.0.0");
    repo.write(".gitattributes", "*.py ident eol=crlf\n");
    repo.commit_and_tag("v2", "v1.1.0");
    let want = checkout_fingerprint(repo.path(), "v1.1.0");
    let h = repo.history_json(&[]);
    let tag = h["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == "v1.1.0")
        .unwrap()
        .clone();
    assert_eq!(tag["fingerprint"], want.as_str(), "{h}");
    assert_eq!(h["releases"][0]["restart_required"], true, "{h}");
    let run = repo.fpcheck(&["patch", "v1.0.0..v1.1.0"]);
    let patch: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        patch["runtime_fingerprint"],
        want.as_str(),
        "{}",
        run.stdout
    );
}

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

/// Encodings git converts with the system's iconv and gix with other
/// tables or names (`ISO-8859-1` read as windows-1252, which iconv cannot
/// write a `€` in, so git writes the UTF-8 bytes; `UTF-16-LE`, a name iconv
/// does not know; a name-less `working-tree-encoding`, which git refuses):
/// each makes the value unavailable rather than a guess, in the range,
/// `fingerprint --rev` and `patch` alike.
#[test]
fn encodings_fpcheck_cannot_reproduce_are_unavailable() {
    for attribute in [
        "working-tree-encoding=ISO-8859-1",
        "working-tree-encoding=latin1",
        "working-tree-encoding=UTF-16-LE",
        "working-tree-encoding=UTF_16",
        "working-tree-encoding",
    ] {
        let repo = TestRepo::new();
        repo.write("src/a.py", "s = '\u{20ac}'\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("v1", "v1");
        settle(&repo);
        repo.write(".gitattributes", format!("*.py {attribute}\n"))
            .write("version.json", "{\"version\": \"1.1.0\"}\n");
        repo.commit_and_tag("v2", "v2");
        let j = fingerprint_at(&repo, "v2");
        assert_eq!(j["fingerprint"], "", "{attribute}: {j}");
        assert!(
            j["unavailable_reason"]
                .as_str()
                .unwrap()
                .contains("src/a.py"),
            "{attribute}: {j}"
        );
        let range = repo.verdict_json(&["v1..v2"]);
        assert_eq!(
            (&range["restart_required"], &range["reason"]),
            (
                &serde_json::json!(true),
                &serde_json::json!("fingerprint_unavailable")
            ),
            "{attribute}: {range}"
        );
        let patch = repo.fpcheck(&["patch", "v1..v2", "--format", "json"]);
        assert_eq!(
            patch.json()["patch"]["runtime_fingerprint"],
            "",
            "{attribute}: {}",
            patch.stdout
        );
    }
}

/// An empty file under `working-tree-encoding=UTF-16` stays empty: git
/// re-encodes nothing of it (no byte-order mark is written).
#[test]
fn an_empty_file_under_utf16_stays_empty_as_in_git() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n").write("src/empty.py", "");
    repo.commit_and_tag("v1", "v1");
    settle(&repo);
    repo.write(".gitattributes", "empty.py working-tree-encoding=UTF-16\n");
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], false, "{j}");
}

/// A root reached through a link (`src -> a/b/c`) holds the files a
/// checkout writes at `a/b/c`: the attributes of `a/b` apply to them, as
/// git applies them, in the range and `fingerprint --rev`.
#[test]
fn attributes_apply_at_a_linked_roots_real_path() {
    let repo = TestRepo::new();
    repo.write("a/b/c/x.py", "x = 1\n").symlink("src", "a/b/c");
    repo.commit_and_tag("v1", "v1");
    settle(&repo);
    repo.write("a/b/.gitattributes", "*.py eol=crlf\n");
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    assert_eq!(j["restart_required"], true, "{j}");
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

/// v1 without attributes, v2 with `.gitattributes` written as `bytes` (or,
/// with `link`, a symbolic link whose target is `bytes`), src/a.py and
/// src/b.py unchanged: both ends' fingerprints equal their checkouts', and
/// the range restarts exactly when the checkouts differ. Each of a.py
/// and b.py is listed as changed exactly when the checkout converts it.
fn read_as_git_reads(bytes: &[u8], link: bool, converted: &[&str]) {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a = 1\n")
        .write("src/b.py", "b = 1\n");
    repo.commit_and_tag("v1", "v1");
    if link {
        repo.symlink(".gitattributes", std::str::from_utf8(bytes).unwrap());
    } else {
        repo.write(".gitattributes", bytes);
    }
    repo.commit_and_tag("v2", "v2");
    let j = agrees_with_checkouts(&repo, "v1", "v2");
    let listed: Vec<&str> = j["changes"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, converted, "{j}");
    let run = repo.fpcheck(&["patch", "v1..v2"]);
    let patch: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        patch["runtime_fingerprint"],
        checkout_fingerprint(repo.path(), "v2").as_str(),
        "{}",
        run.stdout
    );
}

/// git does not skip a byte-order mark in a `.gitattributes` it reads on
/// checkout: the mark is part of the first pattern, which then matches
/// nothing. gix skipped it (UTF-8, UTF-16 and UTF-32 marks alike).
#[test]
fn a_byte_order_mark_is_part_of_the_first_pattern_as_in_git() {
    for bom in [&b"\xef\xbb\xbf"[..], b"\xff\xfe", b"\xfe\xff"] {
        let bytes = [bom, b"*.py eol=crlf\nsrc/b.py eol=crlf\n"].concat();
        read_as_git_reads(&bytes, false, &["src/b.py"]);
    }
}

/// git reads a `.gitattributes` as a C string: nothing after a NUL.
#[test]
fn nothing_after_a_nul_is_read_as_in_git() {
    read_as_git_reads(
        b"src/a.py eol=crlf\nz\0z\nsrc/b.py eol=crlf\n",
        false,
        &["src/a.py"],
    );
}

/// git ignores a line of 2048 bytes or more (ATTR_MAX_LINE_LENGTH).
#[test]
fn lines_of_2048_bytes_or_more_are_ignored_as_in_git() {
    let line = |path: &str, len: usize| {
        let head = format!("{path} eol=crlf y=");
        format!("{head}{}\n", "v".repeat(len - head.len()))
    };
    let text = line("src/a.py", 2048) + &line("src/b.py", 2047);
    read_as_git_reads(text.as_bytes(), false, &["src/b.py"]);
}

/// A `.gitattributes` that is a symbolic link: git never follows it, but
/// on checkout reads the link's stored text (its target) as the
/// attributes, as it reads any `.gitattributes` from the index.
#[test]
fn a_linked_gitattributes_is_read_as_its_target_text_as_in_git() {
    read_as_git_reads(b"*.py eol=crlf", true, &["src/a.py", "src/b.py"]);
}

/// Lines gix already reads as git does: a negative pattern (ignored), a
/// pattern for directories only, quoted and escaped patterns, a line with
/// an invalid attribute name (ignored whole), a CRLF line end.
#[test]
fn negative_directory_quoted_and_invalid_lines_are_read_as_in_git() {
    read_as_git_reads(
        b"!*.py eol=crlf\nsrc/ eol=crlf\nsrc/b.py/ eol=crlf\n\"src/\\141.py\" eol=crlf\n\
          \\#src/b.py eol=crlf\nsrc/b.py eol=crlf b@d\n",
        false,
        &["src/a.py"],
    );
    read_as_git_reads(b"src/b.py eol=crlf\r\n", false, &["src/b.py"]);
}

/// fpcheck (a debug build) with a time limit: the run's outcome, which
/// must come within `secs` seconds (the child is killed past them).
fn fpcheck_within(repo: &TestRepo, secs: u64, args: &[&str]) -> crate::support::Run {
    use std::process::Stdio;
    let mut child = crate::support::fpcheck_command(repo.path())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("no answer within {secs} s: {args:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    crate::support::Run::finished(child.wait_with_output().unwrap())
}

/// A pattern that would take git and gix exponential time against a deep
/// path (each `**/` doubles the work): the fingerprint is unavailable,
/// naming the file and the pattern, in every command, within seconds.
#[test]
fn a_pattern_of_exponential_cost_is_refused_in_bounded_time() {
    let repo = TestRepo::new();
    let deep = format!("src/{}x.py", "a/".repeat(300));
    repo.write(&deep, "x = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("v1", "v1.0.0");
    // git's own `add` would match the deep file against the pattern (and
    // never finish) if it read the file again.
    settle(&repo);
    let pattern = format!("{}x*y*z*", "**/".repeat(60));
    repo.write(".gitattributes", format!("{pattern} eol=crlf\n"))
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("v2", "v1.1.0");
    let reason = format!(
        "{deep}: its attributes cannot be read (.gitattributes has the pattern `{}...` with \
         63 runs of `*`, 60 of them `**` (fpcheck matches at most 32 and 8): matching it can \
         take exponential time, in git too, so the bytes a checkout writes cannot be known)",
        &pattern[..64]
    );
    let run = fpcheck_within(&repo, 10, &["fingerprint", "--rev", "v1.1.0", "--json"]);
    let j = run.json();
    assert_eq!(j["fingerprint"], "", "{j}");
    assert_eq!(j["unavailable_reason"], reason.as_str(), "{j}");
    let run = fpcheck_within(&repo, 10, &["v1.0.0..v1.1.0", "--format", "json"]);
    let j = run.json();
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "fingerprint_unavailable", "{j}");
    assert_eq!(j["to"]["unavailable_reason"], reason.as_str(), "{j}");
    let run = fpcheck_within(&repo, 10, &["history", "--format", "json"]);
    let h = run.json();
    assert_eq!(h["tags"][1]["unavailable_reason"], reason.as_str(), "{h}");
    assert_eq!(h["releases"][0]["restart_required"], true, "{h}");
    let run = fpcheck_within(&repo, 10, &["patch", "v1.0.0..v1.1.0"]);
    let patch: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(patch["runtime_fingerprint"], "", "{}", run.stdout);
}

/// More nested wildcards than gix's matcher follows (64): gix answered "no
/// match" where git matches and converts, so the fingerprint was the
/// stored blob's. Now it is unavailable: a restart, never a wrong "no".
#[test]
fn a_pattern_nested_deeper_than_gix_matches_is_refused() {
    let repo = TestRepo::new();
    let file = format!("src/{}.py", "x".repeat(80));
    repo.write(&file, "x = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("v1", "v1");
    repo.write(
        ".gitattributes",
        format!("{}.py eol=crlf\n", "x*".repeat(70)),
    )
    .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("v2", "v2");
    // git converts it.
    assert_ne!(
        checkout_fingerprint(repo.path(), "v1"),
        checkout_fingerprint(repo.path(), "v2")
    );
    let j = fingerprint_at(&repo, "v2");
    assert_eq!(j["fingerprint"], "", "{j}");
    let why = j["unavailable_reason"].as_str().unwrap();
    assert!(why.contains("with 70 runs of `*`, 0 of them `**`"), "{why}");
    let j = repo.verdict_json(&["v1..v2"]);
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "fingerprint_unavailable", "{j}");
}

/// git unquotes a quoted pattern into a C string: an escaped NUL ends it,
/// so `"*.py\000x"` matches every `.py` file, as a checkout shows.
#[test]
fn a_quoted_pattern_ends_at_an_escaped_nul_as_in_git() {
    read_as_git_reads(
        b"\"*.py\\000x\" eol=crlf\n",
        false,
        &["src/a.py", "src/b.py"],
    );
}

/// One `.gitattributes` blob at many paths is read and matched at each of
/// them, by git too: past a total of bytes in all, the value is
/// unavailable (a restart) rather than hours of matching.
#[test]
fn the_same_attributes_at_many_paths_are_bounded_in_all() {
    let repo = TestRepo::new();
    let big = "# a comment line\n".repeat(70_000);
    for d in 0..60 {
        repo.write(&format!("src/d{d}/m.py"), "x = 1\n");
    }
    repo.write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("v1", "v1");
    for d in 0..60 {
        repo.write(&format!("src/d{d}/.gitattributes"), &big);
    }
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("v2", "v2");
    let j = fingerprint_at(&repo, "v2");
    assert_eq!(j["fingerprint"], "", "{j}");
    assert!(
        j["unavailable_reason"]
            .as_str()
            .unwrap()
            .contains("bytes in all"),
        "{j}"
    );
    let range = repo.verdict_json(&["v1..v2"]);
    assert_eq!(range["restart_required"], true, "{range}");
}

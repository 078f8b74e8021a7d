//! Release tags for the range without FROM: `--tag-match`, `--tag-exclude`
//! (the globs of `git describe --match/--exclude`, and the Action's
//! `tag-pattern`/`tag-exclude`), and tag names that read as something else.

use serde_json::Value;

use crate::support::TestRepo;

/// Three commits, `src/app.py` changing at each: the first tagged
/// `first` (annotated when `annotated`), the second `second`, the third
/// untagged at HEAD.
fn three_commits_tagged(first: &str, annotated: bool, second: &str) -> (TestRepo, [String; 3]) {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    let one = repo.commit("one");
    if annotated {
        repo.tag_annotated(first);
    } else {
        repo.tag(first);
    }
    repo.write("src/app.py", "A = 2\n");
    let two = repo.commit("two");
    repo.tag(second);
    repo.write("src/app.py", "A = 3\n");
    let three = repo.commit("three");
    (repo, [one, two, three])
}

/// v1.0.0 (annotated) on one, v1.1.0-rc1 on two, three untagged at HEAD.
fn with_a_prerelease() -> (TestRepo, [String; 3]) {
    three_commits_tagged("v1.0.0", true, "v1.1.0-rc1")
}

fn from_of(repo: &TestRepo, args: &[&str]) -> (String, String) {
    let mut all = vec!["--format=json"];
    all.extend_from_slice(args);
    let run = repo.fpcheck(&all);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    let json: Value = run.json();
    (
        json["from"]["ref"].as_str().unwrap().to_string(),
        json["from"]["commit"].as_str().unwrap().to_string(),
    )
}

#[test]
fn tag_globs_choose_which_tags_are_releases_for_the_default_from() {
    let (repo, [one, two, _]) = with_a_prerelease();
    assert_eq!(from_of(&repo, &[]), ("v1.1.0-rc1".into(), two.clone()));
    assert_eq!(
        from_of(&repo, &["--tag-exclude", "*-rc*"]),
        ("v1.0.0".into(), one.clone())
    );
    assert_eq!(
        from_of(&repo, &["--tag-match", "v*.*.?"]),
        ("v1.0.0".into(), one.clone())
    );
    assert_eq!(
        from_of(&repo, &["--tag-match", "x*", "--tag-match", "v1.1*"]),
        ("v1.1.0-rc1".into(), two)
    );
    let run = repo.fpcheck(&["--tag-match", "release-*", "--tag-exclude", "*-rc*"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("no tag matching `release-*` and not `*-rc*` is reachable from `HEAD`"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_tagged_to_compares_with_the_release_before_it_by_the_same_globs() {
    let (repo, [one, _, three]) = with_a_prerelease();
    repo.tag_annotated("v1.1.0");
    // HEAD is v1.1.0: the release before it, the rc skipped.
    assert_eq!(
        from_of(&repo, &["--tag-exclude", "*-rc*"]),
        ("v1.0.0".into(), one)
    );
    let run = repo.fpcheck(&["--format=json", "--tag-exclude", "*-rc*"]);
    assert_eq!(run.json()["to"]["commit"], three.as_str());
}

/// A tag named `HEAD` names no version, so it is no release (and the
/// release found is the commit it tags, never HEAD read as a name).
#[test]
fn a_tag_named_head_is_no_release_and_never_read_as_head() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    let one = repo.commit("one");
    repo.tag("v1.0.0");
    repo.write("src/app.py", "A = 2\n");
    repo.commit("two");
    repo.tag("HEAD");
    repo.write("src/app.py", "A = 3\n");
    let three = repo.commit("three");
    let run = repo.fpcheck(&["--format=json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["from"]["commit"], one.as_str(), "{json}");
    assert_eq!(json["from"]["ref"], "v1.0.0");
    assert_eq!(json["to"]["commit"], three.as_str());
    assert_eq!(json["restart_required"], true);
}

/// v1.0.0 on one, v1.1.0 on two, three untagged at HEAD, with
/// `src/app.py` changing at each.
fn three_commits() -> (TestRepo, [String; 3]) {
    three_commits_tagged("v1.0.0", false, "v1.1.0")
}

/// The releases `history` reads and the tags it skips, with why.
fn history_tags(dir: &std::path::Path, args: &[&str]) -> (Vec<String>, Value) {
    let mut all = vec!["history", "--format", "json", "--no-cache"];
    all.extend_from_slice(args);
    let run = crate::support::fpcheck_in(dir, &all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    let tags = (json["tags"].as_array().unwrap().iter())
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect();
    (tags, json["skipped"].clone())
}

/// Tags of a tree and of a file are no releases: `history` skips them
/// saying so, and the range's default FROM passes over them alike.
#[test]
fn tags_of_a_tree_or_a_file_are_no_releases_for_the_range_or_history() {
    let (repo, [_, two, _]) = three_commits();
    repo.git(&["tag", "v9.0.0", "HEAD^{tree}"]);
    repo.git(&["tag", "-a", "v9.1.0", "-m", "a file", "HEAD:src/app.py"]);
    assert_eq!(from_of(&repo, &[]), ("v1.1.0".into(), two.clone()));
    assert_eq!(
        from_of(&repo, &["--tag-match", "v9*", "--tag-match", "v1*"]),
        ("v1.1.0".into(), two)
    );
    let (tags, skipped) = history_tags(repo.path(), &[]);
    assert_eq!(tags, ["v1.0.0", "v1.1.0"]);
    let why = "does not point at a commit (a tag of a tree or a file)";
    assert_eq!(
        skipped,
        serde_json::json!([{"tag": "v9.0.0", "why": why}, {"tag": "v9.1.0", "why": why}])
    );
}

/// A tag whose commit a shallow clone lacks is no release in that clone:
/// `history` skips it saying so, and the range's default FROM, which only
/// the history present can reach, takes the release it has.
#[test]
fn a_tag_of_a_commit_a_shallow_clone_lacks_is_skipped_by_the_range_and_history() {
    let (repo, [one, two, _]) = three_commits();
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("shallow");
    let url = format!("file://{}", repo.path().display());
    crate::support::git_in(
        dir.path(),
        &["clone", "-q", "--depth=2", &url, clone.to_str().unwrap()],
    );
    let has = crate::support::git_cmd(&clone)
        .args(["cat-file", "-e", &one])
        .status()
        .unwrap();
    assert!(!has.success(), "the clone has v1.0.0's commit");
    // git refuses to point a ref at a missing object; a tag fetched or
    // copied without its history (packed-refs from elsewhere) does.
    std::fs::write(clone.join(".git/refs/tags/v1.0.0"), format!("{one}\n")).unwrap();
    let run = crate::support::fpcheck_in(&clone, &["--format=json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["from"]["ref"], "v1.1.0");
    assert_eq!(run.json()["from"]["commit"], two.as_str());
    let (tags, skipped) = history_tags(&clone, &[]);
    assert_eq!(tags, ["v1.1.0"]);
    assert_eq!(
        skipped,
        serde_json::json!([{"tag": "v1.0.0", "why": "does not point at a commit in this repository (a shallow clone?)"}])
    );
}

/// A chain of tags longer than fpcheck follows is an error naming the
/// tag, for the range's default FROM as for `history` and for the tag
/// named as a revision: it could be the latest release, so neither skips
/// it. Only the tags a command asks about are peeled: leaving it out by
/// name (`--tag-exclude`, `--tags`) answers again.
#[test]
fn an_overlong_tag_chain_is_the_same_error_for_the_range_and_history() {
    let (repo, [_, two, _]) = three_commits();
    repo.git(&["tag", "-a", "chain/0", "-m", "0", "HEAD"]);
    for i in 1..70 {
        let (name, prev) = (format!("chain/{i}"), format!("chain/{}", i - 1));
        repo.git(&[
            "-c",
            "advice.nestedTag=false",
            "tag",
            "-a",
            &name,
            "-m",
            &name,
            &prev,
        ]);
    }
    repo.git(&[
        "-c",
        "advice.nestedTag=false",
        "tag",
        "-a",
        "v2.0.0",
        "-m",
        "v2",
        "chain/69",
    ]);
    let says = "`v2.0.0` nests more than 64 tags without reaching a commit: tag the release's commit directly";
    repo.fpcheck(&["--format=json", "--tag-exclude", "chain/*"])
        .assert_error(4, says);
    repo.fpcheck(&[
        "--format=json",
        "--resolve-only",
        "--tag-exclude",
        "chain/*",
    ])
    .assert_error(4, says);
    repo.fpcheck(&["history", "--format", "json", "--no-cache"])
        .assert_error(4, says);
    repo.fpcheck(&["v2.0.0..HEAD"]).assert_error(4, says);
    assert_eq!(
        from_of(&repo, &["--tag-exclude", "chain/*", "--tag-exclude", "v2*"]),
        ("v1.1.0".into(), two)
    );
    let (tags, _) = history_tags(repo.path(), &["--tags", "v1*"]);
    assert_eq!(tags, ["v1.0.0", "v1.1.0"]);
}

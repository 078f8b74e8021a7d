//! Release tags for the range without FROM: `--tag-match`, `--tag-exclude`
//! (the globs of `git describe --match/--exclude`, and the Action's
//! `tag-pattern`/`tag-exclude`), and tag names that read as something else.

use serde_json::Value;

use crate::support::TestRepo;

/// v1.0.0 (annotated) on one, v1.1.0-rc1 on two, three untagged at HEAD.
fn with_a_prerelease() -> (TestRepo, [String; 3]) {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    let one = repo.commit("one");
    repo.tag_annotated("v1.0.0");
    repo.write("src/app.py", "A = 2\n");
    let two = repo.commit("two");
    repo.tag("v1.1.0-rc1");
    repo.write("src/app.py", "A = 3\n");
    let three = repo.commit("three");
    (repo, [one, two, three])
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

#[test]
fn a_tag_named_head_is_the_commit_it_tags_not_head() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    let one = repo.commit("one");
    repo.tag("HEAD");
    repo.write("src/app.py", "A = 2\n");
    let two = repo.commit("two");
    let run = repo.fpcheck(&["--format=json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["from"]["commit"], one.as_str(), "{json}");
    assert_eq!(json["from"]["ref"], "refs/tags/HEAD");
    assert_eq!(json["to"]["commit"], two.as_str());
    assert_eq!(json["restart_required"], true);
}

//! Python's release tags (PEP 440) are releases, ordered with semver tags
//! by one rule, and `--skip-prereleases` leaves out both schemes'
//! pre-releases.

use crate::support::TestRepo;

/// One commit per tag, created in an order unlike the precedence order, so
/// the history's order can only come from the versions.
fn mixed_tags() -> TestRepo {
    let repo = TestRepo::new();
    let created = [
        "v1.0.0",
        "v2.0.0rc1",
        "v2.0.0a1",
        "v2.0.0b2",
        "v1.3.0rc1",
        "1.2.0.post1",
        "v2.0.0.dev3",
        "v2.0.0-rc.2",
        "1!0.1.0",
        "v2.0.0",
        "v2.0.0+local.7",
        "release-two",
    ];
    for (n, tag) in created.iter().enumerate() {
        repo.write("src/app.py", format!("A = {n}\n"));
        repo.commit(tag);
        repo.tag(tag);
    }
    repo
}

fn names(j: &serde_json::Value) -> Vec<String> {
    j["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pep440_tags_are_releases_in_precedence_order_with_semver_ones() {
    let repo = mixed_tags();
    let j = repo.history_json(&["--no-cache"]);
    assert_eq!(
        names(&j),
        [
            "v1.0.0",
            "1.2.0.post1",
            "v1.3.0rc1",
            "v2.0.0.dev3",
            "v2.0.0a1",
            "v2.0.0b2",
            "v2.0.0rc1",
            "v2.0.0-rc.2",
            "v2.0.0",
            "v2.0.0+local.7",
            "1!0.1.0",
        ]
    );
    let pre: Vec<bool> = j["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["prerelease"].as_bool().unwrap())
        .collect();
    assert_eq!(
        pre,
        [false, false, true, true, true, true, true, true, false, false, false]
    );
    assert_eq!(
        j["skipped"],
        serde_json::json!([{"tag": "release-two", "why": "not a version"}])
    );
    let tags = j["tags"].as_array().unwrap();
    assert_eq!(tags[6]["tag_version"], "2.0.0rc1");
    assert_eq!(tags[7]["tag_version"], "2.0.0-rc.2");

    let j = repo.history_json(&["--skip-prereleases", "--no-cache"]);
    assert_eq!(
        names(&j),
        [
            "v1.0.0",
            "1.2.0.post1",
            "v2.0.0",
            "v2.0.0+local.7",
            "1!0.1.0"
        ]
    );
    let skipped: Vec<&str> = j["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["why"] == "pre-release")
        .map(|s| s["tag"].as_str().unwrap())
        .collect();
    assert_eq!(skipped.len(), 6, "{skipped:?}");

    // A span between PEP 440 tags takes the releases between them.
    let j = repo.history_json(&["v2.0.0a1..v2.0.0rc1", "--no-cache"]);
    assert_eq!(names(&j), ["v2.0.0a1", "v2.0.0b2", "v2.0.0rc1"]);
}

/// Two runtimes of a monorepo, each released under its own tag prefix.
#[test]
fn prefixed_monorepo_tags_are_releases_of_their_glob() {
    let repo = TestRepo::new();
    for (n, tag) in [
        "server-v1.0.0",
        "worker-v1.0.0",
        "server-v1.2.0rc1",
        "mcp@1.0.0",
        "server-v1.2.0",
        "worker-v1.1.0",
        "mcp@1.2.0",
    ]
    .iter()
    .enumerate()
    {
        repo.write("src/app.py", format!("A = {n}\n"));
        repo.commit(tag);
        repo.tag(tag);
    }
    let j = repo.history_json(&["--tags", "server-v*", "--no-cache"]);
    assert_eq!(
        names(&j),
        ["server-v1.0.0", "server-v1.2.0rc1", "server-v1.2.0"]
    );
    assert_eq!(j["tags"][1]["tag_version"], "1.2.0rc1");
    assert_eq!(j["tags"][1]["prerelease"], true);
    let j = repo.history_json(&["--tags", "worker-v*", "--no-cache"]);
    assert_eq!(names(&j), ["worker-v1.0.0", "worker-v1.1.0"]);
    let j = repo.history_json(&["--tags", "mcp@*", "--no-cache"]);
    assert_eq!(names(&j), ["mcp@1.0.0", "mcp@1.2.0"]);
    assert_eq!(j["releases"][0]["to_release"]["shown"], "1.2.0 (tag)");
    // Without the glob, a prefixed tag is not a version.
    let run = repo.fpcheck(&["history", "--no-cache"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("in fpcheck.toml or --tags 'server-v*'"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_range_takes_the_runtimes_prefixed_tags_by_glob() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    repo.commit_and_tag("one", "server-v1.0.0");
    repo.write("src/app.py", "A = 2\n");
    repo.commit_and_tag("two", "worker-v1.0.0");
    repo.write("src/app.py", "A = 3\n");
    repo.commit("three");
    let j = repo.verdict_json(&["--tag-match", "server-v*"]);
    assert_eq!(j["from"]["ref"], "server-v1.0.0");
    assert_eq!(j["from"]["release_version"]["shown"], "1.0.0 (tag)");
    let j = repo.verdict_json(&["server-v1.0.0..worker-v1.0.0"]);
    assert_eq!(j["to"]["release_version"]["shown"], "1.0.0 (tag)");
}

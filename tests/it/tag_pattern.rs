//! A tag pattern per runtime (`tag_pattern` in fpcheck.toml, or
//! `--tag-pattern`): a monorepo's `server-v1.2.0`, `worker-v1.0.0` and
//! changesets' `mcp@1.2.0` read as each runtime's releases, by `history`
//! and by a range's default `from`.

use serde_json::Value;

use crate::support::TestRepo;

const THREE: &str = "[runtimes.mcp]\nroot = \"mcp\"\ntag_pattern = \"mcp@*\"\n\
    [runtimes.server]\nroot = \"server\"\ntag_pattern = \"server-v*\"\n\
    [runtimes.worker]\nroot = \"worker\"\ntag_pattern = \"worker-v*\"\n";

/// c1 (every runtime's 1.0.0) → c2 server 1.1.0 → c3 worker 1.1.0 → c4
/// mcp 1.1.0 (and `server-vnext`, no version) → HEAD, a server change not
/// released. A side branch from c2 carries `server-v2.0.0`, which HEAD
/// does not contain.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", THREE)
        .write("server/app.py", "serve = 1\n")
        .write("worker/job.py", "work = 1\n")
        .write("mcp/tool.py", "tool = 1\n");
    repo.commit_and_tag("c1", "server-v1.0.0")
        .tag("worker-v1.0.0")
        .tag("mcp@1.0.0");
    repo.write("server/app.py", "serve = 2\n");
    repo.commit_and_tag("c2", "server-v1.1.0");
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.write("server/app.py", "serve = 9\n");
    repo.commit_and_tag("side", "server-v2.0.0");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("worker/job.py", "work = 2\n");
    repo.commit_and_tag("c3", "worker-v1.1.0");
    repo.write("mcp/tool.py", "tool = 2\n");
    repo.commit_and_tag("c4", "mcp@1.1.0").tag("server-vnext");
    repo.write("server/app.py", "serve = 3\n");
    repo.commit("head");
    repo
}

fn tags_of(record: &Value) -> Vec<String> {
    record["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_string())
        .collect()
}

fn runtime<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no runtime {name}: {j}"))
}

#[test]
fn history_reads_each_runtime_by_its_own_pattern_from_the_config() {
    let repo = monorepo();
    let j = repo.history_json(&["--no-cache", "--threads", "1"]);
    let names: Vec<&str> = j["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp", "server", "worker"]);
    let server = runtime(&j, "server");
    assert_eq!(
        tags_of(server),
        ["server-v1.0.0", "server-v1.1.0", "server-v2.0.0"]
    );
    assert_eq!(
        crate::support::update_lines(server),
        [
            "server-v1.0.0..server-v1.1.0 true code_changed",
            "server-v1.1.0..server-v2.0.0 true code_changed"
        ]
    );
    assert_eq!(
        server["skipped"],
        serde_json::json!([{"tag": "server-vnext", "why": "not a version"}])
    );
    let worker = runtime(&j, "worker");
    assert_eq!(tags_of(worker), ["worker-v1.0.0", "worker-v1.1.0"]);
    assert_eq!(
        crate::support::update_lines(worker),
        ["worker-v1.0.0..worker-v1.1.0 true code_changed"]
    );
    let mcp = runtime(&j, "mcp");
    assert_eq!(tags_of(mcp), ["mcp@1.0.0", "mcp@1.1.0"]);
    assert_eq!(
        crate::support::update_lines(mcp),
        ["mcp@1.0.0..mcp@1.1.0 true code_changed"]
    );
    assert_eq!(mcp["tags"][1]["tag_version"], "1.1.0");
    assert_eq!(mcp["releases"][0]["to_release"]["shown"], "1.1.0 (tag)");
    assert_eq!(
        j["summary"],
        "mcp: 1 of 1 update restarted; server: 2 of 2 updates restarted; worker: 1 of 1 update restarted"
    );

    // One runtime chosen: its history alone, by its pattern.
    let one = repo.history_json(&["--no-cache", "--runtime", "worker"]);
    assert_eq!(tags_of(&one), ["worker-v1.0.0", "worker-v1.1.0"]);
    assert_eq!(one["settings"]["runtime"], "worker");

    // `--tags` overrides every runtime's pattern.
    let over = repo.history_json(&["--no-cache", "--tags", "mcp@*"]);
    for name in ["mcp", "server", "worker"] {
        assert_eq!(tags_of(runtime(&over, name)), ["mcp@1.0.0", "mcp@1.1.0"]);
    }
    // So does `--tag-pattern`, checked as the key is.
    let flag = repo.history_json(&["--no-cache", "--tag-pattern", "worker-v*"]);
    for name in ["mcp", "server", "worker"] {
        assert_eq!(
            tags_of(runtime(&flag, name)),
            ["worker-v1.0.0", "worker-v1.1.0"]
        );
    }
}

#[test]
fn without_a_pattern_prefixed_tags_are_not_releases() {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", "[runtime]\nroot = \"server\"\n")
        .write("server/app.py", "serve = 1\n");
    repo.commit_and_tag("1.0.0", "server-v1.0.0");
    repo.write("server/app.py", "serve = 2\n");
    repo.commit_and_tag("1.1.0", "server-v1.1.0");
    let run = repo.fpcheck(&["history", "--no-cache"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("a prefix such as server-v1.2.3 with `tag_pattern = \"server-v*\"` in fpcheck.toml or --tags 'server-v*'"),
        "{}",
        run.stderr
    );
    // The key in the single [runtime] table, committed at HEAD, is what
    // chooses the tags (the releases' own files do not have it).
    repo.write(
        "fpcheck.toml",
        "[runtime]\nroot = \"server\"\ntag_pattern = \"server-v*\"\n",
    );
    repo.commit("pattern");
    let j = repo.history_json(&["--no-cache"]);
    assert_eq!(tags_of(&j), ["server-v1.0.0", "server-v1.1.0"]);
    assert_eq!(
        crate::support::update_lines(&j),
        ["server-v1.0.0..server-v1.1.0 true code_changed"]
    );
    // Uncommitted, the key does not count yet.
    repo.write("fpcheck.toml", "[runtime]\nroot = \"server\"\n");
    assert_eq!(tags_of(&repo.history_json(&["--no-cache"])).len(), 2);
}

fn resolved(repo: &TestRepo, args: &[&str]) -> (String, String) {
    let mut all = vec!["--resolve-only"];
    all.extend_from_slice(args);
    let run = repo.fpcheck(&all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut lines = run.stdout.lines();
    let from = lines.next().unwrap().to_string();
    let note = lines
        .find(|l| l.starts_with("note: "))
        .unwrap_or_default()
        .to_string();
    (from, note)
}

#[test]
fn the_default_from_is_the_latest_release_of_the_runtimes_pattern() {
    let repo = monorepo();
    let commit = |rev: &str| repo.git(&["rev-parse", &format!("{rev}^{{commit}}")]);
    // The side branch's server-v2.0.0 is not reachable; server-vnext is no
    // version; the nearest tag (mcp@1.1.0) is another runtime's.
    assert_eq!(
        resolved(&repo, &["--runtime", "server"]),
        (
            format!("from server-v1.1.0 {}", commit("server-v1.1.0")),
            "note: no range given: comparing server-v1.1.0, the highest version of the tags matching `server-v*` reachable from HEAD, with HEAD".to_string()
        )
    );
    assert_eq!(
        resolved(&repo, &["--runtime", "worker"]).0,
        format!("from worker-v1.1.0 {}", commit("worker-v1.1.0"))
    );
    assert_eq!(
        resolved(&repo, &["--runtime", "mcp"]).0,
        format!("from mcp@1.1.0 {}", commit("mcp@1.1.0"))
    );
    // `to` tagged: the runtime's release before it.
    assert_eq!(
        resolved(&repo, &["--runtime", "server", "..server-v1.1.0"]),
        (
            format!("from server-v1.0.0 {}", commit("server-v1.0.0")),
            "note: no range given: server-v1.1.0 is tagged server-v1.1.0, so comparing the release before it, server-v1.0.0, with server-v1.1.0".to_string()
        )
    );
    // --tag-match replaces the pattern, and
    // --tag-pattern replaces it for every runtime.
    assert_eq!(
        resolved(&repo, &["--runtime", "server", "--tag-match", "worker-v*"]).0,
        format!("from worker-v1.1.0 {}", commit("worker-v1.1.0"))
    );
    assert_eq!(
        resolved(&repo, &["--tag-pattern", "mcp@*"]).0,
        format!("from mcp@1.1.0 {}", commit("mcp@1.1.0"))
    );
    // Runtimes of different patterns have no one previous release.
    let run = repo.fpcheck(&["--resolve-only"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        "fpcheck: error: the runtimes name their release tags differently (mcp `mcp@*`, server `server-v*`, worker `worker-v*`), so each has its own previous release: choose one with --runtime NAME, or name FROM"
    );
    // --tag-pattern-at: another revision's file gives the patterns (the
    // Action's pull request base), whatever the `to` end's says.
    repo.write(
        "fpcheck.toml",
        THREE.replace("\"server-v*\"", "\"worker-v*\""),
    );
    repo.commit("the server read by the worker's tags");
    assert_eq!(
        resolved(&repo, &["--runtime", "server"]).0,
        format!("from worker-v1.1.0 {}", commit("worker-v1.1.0"))
    );
    assert_eq!(
        resolved(
            &repo,
            &["--runtime", "server", "--tag-pattern-at", "HEAD~1"]
        )
        .0,
        format!("from server-v1.1.0 {}", commit("server-v1.1.0"))
    );
}

#[test]
fn a_range_without_from_compares_each_runtime_with_its_own_last_release() {
    let repo = monorepo();
    let j = repo.verdict_json(&["--no-classify"]);
    let from_of = |name: &str| {
        let r = runtime(&j, name);
        (
            r["from"]["ref"].as_str().unwrap().to_string(),
            r["restart_required"].as_bool().unwrap(),
            r["notes"][0].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        from_of("server"),
        (
            "server-v1.1.0".to_string(),
            true,
            "no range given: comparing server-v1.1.0, the highest version of the tags matching `server-v*` reachable from HEAD, with HEAD".to_string()
        )
    );
    assert_eq!(from_of("worker").0, "worker-v1.1.0");
    assert!(!from_of("worker").1);
    assert_eq!(from_of("mcp").0, "mcp@1.1.0");
    assert!(!from_of("mcp").1);
    assert_eq!(j["summary"], "server restarts; mcp and worker do not");
    assert_eq!(j["notes"], serde_json::json!([]));
    // One runtime chosen: its single report, from its own release.
    let one = repo.verdict_json(&["--runtime", "worker", "--no-classify"]);
    assert_eq!(one["from"]["ref"], "worker-v1.1.0");
    assert_eq!(one["restart_required"], false);
}

/// A treeless clone has no fpcheck.toml to read: `--resolve-only` still
/// finds FROM, by every tag, and says why no pattern applied.
#[test]
fn a_treeless_clone_resolves_without_the_pattern_and_says_so() {
    let repo = monorepo();
    // Every tag counted: the plain version tag is the release.
    repo.git(&["tag", "v1.0.0", "server-v1.0.0"]);
    repo.git(&["config", "uploadpack.allowFilter", "true"]);
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("treeless.git");
    let url = format!("file://{}", repo.path().display());
    crate::support::git_in(
        dir.path(),
        &[
            "clone",
            "-q",
            "--bare",
            "--filter=tree:0",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    let repo_flag = format!("--repo={}", clone.display());
    let run = crate::support::fpcheck_in(
        dir.path(),
        &[
            &repo_flag,
            "--resolve-only",
            "--runtime",
            "server",
            "--",
            "..main",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("note: the tree of main is not in this repository (a treeless clone?), so its fpcheck.toml was not read: every tag counted, no runtime's tag_pattern; fetch that tree, or pass --tag-pattern GLOB\n"),
        "{}",
        run.stdout
    );
    // The flag needs no tree.
    let run = crate::support::fpcheck_in(
        dir.path(),
        &[
            &repo_flag,
            "--resolve-only",
            "--tag-pattern",
            "server-v*",
            "--",
            "..main",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.starts_with("from server-v1.1.0 "),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("treeless"), "{}", run.stdout);
}

/// Not the nearest tag (git describe's): a monorepo's runtimes tag commits
/// in any order, so the runtime's latest release is its highest version.
#[test]
fn the_highest_version_wins_over_the_nearest_tag() {
    let repo = TestRepo::new();
    repo.write(
        "fpcheck.toml",
        "[runtime]\nroot = \"server\"\ntag_pattern = \"server-v*\"\n",
    )
    .write("server/app.py", "serve = 1\n");
    repo.commit_and_tag("1.0.0", "server-v1.0.0");
    repo.git(&["checkout", "-q", "-b", "fix"]);
    for n in 1..=3 {
        repo.write("server/fix.py", format!("fix = {n}\n"));
        repo.commit("fix");
    }
    repo.tag("server-v1.0.1");
    repo.git(&["checkout", "-q", "-"]);
    repo.write("server/app.py", "serve = 2\n");
    repo.commit_and_tag("1.1.0", "server-v1.1.0");
    repo.write("server/app.py", "serve = 3\n");
    repo.commit("more");
    repo.write("server/app.py", "serve = 4\n");
    repo.commit("more");
    repo.git(&["merge", "-q", "--no-edit", "fix"]);
    // git itself would take the back-ported fix, one commit away.
    assert_eq!(
        repo.git(&["describe", "--tags", "--abbrev=0", "--match", "server-v*"])
            .trim(),
        "server-v1.0.1"
    );
    let commit = repo.git(&["rev-parse", "server-v1.1.0"]);
    assert_eq!(
        resolved(&repo, &[]).0,
        format!("from server-v1.1.0 {}", commit.trim())
    );
}

#[test]
fn a_bad_tag_pattern_is_a_configuration_error_naming_the_key_and_value() {
    let repo = monorepo();
    repo.write(
        "fpcheck.toml",
        "[runtimes.server]\nroot = \"server\"\ntag_pattern = \"server-*-v*\"\n",
    );
    repo.commit("bad");
    let expected = "fpcheck: error: fpcheck.toml at HEAD: [runtimes.server] tag_pattern `server-*-v*` has a wildcard `*` before its final `*`: only a literal prefix followed by one `*` can be stripped (e.g. `server-v*` or `mcp@*`)";
    for args in [&["history"][..], &[][..], &["--resolve-only"][..]] {
        let run = repo.fpcheck(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim_end(), expected, "{args:?}");
    }
    // The working tree's own file, with --worktree.
    repo.write(
        "fpcheck.toml",
        "[runtime]\nroot = \"server\"\ntag_pattern = \"server-v\"\n",
    );
    let run = repo.fpcheck(&["--worktree"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("[runtime] tag_pattern `server-v` does not end with `*`"),
        "{}",
        run.stderr
    );
    // The flag, before anything is read.
    for (bad, why) in [
        ("", "does not end with `*`"),
        (
            "server v*",
            "holds the character U+0020, which no git tag name can",
        ),
        ("rel?*", "has a wildcard `?` before its final `*`"),
        ("../v*", "is not the start of a git tag name"),
    ] {
        let run = repo.fpcheck(&["history", "--tag-pattern", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with(&format!("fpcheck: error: --tag-pattern `{bad}` {why}")),
            "{bad}: {}",
            run.stderr
        );
    }
}

//! Hostile objects below the revisions: blobs that inflate beyond their
//! size, malformed and over-deep trees, huge link targets, tampered cache
//! lines, nested tags, an oversized `.gitattributes`.

use super::*;

/// 200 MB of zeros: a loose object of about 200 KB. Every command answers
/// with the right fingerprint, and none holds the file in memory.
#[test]
fn a_blob_that_inflates_far_beyond_its_size_is_streamed_everywhere() {
    const SIZE: usize = 200 << 20;
    let repo = base();
    // Written through a file so that git streams it (git add reads files
    // above core.bigFileThreshold in pieces; lower it for this repository).
    repo.git(&["config", "core.bigFileThreshold", "1m"]);
    write_zeros(&repo.join("src/big.py"), SIZE);
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("big");
    repo.tag("v1.1.0");
    repo.remove("src/big.py");
    repo.git(&["checkout", "-q", "--", "src/app.py"]);
    let want = app_and_zeros_fingerprint(SIZE);
    // Far below the file's size: the process, its libraries and a few
    // pieces of the stream.
    let ceiling_kib = 80 * 1024;

    let run = bounded(repo.path(), &["fingerprint", "--rev", "v1.1.0"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), want);
    assert!(
        run.max_rss_kib < ceiling_kib,
        "fingerprint: {} KiB",
        run.max_rss_kib
    );

    let run = bounded(
        repo.path(),
        &["v1.0.0..v1.1.0", "--format", "json", "--no-cache"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json(&run)["to"]["fingerprint"], want.as_str());
    assert!(
        run.max_rss_kib < ceiling_kib,
        "range: {} KiB",
        run.max_rss_kib
    );

    let run = bounded(repo.path(), &["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json(&run)["tags"][1]["fingerprint"], want.as_str());
    assert!(
        run.max_rss_kib < ceiling_kib,
        "history: {} KiB",
        run.max_rss_kib
    );

    let run = bounded(repo.path(), &["patch", "v1.0.0..v1.1.0", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json(&run)["patch"]["runtime_fingerprint"], want.as_str());
    assert!(
        run.max_rss_kib < ceiling_kib,
        "patch: {} KiB",
        run.max_rss_kib
    );
}

/// The one unavailable reason every command gives for the `to` release:
/// the commands must agree.
fn agreed_reason(repo: &TestRepo, to: &str) -> String {
    let got = reasons(repo, to);
    // Shortened: a reason may name a path 20,000 directories deep.
    let short: Vec<String> = got.iter().map(|r| r.chars().take(200).collect()).collect();
    assert!(
        got.iter().all(|r| *r == got[0]),
        "{to}: the commands disagree: {short:?}"
    );
    got.into_iter().next().unwrap()
}

/// The unavailable reason each command gives for the `to` release.
fn reasons(repo: &TestRepo, to: &str) -> Vec<String> {
    let mut out = Vec::new();
    let run = bounded(repo.path(), &["fingerprint", "--rev", to, "--json"]);
    assert_eq!(run.code, 3, "fingerprint: {}", run.stderr);
    out.push(
        json(&run)["unavailable_reason"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    let range = format!("v1.0.0..{to}");
    let run = bounded(repo.path(), &[&range, "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "range: {}", run.stderr);
    let j = json(&run);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "fingerprint_unavailable");
    out.push(j["to"]["unavailable_reason"].as_str().unwrap().to_string());
    let run = bounded(repo.path(), &["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "history: {}", run.stderr);
    let j = json(&run);
    let tag = j["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == to)
        .unwrap_or_else(|| panic!("{to} not in the history"));
    assert_eq!(tag["fingerprint"], "");
    out.push(tag["unavailable_reason"].as_str().unwrap().to_string());
    let run = bounded(repo.path(), &["patch", &range, "--json"]);
    assert_eq!(run.code, 0, "patch: {}", run.stderr);
    let j = json(&run);
    assert_eq!(j["patch"]["runtime_fingerprint"], "");
    let message = j["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == "fingerprint_unavailable")
        .and_then(|e| e["message"].as_str())
        .expect("patch explains the unavailable fingerprint");
    let reason = message
        .split_once("is unavailable (")
        .and_then(|(_, rest)| rest.rsplit_once("): runtime_fingerprint"))
        .map(|(why, _)| why.to_string())
        .unwrap_or_else(|| panic!("patch: {message}"));
    out.push(reason);
    out
}

#[test]
fn malformed_trees_make_the_fingerprint_unavailable_in_every_command() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"a = 1\n");
    let b = blob(&g, b"b = 2\n");
    let inner = raw_tree(&g, &[("100644", b"x.py", a)]);
    let cases: Vec<(&str, Vec<RawEntry<'_>>, &str)> = vec![
        (
            "v2.0.0",
            vec![("100644", b"a.py", a), ("100644", b"a.py", b)],
            "has two entries named \"a.py\"",
        ),
        (
            "v2.1.0",
            vec![("100644", b"a.py", a), ("40000", b"a.py", inner)],
            "has two entries named \"a.py\"",
        ),
        (
            "v2.2.0",
            vec![("40000", b"..", inner), ("100644", b"a.py", a)],
            "has an entry named \"..\"",
        ),
        (
            "v2.3.0",
            vec![("40000", b".", inner), ("100644", b"a.py", a)],
            "has an entry named \".\"",
        ),
        (
            "v2.4.0",
            vec![("100644", b"a.py", a), ("100644", b"pkg/b.py", b)],
            "has an entry named \"pkg/b.py\"",
        ),
        (
            "v2.5.0",
            vec![("100644", b"a.py", a), ("40000", b".GIT", inner)],
            "has an entry named \".GIT\"",
        ),
    ];
    for (tag, entries, why) in &cases {
        let src = raw_tree(&g, entries);
        commit_tree(&repo, top_with_src(&g, src, "2.0.0"), "v1.0.0", tag);
        let reason = agreed_reason(&repo, tag);
        assert!(
            reason.starts_with("src is a malformed tree ("),
            "{tag}: {reason:?}"
        );
        assert!(reason.contains(why), "{tag}: {reason:?}");
    }
}

/// The same malformed root at both ends of a range (only the version
/// changed): the shortcut for an unchanged root must not read it as an
/// unchanged selection. Unavailable at both ends, with the reason, with
/// and without the cache.
#[test]
fn a_malformed_root_shared_by_both_ends_stays_unavailable() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"a = 1\n");
    let b = blob(&g, b"b = 2\n");
    let inner = raw_tree(&g, &[("100644", b"x.py", a)]);
    let cases: Vec<Vec<RawEntry<'_>>> = vec![
        vec![("100644", b"a.py", a), ("100644", b"a.py", b)],
        vec![("100644", b"a.py", a), ("40000", b"a.py", inner)],
        vec![
            ("100644", b"a", a),
            ("100644", b"a.py", b),
            ("40000", b"a", inner),
        ],
        vec![("100644", b"b.py", a), ("100644", b"a.py", b)],
        vec![("100644", b"a.py", a), ("40000", b".GIT", inner)],
    ];
    for (i, entries) in cases.iter().enumerate() {
        let src = raw_tree(&g, entries);
        let (from, to) = (format!("v3.{i}.0"), format!("v3.{i}.1"));
        commit_tree(&repo, top_with_src(&g, src, "3.0.0"), "v1.0.0", &from);
        commit_tree(&repo, top_with_src(&g, src, "3.0.1"), &from, &to);
        let range = format!("{from}..{to}");
        for args in [
            &[&range, "--format", "json", "--no-cache"][..],
            &[&range, "--format", "json"],
        ] {
            let run = bounded(repo.path(), args);
            assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
            let j = json(&run);
            // Out of order only (case 3) is no malformed tree: the walk
            // (not the scan, which leaves such trees to it) selects the
            // same two files at both ends.
            assert_eq!(j["restart_required"], i != 3, "{i} {args:?}: {j}");
            for end in ["from", "to"] {
                if i == 3 {
                    assert_eq!(j[end]["fingerprint_skipped"], "selection_unchanged");
                    assert_eq!(j[end]["runtime_files"], 2);
                    continue;
                }
                assert_eq!(j[end]["fingerprint_skipped"], Value::Null, "{i} {end}");
                let reason = j[end]["unavailable_reason"].as_str().unwrap_or_default();
                assert!(
                    reason.starts_with("src is a malformed tree ("),
                    "{i} {end}: {reason:?}"
                );
            }
        }
    }
}

/// A name with a NUL in it cannot be represented: the tree no longer parses.
#[test]
fn a_tree_that_does_not_parse_is_unavailable_too() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"a = 1\n");
    let src = raw_tree(&g, &[("100644", b"a.py", a), ("100644", b"b\0c.py", a)]);
    commit_tree(&repo, top_with_src(&g, src, "2.0.0"), "v1.0.0", "v2.0.0");
    let reason = agreed_reason(&repo, "v2.0.0");
    assert!(
        reason.starts_with("src is a malformed tree ("),
        "{reason:?}"
    );
}

/// A malformed tree above the runtime root (on the way to it) makes the
/// root unresolvable, with the same reason everywhere.
#[test]
fn a_malformed_tree_on_the_way_to_the_root_is_unavailable() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"a = 1\n");
    let v = blob(&g, b"{\"version\": \"2.0.0\"}\n");
    let src = raw_tree(&g, &[("100644", b"a.py", a)]);
    let top = raw_tree(
        &g,
        &[
            ("40000", b"src", src),
            ("100644", b"version.json", v),
            ("100644", b"version.json", a),
        ],
    );
    commit_tree(&repo, top, "v1.0.0", "v2.0.0");
    let reason = agreed_reason(&repo, "v2.0.0");
    assert!(
        reason.starts_with("src passes through a malformed tree ("),
        "{reason:?}"
    );
    assert!(
        reason.contains("has two entries named \"version.json\""),
        "{reason:?}"
    );
}

/// 20,000 directories deep, past git's core.maxTreeDepth (4096): every
/// command answers, with the fingerprint unavailable for that reason; a
/// tree just within the limit is hashed.
#[test]
fn trees_deeper_than_git_allows_are_unavailable() {
    let repo = base();
    let g = open(&repo);
    let x = blob(&g, b"x = 1\n");
    let leaf = raw_tree(&g, &[("100644", b"x.py", x)]);
    let mut chain = vec![leaf];
    for _ in 0..20_000 {
        let last = *chain.last().unwrap();
        chain.push(raw_tree(&g, &[("40000", b"d", last)]));
    }
    let deep = *chain.last().unwrap();
    commit_tree(&repo, top_with_src(&g, deep, "2.0.0"), "v1.0.0", "v2.0.0");
    let reason = agreed_reason(&repo, "v2.0.0");
    assert!(
        reason.contains("nested deeper than 4096 directories"),
        "{reason:?}"
    );
    assert!(reason.starts_with("src/d/d/d/"), "{}", &reason[..40]);

    // src/ + 4094 directories + x.py: depth 4096, as deep as git reads.
    let within = chain[4094];
    commit_tree(&repo, top_with_src(&g, within, "3.0.0"), "v1.0.0", "v3.0.0");
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v3.0.0", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = format!("{}x.py", "d/".repeat(4094));
    let mut want = Sha256::new();
    want.update(format!("{path}\0x = 1\n\n").as_bytes());
    assert_eq!(json(&run)["fingerprint"], hex::encode(want.finalize()));
    // One more level is too deep.
    let over = chain[4095];
    commit_tree(&repo, top_with_src(&g, over, "3.1.0"), "v1.0.0", "v3.1.0");
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v3.1.0", "--json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);

    // Outside the runtime root, beside a .gitattributes: the fingerprint
    // and the range answer (git would refuse the checkout, but the runtime
    // is whole), without walking the deep tree for the attributes.
    let attributes = blob(&g, b"*.py text eol=crlf\n");
    let a = blob(&g, b"a = 1\n");
    let v = blob(&g, b"{\"version\": \"4.0.0\"}\n");
    let src = raw_tree(&g, &[("100644", b"a.py", a)]);
    let top = raw_tree(
        &g,
        &[
            ("100644", b".gitattributes", attributes),
            ("40000", b"docs", deep),
            ("40000", b"src", src),
            ("100644", b"version.json", v),
        ],
    );
    commit_tree(&repo, top, "v1.0.0", "v4.0.0");
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v4.0.0", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The checkout's bytes: CRLF.
    let mut want = Sha256::new();
    want.update(b"a.py\0a = 1\r\n\n");
    let want = hex::encode(want.finalize());
    let j = json(&run);
    assert_eq!(j["fingerprint"], want.as_str());
    assert!(
        j["warnings"]
            .to_string()
            .contains("sets eol=crlf on 1 runtime file"),
        "{j}"
    );
    assert!(run.max_rss_kib < 80 * 1024, "{} KiB", run.max_rss_kib);
    let run = bounded(
        repo.path(),
        &["v1.0.0..v4.0.0", "--format", "json", "--no-cache"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    assert_eq!(j["to"]["fingerprint"], want.as_str());
    assert_eq!(j["changes"]["ignored_complete"], false);
    assert!(run.max_rss_kib < 80 * 1024, "{} KiB", run.max_rss_kib);
}

/// A symbolic link whose target is larger than any path is not read whole.
#[test]
fn a_huge_link_target_is_unavailable_not_read() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"a = 1\n");
    let target = blob(&g, &vec![b'a'; 100_000]);
    let src = raw_tree(&g, &[("100644", b"a.py", a), ("120000", b"l.py", target)]);
    commit_tree(&repo, top_with_src(&g, src, "2.0.0"), "v1.0.0", "v2.0.0");
    let reason = agreed_reason(&repo, "v2.0.0");
    assert!(
        reason.starts_with("src/l.py: symlink whose target is 100000 bytes"),
        "{reason:?}"
    );
}

/// The cache is keyed by selection; a line edited to give the new release
/// the old release's fingerprint (which would read "no restart") fails its
/// checksum and is a miss: the answer is recomputed.
#[test]
fn a_tampered_cache_line_is_a_miss_not_a_verdict() {
    let repo = base();
    repo.write("src/app.py", "app = 2\n");
    repo.commit("1.0.1");
    repo.tag("v1.0.1");
    let first = bounded(repo.path(), &["v1.0.0..v1.0.1", "--format", "json"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let j = json(&first);
    assert_eq!(j["restart_required"], true);
    let (old, new) = (
        j["from"]["fingerprint"].as_str().unwrap().to_string(),
        j["to"]["fingerprint"].as_str().unwrap().to_string(),
    );
    let cache = repo.join(".git/fpcheck/fingerprints-v3");
    let text = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains(&new), "{text}");
    // The new release's line now carries the old fingerprint; and a line
    // with one flipped digit of its own.
    let tampered = text.replace(&new, &old);
    std::fs::write(&cache, &tampered).unwrap();
    let run = bounded(repo.path(), &["v1.0.0..v1.0.1", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    assert_eq!(j["restart_required"], true, "the tampered line was trusted");
    assert_eq!(j["to"]["fingerprint"], new.as_str());
    // The answer was saved again, with a valid line.
    let healed = std::fs::read_to_string(&cache).unwrap();
    assert!(healed.contains(&new), "{healed}");
}

/// A chain of tags is peeled with a bound: 70 nested tags are refused
/// (exit 4) with a sentence, 3 are followed.
#[test]
fn deeply_nested_tags_are_refused_with_a_bound() {
    let repo = base();
    repo.git(&["tag", "-a", "n0", "-m", "n0", "v1.0.0"]);
    for i in 1..70 {
        let (name, prev) = (format!("n{i}"), format!("n{}", i - 1));
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
    let run = bounded(repo.path(), &["fingerprint", "--rev", "n69"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("`n69` nests more than 64 tags"),
        "{}",
        run.stderr
    );
    let run = bounded(repo.path(), &["fingerprint", "--rev", "n2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let base = bounded(repo.path(), &["fingerprint", "--rev", "v1.0.0"]);
    assert_eq!(run.stdout, base.stdout);
}

/// A `.gitattributes` blob larger than fpcheck reads whole may change the
/// bytes a checkout writes: the fingerprint is unavailable, naming it.
#[test]
fn an_oversized_gitattributes_makes_the_fingerprint_unavailable() {
    let repo = base();
    let g = open(&repo);
    let attributes = blob(&g, &vec![b'#'; (16 << 20) + 1]);
    let a = blob(&g, b"a = 1\n");
    let src = raw_tree(
        &g,
        &[
            ("100644", b".gitattributes", attributes),
            ("100644", b"a.py", a),
        ],
    );
    commit_tree(&repo, top_with_src(&g, src, "2.0.0"), "v1.0.0", "v2.0.0");
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v2.0.0", "--json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = json(&run);
    assert_eq!(j["fingerprint"], "");
    let why = j["unavailable_reason"].as_str().unwrap();
    assert!(
        why.contains("src/.gitattributes is 16777217 bytes, more than the 16777216"),
        "{why}"
    );
}

/// A tree the diff cannot parse under an excluded folder leaves the
/// fingerprint available: the verdict stands, explained from the
/// selections, instead of the range failing (found by the property test).
#[test]
fn an_unparsable_tree_under_an_excluded_folder_does_not_stop_the_range() {
    let repo = base();
    let g = open(&repo);
    let app = blob(&g, b"app = 2\n");
    let tests = raw_tree(&g, &[("100644", b"n\0ul.py", app)]);
    let src = raw_tree(
        &g,
        &[("100644", b"app.py", app), ("40000", b"tests", tests)],
    );
    commit_tree(&repo, top_with_src(&g, src, "1.0.0"), "v1.0.0", "v1.0.1");
    let run = repo.fpcheck(&["v1.0.0..v1.0.1", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(
        j["changes"]["runtime"][0]["path"], "src/app.py",
        "{}",
        run.stdout
    );
    assert_eq!(j["changes"]["ignored_complete"], false);
}

/// A pull request's tree naming one subtree twice at each of 24 levels: a
/// few kilobytes of objects that are 2^24 directories once walked. The
/// range answers (restart: that end's fingerprint is unavailable, naming
/// the walk's limit) instead of walking for ever, cold and with the cache.
#[test]
fn a_tree_naming_one_subtree_many_times_over_is_unavailable_not_endless() {
    let repo = base();
    let g = open(&repo);
    let leaf = blob(&g, b"m = 1\n");
    let mut dag = raw_tree(&g, &[("100644", b"m.py", leaf)]);
    for _ in 0..24 {
        dag = raw_tree(&g, &[("40000", b"a", dag), ("40000", b"b", dag)]);
    }
    let app = blob(&g, b"app = 1\n");
    let src = raw_tree(&g, &[("100644", b"app.py", app), ("40000", b"pkg", dag)]);
    commit_tree(&repo, top_with_src(&g, src, "4.0.0"), "v1.0.0", "v4.0.0");
    for args in [
        &["v1.0.0..v4.0.0", "--format", "json", "--no-cache"][..],
        &["v1.0.0..v4.0.0", "--format", "json"],
    ] {
        let run = bounded(repo.path(), args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let j = json(&run);
        assert_eq!(j["restart_required"], true, "{j}");
        assert_eq!(j["to"]["fingerprint"], "", "{j}");
        let reason = j["to"]["unavailable_reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("the walk below the root passed 262144 directories"),
            "{reason}"
        );
    }
}

/// The same 200 MB blob in one runtime of two: the multi-runtime range
/// reads each blob once for every runtime (and end) that selects it, and
/// streams it into their hashers, never holding it whole.
#[test]
fn a_huge_blob_in_one_of_several_runtimes_is_streamed() {
    const SIZE: usize = 200 << 20;
    let repo = TestRepo::new();
    repo.write(
        "fpcheck.toml",
        "[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n",
    )
    .write("server/app.py", "app = 1\n")
    .write("worker/job.py", "job = 1\n")
    .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.git(&["config", "core.bigFileThreshold", "1m"]);
    write_zeros(&repo.join("server/big.py"), SIZE);
    repo.write("worker/job.py", "job = 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("big", "v1.1.0");
    repo.remove("server/big.py");
    let want = app_and_zeros_fingerprint(SIZE);

    let run = bounded(
        repo.path(),
        &["v1.0.0..v1.1.0", "--format", "json", "--no-cache"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    assert_eq!(j["runtimes"][0]["name"], "server");
    assert_eq!(j["runtimes"][0]["to"]["fingerprint"], want.as_str());
    assert!(
        run.max_rss_kib < 80 * 1024,
        "range: {} KiB",
        run.max_rss_kib
    );
}

/// Writes `size` zero bytes to `path`, a MiB at a time.
fn write_zeros(path: &Path, size: usize) {
    use std::io::Write;
    let zeros = vec![0u8; 1 << 20];
    let mut f = std::fs::File::create(path).unwrap();
    for _ in 0..size / zeros.len() {
        f.write_all(&zeros).unwrap();
    }
}

/// The fingerprint of `app.py` (`app = 1`) and `big.py` (`size` zeros).
fn app_and_zeros_fingerprint(size: usize) -> String {
    let mut want = Sha256::new();
    want.update(b"app.py\0app = 1\n\n");
    want.update(b"big.py\0");
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..size / zeros.len() {
        want.update(&zeros);
    }
    want.update(b"\n");
    hex::encode(want.finalize())
}

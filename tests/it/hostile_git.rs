//! Hostile git objects, built here object by object: `git replace` cycles,
//! trees and blobs as range ends, tags of equal precedence, blobs that
//! inflate far beyond their size, trees nested past git's depth limit, and
//! malformed trees. Every command must answer (an error, or an unavailable
//! fingerprint with the same reason everywhere), never hang, never abort.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gix::objs::Write as _;
use gix::ObjectId;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::{git_cmd, TestRepo};

/// The outcome of a run watched by [`bounded`].
struct Watched {
    code: i32,
    stdout: String,
    stderr: String,
    /// The child's peak resident memory (VmHWM), in KiB.
    max_rss_kib: u64,
}

/// Runs fpcheck in `cwd`, killing it if it has not finished after two
/// minutes (a guard against a hang, not a timing assertion), and reads its
/// peak memory (VmHWM in /proc/PID/status) while it runs. wait4's
/// ru_maxrss cannot serve: on exec, Linux folds the forking process's peak
/// (this test binary's) into it. VmHWM only grows, so the last reading
/// before the exit misses at most the last few milliseconds.
fn bounded(cwd: &Path, args: &[&str]) -> Watched {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpcheck"))
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("fpcheck runs");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut peak = 0;
    let proc_status = format!("/proc/{}/status", child.id());
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&proc_status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        }) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("wait for fpcheck") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fpcheck {args:?} still running after two minutes: it hangs");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(!stderr.contains("panicked"), "fpcheck panicked: {stderr}");
    let Some(code) = status.code() else {
        panic!("fpcheck {args:?} was killed by a signal ({status}): {stderr}");
    };
    Watched {
        code,
        stdout: std::fs::read_to_string(&out).unwrap(),
        stderr,
        max_rss_kib: peak,
    }
}

fn json(w: &Watched) -> Value {
    serde_json::from_str(&w.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", w.stdout))
}

fn open(repo: &TestRepo) -> gix::Repository {
    gix::open(repo.path()).unwrap()
}

fn blob(repo: &gix::Repository, bytes: &[u8]) -> ObjectId {
    repo.write_blob(bytes).unwrap().detach()
}

/// A tree entry: mode, name, object.
type RawEntry<'a> = (&'a str, &'a [u8], ObjectId);

/// A tree object written byte for byte as given: no sorting, no checks.
fn raw_tree(repo: &gix::Repository, entries: &[RawEntry<'_>]) -> ObjectId {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    repo.objects
        .write_buf(gix::object::Kind::Tree, &bytes)
        .unwrap()
}

/// Commits `tree` on top of `parent` and tags the commit `tag`.
fn commit_tree(repo: &TestRepo, tree: ObjectId, parent: &str, tag: &str) -> String {
    let out = git_cmd(repo.path())
        .env("GIT_AUTHOR_DATE", "2026-01-02T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T00:00:00Z")
        .args(["commit-tree", &tree.to_string(), "-p", parent, "-m", tag])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commit = String::from_utf8(out.stdout).unwrap().trim().to_string();
    repo.git(&["tag", tag, &commit]);
    commit
}

/// A repository with release v1.0.0 (`src/app.py`, version 1.0.0).
fn base() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "app = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo
}

/// A top tree holding `src` (the given tree) and version.json at `version`.
fn top_with_src(g: &gix::Repository, src: ObjectId, version: &str) -> ObjectId {
    let v = blob(g, format!("{{\"version\": \"{version}\"}}\n").as_bytes());
    raw_tree(g, &[("40000", b"src", src), ("100644", b"version.json", v)])
}

#[test]
fn a_replace_cycle_between_tags_is_an_error_naming_the_refs() {
    let repo = base();
    repo.write("src/app.py", "app = 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag_annotated("v1.1.0");
    // v1.2.0 is a tag of the tag v1.1.0; then v1.1.0's tag object is
    // replaced by one that points back at v1.2.0.
    repo.git(&["tag", "-a", "v1.2.0", "-m", "nested", "v1.1.0"]);
    let t1 = repo.git(&["rev-parse", "v1.1.0"]);
    let t2 = repo.git(&["rev-parse", "v1.2.0"]);
    let fake =
        format!("object {t2}\ntype tag\ntag v1.1.0\ntagger T <t@example.com> 0 +0000\n\nloop\n");
    let g = open(&repo);
    let fake = g
        .objects
        .write_buf(gix::object::Kind::Tag, fake.as_bytes())
        .unwrap();
    repo.git(&["replace", "-f", &t1, &fake.to_string()]);
    for args in [
        vec!["v1.0.0..v1.2.0"],
        vec!["v1.0.0..v1.1.0", "--format", "json"],
        vec!["history", "--no-cache"],
        vec!["patch", "v1.0.0..v1.2.0"],
        vec!["fingerprint", "--rev", "v1.2.0"],
    ] {
        let run = bounded(repo.path(), &args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        for part in [
            "form a cycle through `git replace`",
            &format!("refs/replace/{t1}"),
            "refs/tags/v1.1.0",
            "refs/tags/v1.2.0",
            &format!("`git replace -d {t1}`"),
        ] {
            assert!(
                run.stderr.contains(part),
                "{args:?}: {part} missing: {}",
                run.stderr
            );
        }
    }
    // Without the replacement, every command answers again.
    repo.git(&["replace", "-d", &t1]);
    assert_eq!(bounded(repo.path(), &["v1.0.0..v1.2.0"]).code, 0);
}

#[test]
fn a_range_end_must_be_a_commit() {
    let repo = base();
    repo.write("src/app.py", "app = 2\n");
    repo.commit("2");
    repo.tag("v1.1.0");
    repo.git(&["tag", "tree-tag", "v1.0.0^{tree}"]);
    for (range, kind) in [
        ("HEAD:src..HEAD", "names a tree"),
        ("v1.0.0..HEAD:src", "names a tree"),
        ("v1.0.0^{tree}..v1.1.0", "names a tree"),
        ("tree-tag..v1.1.0", "names a tree"),
        ("v1.0.0..v1.1.0:src/app.py", "names a file"),
    ] {
        let run = bounded(repo.path(), &[range]);
        assert_eq!(run.code, 4, "{range}: {}", run.stderr);
        assert!(run.stderr.contains(kind), "{range}: {}", run.stderr);
        assert!(
            !run.stdout.contains("No restart"),
            "{range}: {}",
            run.stdout
        );
        let run = bounded(repo.path(), &["patch", range]);
        assert_eq!(run.code, 4, "patch {range}: {}", run.stderr);
    }
    // A tree is still a valid input to `fingerprint`, which hashes a tree.
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v1.0.0^{tree}"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn an_unknown_revision_has_no_gix_parser_tail() {
    let repo = base();
    let run = bounded(repo.path(), &["v1.0.0..v9"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.contains("unknown revision `v9`"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("input="), "{}", run.stderr);
    assert!(!run.stderr.contains("couldn't parse"), "{}", run.stderr);
    let run = bounded(repo.path(), &["history", "v1.0.0..v9"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
}

/// `v1.0.0` (older commit) and `1.0.0` (newer commit) have equal
/// precedence; by name `1.0.0` would come first and the history would step
/// backwards.
#[test]
fn equal_versions_are_ordered_by_ancestry_with_a_warning() {
    let repo = base();
    repo.write("src/app.py", "app = 2\n");
    repo.commit("same version, new code");
    repo.tag("1.0.0");
    repo.write("src/app.py", "app = 3\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    let run = bounded(repo.path(), &["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    let pairs: Vec<(String, String)> = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["from"].as_str().unwrap().into(),
                s["to"].as_str().unwrap().into(),
            )
        })
        .collect();
    let p = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(pairs, [p("v1.0.0", "1.0.0"), p("1.0.0", "v1.1.0")]);
    assert_eq!(j["releases"][0]["reason"], "code_changed");
    let warnings = j["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["code"], "equal_version_tags");
    let message = warnings[0]["message"].as_str().unwrap();
    assert!(message.contains("`v1.0.0`, `1.0.0`"), "{message}");
    assert!(message.contains("ordered by commit ancestry"), "{message}");
    assert!(!message.contains("unrelated"), "{message}");
    // The table warns on stderr, with the same code.
    let run = bounded(repo.path(), &["history", "--no-cache"]);
    assert!(
        run.stderr
            .contains("fpcheck: warning: equal_version_tags: tags `v1.0.0`, `1.0.0`"),
        "{}",
        run.stderr
    );
}

#[test]
fn build_metadata_on_unrelated_commits_is_named_in_the_warning() {
    let repo = base();
    repo.git(&["checkout", "-q", "-b", "b"]);
    repo.write("src/app.py", "app = b\n");
    repo.commit("b");
    repo.tag("v1.1.0+b");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("src/app.py", "app = a\n");
    repo.commit("a");
    repo.tag("v1.1.0+a");
    let run = bounded(repo.path(), &["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    let tags: Vec<&str> = j["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(tags, ["v1.0.0", "v1.1.0+a", "v1.1.0+b"]);
    let message = j["warnings"][0]["message"].as_str().unwrap();
    assert_eq!(j["warnings"][0]["code"], "equal_version_tags");
    assert!(
        message.contains("`v1.1.0+a` and `v1.1.0+b` are on unrelated commits"),
        "{message}"
    );
}

/// 200 MB of zeros: a loose object of about 200 KB. Every command answers
/// with the right fingerprint, and none holds the file in memory.
#[test]
fn a_blob_that_inflates_far_beyond_its_size_is_streamed_everywhere() {
    const SIZE: usize = 200 << 20;
    let repo = base();
    // Written through a file so that git streams it (git add reads files
    // above core.bigFileThreshold in pieces; lower it for this repository).
    repo.git(&["config", "core.bigFileThreshold", "1m"]);
    let zeros = vec![0u8; 1 << 20];
    {
        use std::io::Write;
        let mut f = std::fs::File::create(repo.join("src/big.py")).unwrap();
        for _ in 0..SIZE / zeros.len() {
            f.write_all(&zeros).unwrap();
        }
    }
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("big");
    repo.tag("v1.1.0");
    repo.remove("src/big.py");
    repo.git(&["checkout", "-q", "--", "src/app.py"]);
    let mut want = Sha256::new();
    want.update(b"app.py\0app = 1\n\n");
    want.update(b"big.py\0");
    for _ in 0..SIZE / zeros.len() {
        want.update(&zeros);
    }
    want.update(b"\n");
    let want = hex::encode(want.finalize());
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
        let got = reasons(&repo, tag);
        assert!(
            got[0].starts_with("src is a malformed tree ("),
            "{tag}: {got:?}"
        );
        assert!(got[0].contains(why), "{tag}: {got:?}");
        assert!(
            got.iter().all(|r| *r == got[0]),
            "{tag}: the commands disagree: {got:?}"
        );
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
    let got = reasons(&repo, "v2.0.0");
    assert!(got[0].starts_with("src is a malformed tree ("), "{got:?}");
    assert!(got.iter().all(|r| *r == got[0]), "{got:?}");
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
    let got = reasons(&repo, "v2.0.0");
    assert!(
        got[0].starts_with("src passes through a malformed tree ("),
        "{got:?}"
    );
    assert!(
        got[0].contains("has two entries named \"version.json\""),
        "{got:?}"
    );
    assert!(got.iter().all(|r| *r == got[0]), "{got:?}");
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
    let got = reasons(&repo, "v2.0.0");
    assert!(
        got[0].contains("nested deeper than 4096 directories"),
        "{got:?}"
    );
    assert!(got[0].starts_with("src/d/d/d/"), "{}", &got[0][..40]);
    assert!(got.iter().all(|r| *r == got[0]), "the commands disagree");

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
    let mut want = Sha256::new();
    want.update(b"a.py\0a = 1\n\n");
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
    let got = reasons(&repo, "v2.0.0");
    assert!(
        got[0].starts_with("src/l.py: symlink whose target is 100000 bytes"),
        "{got:?}"
    );
    assert!(got.iter().all(|r| *r == got[0]), "{got:?}");
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
    let cache = repo.join(".git/fpcheck/fingerprints-v2");
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

/// A `.gitattributes` blob larger than fpcheck reads whole is skipped with
/// a warning, and the fingerprint is still given.
#[test]
fn an_oversized_gitattributes_is_skipped_with_a_warning() {
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
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = json(&run);
    let mut want = Sha256::new();
    want.update(b"a.py\0a = 1\n\n");
    assert_eq!(j["fingerprint"], hex::encode(want.finalize()).as_str());
    assert_eq!(
        j["warnings"][0],
        "src/.gitattributes at `v2.0.0` is 16777217 bytes, more than the 16777216 fpcheck reads: \
         the conversions it may set are not reported"
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

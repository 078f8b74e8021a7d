//! Hostile git objects, built here object by object: `git replace` cycles,
//! trees and blobs as range ends, tags of equal precedence, blobs that
//! inflate far beyond their size, trees nested past git's depth limit, and
//! malformed trees. Every command must answer (an error, or an unavailable
//! fingerprint with the same reason everywhere), never hang, never abort.

use std::path::Path;
use std::time::{Duration, Instant};

use gix::objs::Write as _;
use gix::ObjectId;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::{fpcheck_command, git_cmd, TestRepo};

mod limits;
mod objects;

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
    let mut child = fpcheck_command(cwd)
        .args(args)
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
fn a_replace_cycle_between_tags_is_not_read_as_a_clone_does_not_have_it() {
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
    let args: [&[&str]; 5] = [
        &["v1.0.0..v1.2.0"],
        &["v1.0.0..v1.1.0", "--format", "json"],
        &["history", "--no-cache"],
        &["patch", "v1.0.0..v1.2.0"],
        &["fingerprint", "--rev", "v1.2.0"],
    ];
    let with: Vec<(i32, String)> = args
        .iter()
        .map(|a| {
            let run = bounded(repo.path(), a);
            (run.code, run.stdout)
        })
        .collect();
    // Every command answers as without the replacement (as a clone would).
    repo.git(&["replace", "-d", &t1]);
    for (a, with) in args.iter().zip(with) {
        let run = bounded(repo.path(), a);
        assert_eq!(with, (run.code, run.stdout), "{a:?}");
    }
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

/// `fpcheck` run with `env`, in `cwd`.
fn fpcheck_with_env(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> crate::support::Run {
    let mut cmd = fpcheck_command(cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    crate::support::Run::finished(cmd.args(args).output().unwrap())
}

/// What git itself says `rev` is with `env`, in `cwd`.
fn git_rev_with_env(cwd: &Path, rev: &str, env: &[(&str, &Path)]) -> String {
    let mut cmd = git_cmd(cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(["rev-parse", rev]).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A hook or script that sets git's environment gets the answer for the
/// repository it named, as git would, inside another repository or outside
/// any; `--repo` is the repository asked about whatever the environment.
#[test]
fn gits_environment_names_the_repository_as_git_reads_it() {
    let a = crate::support::two_releases(); // v1.0.0..v1.1.0 changes code
    let b = TestRepo::new(); // the same tags, a README-only release
    b.write("src/app.py", "def main(): return 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    b.commit_and_tag("1.0.0", "v1.0.0");
    b.write("README.md", "docs\n");
    b.commit_and_tag("1.1.0", "v1.1.0");
    let outside = tempfile::tempdir().unwrap();
    let git_dir = a.path().join(".git");
    let env = [("GIT_DIR", git_dir.as_path())];
    for cwd in [b.path(), outside.path()] {
        let run = fpcheck_with_env(cwd, &["v1.0.0..v1.1.0", "--format", "json"], &env);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let j = run.json();
        assert_eq!(
            j["restart_required"], true,
            "{cwd:?}: analysed the wrong repository"
        );
        assert_eq!(
            j["to"]["commit"].as_str().unwrap(),
            git_rev_with_env(cwd, "v1.1.0^{commit}", &env),
            "{cwd:?}"
        );
        // Every command that opens a repository reads the one named.
        let at = fpcheck_with_env(cwd, &["fingerprint", "--rev", "v1.1.0"], &env);
        assert_eq!(at.code, 0, "{}", at.stderr);
        assert_eq!(
            at.stdout,
            a.fpcheck(&["fingerprint", "--rev", "v1.1.0"]).stdout
        );
        let history = fpcheck_with_env(cwd, &["history", "--format", "json"], &env);
        assert_eq!(history.code, 0, "{}", history.stderr);
        assert_eq!(
            history.json()["summary"],
            a.history_json(&[])["summary"],
            "{cwd:?}"
        );
    }
    // An explicit --repo wins over the environment.
    let run = fpcheck_with_env(
        outside.path(),
        &[
            "v1.0.0..v1.1.0",
            "--format",
            "json",
            "--repo",
            b.path().to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(
        (run.code, &run.json()["restart_required"]),
        (0, &Value::Bool(false))
    );
    // A GIT_DIR that is no repository is named as such.
    let nowhere = outside.path().join("nowhere");
    let run = fpcheck_with_env(
        b.path(),
        &["v1.0.0..v1.1.0"],
        &[("GIT_DIR", nowhere.as_path())],
    );
    run.assert_error(
        4,
        &format!("GIT_DIR={} is not a git repository", nowhere.display()),
    );
    // An object store elsewhere, which fpcheck would not read, is refused
    // up front rather than met as missing objects.
    let objects = git_dir.join("objects");
    for name in ["GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"] {
        let run = fpcheck_with_env(b.path(), &["v1.0.0..v1.1.0"], &[(name, objects.as_path())]);
        run.assert_error(4, &format!("{name} is set"));
    }
}

/// `git replace` refs are local: a clone or fetch does not copy them, so
/// the installer's fresh clone never sees them. Honoured, a replaced blob
/// (or a release commit replaced by a docs-only one) read as "no restart"
/// for bytes the install changes; every command reads the objects as the
/// clone has them, whatever `GIT_REPLACE_REF_BASE` says.
#[test]
fn replace_refs_never_hide_a_change_from_the_clone() {
    let repo = crate::support::two_releases(); // v1.1.0 changes src/app.py
    let old_blob = repo
        .git(&["rev-parse", "v1.0.0:src/app.py"])
        .trim()
        .to_string();
    let new_blob = repo
        .git(&["rev-parse", "v1.1.0:src/app.py"])
        .trim()
        .to_string();
    repo.git(&["replace", &new_blob, &old_blob]);
    let clone = tempfile::tempdir().unwrap();
    let dest = clone.path().join("c");
    let out = git_cmd(repo.path())
        .args(["clone", "-q", "-b", "v1.1.0", "."])
        .arg(&dest)
        .output()
        .unwrap();
    assert!(out.status.success());
    let installed = crate::support::fpcheck_in(&dest, &["fingerprint", "--dir", "src"]);
    let installed = installed
        .stdout
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    for base in [None, Some("refs/replace/")] {
        let mut cmd = fpcheck_command(repo.path());
        if let Some(base) = base {
            cmd.env("GIT_REPLACE_REF_BASE", base);
        }
        let run = crate::support::Run::finished(
            cmd.args(["v1.0.0..v1.1.0", "--format", "json"])
                .output()
                .unwrap(),
        );
        let j = run.json();
        assert_eq!(j["restart_required"], true, "{base:?}: {}", run.stdout);
        assert_eq!(
            j["to"]["fingerprint"].as_str(),
            Some(installed.as_str()),
            "{base:?}"
        );
        let at = repo.fpcheck(&["fingerprint", "--rev", "v1.1.0"]);
        assert!(at.stdout.starts_with(&installed), "{}", at.stdout);
        let history = repo.history_json(&["--no-cache"]);
        assert_eq!(history["summary"]["restarts_forced"], 1, "{history}");
        let patch = repo.fpcheck(&["patch", "v1.0.0..v1.1.0"]);
        assert!(patch.stdout.contains(&installed), "{}", patch.stdout);
    }
    // A whole release commit replaced by a docs-only decoy.
    repo.write("README.md", "docs\n");
    repo.git(&[
        "checkout",
        "-q",
        "v1.0.0",
        "--",
        "src/app.py",
        "version.json",
    ]);
    repo.commit("decoy");
    let decoy = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let release = repo
        .git(&["rev-parse", "v1.1.0^{commit}"])
        .trim()
        .to_string();
    repo.git(&["replace", "-f", &release, &decoy]);
    let j = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]).json();
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["to"]["fingerprint"].as_str(), Some(installed.as_str()));
}

/// A directory-mode entry that names a blob: git cannot check it out, so
/// the release's fingerprint is unavailable (a restart) in every command,
/// rather than an error that stops `history` for the whole repository.
#[test]
fn a_directory_entry_naming_a_blob_is_unavailable_not_an_error() {
    let repo = base();
    let g = open(&repo);
    let a = blob(&g, b"app = 2\n");
    let src = raw_tree(&g, &[("40000", b"app.py", a)]);
    let top = top_with_src(&g, src, "1.1.0");
    commit_tree(&repo, top, "v1.0.0", "v1.1.0");
    let run = bounded(repo.path(), &["fingerprint", "--rev", "v1.1.0"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let j = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]).json();
    assert_eq!(
        (&j["restart_required"], &j["reason"]),
        (
            &Value::Bool(true),
            &Value::String("fingerprint_unavailable".into())
        )
    );
    let history = bounded(repo.path(), &["history", "--no-cache"]);
    assert_eq!(history.code, 0, "{}", history.stderr);
}

//! Hostile trees whose stored bytes and checked-out bytes can differ, each
//! as a class: attributes above a nested root whose sibling is a copy of
//! its directory, attributes on paths that are not UTF-8, link chains at
//! the kernel's limit, and version files under attributes. Each case is
//! compared with a real `git clone` of each end, read by the reference
//! fingerprint and by the gate, for every command that meets it (range,
//! `fingerprint --rev`, `history`, `patch`; `--worktree` and `--dir` for
//! links). `--resolve-only` reads no tree, so none of these reach it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{fpcheck_in, git_cmd, TestRepo};

/// A fresh `git clone` of `rev` (git's defaults on Linux), in `dir`.
fn clone_at(repo: &TestRepo, rev: &str, dir: &Path) -> PathBuf {
    let dest = dir.join(format!("clone-{rev}"));
    let out = git_cmd(dir)
        .args(["clone", "-q", "-b", rev])
        .arg(repo.path())
        .arg(&dest)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clone: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dest
}

/// The reference fingerprint of `root` on disk (`""`: unavailable).
fn reference(root: &Path) -> String {
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/reference_fingerprint.py"
        ))
        .arg(root)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Whether the gate, run on the clones (the `from` clone snapshotted, the
/// `to` clone installed), restarts: git's checkouts decide.
fn gate_on_clones(from: &Path, to: &Path, root: &str, work: &Path) -> (bool, Value) {
    let state = work.join("state.json");
    let marker = work.join("marker.json");
    let _ = std::fs::remove_file(&marker);
    let snap = fpcheck_in(
        work,
        &[
            "snapshot",
            "--dir",
            from.join(root).to_str().unwrap(),
            "--out",
            state.to_str().unwrap(),
        ],
    );
    assert!(matches!(snap.code, 0 | 4), "{}", snap.stderr);
    let gate = fpcheck_in(
        work,
        &[
            "gate",
            "--dir",
            to.join(root).to_str().unwrap(),
            "--before",
            state.to_str().unwrap(),
            "--marker",
            marker.to_str().unwrap(),
            "--json",
        ],
    );
    let j = gate.json();
    (j["restart_required"] == true, j)
}

/// A fingerprint as a report gives it: `""` when unavailable.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// How a range must answer against the gate on git's checkouts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Agreement {
    /// The same answer.
    Exact,
    /// A restart wherever the checkouts restart, and maybe more: what
    /// fpcheck cannot know (a filter driver, an encoding it does not
    /// write) it counts as a change.
    Cautious,
}

/// Every command that reads a tree agrees with git's checkouts of
/// `from` and `to` (two release tags, the only ones, of a runtime at
/// `root`): `fingerprint --rev` gives the reference's value on each clone;
/// the range finds the version and the code changed where the gate on the
/// clones does (and, `Exact`, only there); `history` answers as the range
/// and records the clones' fingerprints, `patch` the `to` clone's.
/// Returns the range's report, the clones' fingerprints and whether the
/// gate on the clones restarts.
fn agrees_with_git(
    repo: &TestRepo,
    (from, to): (&str, &str),
    root: &str,
    agreement: Agreement,
) -> (Value, [String; 2], bool) {
    let work = tempfile::tempdir().unwrap();
    let clones = [
        clone_at(repo, from, work.path()),
        clone_at(repo, to, work.path()),
    ];
    let want = [
        reference(&clones[0].join(root)),
        reference(&clones[1].join(root)),
    ];
    for (rev, want) in [from, to].iter().zip(&want) {
        let j = repo
            .fpcheck(&["fingerprint", "--rev", rev, "--json"])
            .json();
        assert_eq!(
            &text(&j["fingerprint"]),
            want,
            "fingerprint --rev {rev}: {j}"
        );
    }
    let (restart, gate) = gate_on_clones(&clones[0], &clones[1], root, work.path());
    let range = repo.verdict_json(&[&format!("{from}..{to}")]);
    for fact in ["version_changed", "code_changed"] {
        let (says, git) = (range[fact] == true, gate[fact] == true);
        let agrees = match agreement {
            Agreement::Exact => says == git,
            Agreement::Cautious => says || !git,
        };
        assert!(
            agrees,
            "{fact}: the range and the gate on git's checkouts: {range}\ngate: {gate}"
        );
    }
    // A history in which no release has a fingerprint still prints its
    // report, and says so with exit 3.
    let run = repo.fpcheck(&["history", "--format", "json"]);
    let none_available = want.iter().all(|w| w.is_empty());
    assert_eq!(
        run.code,
        if none_available { 3 } else { 0 },
        "{}",
        run.stderr
    );
    let h = run.json();
    let tags = h["tags"].as_array().unwrap();
    for (rev, want) in [from, to].iter().zip(&want) {
        let tag = tags.iter().find(|t| t["tag"] == *rev).unwrap();
        assert_eq!(&text(&tag["fingerprint"]), want, "history's {rev}: {h}");
    }
    for fact in ["restart_required", "version_changed"] {
        assert_eq!(
            h["releases"][0][fact], range[fact],
            "{fact}: history and the range: {h}"
        );
    }
    if !want[1].is_empty() {
        let run = repo.fpcheck(&["patch", &format!("{from}..{to}")]);
        let patch: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|_| panic!("patch: {} {}", run.stdout, run.stderr));
        assert_eq!(
            text(&patch["runtime_fingerprint"]),
            want[1],
            "{}",
            run.stdout
        );
    }
    (range, want, restart)
}

/// Writes `bytes` at `rel` (raw bytes: a name need not be UTF-8).
fn write_raw(repo: &TestRepo, rel: &[u8], bytes: &[u8]) {
    let path = repo.path().join(OsStr::from_bytes(rel));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A link at `rel` to `target` (raw bytes).
fn link_raw(repo: &TestRepo, rel: &[u8], target: &[u8]) {
    let path = repo.path().join(OsStr::from_bytes(rel));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    std::os::unix::fs::symlink(OsStr::from_bytes(target), path).unwrap();
}

const CONFIG_X_SRC: &str = "[runtime]\nroot = \"x/src\"\n";

/// Attributes above a root two levels deep apply by the path the walk
/// went through, whatever copy of that directory stands beside it: a
/// sibling `a/` byte for byte `x/` (same tree id) never takes `x/`'s
/// place, in front of it or behind it.
#[test]
fn attributes_above_a_nested_root_apply_at_its_path_not_at_a_copy() {
    for sibling in ["a", "y"] {
        let repo = TestRepo::new();
        repo.write("fpcheck.toml", CONFIG_X_SRC);
        repo.write("x/src/app.py", "x = 1\n");
        repo.write("x/.gitattributes", "*.py text eol=crlf\n");
        repo.commit_and_tag("v1", "v1.0.0");
        // The release adds a copy of x/ beside it, and a line to the code.
        repo.write("x/src/app.py", "x = 1\ny = 2\n");
        for rel in ["src/app.py", ".gitattributes"] {
            let bytes = std::fs::read(repo.join(&format!("x/{rel}"))).unwrap();
            repo.write(&format!("{sibling}/{rel}"), bytes);
        }
        repo.commit_and_tag("v2", "v1.1.0");
        assert_eq!(
            repo.git(&["rev-parse", "v1.1.0:x"]),
            repo.git(&["rev-parse", &format!("v1.1.0:{sibling}")]),
            "the copy is byte for byte"
        );
        let (range, fps, _) =
            agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "x/src", Agreement::Exact);
        assert_eq!(range["restart_required"], true, "{range}");
        // The checkout writes CRLF: the value differs from the stored bytes'.
        let stored =
            crate::support::fpcheck_in(repo.path(), &["fingerprint", "--rev", "v1.1.0", "--json"])
                .json();
        assert_eq!(text(&stored["fingerprint"]), fps[1]);
        assert!(
            stored["warnings"].to_string().contains("eol=crlf"),
            "{sibling}: {stored}"
        );
    }
}

/// The same class when the copies make both ends' root trees equal: the
/// range and `history` must still read `.gitattributes` at the root's own
/// path at each end (one end converts, the other not).
#[test]
fn attributes_above_a_nested_root_differ_while_its_tree_does_not() {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", CONFIG_X_SRC);
    repo.write("x/src/app.py", "x = 1\n");
    repo.write("a/.gitattributes", "*.py text eol=crlf\n");
    repo.write("a/src/app.py", "x = 1\n");
    repo.commit_and_tag("v1", "v1.0.0");
    // x/ becomes a/'s copy: x/src is unchanged, its attributes are new.
    repo.write("x/.gitattributes", "*.py text eol=crlf\n");
    repo.commit_and_tag("v2", "v1.1.0");
    let (range, fps, _) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "x/src", Agreement::Exact);
    assert_ne!(fps[0], fps[1]);
    assert_eq!(range["restart_required"], true, "{range}");
}

/// A root reached through a link to a directory whose name is not UTF-8
/// (`src -> \xff`), and a link target there: git matches the attribute
/// pattern naming the raw byte; so does fpcheck, on bytes, never on a
/// lossy reading (which would also take `\xfe`'s attributes for `\xff`'s).
#[test]
fn attributes_match_paths_that_are_not_utf8_as_git_does() {
    type Case = (&'static [u8], &'static [(&'static [u8], &'static [u8])]);
    let cases: [Case; 4] = [
        // A pattern naming the byte, at the top.
        (
            b"root link",
            &[(b".gitattributes", b"\xff/*.py eol=crlf\n")],
        ),
        // The same pattern, quoted with an octal escape.
        (
            b"root link",
            &[(b".gitattributes", b"\"\\377/*.py\" eol=crlf\n")],
        ),
        // A `.gitattributes` in a directory that is not UTF-8, and one in
        // another such directory, which a lossy reading would confuse.
        (
            b"root link",
            &[(b"\xfe/.gitattributes", b"*.py eol=crlf\n")],
        ),
        // A link target whose path is not UTF-8.
        (
            b"file link",
            &[(b".gitattributes", b"\xff/*.py eol=crlf\n")],
        ),
    ];
    for (how, attributes) in cases {
        let repo = TestRepo::new();
        write_raw(&repo, b"\xff/app.py", b"x = 1\n");
        write_raw(&repo, b"\xfe/app.py", b"x = 1\n");
        if how == b"root link" {
            link_raw(&repo, b"src", b"\xff");
        } else {
            write_raw(&repo, b"src/own.py", b"own = 1\n");
            link_raw(&repo, b"src/app.py", b"../\xff/app.py");
        }
        repo.commit_and_tag("v1", "v1.0.0");
        for (rel, bytes) in attributes {
            write_raw(&repo, rel, bytes);
        }
        repo.commit_and_tag("v2", "v1.1.0");
        let label = String::from_utf8_lossy(attributes[0].1).into_owned();
        let (range, fps, _) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "src", Agreement::Exact);
        assert!(!fps[0].is_empty() && !fps[1].is_empty(), "{label}");
        // git converts exactly when the pattern names the root's real
        // directory (`\xff`), never `\xfe`.
        let converts = attributes[0].0 != b"\xfe/.gitattributes";
        assert_eq!(fps[0] != fps[1], converts, "{label}");
        assert_eq!(range["restart_required"], converts, "{label}: {range}");
    }
}

/// A chain of `links` links in `dir` ending at a file: `l1 -> f`,
/// `l2 -> l1`, ... The last one is `l{links}`.
fn chain(dir: &Path, links: usize) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("f"), b"x = 1\n").unwrap();
    let mut prev = "f".to_string();
    for i in 1..=links {
        let name = format!("l{i}");
        std::os::unix::fs::symlink(&prev, dir.join(&name)).unwrap();
        prev = name;
    }
}

/// The kernel's limit, measured: a path whose lookup follows 40 links
/// reads, 41 is "Too many levels of symbolic links", counting the
/// links on the way to the directory with those at the end.
#[test]
fn the_kernel_follows_forty_links_in_one_lookup() {
    let dir = tempfile::tempdir().unwrap();
    chain(dir.path(), 41);
    assert!(std::fs::read(dir.path().join("l40")).is_ok());
    let err = std::fs::read(dir.path().join("l41")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
    // A directory reached through one link, then a chain of 39: 40 in
    // all reads; through two links, 41 does not.
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::os::unix::fs::symlink("d", dir.path().join("r1")).unwrap();
    std::os::unix::fs::symlink("r1", dir.path().join("r2")).unwrap();
    std::os::unix::fs::symlink("../l38", dir.path().join("d/s")).unwrap();
    assert!(std::fs::read(dir.path().join("r1/s")).is_ok());
    let err = std::fs::read(dir.path().join("r2/s")).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
}

/// A runtime file at the end of a link chain: `src/app.py` is a link into
/// a chain of `chain_links` more, and the root itself is reached through
/// `root_links` links. The total the kernel counts is
/// `root_links + 1 + chain_links`: at 40 the file is read, at 41 it is
/// not, in the git objects (`fingerprint --rev`, the range, `history`,
/// `patch`), the working tree and the installed directory (`--dir`) alike,
/// as in git's checkout read by the reference.
#[test]
fn a_link_chain_is_followed_to_the_kernels_limit_and_no_further() {
    for (root_links, chain_links) in [(0, 39), (0, 40), (1, 38), (1, 39), (2, 38), (3, 37)] {
        let repo = TestRepo::new();
        let real = if root_links == 0 { "src" } else { "real" };
        repo.write(&format!("{real}/own.py"), "own = 1\n");
        chain(&repo.join("chain"), chain_links);
        repo.symlink(
            &format!("{real}/app.py"),
            &format!("../chain/l{chain_links}"),
        );
        // src -> r{n-1} -> ... -> r1 -> real
        if root_links > 0 {
            let mut prev = real.to_string();
            for i in 1..root_links {
                repo.symlink(&format!("r{i}"), &prev);
                prev = format!("r{i}");
            }
            repo.symlink("src", &prev);
        }
        repo.write("version.json", "{\"version\": \"1.0\"}\n");
        repo.commit_and_tag("v1", "v1.0.0");
        // The release changes the file at the end of the chain.
        repo.write("chain/f", "x = 2\n");
        repo.write("version.json", "{\"version\": \"1.1\"}\n");
        repo.commit_and_tag("v2", "v1.1.0");
        let total = root_links + 1 + chain_links;
        let label = format!("{root_links} + 1 + {chain_links} = {total} links");
        let (range, fps, _) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "src", Agreement::Exact);
        assert_eq!(fps[1].is_empty(), total > 40, "{label}");
        assert_eq!(range["restart_required"], true, "{label}: {range}");
        // The working tree and the directory read the same.
        let worktree = repo.verdict_json(&["v1.0.0..", "--worktree"]);
        assert_eq!(
            text(&worktree["to"]["fingerprint"]),
            fps[1],
            "--worktree, {label}"
        );
        let dir = repo
            .fpcheck(&["fingerprint", "--dir", "src", "--json"])
            .json();
        assert_eq!(text(&dir["fingerprint"]), fps[1], "--dir, {label}");
        let read = std::fs::read(repo.join("src/app.py"));
        assert_eq!(read.is_ok(), total <= 40, "std::fs, {label}");
    }
}

/// Where nothing changed but the chain's length crosses the limit, the
/// range restarts: the file the gate hashed is gone from its view.
#[test]
fn a_chain_grown_past_the_limit_restarts() {
    let repo = TestRepo::new();
    repo.write("src/own.py", "own = 1\n");
    chain(&repo.join("chain"), 41);
    repo.symlink("src/app.py", "../chain/l39");
    repo.write("version.json", "{\"version\": \"1.0\"}\n");
    repo.commit_and_tag("v1", "v1.0.0");
    // One more link in the chain: 41 in all, the limit passed by one.
    repo.symlink("src/app.py", "../chain/l40");
    repo.write("version.json", "{\"version\": \"1.1\"}\n");
    repo.commit_and_tag("v2", "v1.1.0");
    let (range, fps, _) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "src", Agreement::Exact);
    assert!(!fps[0].is_empty() && fps[1].is_empty(), "{fps:?}");
    assert_eq!(range["restart_required"], true, "{range}");
}

/// `version.json` is read as a checkout writes it. Its stored text stays
/// `"$Id$"` (or as it was) at both ends; the checkout's changes with
/// `ident`, or cannot be read by the gate (`working-tree-encoding`), or
/// cannot be known (a filter driver, an encoding fpcheck does not write).
/// With the code changed, the version decides whether the updater writes
/// a marker; with the code unchanged and `force_restart` on, whether the
/// release restarts at all (the range said "no restart" for `ident`).
#[test]
fn version_files_are_read_as_checked_out() {
    use Agreement::{Cautious, Exact};
    let cases: [(&str, Agreement); 5] = [
        // ident: the version text names the file's blob, which changes.
        ("version.json ident\n", Exact),
        // A macro that sets it.
        ("[attr]v ident\nversion.json v\n", Exact),
        // UTF-16: the gate reads UTF-8 and finds no version.
        ("version.json working-tree-encoding=UTF-16\n", Exact),
        // A filter driver: unknowable, a version change is assumed.
        ("version.json filter=lfs\n", Cautious),
        // An encoding fpcheck does not reproduce: the same.
        ("version.json working-tree-encoding=ISO-8859-1\n", Cautious),
    ];
    for (attributes, agreement) in cases {
        for code_changes in [true, false] {
            let version = |n: u8| {
                let force = if code_changes {
                    ""
                } else {
                    ", \"force_restart\": true"
                };
                format!("{{\"version\": \"$Id$\", \"n\": {n}{force}}}\n")
            };
            let repo = TestRepo::new();
            repo.write("src/app.py", "x = 1\n");
            repo.write("version.json", version(1));
            repo.commit_and_tag("v1", "v1.0.0");
            repo.write(".gitattributes", attributes);
            // The working tree holds the checkout's encoding; git stores
            // UTF-8.
            if attributes.contains("UTF-16") {
                let mut utf16 = vec![0xff, 0xfe];
                utf16.extend(version(2).encode_utf16().flat_map(u16::to_le_bytes));
                repo.write("version.json", utf16);
            } else {
                repo.write("version.json", version(2));
            }
            if code_changes {
                repo.write("src/app.py", "x = 2\n");
            }
            repo.commit_and_tag("v2", "v1.1.0");
            let label = format!("{attributes}, code changes: {code_changes}");
            let (range, _, gate) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "src", agreement);
            assert_eq!(range["version_changed"], true, "{label}: {range}");
            match agreement {
                Exact => assert_eq!(range["restart_required"], gate, "{label}: {range}"),
                Cautious => assert_eq!(range["restart_required"], true, "{label}: {range}"),
            }
        }
    }
}

/// `version.json` under the attributes of its real path, reached through
/// a link: `src/version.json -> ../meta/v.json`, `meta/v.json ident`.
#[test]
fn a_linked_version_file_is_converted_by_its_targets_attributes() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "x = 1\n");
    repo.write("meta/v.json", "{\"version\": \"$Id$\", \"n\": 1}\n");
    repo.symlink("src/version.json", "../meta/v.json");
    repo.write("meta/.gitattributes", "v.json ident\n");
    repo.commit_and_tag("v1", "v1.0.0");
    repo.write("meta/v.json", "{\"version\": \"$Id$\", \"n\": 2}\n");
    repo.write("src/app.py", "x = 2\n");
    repo.commit_and_tag("v2", "v1.1.0");
    let (range, _, _) = agrees_with_git(&repo, ("v1.0.0", "v1.1.0"), "src", Agreement::Exact);
    assert_eq!(range["restart_required"], true, "{range}");
}

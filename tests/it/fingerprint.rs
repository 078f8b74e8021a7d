//! `fpcheck fingerprint`: revisions of every form, repository layouts, the
//! reasons for an unavailable fingerprint, and bad input.

use crate::support::{fpcheck_in, git_in, TestRepo};

const BASE_FP: &str = "3c43745c84d45b3a91549d9f364119f930f26b9b87ab5772fd95040bd8d043d6";
const V2_FP: &str = "7e11f47df4a9b650ebefd470c871f4726d28e8e17cfec79fb8bd4d1271f9aa22";

/// The vectors' `base` tree at v1 (lightweight) and v2 (annotated), plus a
/// docs-only commit on top.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "# entrypoint\n")
        .write("src/cli.py", "# cli\n")
        .write("src/plugins/__init__.py", "")
        .write("src/plugins/memory.py", "def hello(): return 'v1'\n")
        .write("src/tests/noise.py", "# excluded\n")
        .write("src/version.json", "{\"version\": \"1.0.0\"}\n")
        .write("README.md", "# docs\n");
    repo.commit("v1");
    repo.tag("v1");
    repo.write("src/plugins/memory.py", "def hello(): return 'v2'\n");
    repo.commit("v2");
    repo.tag_annotated("v2");
    repo.write("README.md", "# docs, again\n");
    repo.commit("docs");
    repo
}

#[test]
fn every_revision_form_resolves() {
    let repo = project();
    let v1 = repo.git(&["rev-parse", "v1"]);
    for (rev, fp) in [
        ("v1", BASE_FP),
        ("v2", V2_FP),
        ("HEAD", V2_FP),
        ("main", V2_FP),
        ("HEAD~2", BASE_FP),
        (v1.as_str(), BASE_FP),
        (&v1[..8], BASE_FP),
        ("v1^{tree}", BASE_FP),
        ("v2^{commit}", V2_FP),
    ] {
        let run = repo.fpcheck(&["fingerprint", "--rev", rev]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, format!("{fp}\n").as_str()),
            "rev {rev}: {}",
            run.stderr
        );
    }
}

#[test]
fn list_and_json_name_the_selection_and_the_source() {
    let repo = project();
    let run = repo.fpcheck(&["fingerprint", "--rev", "v1", "--list"]);
    assert_eq!(
        run.stdout,
        format!("{BASE_FP}\ncli.py\nplugins/__init__.py\nplugins/memory.py\nserver.py\n")
    );

    let run = repo.fpcheck(&["fingerprint", "--rev", "v2", "--json"]);
    assert_eq!(run.code, 0);
    let j = run.json();
    assert_eq!(j["fingerprint"], V2_FP);
    assert_eq!(j["unavailable_reason"], serde_json::Value::Null);
    assert_eq!(
        j["files"],
        serde_json::json!([
            "cli.py",
            "plugins/__init__.py",
            "plugins/memory.py",
            "server.py"
        ])
    );
    assert_eq!(j["source"], "git");
    assert_eq!(j["rev"], "v2");
    assert_eq!(j["commit"], repo.git(&["rev-parse", "v2^{commit}"]));
    assert_eq!(j["settings"]["root"], "src");
    assert_eq!(j["settings"]["extensions"], serde_json::json!([".py"]));
    assert_eq!(j["settings"]["exclude"][7], "versions");
    assert_eq!(j["warnings"], serde_json::json!([]));
}

#[test]
fn directory_mode_agrees_with_the_commit() {
    let repo = project();
    let run = repo.fpcheck(&["fingerprint", "--dir", "src", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["fingerprint"], V2_FP);
    assert_eq!(j["source"], "dir");
    assert_eq!(j["dir"], "src");
}

#[test]
fn bare_clones_linked_worktrees_and_packed_objects() {
    let repo = project();
    let parent = tempfile::tempdir().unwrap();
    let bare = parent.path().join("bare.git");
    git_in(
        parent.path(),
        &[
            "clone",
            "-q",
            "--bare",
            repo.path().to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let run = fpcheck_in(&bare, &["fingerprint", "--rev", "v1"]);
    assert_eq!(
        (run.code, run.stdout.trim()),
        (0, BASE_FP),
        "{}",
        run.stderr
    );

    // Everything packed, loose objects pruned.
    repo.git(&["gc", "-q", "--prune=now"]);
    let run = repo.fpcheck(&["fingerprint", "--rev", "v2"]);
    assert_eq!(run.stdout.trim(), V2_FP);

    let wt = parent.path().join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap(), "v1"]);
    let run = fpcheck_in(&wt, &["fingerprint"]);
    assert_eq!(
        (run.code, run.stdout.trim()),
        (0, BASE_FP),
        "{}",
        run.stderr
    );
    let run = fpcheck_in(
        parent.path(),
        &["fingerprint", "--repo", wt.to_str().unwrap(), "--rev", "v2"],
    );
    assert_eq!(run.stdout.trim(), V2_FP);
}

#[test]
fn partial_clone_without_unrelated_blobs_still_works() {
    let repo = project();
    repo.write("assets/big.bin", vec![7u8; 200_000]);
    repo.commit("assets");
    repo.git(&["config", "uploadpack.allowFilter", "true"]);
    let parent = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    git_in(
        parent.path(),
        &[
            "clone",
            "-q",
            "--bare",
            "--filter=blob:none",
            &url,
            "partial.git",
        ],
    );
    let partial = parent.path().join("partial.git");
    // Only the blobs under src/ that fpcheck reads are fetched into it.
    let src = git_in(&partial, &["rev-parse", "HEAD:src/plugins/memory.py"]);
    git_in(&partial, &["fetch", "-q", "origin", &src]);
    for path in ["src/server.py", "src/cli.py", "src/plugins/__init__.py"] {
        let id = git_in(&partial, &["rev-parse", &format!("HEAD:{path}")]);
        git_in(&partial, &["fetch", "-q", "origin", &id]);
    }
    let run = fpcheck_in(&partial, &["fingerprint"]);
    assert_eq!((run.code, run.stdout.trim()), (0, V2_FP), "{}", run.stderr);

    // A runtime blob that is absent is an input error that says what to do.
    let run = fpcheck_in(&partial, &["fingerprint", "--rev", "v1"]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stderr.contains("src/plugins/memory.py") && run.stderr.contains("missing"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("fetch"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// A committed `fpcheck.toml` whose blob is gone is a missing object like
/// any other (exit 4, the session's one message naming the revision to
/// fetch), not a bad config: the repository lacks it, the file is fine.
#[test]
fn a_missing_config_blob_is_a_missing_object() {
    let repo = project();
    repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\n");
    repo.commit("config");
    repo.tag("v3");
    let blob = repo.git(&["rev-parse", "v3:fpcheck.toml"]);
    let blob = blob.trim();
    std::fs::remove_file(repo.join(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .unwrap();
    let run = repo.fpcheck(&["fingerprint", "--rev", "v3"]);
    run.assert_error(
        4,
        &format!(
            "the blob of fpcheck.toml at v3 ({blob}) is missing from the repository; {} may be a \
             partial or shallow clone: fetch the revision in full (`git fetch origin v3`) or run \
             fpcheck in a complete clone",
            repo.path().display()
        ),
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn shallow_clone_lacking_the_revision_says_to_fetch_it() {
    let repo = project();
    let parent = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    git_in(
        parent.path(),
        &[
            "clone",
            "-q",
            "--depth=1",
            "--no-single-branch",
            &url,
            "shallow",
        ],
    );
    let shallow = parent.path().join("shallow");
    let run = fpcheck_in(&shallow, &["fingerprint", "--rev", "HEAD~2"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.contains("`HEAD~2`")
            && run.stderr.contains("shallow")
            && run.stderr.contains("git fetch"),
        "{}",
        run.stderr
    );
    let run = fpcheck_in(&shallow, &["fingerprint"]);
    assert_eq!((run.code, run.stdout.trim()), (0, V2_FP));
}

#[test]
fn unavailable_fingerprints_name_the_path() {
    let repo = TestRepo::new();
    repo.write("src/main.py", "x\n")
        .write("src/pkg/mod.py", "m\n")
        .write("x.py", "outside\n");
    repo.symlink("src/a.py", "../../x");
    repo.symlink("src/pkg.py", "pkg");
    repo.symlink("src/ok.py", "../x.py");
    repo.commit("links");
    let run = repo.fpcheck(&["fingerprint", "--json"]);
    assert_eq!(run.code, 3);
    let j = run.json();
    assert_eq!(j["fingerprint"], "");
    assert_eq!(j["files"], serde_json::json!([]));
    assert_eq!(
        j["unavailable_reason"],
        "src/a.py: symlink to ../../x leaves the repository (and 1 more problem)"
    );
    let run = repo.fpcheck(&["fingerprint"]);
    assert_eq!((run.code, run.stdout.as_str()), (3, ""));
    assert!(run
        .stderr
        .contains("fingerprint unavailable: src/a.py: symlink to ../../x leaves the repository"));

    repo.remove("src/a.py");
    repo.commit("one left");
    let j = repo.fpcheck(&["fingerprint", "--json"]).json();
    assert_eq!(
        j["unavailable_reason"],
        "src/pkg.py: symlink to pkg points at a directory"
    );

    repo.remove("src/pkg.py");
    repo.write("src/weird.py/inner.py", "y\n");
    repo.commit("dir named py");
    let j = repo.fpcheck(&["fingerprint", "--json"]).json();
    assert_eq!(j["unavailable_reason"], "src/weird.py is a directory");

    repo.remove("src/weird.py");
    repo.commit("fixed");
    let run = repo.fpcheck(&["fingerprint", "--list"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.lines().skip(1).collect::<Vec<_>>(),
        ["main.py", "ok.py", "pkg/mod.py"]
    );

    let run = repo.fpcheck(&["fingerprint", "--root", "docs", "--json"]);
    assert_eq!(run.code, 3);
    assert!(run.json()["unavailable_reason"]
        .as_str()
        .unwrap()
        .starts_with("docs does not exist"));
    let run = repo.fpcheck(&["fingerprint", "--ext", ".rb", "--json"]);
    assert_eq!(run.json()["unavailable_reason"], "no .rb files under src");
    let run = repo.fpcheck(&["fingerprint", "--root", "x.py"]);
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains("x.py is not a directory"),
        "{}",
        run.stderr
    );
}

#[test]
fn absolute_and_looping_links_and_links_through_directories() {
    let repo = TestRepo::new();
    repo.write("src/main.py", "x\n")
        .write("lib/real/util.py", "u\n");
    repo.symlink("lib/alias", "real");
    repo.symlink("src/util.py", "../lib/alias/util.py");
    repo.commit("chain through a directory link");
    let fp = repo.fpcheck(&["fingerprint", "--list"]);
    assert_eq!(fp.code, 0, "{}", fp.stderr);
    let dir = repo.fpcheck(&["fingerprint", "--dir", "src", "--list"]);
    assert_eq!(fp.stdout, dir.stdout);

    repo.symlink("src/abs.py", "/etc/hostname");
    repo.symlink("src/l1.py", "l2.py");
    repo.symlink("src/l2.py", "l1.py");
    repo.commit("bad links");
    let j = repo.fpcheck(&["fingerprint", "--json"]).json();
    assert_eq!(
        j["unavailable_reason"],
        "src/abs.py: symlink to /etc/hostname is absolute (a checkout would read outside the repository) (and 2 more problems)"
    );
    repo.remove("src/abs.py");
    repo.commit("loop only");
    let j = repo.fpcheck(&["fingerprint", "--json"]).json();
    assert_eq!(
        j["unavailable_reason"],
        "src/l1.py: symlink to l2.py loops (and 1 more problem)"
    );
    let j = repo
        .fpcheck(&["fingerprint", "--dir", "src", "--json"])
        .json();
    assert_eq!(
        j["unavailable_reason"],
        "src/l1.py: symlink to l2.py loops (and 1 more problem)"
    );
}

#[test]
fn submodules_below_the_root_make_it_unavailable_unless_excluded() {
    let sub = TestRepo::new();
    sub.write("lib.py", "sub\n");
    sub.commit("sub");
    let repo = TestRepo::new();
    repo.write("src/main.py", "x\n");
    repo.git(&[
        "submodule",
        "add",
        "-q",
        sub.path().to_str().unwrap(),
        "src/vendor",
    ]);
    repo.commit("with submodule");
    let j = repo.fpcheck(&["fingerprint", "--json"]).json();
    assert_eq!(
        j["unavailable_reason"],
        "src/vendor is a submodule: its files cannot be seen (exclude it or vendor its code)"
    );
    let run = repo.fpcheck(&["fingerprint", "--exclude", "vendor,tests"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Conversions a checkout applies are applied, and noted; a filter
/// driver makes the value unavailable.
#[test]
fn gitattributes_conversions_are_applied_and_noted() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n")
        .write("src/b.py", "b\n")
        .write("src/c.txt", "c\n");
    repo.write(".gitattributes", "*.py text eol=crlf\n");
    repo.commit("attributes");
    let run = repo.fpcheck(&["fingerprint", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    let mut want = sha2::Sha256::new();
    use sha2::Digest;
    want.update(b"a.py\0a\r\n\nb.py\0b\r\n\n");
    assert_eq!(j["fingerprint"], hex::encode(want.finalize()));
    let warnings: Vec<String> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            ".gitattributes at `HEAD` sets eol=crlf on 2 runtime files (src/a.py, src/b.py)"
        ),
        "{warnings:?}"
    );
    assert!(
        warnings[1].starts_with(".gitattributes at `HEAD` sets text on 2 runtime files"),
        "{warnings:?}"
    );

    repo.write(
        ".gitattributes",
        "*.py text eol=crlf\nsrc/b.py filter=lfs\n",
    );
    repo.commit("lfs");
    let run = repo.fpcheck(&["fingerprint", "--json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.json()["unavailable_reason"]
        .as_str()
        .unwrap()
        .starts_with("src/b.py: its attributes name the filter driver `filter=lfs`"));

    repo.write(".gitattributes", "*.py -text\n");
    repo.commit("binary");
    assert_eq!(
        repo.fpcheck(&["fingerprint", "--json"]).json()["warnings"],
        serde_json::json!([])
    );
}

#[test]
fn config_file_settings_and_flags_that_win() {
    let repo = TestRepo::new();
    repo.write("app/main.py", "x\n")
        .write("app/vendor/v.py", "v\n")
        .write("app/tests/t.py", "t\n");
    repo.write(
        "fpcheck.toml",
        "[runtime]\nroot = \"app\"\nexclude = [\"vendor\"]\n",
    );
    repo.commit("config");
    let run = repo.fpcheck(&["fingerprint", "--list"]);
    assert_eq!(
        run.stdout.lines().skip(1).collect::<Vec<_>>(),
        ["main.py", "tests/t.py"],
        "{}",
        run.stderr
    );
    let run = repo.fpcheck(&["fingerprint", "--list", "--exclude", "tests"]);
    assert_eq!(
        run.stdout.lines().skip(1).collect::<Vec<_>>(),
        ["main.py", "vendor/v.py"]
    );

    // The settings are the revision's own: an uncommitted edit does not
    // change HEAD's fingerprint, a committed one does.
    repo.write("fpcheck.toml", "[runtime]\nrot = \"app\"\n");
    assert_eq!(repo.fpcheck(&["fingerprint"]).code, 0);
    repo.commit("typo");
    let run = repo.fpcheck(&["fingerprint"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("fpcheck.toml at HEAD is not a valid fpcheck config: line 2, column 1:")
            && run.stderr.contains("rot"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_input_is_one_line_and_non_zero() {
    let repo = project();
    let run = repo.fpcheck(&["fingerprint", "--rev", "v9.9.9"]);
    assert_eq!(run.code, 4);
    assert_eq!(run.stderr.trim().lines().count(), 1);
    assert!(
        run.stderr
            .starts_with("fpcheck: error: unknown revision `v9.9.9`"),
        "{}",
        run.stderr
    );

    let run = repo.fpcheck(&["fingerprint", "--rev", "HEAD:README.md"]);
    assert_eq!(run.code, 4);
    assert!(run.stderr.contains("names a file"), "{}", run.stderr);

    let empty = tempfile::tempdir().unwrap();
    let run = fpcheck_in(empty.path(), &["fingerprint"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.contains("is not in a git repository"),
        "{}",
        run.stderr
    );
    let run = fpcheck_in(empty.path(), &["fingerprint", "--repo", "/nonexistent/x"]);
    assert_eq!(run.code, 4);
    assert!(
        run.stderr.contains("/nonexistent/x does not exist"),
        "{}",
        run.stderr
    );

    let run = fpcheck_in(empty.path(), &["fingerprint", "--dir", "nothere"]);
    assert_eq!(run.code, 3);
    let run = repo.fpcheck(&["fingerprint", "--dir", "src", "--rev", "v1"]);
    assert_eq!(run.code, 2);
    let run = repo.fpcheck(&["fingerprint", "--exclude", "a/b"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("`a/b` contains `/`"), "{}", run.stderr);
}

#[test]
fn a_trailing_slash_demands_a_directory_as_on_disk() {
    let repo = TestRepo::new();
    repo.write("src/real.py", "x = 1\n");
    for target in ["real.py/.", "real.py/"] {
        repo.symlink("src/dot.py", target);
        repo.commit(target);
        let tree = repo.fpcheck(&["fingerprint", "--json"]);
        let dir = repo.fpcheck(&["fingerprint", "--dir", "src", "--json"]);
        assert_eq!(
            (tree.code, dir.code),
            (3, 3),
            "{target}: {} / {}",
            tree.stdout,
            dir.stdout
        );
        assert_eq!(
            tree.json()["unavailable_reason"],
            format!("src/dot.py: symlink to {target} is broken")
        );
    }
}

#[test]
fn dot_dot_through_a_submodule_directory_resolves_as_in_a_checkout() {
    let repo = TestRepo::new();
    repo.write("src/real.py", "x = 1\n")
        .write("src/tests/t.txt", "t\n");
    let head = repo.commit("base");
    std::fs::create_dir_all(repo.join("src/tests/vendor")).unwrap();
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{head},src/tests/vendor"),
    ]);
    repo.symlink("src/sub.py", "tests/vendor/../t.txt");
    repo.git(&["add", "src/sub.py"]);
    repo.git(&["commit", "-q", "-m", "link through a submodule"]);
    let tree = repo.fpcheck(&["fingerprint", "--list"]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    let dir = repo.fpcheck(&["fingerprint", "--dir", "src", "--list"]);
    assert_eq!(tree.stdout, dir.stdout);
    assert!(
        tree.stdout.ends_with("real.py\nsub.py\n"),
        "{}",
        tree.stdout
    );
}

//! Repositories not built like the reference: no version file (the
//! version in the tag, or in a `pyproject.toml`), a package importing its
//! sibling, a config committed only at HEAD, a monorepo whose runtimes
//! carry their own `pyproject.toml`. Each shape generated, each command a
//! new user runs on it.

use crate::support::{warning_codes, TestRepo};

/// A formatter's layout: `src/black` imports its parser `src/blib2to3`;
/// no version file, releases are tags only. The runtime root `src` only
/// exists from 20.8b0 on (before, the package was at the top).
fn tag_only_moved_to_src() -> TestRepo {
    let r = TestRepo::new();
    r.write("black/__init__.py", "x = 1\n")
        .commit_and_tag("flat layout", "19.10b0");
    r.remove("black");
    r.write("src/black/__init__.py", "from blib2to3 import driver\n")
        .write("src/blib2to3/__init__.py", "")
        .write("src/blib2to3/driver.py", "y = 1\n")
        .commit_and_tag("src layout", "20.8b0");
    r
}

/// Two different release tags with no version file are a version change:
/// an unavailable fingerprint restarts, in the range and in `history`.
#[test]
fn two_release_tags_without_a_version_file_are_a_version_change() {
    let r = tag_only_moved_to_src();
    let report = r.verdict_json(&["19.10b0..20.8b0"]);
    assert_eq!(report["restart_required"], true);
    assert_eq!(report["reason"], "fingerprint_unavailable");
    // The reference's gate, which reads version files only, sees none.
    assert_eq!(report["version_changed"], false);
    assert_eq!(report["from"]["release_version"]["shown"], "19.10b0 (tag)");
    assert!(!warning_codes(&report).contains(&"restart_undetectable"));

    let history = r.history_json(&[]);
    let step = &history["releases"][0];
    assert_eq!(
        (&step["restart_required"], &step["reason"]),
        (
            &serde_json::json!(true),
            &serde_json::json!("fingerprint_unavailable")
        )
    );

    // Not a release at one end (a commit without a tag): the versions
    // cannot tell, as before.
    let first = r.git(&["rev-parse", "19.10b0"]);
    let report = r.verdict_json(&[&format!("{first}..20.8b0")]);
    assert_eq!(report["reason"], "unavailable_version_unchanged");
}

/// A runtime's own `pyproject.toml` names the release's version: a change
/// of it is a version change, going backwards is warned about.
#[test]
fn a_runtimes_pyproject_version_is_its_release_version() {
    let r = TestRepo::new();
    r.write(
        "servers/a/pyproject.toml",
        "[project]\nname = \"a\"\nversion = \"1.1.0\"\n",
    )
    .commit("a 1.1.0");
    let old = r.git(&["rev-parse", "HEAD"]);
    r.write(
        "servers/a/pyproject.toml",
        "[project]\nname = \"a\"\nversion = \"1.0.0\"\n",
    )
    .write("servers/a/server.py", "print('a')\n")
    .commit("a 1.0.0, by mistake");
    let report = r.verdict_json(&[&format!("{old}..HEAD"), "--root", "servers/a"]);
    assert_eq!(
        report["to"]["release_version"]["shown"],
        "1.0.0 (pyproject.toml)"
    );
    assert_eq!(report["to"]["release_version"]["source"], "pyproject");
    assert_eq!(report["restart_required"], true);
    assert_eq!(report["reason"], "fingerprint_unavailable");
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["code"] == "version_went_backwards"
                && w["message"] == "the version in pyproject.toml went backwards: 1.1.0 → 1.0.0"),
        "{warnings:?}"
    );
}

/// No fingerprint, no saving: free updates without fingerprints are not
/// counted as saved; a history without any says so first and exits 3.
#[test]
fn a_history_without_fingerprints_saves_nothing_and_says_why() {
    let r = TestRepo::new();
    for (n, tag) in ["0.1.0", "0.2.0", "0.3.0"].iter().enumerate() {
        r.write("uvicorn/main.py", format!("n = {n}\n"))
            .commit_and_tag(tag, tag);
    }
    let run = r.fpcheck(&["history", "--format", "json"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let history = run.json();
    assert_eq!(history["summary"]["restarts_saved"], 0);
    assert_eq!(
        history["warnings"][0]["code"],
        "fingerprints_mostly_unavailable"
    );
    assert_eq!(
        history["warnings"][0]["message"],
        "3 of 3 releases have no fingerprint, so their updates say little and none counts as a saved restart: the runtime root `src` is likely missing at those releases; pass --root DIR (the directory your server runs from) or run `fpcheck init` to propose one"
    );
    assert!(
        run.stderr
            .starts_with("fpcheck: warning: fingerprints_mostly_unavailable: 3 of 3"),
        "{}",
        run.stderr
    );
    let table = r.fpcheck(&["history"]);
    assert_eq!(table.code, 3);
    assert!(
        table
            .stdout
            .starts_with("warning: fingerprints_mostly_unavailable: 3 of 3"),
        "{}",
        table.stdout
    );

    // With the root given, every fingerprint is there: exit 0, no warning.
    let run = r.fpcheck(&["history", "--format", "json", "--root", "uvicorn"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(warning_codes(&run.json()), Vec::<&str>::new());
}

/// One release of three without a fingerprint: its free update is not a
/// saved restart; the two fingerprinted ones are.
#[test]
fn only_fingerprinted_free_updates_count_as_saved() {
    let r = TestRepo::new();
    r.write("README.md", "a\n")
        .commit_and_tag("no src yet", "v1.0.0");
    r.write("src/app.py", "x = 1\n")
        .commit_and_tag("src", "v1.1.0");
    r.write("README.md", "b\n").commit_and_tag("docs", "v1.2.0");
    r.write("README.md", "c\n").commit_and_tag("docs", "v1.3.0");
    let history = r.history_json(&[]);
    assert_eq!(history["summary"]["free_releases"], 2);
    assert_eq!(history["summary"]["restarts_saved"], 2);
    assert_eq!(history["summary"]["unavailable_fingerprints"], 1);
}

/// A config committed only at HEAD reaches the releases before it (they
/// commit none): the range reads it, and says where it came from. The
/// Action's `--config-fallback from` keeps the old end's (none here).
#[test]
fn a_config_committed_only_at_head_reaches_old_releases() {
    let r = TestRepo::new();
    r.write("uvicorn/main.py", "n = 1\n")
        .commit_and_tag("a", "0.34.3");
    r.write("uvicorn/main.py", "n = 2\n")
        .commit_and_tag("b", "0.35.0");
    r.write("fpcheck.toml", "[runtime]\nroot = \"uvicorn\"\n")
        .commit("config");
    let report = r.verdict_json(&["0.34.3..0.35.0"]);
    assert_eq!(report["reason"], "code_changed");
    assert_eq!(report["settings"]["root"], "uvicorn");
    assert_eq!(
        report["settings"]["config"],
        "fpcheck.toml at HEAD (0.35.0 has none)"
    );
    assert_eq!(
        report["from_settings"]["config"],
        "fpcheck.toml at HEAD (0.34.3 has none)"
    );
    let history = r.history_json(&[]);
    assert_eq!(history["summary"]["unavailable_fingerprints"], 0);
    r.fpcheck(&["0.34.3..0.35.0", "--config-fallback", "from"])
        .assert_error(2, "the runtime root `src` exists at neither end");
    r.fpcheck(&["0.34.3..0.35.0", "--config-fallback", "none"])
        .assert_error(2, "the runtime root `src` exists at neither end");
    // The `to` end's own file comes first.
    let report = r.verdict_json(&["0.34.3..HEAD"]);
    assert_eq!(
        report["from_settings"]["config"],
        "fpcheck.toml at HEAD (0.34.3 has none)"
    );
}

/// `init` never proposes a root narrower than what its code imports.
#[test]
fn init_grows_the_root_to_the_sibling_package_it_imports() {
    let r = TestRepo::new();
    r.write(
        "pyproject.toml",
        "[project]\nname = \"black\"\ndynamic = [\"version\"]\n",
    )
    .write(
        "src/black/__init__.py",
        "from blib2to3.pgen2 import driver\nfrom .mode import Mode\n",
    )
    .write("src/black/mode.py", "Mode = 1\n")
    .write("src/black/__main__.py", "from black import main\n")
    .write("src/blib2to3/__init__.py", "")
    .write("src/blib2to3/pgen2/__init__.py", "")
    .write("src/blib2to3/pgen2/driver.py", "from . import tokenize\n")
    .write("src/blib2to3/pgen2/tokenize.py", "x = 1\n")
    .write("src/blackd/__init__.py", "import aiohttp\n")
    .commit_and_tag("one", "22.1.0");
    let run = r.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let table = run
        .stdout
        .split("\n[runtime]\n")
        .nth(1)
        .expect("one runtime");
    assert_eq!(
        table,
        "# found: pyproject.toml [project] name = \"black\" (the project's own package)\n\
         # found: src/black/__main__.py\n\
         # root: src/black grown to src, which holds every file its code imports:\n\
         # src/black imports blib2to3 (src/blib2to3)\n\
         root = \"src\"\n\
         # extensions = [\".py\"]\n\
         # exclude: src/blackd holds Python code that nothing above imports\n\
         exclude = [\"scripts\", \"tests\", \"migrations\", \"crons\", \"__pycache__\", \"node_modules\", \".git\", \"versions\", \"blackd\"]\n\
         # version_file = \"version.json\"  # where `fpcheck patch` writes\n"
    );
    // The proposal catches a fix in the imported sibling.
    r.write("fpcheck.toml", run.stdout.as_bytes());
    r.write("src/blib2to3/pgen2/tokenize.py", "x = 2\n")
        .commit_and_tag("fix the tokenizer", "22.1.1");
    let report = r.verdict_json(&["22.1.0..22.1.1"]);
    assert_eq!(report["restart_required"], true);
    assert_eq!(report["reason"], "code_changed");
}

/// `init` warns when its proposal would call free a release that the
/// default root restarts (plugins loaded by a name computed at run time,
/// which no import names).
#[test]
fn init_warns_when_its_root_would_hide_a_restart() {
    let r = TestRepo::new();
    r.write(
        "src/app/server.py",
        "import importlib, mcp
plugin = importlib.import_module(PLUGIN)
",
    )
    .write(
        "src/plugins/memory.py",
        "x = 1
",
    )
    .commit_and_tag("one", "v1.0.0");
    r.write(
        "src/plugins/memory.py",
        "x = 2
",
    )
    .commit_and_tag("two", "v1.1.0");
    let run = r.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("\nroot = \"src/app\"\n"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stderr,
        "fpcheck: warning: with root `src/app`, 1 update read free that the default root `src` restarts (v1.0.0 → v1.1.0): the proposed root may leave out code the server runs; check it before relying on it\n"
    );
}

/// `fingerprint --rev` names `--root` when the root is not at the
/// revision, and reads HEAD's config for a revision that commits none.
#[test]
fn fingerprint_rev_hints_at_the_root_and_reads_heads_config() {
    let r = TestRepo::new();
    r.write("uvicorn/main.py", "n = 1\n")
        .commit_and_tag("a", "0.34.3");
    let run = r.fpcheck(&["fingerprint", "--rev", "0.34.3"]);
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stderr,
        "fpcheck: fingerprint unavailable: src does not exist\n\
         fpcheck: hint: the runtime root `src` is not in 0.34.3: pass --root DIR (the directory your server runs from), or set `root` in fpcheck.toml (`fpcheck init` proposes one)\n"
    );
    r.write("fpcheck.toml", "[runtime]\nroot = \"uvicorn\"\n")
        .commit("config");
    let run = r.fpcheck(&["fingerprint", "--rev", "0.34.3", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["settings"]["root"], "uvicorn");
}

/// Global flags before the command, as `git -C DIR log` takes them.
#[test]
fn global_flags_may_come_before_the_command() {
    let r = TestRepo::new();
    r.write("src/app.py", "n = 1\n")
        .commit_and_tag("a", "v1.0.0");
    r.write("src/app.py", "n = 2\n")
        .commit_and_tag("b", "v1.1.0");
    let elsewhere = tempfile::tempdir().unwrap();
    let repo = r.path().to_str().unwrap();
    let run = crate::support::fpcheck_in(
        elsewhere.path(),
        &["--repo", repo, "history", "--format", "json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["summary"]["updates"], 1);
    let run = crate::support::fpcheck_in(
        elsewhere.path(),
        &[&format!("--repo={repo}"), "--format", "json", "history"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A value that names a command stays a value.
    let run =
        crate::support::fpcheck_in(elsewhere.path(), &["--repo", "history", "v1.0.0..v1.1.0"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
}

/// `patch` records the `to` end's commit: an edit of the runtime not yet
/// committed is said, naming `--worktree`.
#[test]
fn patch_says_when_the_working_tree_runtime_is_not_heads() {
    let r = TestRepo::new();
    r.write("src/a.py", "x = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("a", "v1.0.0");
    r.write("src/a.py", "x = 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n")
        .commit("b");
    let clean = r.fpcheck(&["patch", "v1.0.0.."]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert!(
        !clean.stderr.contains("working tree's runtime"),
        "{}",
        clean.stderr
    );
    r.write("src/a.py", "x = 3\n");
    let dirty = r.fpcheck(&["patch", "v1.0.0.."]);
    assert_eq!(dirty.code, 0, "{}", dirty.stderr);
    assert_eq!(dirty.stdout, clean.stdout);
    assert!(
        dirty.stderr.contains("fpcheck: warning: the working tree's runtime differs from HEAD (fingerprint ")
            && dirty.stderr.contains("the patch records HEAD's; commit first, or pass --worktree to record the working tree's"),
        "{}",
        dirty.stderr
    );
    let worktree = r.fpcheck(&["patch", "v1.0.0..", "--worktree"]);
    assert!(
        !worktree.stderr.contains("working tree's runtime"),
        "{}",
        worktree.stderr
    );
    assert_ne!(worktree.stdout, clean.stdout);
}

/// Each output is written or reported on its own: a `--report` over its
/// size limit does not discard the Markdown report or the patch asked for
/// in the same run; the exit code is the failed one's.
#[test]
fn outputs_are_independent_of_each_other() {
    let r = TestRepo::new();
    r.write("src/a.py", "x = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n")
        .commit_and_tag("a", "v1.0.0");
    r.write("src/a.py", "x = 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n")
        .commit_and_tag("b", "v1.1.0");
    let run = r.fpcheck(&[
        "v1.0.0..v1.1.0",
        "--report",
        "json:10=small.json",
        "--report",
        "markdown=report.md",
        "--patch-out",
        "patch.json",
        "-o",
        "main.txt",
    ]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("fpcheck: error: --report small.json: "),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!r.join("small.json").exists());
    for written in ["report.md", "patch.json", "main.txt"] {
        assert!(r.join(written).is_file(), "{written} was not written");
    }
}

/// `--max-files` reaches every list: each group of changes not counted
/// shows up to it (8 without the flag, as before).
#[test]
fn max_files_reaches_the_changes_not_counted() {
    let r = TestRepo::new();
    r.write("src/a.py", "x = 1\n").commit_and_tag("a", "v1.0.0");
    for n in 0..12 {
        r.write(&format!("docs/page{n:02}.md"), "text\n");
    }
    r.commit_and_tag("docs", "v1.1.0");
    let line = |args: &[&str]| {
        let run = r.fpcheck(args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
            .lines()
            .find(|l| l.starts_with("  outside the runtime root (12): "))
            .unwrap_or_else(|| panic!("{}", run.stdout))
            .to_string()
    };
    assert!(line(&["v1.0.0..v1.1.0"]).ends_with("docs/page07.md and 4 more"));
    assert!(
        line(&["v1.0.0..v1.1.0", "--max-files", "20"]).ends_with("docs/page10.md, docs/page11.md")
    );
    assert!(line(&["v1.0.0..v1.1.0", "--max-files", "3"]).ends_with("docs/page02.md and 9 more"));
}

/// A monorepo of servers, each a `src/` layout with its own
/// `pyproject.toml` and no version file: each runtime's version is its
/// project's, and one going backwards is warned about (range and history).
#[test]
fn a_monorepo_runtimes_own_pyproject_version_going_backwards_is_warned() {
    let r = TestRepo::new();
    let config = "[runtimes.fetch]\nroot = \"servers/fetch/src/mcp_fetch\"\n\
                  [runtimes.time]\nroot = \"servers/time/src/mcp_time\"\n";
    let project = |v: &str| format!("[project]\nname = \"x\"\nversion = \"{v}\"\n");
    r.write("fpcheck.toml", config)
        .write("servers/fetch/pyproject.toml", project("0.6.2"))
        .write("servers/fetch/src/mcp_fetch/server.py", "a = 1\n")
        .write("servers/time/pyproject.toml", project("0.6.2"))
        .write("servers/time/src/mcp_time/server.py", "b = 1\n")
        .commit_and_tag("one", "2025.1.1");
    r.write("servers/fetch/pyproject.toml", project("0.6.1"))
        .write("servers/time/pyproject.toml", project("0.6.3"))
        .commit_and_tag("two", "2025.2.1");
    let report = r.verdict_json(&["2025.1.1..2025.2.1"]);
    let runtimes = report["runtimes"].as_array().unwrap();
    let fetch = runtimes.iter().find(|x| x["name"] == "fetch").unwrap();
    assert_eq!(
        fetch["from"]["release_version"]["shown"],
        "0.6.2 (pyproject.toml)"
    );
    assert_eq!(
        fetch["to"]["release_version"]["shown"],
        "0.6.1 (pyproject.toml)"
    );
    assert!(
        fetch["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "version_went_backwards"
                && w["message"] == "the version in pyproject.toml went backwards: 0.6.2 → 0.6.1"),
        "{fetch}"
    );
    let time = runtimes.iter().find(|x| x["name"] == "time").unwrap();
    assert!(!crate::support::warning_codes(time).contains(&"version_went_backwards"));
    let history = r.history_json(&["--runtime", "fetch"]);
    assert_eq!(history["tags"][1]["pyproject_version"], "0.6.1");
    assert!(
        crate::support::warning_codes(&history["releases"][0]).contains(&"version_went_backwards")
    );
}

/// The `to` end reads HEAD's file (committed after it) whatever the
/// defaults find there; the `from` end whose default root is there keeps
/// the defaults, and the cross-check with them stands.
#[test]
fn the_to_end_reads_heads_config_and_an_old_default_root_keeps_its_own() {
    let r = TestRepo::new();
    r.write("src/app/main.py", "n = 1\n")
        .write("src/tool/x.py", "t = 1\n")
        .commit_and_tag("a", "v1.0.0");
    r.write("src/tool/x.py", "t = 2\n")
        .commit_and_tag("b", "v1.1.0");
    r.write("fpcheck.toml", "[runtime]\nroot = \"src/app\"\n")
        .commit("config");
    let report = r.verdict_json(&["v1.0.0..v1.1.0"]);
    assert_eq!(
        report["settings"]["config"],
        "fpcheck.toml at HEAD (v1.1.0 has none)"
    );
    assert_eq!(report["from_settings"]["config"], serde_json::Value::Null);
    assert_eq!(report["from_settings"]["root"], "src");
    // The old end's defaults (`src`) see the change the new settings hide:
    // a restart, never "free".
    assert_eq!(report["restart_required"], true);
    assert!(
        warning_codes(&report).contains(&"settings_changed"),
        "{report}"
    );
}

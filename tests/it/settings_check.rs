//! The settings cross-check, whichever caller decides the update. When
//! the ends' committed settings differ, each end is fingerprinted with its
//! own (what its gate computes), and the `to` end also with the `from`
//! end's (what the running release's gate computes once the update lands):
//! a change there is a restart (`settings_changed_runtime_changed`) even
//! when the `to` end's own settings show none, so a release cannot choose
//! the settings that judge it. The range, `history` and several runtimes
//! each reach the one decision by their own path, so each is tested here:
//! a caller that skipped the cross-check would pass every other file.

use serde_json::{json, Value};

use crate::support::{fpcheck_in, warning_codes, TestRepo};

/// The fingerprint `fpcheck fingerprint --dir` computes for a directory
/// holding `files` (default settings): an independent path to the value
/// the cross-check must report.
fn dir_fingerprint(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let run = fpcheck_in(dir.path(), &["fingerprint", "--dir", "src", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let fp = run.json()["fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fp.len(), 64, "{fp}");
    fp
}

fn warning<'a>(j: &'a Value, code: &str) -> Option<&'a Value> {
    j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == code)
        .map(|w| &w["message"])
}

/// `fpcheck A..B`, one runtime.
mod range {
    use super::*;

    fn base() -> (TestRepo, String) {
        let repo = TestRepo::new();
        repo.write("src/app.py", "def main(): return 1\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("1.0.0", "v1.0.0");
        let old = dir_fingerprint(&[("src/app.py", "def main(): return 1\n")]);
        (repo, old)
    }

    /// The pull request excludes the only runtime file it changes, version
    /// unchanged: under its own settings its end is unavailable, which with an
    /// unchanged version alone reads `unavailable_version_unchanged`, no
    /// restart. Under v1.0.0's settings the code changed: a restart, never exit
    /// 0 (`--exit-code` is what the Action's `fail-on-restart` passes: 1 means
    /// restart), said in every format.
    #[test]
    fn excluding_the_changed_file_is_a_restart_by_the_cross_check() {
        let (repo, old) = base();
        repo.write("src/app.py", "def main(): return 2\n")
            .write("fpcheck.toml", "[runtime]\nexclude = [\"app.py\"]\n");
        repo.commit("the pull request");
        let new = dir_fingerprint(&[("src/app.py", "def main(): return 2\n")]);

        let run = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json", "--exit-code"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let j = run.json();
        assert_eq!(j["restart_required"], true);
        assert_eq!(j["reason"], "settings_changed_runtime_changed");
        assert_eq!(j["from"]["fingerprint"], old.as_str());
        assert_eq!(j["to"]["fingerprint"], "");
        assert_eq!(
            j["settings_check"],
            json!({
                "settings": "from",
                "fingerprint": new,
                "unavailable_reason": null,
                "runtime_changed": true,
            })
        );
        assert_eq!(
        j["summary"],
        "Updating from v1.0.0 to HEAD forces running clients to restart: the fingerprint settings changed, and under v1.0.0's settings (what the running release's gate computes) the runtime code changed; HEAD's own settings hide it."
    );
        assert_eq!(
        warning(&j, "settings_changed_runtime_changed").unwrap(),
        &Value::from(format!(
            "under the settings of v1.0.0 (what the running release's gate computes), the runtime fingerprint of HEAD is {}, not {}: the running code changed, and only HEAD's own settings hide it; restart required",
            &new[..12],
            &old[..12]
        ))
    );
        assert!(warning(&j, "settings_changed").is_some(), "{j}");

        // The table and the Markdown say it too.
        let table = repo.fpcheck(&["v1.0.0..HEAD"]);
        assert!(
            table
                .stdout
                .starts_with("RESTART REQUIRED (settings_changed_runtime_changed)"),
            "{}",
            table.stdout
        );
        assert!(
            table
                .stdout
                .contains("! settings_changed_runtime_changed: under the settings of v1.0.0"),
            "{}",
            table.stdout
        );
        let md = repo.fpcheck(&["v1.0.0..HEAD", "--format", "markdown"]);
        assert!(
            md.stdout
                .contains("**Reason:** `settings_changed_runtime_changed`"),
            "{}",
            md.stdout
        );
        assert!(
            md.stdout
                .contains("**settings&#95;changed&#95;runtime&#95;changed**")
                || md.stdout.contains("**settings_changed_runtime_changed**"),
            "{}",
            md.stdout
        );
    }

    /// The same pull request still in the working tree (`--worktree`).
    #[test]
    fn excluding_the_changed_file_in_the_working_tree_is_a_restart() {
        let (repo, old) = base();
        repo.write("src/app.py", "def main(): return 2\n")
            .write("fpcheck.toml", "[runtime]\nexclude = [\"app.py\"]\n");
        let new = dir_fingerprint(&[("src/app.py", "def main(): return 2\n")]);
        let run = repo.fpcheck(&["v1.0.0..", "--worktree", "--format", "json"]);
        let j = run.json();
        assert_eq!(j["restart_required"], true, "{j}");
        assert_eq!(j["reason"], "settings_changed_runtime_changed");
        assert_eq!(j["from"]["fingerprint"], old.as_str());
        assert_eq!(j["settings_check"]["fingerprint"], new.as_str());
        assert_eq!(j["settings_check"]["runtime_changed"], true);
    }

    /// The pull request moves the root to a copy of the old code and changes
    /// the real one: its own settings give the old fingerprint, which alone
    /// reads `no_runtime_change`, with or without a version bump; `patch`
    /// says the fingerprint it records hides the change.
    #[test]
    fn a_root_moved_to_a_copy_of_the_old_code_is_a_restart() {
        let (repo, old) = base();
        repo.write("old/app.py", "def main(): return 1\n")
            .write("src/app.py", "def main(): return 2\n")
            .write("fpcheck.toml", "[runtime]\nroot = \"old\"\n");
        repo.commit("the pull request");
        let new = dir_fingerprint(&[("src/app.py", "def main(): return 2\n")]);
        let j = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]).json();
        assert_eq!(j["to"]["fingerprint"], old.as_str(), "{j}");
        assert_eq!(j["code_changed"], false);
        assert_eq!(j["restart_required"], true);
        assert_eq!(j["reason"], "settings_changed_runtime_changed");
        assert_eq!(j["settings"]["root"], "old");
        assert_eq!(j["from_settings"]["root"], "src");
        assert_eq!(
            j["settings_check"],
            json!({
                "settings": "from",
                "fingerprint": new,
                "unavailable_reason": null,
                "runtime_changed": true,
            })
        );

        // With a version bump too: the verdict was no_runtime_change.
        repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
        repo.commit("bump");
        let run = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json", "--exit-code"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let j = run.json();
        assert_eq!(j["reason"], "settings_changed_runtime_changed");
        assert_eq!(j["matrix_row"], Value::Null);

        // `patch` records HEAD's own fingerprint (its gate's), and says that
        // fingerprint hides the change.
        let run = repo.fpcheck(&["patch", "v1.0.0..HEAD", "--json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let p = run.json();
        assert_eq!(p["patch"]["runtime_fingerprint"], old.as_str(), "{p}");
        let hidden: Vec<&Value> = p["explanations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["code"] == "settings_changed_runtime_changed")
            .collect();
        assert_eq!(
            hidden,
            [&json!({
                "code": "settings_changed_runtime_changed",
                "message": "under the settings of v1.0.0 the runtime code changed, but HEAD's own settings hide it: the runtime_fingerprint recorded here does not show the change; revert the settings change, or bump the version and pass --force-restart so that the updater restarts clients",
            })]
        );
    }

    /// A settings change that changes nothing the gate hashes, under either
    /// end's settings: no restart, the `settings_changed` warning only.
    #[test]
    fn a_harmless_settings_change_is_only_a_warning() {
        let (repo, old) = base();
        // Widen the extensions with a kind no file has: nothing hashed changes.
        repo.write("docs/readme.md", "docs\n").write(
            "fpcheck.toml",
            "[runtime]\nextensions = [\".py\", \".pyx\"]\n",
        );
        repo.commit("harmless settings");
        let run = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json", "--exit-code"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let j = run.json();
        assert_eq!(j["restart_required"], false);
        assert_eq!(j["reason"], "no_runtime_change");
        assert_eq!(j["to"]["fingerprint"], old.as_str());
        assert_eq!(
            j["settings_check"],
            json!({
                "settings": "from",
                "fingerprint": old,
                "unavailable_reason": null,
                "runtime_changed": false,
            })
        );
        assert!(warning(&j, "settings_changed").is_some(), "{j}");
        assert_eq!(warning(&j, "settings_changed_runtime_changed"), None);

        // No settings change at all: no cross-check in the report.
        let j = repo.fpcheck(&["HEAD..HEAD", "--format", "json"]).json();
        assert_eq!(j["settings_check"], Value::Null);
        // Flags that override both ends leave nothing to cross-check.
        let j = repo
            .fpcheck(&["v1.0.0..HEAD", "--format", "json", "--ext", ".py"])
            .json();
        assert_eq!(j["settings_check"], Value::Null, "{j}");
    }

    /// The symmetric case: the pull request widens the settings (stops
    /// excluding a file it changes). Its own settings already see the change
    /// (`code_changed`); the cross-check, under the old exclusion, does not, and
    /// is reported as such without lowering the verdict.
    #[test]
    fn widened_settings_restart_by_their_own_fingerprint() {
        let repo = TestRepo::new();
        repo.write("src/app.py", "def main(): return 1\n")
            .write("src/gen.py", "G = 1\n")
            .write("fpcheck.toml", "[runtime]\nexclude = [\"gen.py\"]\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("1.0.0", "v1.0.0");
        repo.write("src/gen.py", "G = 2\n").remove("fpcheck.toml");
        repo.commit("widen");
        let old = dir_fingerprint(&[("src/app.py", "def main(): return 1\n")]);
        let j = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]).json();
        assert_eq!(j["restart_required"], true, "{j}");
        assert_eq!(j["reason"], "code_changed");
        assert_eq!(j["from"]["fingerprint"], old.as_str());
        assert_eq!(
            j["settings_check"],
            json!({
                "settings": "from",
                "fingerprint": old,
                "unavailable_reason": null,
                "runtime_changed": false,
            })
        );
        assert_eq!(warning(&j, "settings_changed_runtime_changed"), None);
    }

    /// A release that moves the runtime root names each change by the root of
    /// the end it exists at: a file deleted from the old root by its old path,
    /// a file added under the new root by its new path.
    #[test]
    fn a_moved_root_names_each_change_by_its_own_end() {
        let repo = TestRepo::new();
        repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\n")
            .write("src/a.py", "a = 1\n")
            .write("src/old.py", "o = 1\n");
        repo.commit_and_tag("v1", "v1");
        repo.remove("src")
            .write("fpcheck.toml", "[runtime]\nroot = \"lib\"\n")
            .write("lib/a.py", "a = 1\n")
            .write("lib/new.py", "n = 1\n");
        repo.commit_and_tag("v2", "v2");
        let j = repo.verdict_json(&["v1..v2"]);
        assert_eq!(
            j["changes"],
            json!({
                "runtime": [
                    {"path": "lib/new.py", "status": "added", "change_kind": "code"},
                    {"path": "src/old.py", "status": "deleted", "change_kind": "code"}
                ],
                "ignored": [
                    {"path": "fpcheck.toml", "status": "modified", "why": "outside_root"},
                    {"path": "src/a.py", "status": "deleted", "why": "outside_root"}
                ],
                "ignored_complete": true
            }),
            "{j}"
        );
    }

    /// The pull request changes app.py and excludes it, version bumped: each
    /// end is fingerprinted with its own settings, so its own fingerprint
    /// already restarts (`code_changed`); the settings change is said in every
    /// format, and flags, `--worktree` and `patch` take the settings they name.
    #[test]
    fn a_pull_request_cannot_exclude_its_own_change() {
        let repo = TestRepo::new();
        repo.write("src/app.py", "def main(): return 1\n")
            .write("src/util.py", "X = 1\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("base", "v1.0.0");
        // The pull request changes app.py and excludes it in the same commit.
        repo.write("src/app.py", "def main(): return 2\n")
            .write("version.json", "{\"version\": \"1.1.0\"}\n")
            .write("fpcheck.toml", "[runtime]\nexclude = [\"app.py\"]\n");
        repo.commit("pr");
        let run = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json", "--exit-code"]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let j = run.json();
        assert_eq!(j["restart_required"], true);
        assert_eq!(j["reason"], "code_changed");
        assert_eq!(j["from_settings"]["config"], Value::Null);
        assert_eq!(j["settings"]["config"], "fpcheck.toml at HEAD");
        assert_eq!(j["settings"]["exclude"], serde_json::json!(["app.py"]));
        let w = j["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["code"] == "settings_changed")
            .unwrap_or_else(|| panic!("no settings_changed in {j}"));
        assert_eq!(
        w["message"],
        "the fingerprint settings differ between v1.0.0 and HEAD (exclude [scripts, tests, migrations, crons, __pycache__, node_modules, .git, versions] → [app.py]): each end is fingerprinted with its own settings, as its gate computes it"
    );
        // In every format.
        let table = repo.fpcheck(&["v1.0.0..HEAD"]);
        assert!(
            table
                .stdout
                .contains("! settings_changed: the fingerprint settings differ"),
            "{}",
            table.stdout
        );
        let md = repo.fpcheck(&["v1.0.0..HEAD", "--format", "markdown"]);
        assert!(md.stdout.contains("**settings_changed**"), "{}", md.stdout);

        // Flags override both ends: no difference, no warning, and the
        // exclusion applies to both (so app.py no longer counts).
        let j = repo.verdict_json(&["v1.0.0..HEAD", "--exclude", "app.py"]);
        assert!(!warning_codes(&j).contains(&"settings_changed"), "{j}");
        assert_eq!(
            (&j["restart_required"], &j["code_changed"]),
            (&Value::Bool(false), &Value::Bool(false))
        );

        // --worktree: the working tree's own file is the `to` end's.
        repo.write("fpcheck.toml", "[runtime]\nexclude = [\"tests\"]\n");
        let j = repo.verdict_json(&["v1.0.0..", "--worktree"]);
        assert_eq!(j["settings"]["config"], "fpcheck.toml in the working tree");
        assert_eq!(j["settings"]["exclude"], serde_json::json!(["tests"]));
        assert_eq!(j["code_changed"], true);

        // patch records the `to` end's own settings.
        repo.git(&["checkout", "-q", "--", "fpcheck.toml"]);
        let run = repo.fpcheck(&["patch", "v1.0.0..HEAD", "--json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.json()["patch"]["runtime_fingerprint_spec"]["exclude"],
            serde_json::json!(["app.py"])
        );
    }
}

/// `fpcheck history`: each update cross-checked as the range checks the
/// same pair.
mod history {
    use super::*;

    fn history(repo: &TestRepo, args: &[&str]) -> Value {
        let mut all = vec!["history", "--format", "json", "--no-cache"];
        all.extend_from_slice(args);
        let run = repo.fpcheck(&all);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    }

    fn codes(step: &Value) -> Vec<String> {
        step["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .map(|w| w["code"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn v(s: &str, restart: bool, reason: &str) -> (String, bool, String) {
        (s.to_string(), restart, reason.to_string())
    }

    /// v1.0.0 ships src/app.py; v1.1.0 changes app.py and commits
    /// `exclude = ["app.py"]`; v1.2.0 is a docs release.
    fn excluding_its_own_change() -> TestRepo {
        let repo = TestRepo::new();
        repo.write("src/app.py", "serve = 1\n")
            .write("src/util.py", "u = 1\n")
            .write("src/version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("1.0.0", "v1.0.0");
        repo.write("src/app.py", "serve = 2  # the change to hide\n")
            .write("fpcheck.toml", "[runtime]\nexclude = [\"app.py\"]\n")
            .write("src/version.json", "{\"version\": \"1.1.0\"}\n");
        repo.commit_and_tag("1.1.0", "v1.1.0");
        repo.write("README.md", "docs\n")
            .write("src/version.json", "{\"version\": \"1.2.0\"}\n");
        repo.commit_and_tag("1.2.0", "v1.2.0");
        repo
    }

    #[test]
    fn a_release_that_excludes_its_own_change_still_restarts() {
        let repo = excluding_its_own_change();
        // The working tree (v1.2.0) excludes app.py: applied to every release,
        // as history did, v1.0.0..v1.1.0 read as "no restart".
        let j = history(&repo, &[]);
        assert_eq!(
            crate::support::update_verdicts(&j),
            [
                v("v1.0.0..v1.1.0", true, "code_changed"),
                v("v1.1.0..v1.2.0", false, "no_runtime_change"),
            ]
        );
        let step = &j["releases"][0];
        assert_eq!(codes(step), ["settings_changed"]);
        assert_eq!(
        step["warnings"][0]["message"],
        "the fingerprint settings differ between v1.0.0 and v1.1.0 (exclude [scripts, tests, migrations, crons, __pycache__, node_modules, .git, versions] → [app.py]): each end is fingerprinted with its own settings, as its gate computes it"
    );
        // v1.1.0 under v1.0.0's settings holds the changed app.py.
        assert_eq!(step["settings_check"]["settings"], "from");
        assert_eq!(step["settings_check"]["runtime_changed"], true);
        // The same cross-check as the range's for the same pair.
        let range = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json", "--no-cache"]);
        assert_eq!(range.json()["settings_check"], step["settings_check"]);
        // Each release keeps its own fingerprint: v1.1.0's leaves app.py out.
        assert_eq!(j["tags"][0]["runtime_files"], 2);
        assert_eq!(j["tags"][1]["runtime_files"], 1);
        // The same settings on both sides of the docs release: no warning, and
        // the JSON of the update is as it always was (no new keys).
        let quiet = j["releases"][1].as_object().unwrap();
        assert!(!quiet.contains_key("warnings") && !quiet.contains_key("settings_check"));
        // Flags override every release alike: no settings change, no warning.
        let flagged = history(&repo, &["--exclude", "tests"]);
        assert_eq!(
            crate::support::update_verdicts(&flagged)[0],
            v("v1.0.0..v1.1.0", true, "code_changed")
        );
        assert!(codes(&flagged["releases"][0]).is_empty());
    }

    /// v1.1.0 moves the root to a copy of the old code and changes the code at
    /// the old root, which is what the running v1.0.0 gate fingerprints.
    fn moving_the_root() -> TestRepo {
        let repo = TestRepo::new();
        repo.write("src/app.py", "serve = 1\n")
            .write("version.json", "{\"version\": \"1.0.0\"}\n");
        repo.commit_and_tag("1.0.0", "v1.0.0");
        repo.write("decoy/app.py", "serve = 1\n")
            .write("src/app.py", "serve = 2\n")
            .write("fpcheck.toml", "[runtime]\nroot = \"decoy\"\n")
            .write("version.json", "{\"version\": \"1.1.0\"}\n");
        repo.commit_and_tag("1.1.0", "v1.1.0");
        repo
    }

    #[test]
    fn moving_the_root_to_a_copy_is_caught_by_the_cross_check_in_every_format() {
        let repo = moving_the_root();
        let j = history(&repo, &[]);
        assert_eq!(
            crate::support::update_verdicts(&j),
            [v(
                "v1.0.0..v1.1.0",
                true,
                "settings_changed_runtime_changed"
            )]
        );
        let step = &j["releases"][0];
        // Each release's own fingerprint is the same code...
        assert_eq!(step["from_fingerprint"], step["to_fingerprint"]);
        // ...but not under the running release's settings.
        assert_eq!(
            codes(step),
            ["settings_changed", "settings_changed_runtime_changed"]
        );
        let check = &step["settings_check"];
        assert_eq!(check["runtime_changed"], true);
        assert_ne!(check["fingerprint"], step["from_fingerprint"]);
        let hidden = step["warnings"][1]["message"].as_str().unwrap();
        assert!(
        hidden.starts_with("under the settings of v1.0.0 (what the running release's gate computes), the runtime fingerprint of v1.1.0 is "),
        "{hidden}"
    );
        assert_eq!(j["summary"]["restarts_forced"], 1);
        // The range says the same of the same pair.
        let range = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json", "--no-cache"]);
        assert_eq!(range.json()["reason"], "settings_changed_runtime_changed");
        assert_eq!(range.json()["settings_check"], *check);

        let table = repo.fpcheck(&["history", "--no-cache", "--color", "never"]);
        assert_eq!(table.code, 0, "{}", table.stderr);
        assert!(
            table.stdout.contains("settings hid a change"),
            "{}",
            table.stdout
        );
        assert!(
        table.stdout.contains("warning v1.0.0 → v1.1.0: settings_changed_runtime_changed: under the settings of v1.0.0"),
        "{}",
        table.stdout
    );
        assert!(
        table.stderr.contains("fpcheck: warning: settings_changed: the fingerprint settings differ between v1.0.0 and v1.1.0 (root src → decoy)"),
        "{}",
        table.stderr
    );
        let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
        assert_eq!(md.code, 0, "{}", md.stderr);
        assert!(
            md.stdout
                .contains("| **yes** | `settings_changed_runtime_changed` |"),
            "{}",
            md.stdout
        );
        assert!(
        md.stdout.contains("- <code>v1.0.0</code> → <code>v1.1.0</code>: **settings_changed**: the fingerprint settings differ"),
        "{}",
        md.stdout
    );
        assert!(
            md.stdout
                .contains("**settings_changed_runtime_changed**: under the settings"),
            "{}",
            md.stdout
        );
        let html = repo.fpcheck(&["history", "--no-cache", "--format", "html"]);
        assert_eq!(html.code, 0, "{}", html.stderr);
        assert!(
            html.stdout
                .contains("<span class=\"pill warn\">settings_changed_runtime_changed</span>"),
            "{}",
            html.stdout
        );
        assert!(html.stdout.contains("<h3>Warnings</h3>"));
        assert!(
            html.stdout.contains("(root src → decoy)"),
            "{}",
            html.stdout
        );
        // --exit-code: an update forced a restart.
        let code = repo.fpcheck(&["history", "--no-cache", "--exit-code", "--format", "json"]);
        assert_eq!(code.code, 1, "{}", code.stderr);
    }
}

/// Several `[runtimes.NAME]`: the split of one runtime into several is a
/// settings change too, cross-checked for each runtime, by the range and by
/// `history`.
mod runtimes {
    use super::*;

    /// v1.0.0 with `[runtime]` over src/ (app.py) and an unchanged copy of it
    /// in copy/; then, version unchanged, src/app.py changed and the settings
    /// split into runtimes `a` and `b`, both over copy/ (committed, untagged):
    /// the moved-root attack, by a split.
    fn split_over_a_copy() -> TestRepo {
        let repo = TestRepo::new();
        repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\n")
            .write("src/app.py", "x = 1\n")
            .write("copy/app.py", "x = 1\n")
            .write("version.json", "{\"version\":\"1.0.0\"}\n");
        repo.commit_and_tag("1", "v1.0.0");
        repo.write("src/app.py", "x = 2\n").write(
            "fpcheck.toml",
            "[runtimes.a]\nroot = \"copy\"\n[runtimes.b]\nroot = \"copy\"\n",
        );
        repo.commit("2");
        repo
    }

    /// Each update of one runtime's history: `FROM..TO RESTART REASON`.
    /// The base's `[runtime]` runs src/; the pull request edits src/ and
    /// declares several runtimes over `copy/`, an unchanged copy of the old
    /// code, version unchanged. Each runtime compares as unchanged under its
    /// own settings, but the to end cross-checked with the base's own settings
    /// shows the change: a restart (the moved-root attack, by a split).
    #[test]
    fn a_split_over_a_copy_of_the_old_code_is_caught_by_the_cross_check() {
        let repo = split_over_a_copy();
        let base = repo.fpcheck(&["fingerprint", "--rev", "v1.0.0", "--json"]);
        assert_eq!(base.code, 0, "{}", base.stderr);
        let base_src = base.json()["fingerprint"].as_str().unwrap().to_string();
        let j = repo.fpcheck(&["v1.0.0..", "--format", "json"]).json();
        assert_eq!(j["summary"], "a and b restart");
        for r in j["runtimes"].as_array().unwrap() {
            assert_eq!(r["reason"], "settings_changed_runtime_changed");
            assert_eq!(r["from"]["fingerprint"], r["to"]["fingerprint"]);
            assert_eq!(r["settings_check"]["runtime_changed"], true);
            // The warning compares with the base's own fingerprint (src/).
            let hidden = r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["code"] == "settings_changed_runtime_changed")
                .expect("the cross-check's warning");
            let cross = r["settings_check"]["fingerprint"].as_str().unwrap();
            assert!(
                hidden["message"].as_str().unwrap().contains(&format!(
                    "is {}, not {}",
                    &cross[..12],
                    &base_src[..12]
                )),
                "{hidden}"
            );
        }
        let one = repo.fpcheck(&["v1.0.0..", "--runtime", "a", "--exit-code"]);
        assert_eq!(one.code, 1, "{}{}", one.stdout, one.stderr);
        let wt = repo.fpcheck(&["v1.0.0..", "--worktree", "--exit-code"]);
        assert_eq!(wt.code, 1, "{}{}", wt.stdout, wt.stderr);
        // src/ unchanged: the cross-check agrees, no restart.
        let repo = TestRepo::new();
        repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\n")
            .write("src/app.py", "x = 1\n")
            .write("copy/app.py", "x = 1\n");
        repo.commit_and_tag("1", "v1.0.0");
        repo.write(
            "fpcheck.toml",
            "[runtimes.a]\nroot = \"copy\"\n[runtimes.b]\nroot = \"copy\"\n",
        );
        repo.commit("2");
        let same = repo.fpcheck(&["v1.0.0..", "--format", "json"]).json();
        assert_eq!(same["summary"], "a and b do not restart");
        assert_eq!(
            same["runtimes"][0]["settings_check"]["runtime_changed"],
            false
        );
    }

    /// `history` of the split over a copy of the old code: the release before
    /// the first declaration ran `[runtime]` over src/, which changed; the
    /// update restarts by the cross-check with that release's own settings, as
    /// the range says.
    #[test]
    fn history_of_a_split_over_a_copy_of_the_old_code_restarts() {
        let repo = split_over_a_copy();
        repo.tag("v1.0.1");
        let j = repo.history_json(&["--no-cache", "--threads", "1"]);
        for r in j["runtimes"].as_array().unwrap() {
            assert_eq!(
                crate::support::update_lines(r),
                ["v1.0.0..v1.0.1 true settings_changed_runtime_changed"]
            );
            let step = &r["releases"][0];
            assert_eq!(step["from_fingerprint"], step["to_fingerprint"]);
            assert_eq!(step["settings_check"]["runtime_changed"], true);
        }
        let range = repo.fpcheck(&["v1.0.0..v1.0.1", "--format", "json"]).json();
        assert_eq!(
            range["runtimes"][0]["settings_check"]["fingerprint"],
            j["runtimes"][0]["releases"][0]["settings_check"]["fingerprint"]
        );
    }
}

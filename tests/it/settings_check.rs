//! The settings cross-check: when the ends' settings differ, the
//! `to` end is also fingerprinted with the `from` end's settings, and a
//! change there is a restart (`settings_changed_runtime_changed`) even when
//! the `to` end's own settings show none.

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

fn base() -> (TestRepo, String) {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main(): return 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    let old = dir_fingerprint(&[("src/app.py", "def main(): return 1\n")]);
    (repo, old)
}

/// (a) The pull request excludes the only runtime file it changes, version
/// unchanged: its own end is unavailable (`unavailable_version_unchanged`
/// before the fix); under v1.0.0's settings the code changed.
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

/// (b) The pull request moves the root to a copy of the old code and
/// changes the real one: its own settings give the old fingerprint
/// (`no_runtime_change` before the fix), with or without a version bump.
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
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
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

#[test]
fn a_pull_request_cannot_exclude_its_own_change() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main(): return 1\n")
        .write("src/util.py", "X = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("base");
    repo.tag("v1.0.0");
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

/// The moved-root attack's own example when the changed file is the root's only runtime
/// file: the pull request's settings exclude it, its end's fingerprint is
/// unavailable and the version is unchanged. Under the `from` end's
/// settings (the settings cross-check) the code changed, so the verdict is
/// a restart (`settings_changed_runtime_changed`), never exit 0.
#[test]
fn a_pull_request_cannot_make_its_own_end_unavailable_to_skip_the_restart() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main(): return 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write("src/app.py", "def main(): return 2\n")
        .write("fpcheck.toml", "[runtime]\nexclude = [\"app.py\"]\n");
    repo.commit("the pull request");
    // `--exit-code` is what `fail-on-restart` passes: 1 means restart.
    let run = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json", "--exit-code"]);
    let j = run.json();
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "settings_changed_runtime_changed", "{j}");
    assert_eq!(run.code, 1);
}

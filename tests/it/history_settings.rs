//! `history` fingerprints each release with the settings committed at it,
//! and cross-checks an update whose settings changed as the range does
//! (a release cannot fake "no restart" with its own settings).

use serde_json::Value;

use crate::support::TestRepo;

fn json(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["history", "--format", "json", "--no-cache"];
    all.extend_from_slice(args);
    let run = repo.fpcheck(&all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn verdicts(j: &Value) -> Vec<(String, bool, String)> {
    j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                format!(
                    "{}..{}",
                    s["from"].as_str().unwrap(),
                    s["to"].as_str().unwrap()
                ),
                s["restart_required"].as_bool().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
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
    let j = json(&repo, &[]);
    assert_eq!(
        verdicts(&j),
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
    let flagged = json(&repo, &["--exclude", "tests"]);
    assert_eq!(
        verdicts(&flagged)[0],
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
    let j = json(&repo, &[]);
    assert_eq!(
        verdicts(&j),
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

#[test]
fn settings_that_never_change_share_every_fingerprint_and_add_nothing() {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", "[runtime]\nroot = \"app\"\n");
    for (i, body) in ["a = 1\n", "a = 1\n", "a = 2\n"].iter().enumerate() {
        repo.write("app/a.py", body)
            .write("app/b.py", "b = 1\n")
            .write(
                "app/version.json",
                format!("{{\"version\": \"1.{i}.0\"}}\n"),
            );
        repo.commit_and_tag("r", &format!("v1.{i}.0"));
    }
    let j = json(&repo, &["--threads", "1"]);
    assert_eq!(
        verdicts(&j),
        [
            v("v1.0.0..v1.1.0", false, "no_runtime_change"),
            v("v1.1.0..v1.2.0", true, "code_changed"),
        ]
    );
    for step in j["releases"].as_array().unwrap() {
        let keys: Vec<&String> = step.as_object().unwrap().keys().collect();
        assert!(!keys
            .iter()
            .any(|k| *k == "warnings" || *k == "settings_check"));
    }
    // One fingerprint hashed per distinct selection, none for a cross-check.
    assert_eq!(j["stats"]["hashed"], 2);
    assert_eq!(j["stats"]["reused"], 1);
    assert_eq!(j["settings"]["root"], "app");
}

#[test]
fn a_broken_config_at_a_release_names_the_release() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n")
        .write("fpcheck.toml", "[runtime]\nrot = 1\n");
    repo.commit_and_tag("1", "v1.0.0");
    repo.write("fpcheck.toml", "[runtime]\n");
    repo.commit_and_tag("2", "v1.1.0");
    let run = repo.fpcheck(&["history", "--no-cache"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("fpcheck.toml at v1.0.0 is not a valid fpcheck config"),
        "{}",
        run.stderr
    );
    // One file for every release instead: the history runs.
    let h = repo.join("h.toml");
    std::fs::write(&h, "[runtime]\n").unwrap();
    let run = repo.fpcheck(&["history", "--no-cache", "--config", h.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

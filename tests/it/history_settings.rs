//! `history` fingerprints each release with the settings committed at it
//! (what that release's gate computes): releases that share settings and
//! a selection share one fingerprint, and a broken config names its
//! release. The cross-check of an update whose settings changed is in
//! `settings_check.rs`, beside the range's.

use serde_json::Value;

use crate::support::TestRepo;

fn json(repo: &TestRepo, args: &[&str]) -> Value {
    let mut all = vec!["history", "--format", "json", "--no-cache"];
    all.extend_from_slice(args);
    let run = repo.fpcheck(&all);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn v(s: &str, restart: bool, reason: &str) -> (String, bool, String) {
    (s.to_string(), restart, reason.to_string())
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
        crate::support::update_verdicts(&j),
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

//! Monorepos: several `[runtimes.NAME]` analysed in one run, one verdict
//! each plus the overall answer.

use serde_json::{json, Value};

use crate::support::TestRepo;

const TWO: &str = "[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n";

/// v1.0.0: a server and a worker, each with its own root and version file.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", TWO)
        .write("server/app.py", "serve = 1\n")
        .write("server/version.json", "{\"version\": \"1.0.0\"}\n")
        .write("worker/job.py", "work = 1\n")
        .write("worker/version.json", "{\"version\": \"1.0.0\"}\n")
        .write("README.md", "# mono\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo
}

/// v1.1.0 changes the server's code only (both versions bumped).
fn server_fix(repo: &TestRepo) {
    repo.write("server/app.py", "serve = 2\n")
        .write("server/version.json", "{\"version\": \"1.1.0\"}\n")
        .write("worker/version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
}

fn names_and_verdicts(j: &Value) -> Vec<(String, bool, String)> {
    j["runtimes"]
        .as_array()
        .expect("a runtimes array")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["restart_required"].as_bool().unwrap(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_runtime_gets_a_verdict_and_the_json_says_any() {
    let repo = monorepo();
    server_fix(&repo);
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["summary"], "server restarts; worker does not");
    assert_eq!(
        names_and_verdicts(&j),
        [
            ("server".to_string(), true, "code_changed".to_string()),
            ("worker".to_string(), false, "no_runtime_change".to_string())
        ]
    );
    let server = &j["runtimes"][0];
    assert_eq!(server["settings"]["runtime"], "server");
    assert_eq!(server["settings"]["root"], "server");
    assert_eq!(
        server["changes"]["runtime"],
        json!([{"path": "server/app.py", "status": "modified"}])
    );
    assert_eq!(server["from"]["version"], "1.0.0");
    assert_eq!(server["to"]["version"], "1.1.0");
    assert_eq!(j["runtimes"][1]["settings"]["root"], "worker");
    assert_eq!(j["runtimes"][1]["changes"]["runtime"], json!([]));
}

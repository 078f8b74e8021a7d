//! Monorepos: several `[runtimes.NAME]` analysed in one run, one verdict
//! each plus the overall answer.

use serde_json::{json, Value};

use crate::support::{warning_codes, TestRepo};

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
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo
}

/// v1.1.0 changes the server's code only (both versions bumped).
fn server_fix(repo: &TestRepo) {
    repo.write("server/app.py", "serve = 2\n")
        .write("server/version.json", "{\"version\": \"1.1.0\"}\n")
        .write("worker/version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
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
        json!([{"path": "server/app.py", "status": "modified", "change_kind": "code"}])
    );
    // Each runtime's changes are classified as a single runtime's are.
    assert_eq!(server["avoidable"], false);
    assert_eq!(server["from"]["version"], "1.0.0");
    assert_eq!(server["to"]["version"], "1.1.0");
    assert_eq!(j["runtimes"][1]["settings"]["root"], "worker");
    assert_eq!(j["runtimes"][1]["changes"]["runtime"], json!([]));
}

#[test]
fn the_table_opens_with_the_overall_answer_and_exit_code_says_any() {
    let repo = monorepo();
    server_fix(&repo);
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--exit-code"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "server restarts; worker does not");
    assert_eq!(lines[1], "");
    assert_eq!(lines[2], "== runtime server ==");
    assert!(
        lines[3].starts_with("RESTART REQUIRED (code_changed)"),
        "{}",
        lines[3]
    );
    let worker = lines
        .iter()
        .position(|l| *l == "== runtime worker ==")
        .expect("a worker block");
    assert!(lines[worker + 1].starts_with("NO RESTART (no_runtime_change)"));
    // Nothing restarts: exit 0, and the summary says so.
    let run = repo.fpcheck(&["v1.1.0..v1.1.0", "--exit-code"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("server and worker do not restart")
    );
}

#[test]
fn one_runtime_option_gives_exactly_the_single_runtime_report() {
    let repo = monorepo();
    server_fix(&repo);
    let run = repo.fpcheck(&[
        "v1.0.0..v1.1.0",
        "--format",
        "json",
        "--runtime",
        "worker",
        "--exit-code",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let one = run.json();
    assert!(one.get("runtimes").is_none());
    assert_eq!(one["reason"], "no_runtime_change");
    assert_eq!(one["settings"]["runtime"], "worker");
    // The same object as the worker's entry of the full run, minus `name`.
    let all = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]).json();
    let mut entry = all["runtimes"][1].clone();
    assert_eq!(
        entry.as_object_mut().unwrap().remove("name"),
        Some(json!("worker"))
    );
    // A digest the run happened to compute (another runtime selecting the
    // same (path, blob id) list) may stand where the single run skipped it.
    let mut one = one;
    for end in ["from", "to"] {
        let (e, o) = (&mut entry[end], &mut one[end]);
        if o["fingerprint"].is_null() && !e["fingerprint"].is_null() {
            assert_eq!(o["fingerprint_skipped"], "selection_unchanged");
            assert_eq!(e["fingerprint"], all["runtimes"][1]["from"]["fingerprint"]);
            e["fingerprint"] = Value::Null;
            e["fingerprint_skipped"] = o["fingerprint_skipped"].clone();
        }
    }
    assert_eq!(entry, one);
    // Repeated, it narrows the set; a name given twice counts once.
    let run = repo.fpcheck(&[
        "v1.0.0..v1.1.0",
        "--format",
        "json",
        "--runtime",
        "worker",
        "--runtime",
        "server",
        "--runtime",
        "worker",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(names_and_verdicts(&run.json()).len(), 2);
}

#[test]
fn unknown_runtimes_and_a_shared_root_are_usage_errors() {
    let repo = monorepo();
    server_fix(&repo);
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--runtime", "server", "--runtime", "cron"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        "fpcheck: error: --runtime cron: no such runtime at either end (declared: server, worker)"
    );
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--root", "server"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--root names one runtime's root, but several runtimes are analysed"),
        "{}",
        run.stderr
    );
    // Other commands read one runtime and say so.
    let run = repo.fpcheck(&[
        "fingerprint",
        "--rev",
        "v1.0.0",
        "--runtime",
        "a",
        "--runtime",
        "b",
    ]);
    run.assert_error(2, "--runtime is given 2 times");
}

#[test]
fn an_unknown_runtime_is_named_with_those_declared_when_one_end_declares_none() {
    let repo = TestRepo::new();
    repo.write("server/app.py", "serve = 1\n");
    repo.commit_and_tag("no config", "v1.0.0");
    repo.write("fpcheck.toml", TWO)
        .write("server/app.py", "serve = 2\n")
        .write("worker/job.py", "work = 1\n");
    repo.commit_and_tag("runtimes", "v1.1.0");
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--runtime", "nope"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        "fpcheck: error: --runtime nope: no such runtime at either end (declared: server, worker)"
    );
    // A runtime declared at the new end only is still analysed.
    let j = repo
        .fpcheck(&["v1.0.0..v1.1.0", "--runtime", "server", "--format", "json"])
        .json();
    assert_eq!(j["restart_required"], true);
}

#[test]
fn a_runtime_added_by_the_release_is_read_with_its_settings_at_the_old_end() {
    let repo = monorepo();
    repo.write(
        "fpcheck.toml",
        format!("{TWO}[runtimes.cron]\nroot = \"cron\"\n"),
    )
    .write("cron/tick.py", "tick = 1\n")
    .write("cron/version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("cron", "v1.1.0");
    let j = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]).json();
    assert_eq!(j["summary"], "cron restarts; server and worker do not");
    let cron = &j["runtimes"][0];
    assert_eq!(cron["name"], "cron");
    assert_eq!(cron["restart_required"], true);
    assert_eq!(cron["reason"], "fingerprint_unavailable");
    // Read with the new end's settings: its root did not exist yet.
    assert_eq!(cron["from"]["fingerprint"], "");
    assert_eq!(cron["from"]["unavailable_reason"], "cron does not exist");
    assert_eq!(cron["from_settings"]["root"], "cron");
    assert_eq!(cron["settings"]["config"], "fpcheck.toml at v1.1.0");
    let codes = warning_codes(cron);
    assert_eq!(codes, ["fingerprint_unavailable", "runtime_not_declared"]);
    assert_eq!(
        cron["warnings"][1]["message"],
        "runtime `cron` is not declared in fpcheck.toml at v1.0.0: that end is read with the new end's settings and compared as usual (an unavailable fingerprint there counts as a restart)"
    );
    // Removed again: unavailable at the new end.
    repo.write("fpcheck.toml", TWO).remove("cron");
    repo.commit_and_tag("no cron", "v1.2.0");
    let j = repo.fpcheck(&["v1.1.0..v1.2.0", "--format", "json"]).json();
    let cron = &j["runtimes"][0];
    assert_eq!(cron["name"], "cron");
    // The new end is read with the old end's settings, as the installed
    // gate reads it after the update: the root is gone.
    assert_eq!(cron["to"]["unavailable_reason"], "cron does not exist");
    assert_eq!(cron["restart_required"], true);
}

#[test]
fn dropping_a_runtime_declaration_cannot_hide_its_code_change() {
    let repo = monorepo();
    repo.write(
        "fpcheck.toml",
        format!("{TWO}[runtimes.cron]\nroot = \"cron\"\n"),
    )
    .write("cron/tick.py", "tick = 1\n");
    repo.commit_and_tag("cron", "v1.1.0");
    // Same version, cron's code edited, and its declaration removed.
    repo.write("fpcheck.toml", TWO)
        .write("cron/tick.py", "tick = 2\n");
    repo.commit_and_tag("edit cron, undeclare it", "v1.1.1");
    let j = repo.fpcheck(&["v1.1.0..v1.1.1", "--format", "json"]).json();
    let cron = &j["runtimes"][0];
    assert_eq!(cron["name"], "cron");
    assert_eq!(cron["restart_required"], true);
    assert_eq!(cron["reason"], "code_changed");
    assert_eq!(j["restart_required"], true);
    let codes = warning_codes(cron);
    assert!(codes.contains(&"runtime_not_declared"), "{codes:?}");
}

#[test]
fn overlapping_roots_each_get_their_own_fingerprint() {
    let repo = monorepo();
    repo.write(
        "fpcheck.toml",
        format!("{TWO}[runtimes.all]\nroot = \".\"\n"),
    );
    repo.commit_and_tag("all", "v1.0.1");
    repo.write("worker/job.py", "work = 2\n")
        .write("server/version.json", "{\"version\": \"1.1.0\"}\n")
        .write("worker/version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("worker fix", "v1.1.0");
    let j = repo.fpcheck(&["v1.0.1..v1.1.0", "--format", "json"]).json();
    assert_eq!(j["summary"], "all and worker restart; server does not");
    assert_eq!(
        names_and_verdicts(&j),
        [
            ("all".to_string(), true, "code_changed".to_string()),
            ("server".to_string(), false, "no_runtime_change".to_string()),
            ("worker".to_string(), true, "code_changed".to_string()),
        ]
    );
    assert_eq!(j["runtimes"][0]["to"]["runtime_files"], 2);
    // The worker's own fingerprint is the one `fingerprint` computes for it.
    let fp = repo
        .fpcheck(&[
            "fingerprint",
            "--rev",
            "v1.1.0",
            "--runtime",
            "worker",
            "--json",
        ])
        .json();
    assert_eq!(j["runtimes"][2]["to"]["fingerprint"], fp["fingerprint"]);
}

#[test]
fn markdown_has_one_section_per_runtime_and_escapes_names() {
    let repo = TestRepo::new();
    repo.write(
        "fpcheck.toml",
        "[runtimes.\"a`b@team\"]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n",
    )
    .write("server/app.py", "x = 1\n")
    .write("worker/job.py", "y = 1\n");
    repo.commit_and_tag("one", "v1");
    repo.write("server/app.py", "x = 2\n");
    repo.commit("two");
    let run = repo.fpcheck(&["v1..HEAD", "--format", "markdown"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let md = &run.stdout;
    assert!(md.starts_with("<!-- fpcheck:report -->\n"), "{md}");
    assert_eq!(md.matches("<!-- fpcheck:report -->").count(), 1);
    assert!(
        md.contains("### 🔁 Restart required: a&#96;b&#64;&#8288;team restarts; worker does not\n")
    );
    assert!(md.contains("#### 🔁 <code>a&#96;b&#64;&#8288;team</code>: restart required\n"));
    assert!(md.contains("#### ✅ <code>worker</code>: no restart\n"));
    assert!(!md.contains("@team"));
}

#[test]
fn the_working_tree_is_compared_for_every_runtime() {
    let repo = monorepo();
    repo.write("worker/job.py", "work = 3\n");
    let j = repo
        .fpcheck(&["v1.0.0..", "--worktree", "--format", "json"])
        .json();
    assert_eq!(j["summary"], "worker restarts; server does not");
    assert_eq!(j["runtimes"][1]["to"]["ref"], "WORKTREE");
}

#[test]
fn patch_records_each_runtime_under_runtimes() {
    let repo = monorepo();
    repo.write("version.json", "{\n  \"version\": \"1.0.0\"\n}\n");
    repo.commit_and_tag("top version", "v1.0.1");
    server_fix(&repo);
    // The range itself skips the digest of an unchanged selection (the
    // worker's): take each runtime's from `fingerprint`.
    let fp = |i: usize| {
        let name = ["server", "worker"][i];
        let run = repo.fpcheck(&["fingerprint", "--rev", "v1.1.0", "--runtime", name]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout.trim().to_string()
    };
    let spec = |root: &str| {
        json!({"algorithm": "fpcheck-runtime-v1", "hash": "sha256", "root": root,
               "extensions": [".py"],
               "exclude": ["scripts", "tests", "migrations", "crons", "__pycache__", "node_modules", ".git", "versions"]})
    };
    // `--runtime` given twice with one name is one runtime.
    let run = repo.fpcheck(&[
        "patch",
        "v1.0.1..v1.1.0",
        "--runtime",
        "worker",
        "--runtime",
        "worker",
        "--write",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = repo.fpcheck(&["patch", "v1.0.1..v1.1.0", "--runtime", "server"]);
    // One runtime chosen: the single-runtime patch, unchanged.
    assert_eq!(run.json()["runtime_fingerprint"], fp(0));
    let out = repo.join("p.json");
    let run = repo.fpcheck(&["v1.0.1..v1.1.0", "--patch-out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(&out).unwrap()).unwrap(),
        json!({"runtimes": {
            "server": {"runtime_fingerprint": fp(0), "runtime_fingerprint_spec": spec("server")},
            "worker": {"runtime_fingerprint": fp(1), "runtime_fingerprint_spec": spec("worker")},
        }})
    );
    assert!(run.stderr.contains(
        "fpcheck: force_restart in version.json is shared by every runtime: left as it is (--force-restart sets it)"
    ), "{}", run.stderr);
    let run = repo.fpcheck(&["patch", "v1.0.1..v1.1.0", "--write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join("version.json")).unwrap()).unwrap();
    assert_eq!(file["version"], "1.0.0");
    assert_eq!(file["runtimes"]["worker"]["runtime_fingerprint"], fp(1));
    assert_eq!(
        file["runtimes"]["server"]["runtime_fingerprint_spec"],
        spec("server")
    );
    assert_eq!(file.as_object().unwrap().len(), 2);
    // Run again on what was written: nothing left to say.
    let run = repo.fpcheck(&["patch", "v1.0.1..", "--worktree"]);
    assert_eq!(run.json(), json!({}));
}

#[test]
fn extra_reports_hold_every_runtime_and_fit_their_limit() {
    let repo = monorepo();
    repo.write("server/app.py", "serve = 2\n");
    for n in 0..40 {
        repo.write(&format!("worker/{}_{n:02}.py", "m".repeat(60)), "X = 1\n");
    }
    repo.commit("1.1.0");
    let dir = tempfile::tempdir().unwrap();
    let (json, small) = (dir.path().join("r.json"), dir.path().join("small.md"));
    let limit = 4000;
    let run = repo.fpcheck(&[
        "v1.0.0..HEAD",
        "--format=markdown",
        &format!("--report=json={}", json.display()),
        &format!("--report=markdown:{limit}={}", small.display()),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let alone = repo.fpcheck(&["v1.0.0..HEAD", "--format=json"]);
    assert_eq!(std::fs::read_to_string(&json).unwrap(), alone.stdout);
    assert_eq!(names_and_verdicts(&alone.json()).len(), 2);
    // The main output lists every file; the small one fits, by whole rows,
    // and still has every runtime's section.
    assert!(!run.stdout.contains("more not shown"), "{}", run.stdout);
    let small = std::fs::read_to_string(&small).unwrap();
    assert!(small.len() <= limit, "{} bytes", small.len());
    assert!(
        small.contains("#### 🔁 <code>server</code>: restart required"),
        "{small}"
    );
    assert!(
        small.contains("#### 🔁 <code>worker</code>: restart required"),
        "{small}"
    );
    // The worker's runtime rows (the server lists the same files as ignored).
    let shown = small
        .lines()
        .filter(|l| l.starts_with("| added (code) |"))
        .count();
    assert!(shown > 0 && shown < 40, "{shown} rows: {small}");
    assert!(
        small.contains(&format!("| … | {} more not shown |", 40 - shown)),
        "{small}"
    );
    for line in small.lines().filter(|l| l.starts_with('|')) {
        assert!(line.ends_with('|'), "a cut row: {line}");
    }
}

/// The base has no fpcheck.toml (or a single `[runtime]`); the pull request
/// edits src/ and turns the config into several `[runtimes.NAME]` over it,
/// version unchanged. Each runtime is read at the old end with its new
/// settings and compared: the code changed, so each restarts (were the
/// old end's fingerprint withdrawn instead, the unchanged version would
/// answer "no restart", exit 0).
#[test]
fn splitting_the_config_into_several_runtimes_cannot_hide_a_code_change() {
    for base in [None, Some("[runtime]\nroot = \"src\"\n")] {
        let repo = TestRepo::new();
        repo.write("src/app.py", "x = 1\n")
            .write("version.json", "{\"version\":\"1.0.0\"}\n");
        if let Some(text) = base {
            repo.write("fpcheck.toml", text);
        }
        repo.commit_and_tag("1", "v1.0.0");
        repo.write("src/app.py", "x = 2\n").write(
            "fpcheck.toml",
            "[runtimes.a]\nroot = \"src\"\n[runtimes.b]\nroot = \"src\"\n",
        );
        repo.commit("2");
        let run = repo.fpcheck(&["v1.0.0..", "--exit-code", "--color", "never"]);
        assert_eq!(run.code, 1, "{base:?}: {}{}", run.stdout, run.stderr);
        let j = repo.fpcheck(&["v1.0.0..", "--format", "json"]).json();
        assert_eq!(j["restart_required"], true, "{base:?}");
        assert_eq!(j["summary"], "a and b restart");
        for r in j["runtimes"].as_array().unwrap() {
            assert_eq!(r["reason"], "code_changed", "{base:?}");
            assert_eq!(r["version_changed"], false);
            assert_ne!(r["from"]["fingerprint"], "");
            assert_ne!(r["from"]["fingerprint"], r["to"]["fingerprint"]);
            assert!(r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["code"] == "runtime_not_declared"));
        }
        // One of them chosen: the same answer, not an error.
        let one = repo.fpcheck(&["v1.0.0..", "--runtime", "b", "--format", "json"]);
        assert_eq!(one.code, 0, "{base:?}: {}", one.stderr);
        let one = one.json();
        assert!(one.get("runtimes").is_none());
        assert_eq!(one["restart_required"], true);
        assert_eq!(one["reason"], "code_changed");
        assert_eq!(one["settings"]["runtime"], "b");
        assert_eq!(
            one["from"]["fingerprint"],
            j["runtimes"][1]["from"]["fingerprint"]
        );
        let code = repo.fpcheck(&["v1.0.0..", "--runtime", "a", "--exit-code"]);
        assert_eq!(code.code, 1, "{}", code.stderr);
        // The working tree as the `to` end: the same.
        let wt = repo.fpcheck(&["v1.0.0..", "--worktree", "--exit-code"]);
        assert_eq!(wt.code, 1, "{base:?}: {}{}", wt.stdout, wt.stderr);
        // Nothing changed in src/: compared as usual, no restart.
        let repo2 = TestRepo::new();
        repo2
            .write("src/app.py", "x = 1\n")
            .write("version.json", "{\"version\":\"1.0.0\"}\n");
        repo2.commit_and_tag("1", "v1.0.0");
        repo2.write(
            "fpcheck.toml",
            "[runtimes.a]\nroot = \"src\"\n[runtimes.b]\nroot = \"src\"\n",
        );
        repo2.commit("2");
        let same = repo2.fpcheck(&["v1.0.0..", "--format", "json"]).json();
        assert_eq!(same["summary"], "a and b do not restart");
    }
}

/// A runtime added with a new root and the version unchanged: its
/// fingerprint at the old end cannot be computed, and the version cannot
/// be trusted to tell: a restart, `fingerprint_unavailable` (never
/// `unavailable_version_unchanged`).
#[test]
fn a_runtime_added_with_its_version_unchanged_restarts() {
    let repo = monorepo();
    repo.write(
        "fpcheck.toml",
        format!("{TWO}[runtimes.cron]\nroot = \"cron\"\n"),
    )
    .write("cron/tick.py", "tick = 1\n");
    repo.commit("cron");
    let j = repo.fpcheck(&["v1.0.0..", "--format", "json"]).json();
    let cron = &j["runtimes"][0];
    assert_eq!(cron["name"], "cron");
    assert_eq!(cron["version_changed"], false);
    assert_eq!(cron["restart_required"], true);
    assert_eq!(cron["reason"], "fingerprint_unavailable");
    let one = repo.fpcheck(&["v1.0.0..", "--runtime", "cron", "--exit-code"]);
    assert_eq!(one.code, 1, "{}{}", one.stdout, one.stderr);
    // Removed with the version unchanged: the same at the new end.
    repo.tag("v1.1.0");
    repo.write("fpcheck.toml", TWO).remove("cron");
    repo.commit("no cron");
    let j = repo.fpcheck(&["v1.1.0..", "--format", "json"]).json();
    let cron = &j["runtimes"][0];
    assert_eq!(cron["to"]["unavailable_reason"], "cron does not exist");
    assert_eq!(
        (&cron["restart_required"], &cron["reason"]),
        (&Value::Bool(true), &Value::from("fingerprint_unavailable"))
    );
}

/// `[runtimes.""]` (or a name of spaces or controls only) cannot be chosen
/// or told apart: refused, naming the file, exit 2.
#[test]
fn an_empty_runtime_name_is_refused() {
    for name in ["\"\"", "\" \"", "\"\\t\"", "\"\\u202e\""] {
        let repo = TestRepo::new();
        repo.write("src/app.py", "x = 1\n").write(
            "fpcheck.toml",
            format!("[runtimes.{name}]\nroot = \"src\"\n[runtimes.b]\nroot = \"src\"\n"),
        );
        repo.commit_and_tag("1", "v1.0.0");
        let run = repo.fpcheck(&["v1.0.0..", "--worktree"]);
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("fpcheck.toml")
                && run.stderr.contains(
                    "has an empty name (or only spaces or control characters): name the runtime"
                ),
            "{name}: {}",
            run.stderr
        );
        let fp = repo.fpcheck(&["fingerprint", "--runtime", "b"]);
        assert_eq!(fp.code, 2, "{name}: {}", fp.stderr);
    }
}

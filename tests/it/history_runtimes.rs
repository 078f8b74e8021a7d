//! `history` of a monorepo: one history per runtime in one run, each
//! update decided as `fpcheck A..B --runtime NAME` decides it.

use serde_json::{Map, Value};

use crate::support::TestRepo;

const TWO: &str = "[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n";
/// `admin` lives inside the server's root: the runtimes overlap.
const THREE: &str = "[runtimes.admin]\nroot = \"server/admin\"\n[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n";
const NO_WORKER: &str =
    "[runtimes.admin]\nroot = \"server/admin\"\n[runtimes.server]\nroot = \"server\"\n";

/// v1.0.0 server and worker; v1.1.0 fixes the server; v1.2.0 changes the
/// worker and starts declaring `admin`; v1.3.0 stops declaring `worker`
/// and changes its code.
fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    let bump = |v: &str| {
        repo.write("server/version.json", format!("{{\"version\": \"{v}\"}}\n"))
            .write("worker/version.json", format!("{{\"version\": \"{v}\"}}\n"));
    };
    repo.write("fpcheck.toml", TWO)
        .write("server/app.py", "serve = 1\n")
        .write("server/admin/panel.py", "panel = 1\n")
        .write("worker/job.py", "work = 1\n");
    bump("1.0.0");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("server/app.py", "serve = 2\n");
    bump("1.1.0");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    repo.write("worker/job.py", "work = 2\n")
        .write("fpcheck.toml", THREE);
    bump("1.2.0");
    repo.commit_and_tag("1.2.0", "v1.2.0");
    repo.write("worker/job.py", "work = 3\n")
        .write("fpcheck.toml", NO_WORKER);
    bump("1.3.0");
    repo.commit_and_tag("1.3.0", "v1.3.0");
    repo
}

fn run_json(repo: &TestRepo, args: &[&str]) -> Value {
    repo.history_json(&[&["--no-cache", "--threads", "1"], args].concat())
}

fn without(v: &Value, keys: &[&str]) -> Map<String, Value> {
    let mut m = v.as_object().unwrap().clone();
    for k in keys {
        m.remove(*k);
    }
    m
}

#[test]
fn one_history_per_runtime_each_update_as_the_range_decides_it() {
    let repo = monorepo();
    let j = run_json(&repo, &[]);
    let top: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        [
            "schema_version",
            "repo",
            "name",
            "restart_required",
            "summary",
            "runtimes",
            "stats"
        ]
    );
    assert_eq!(j["restart_required"], true);
    assert_eq!(
        j["summary"],
        "admin: 0 of 2 updates restarted; server: 1 of 3 updates restarted; worker: 2 of 3 updates restarted"
    );
    let runtimes = j["runtimes"].as_array().unwrap();
    let names: Vec<&str> = runtimes
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["admin", "server", "worker"]);
    assert_eq!(
        crate::support::update_lines(&runtimes[0]),
        [
            // Declared from v1.2.0 on: v1.1.0 is read with its settings,
            // and the admin code did not change.
            "v1.1.0..v1.2.0 false no_runtime_change",
            "v1.2.0..v1.3.0 false no_runtime_change"
        ]
    );
    assert_eq!(
        crate::support::update_lines(&runtimes[1]),
        [
            "v1.0.0..v1.1.0 true code_changed",
            "v1.1.0..v1.2.0 false no_runtime_change",
            "v1.2.0..v1.3.0 false no_runtime_change"
        ]
    );
    assert_eq!(
        crate::support::update_lines(&runtimes[2]),
        [
            "v1.0.0..v1.1.0 false no_runtime_change",
            "v1.1.0..v1.2.0 true code_changed",
            // No longer declared: read with v1.2.0's settings, the change counts.
            "v1.2.0..v1.3.0 true code_changed"
        ]
    );
    // The range of every runtime agrees on every update of every runtime.
    for r in runtimes {
        let name = r["name"].as_str().unwrap();
        for s in r["releases"].as_array().unwrap() {
            let span = format!(
                "{}..{}",
                s["from"].as_str().unwrap(),
                s["to"].as_str().unwrap()
            );
            let range = repo.fpcheck(&[&span, "--format", "json", "--no-cache"]);
            assert_eq!(range.code, 0, "{name} {span}: {}", range.stderr);
            let range = range.json()["runtimes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["name"] == name)
                .cloned()
                .unwrap();
            assert_eq!(
                (&range["restart_required"], &range["reason"]),
                (&s["restart_required"], &s["reason"]),
                "{name} {span}"
            );
            // The range skips the digests of an unchanged selection
            // (`fingerprint_skipped`): history's are then equal.
            if range["to"]["fingerprint"].is_null() {
                assert_eq!(range["to"]["fingerprint_skipped"], "selection_unchanged");
                assert_eq!(range["from"]["fingerprint"], Value::Null);
                assert_eq!(s["from_fingerprint"], s["to_fingerprint"], "{name} {span}");
                continue;
            }
            assert_eq!(
                range["from"]["fingerprint"], s["from_fingerprint"],
                "{name} {span}"
            );
            assert_eq!(
                range["to"]["fingerprint"], s["to_fingerprint"],
                "{name} {span}"
            );
        }
    }
    // A runtime declared late and one dropped say so on the update.
    let admin_first = &runtimes[0]["releases"][0]["warnings"][0];
    assert_eq!(admin_first["code"], "runtime_not_declared");
    assert_eq!(
        admin_first["message"],
        "runtime `admin` is not declared in fpcheck.toml at v1.1.0: that release is read with the settings of the release that declares it next and compared as usual (an unavailable fingerprint counts as a restart)"
    );
    assert_eq!(
        runtimes[0]["warnings"][0]["message"],
        "runtime `admin` is not declared before v1.2.0: its history starts at v1.1.0, and 1 earlier release is left out"
    );
    assert_eq!(runtimes[0]["tags"].as_array().unwrap().len(), 3);
    let dropped = &runtimes[2]["releases"][2]["warnings"][0];
    assert_eq!(
        dropped["message"],
        "runtime `worker` is not declared in fpcheck.toml at v1.3.0: that release is read with the settings of the last release that declares it, as the installed gate reads it after the update (an unavailable fingerprint counts as a restart)"
    );

    // Spread over threads (jobs of two runtimes in one thread), the same.
    let spread = repo.fpcheck(&[
        "history",
        "--format",
        "json",
        "--no-cache",
        "--threads",
        "3",
    ]);
    assert_eq!(spread.code, 0, "{}", spread.stderr);
    let spread = spread.json();
    for (a, b) in runtimes.iter().zip(spread["runtimes"].as_array().unwrap()) {
        assert_eq!(without(a, &["stats"]), without(b, &["stats"]));
    }
    // Each entry is exactly the single-runtime history (less the run's
    // statistics, which count the whole run).
    for (i, name) in ["admin", "server", "worker"].iter().enumerate() {
        let one = run_json(&repo, &["--runtime", name]);
        assert_eq!(one["settings"]["runtime"], *name);
        assert_eq!(
            without(&one, &["schema_version", "repo", "name", "stats"]),
            without(&runtimes[i], &["name", "stats"]),
            "{name}"
        );
    }
}

#[test]
fn overlapping_runtimes_read_each_blob_once() {
    let repo = monorepo();
    let all = run_json(&repo, &[]);
    let read = |args: &[&str]| {
        run_json(&repo, args)["stats"]["blobs_read"]
            .as_u64()
            .unwrap()
    };
    let (server, worker) = (
        read(&["--runtime", "server"]),
        read(&["--runtime", "worker"]),
    );
    // admin's files are all inside server's root: no blob read twice.
    assert_eq!(
        all["stats"]["blobs_read"].as_u64().unwrap(),
        server + worker
    );
    assert!(server > 0 && worker > 0);
}

#[test]
fn runtime_narrows_and_every_format_has_one_part_per_runtime() {
    let repo = monorepo();
    let two = run_json(&repo, &["--runtime", "worker", "--runtime", "server"]);
    let names: Vec<&str> = two["runtimes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["server", "worker"]);

    let table = repo.fpcheck(&["history", "--no-cache", "--color", "never"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    let first = table.stdout.lines().next().unwrap();
    assert_eq!(
        first,
        "admin: 0 of 2 updates restarted; server: 1 of 3 updates restarted; worker: 2 of 3 updates restarted"
    );
    for name in ["admin", "server", "worker"] {
        assert_eq!(
            table
                .stdout
                .matches(&format!("== runtime {name} =="))
                .count(),
            1
        );
    }
    assert!(
        table
            .stderr
            .contains("fpcheck: warning: runtime worker: runtime_not_declared:"),
        "{}",
        table.stderr
    );

    let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert!(
        md.stdout.starts_with(
            "## Release history: restart verdicts\n\nadmin: 0 of 2 updates restarted;"
        ),
        "{}",
        md.stdout
    );
    for name in ["admin", "server", "worker"] {
        assert_eq!(
            md.stdout
                .matches(&format!("### Runtime <code>{name}</code>"))
                .count(),
            1,
            "{}",
            md.stdout
        );
    }

    let html = repo.fpcheck(&["history", "--no-cache", "--format", "html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    assert_eq!(html.stdout.matches("<svg ").count(), 3);
    assert_eq!(html.stdout.matches("<!DOCTYPE html>").count(), 1);
    crate::history::assert_balanced(&html.stdout);
    assert_eq!(
        html.stdout.matches("http://").count(),
        3,
        "one SVG namespace per timeline, no other URL"
    );
    assert!(html
        .stdout
        .contains("<p class=\"summary\"><b>admin: 0 of 2 updates restarted;"));
    for name in ["admin", "server", "worker"] {
        assert!(html
            .stdout
            .contains(&format!("<h2>Runtime <code>{name}</code></h2>")));
    }

    // --exit-code: 1 when any runtime's update restarts, 0 when none does.
    let any = repo.fpcheck(&["history", "--no-cache", "--exit-code", "--format", "json"]);
    assert_eq!(any.code, 1, "{}", any.stderr);
    let none = repo.fpcheck(&[
        "history",
        "v1.1.0..v1.3.0",
        "--no-cache",
        "--exit-code",
        "--runtime",
        "server",
        "--format",
        "json",
    ]);
    assert_eq!(none.code, 0, "{}", none.stderr);

    let bad = repo.fpcheck(&[
        "history",
        "--no-cache",
        "--runtime",
        "nope",
        "--runtime",
        "server",
    ]);
    bad.assert_error(
        2,
        "--runtime nope: no such runtime in any release (declared: admin, server, worker)",
    );
    let one_bad = repo.fpcheck(&["history", "--no-cache", "--runtime", "nope"]);
    one_bad.assert_error(
        2,
        "--runtime nope: no such runtime in any release (declared: admin, server, worker)",
    );
    let root = repo.fpcheck(&["history", "--no-cache", "--root", "server"]);
    assert_eq!(root.code, 2, "{}", root.stderr);
}

#[test]
fn a_single_runtime_config_keeps_its_output() {
    let repo = TestRepo::new();
    repo.write("fpcheck.toml", "[runtimes.only]\nroot = \"app\"\n")
        .write("app/a.py", "a = 1\n");
    repo.commit_and_tag("1", "v1.0.0");
    repo.write("app/a.py", "a = 2\n");
    repo.commit_and_tag("2", "v1.1.0");
    let j = run_json(&repo, &[]);
    assert!(j.get("runtimes").is_none());
    assert_eq!(j["settings"]["runtime"], "only");
    assert_eq!(
        crate::support::update_lines(&j),
        ["v1.0.0..v1.1.0 true code_changed"]
    );
    let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
    assert!(
        md.stdout
            .starts_with("## Release history: restart verdicts\n\n2 releases, 1 update:"),
        "{}",
        md.stdout
    );
}

/// A runtime dropped by one release and declared again by the next: the
/// update that declares it again compares the release that did not declare
/// it (read with borrowed settings) as usual, as the range does that pair.
/// Unchanged code is no restart; changed code with an unchanged version is
/// one (were the fingerprint withdrawn there, the unchanged version would
/// say "no restart").
#[test]
fn a_runtime_declared_again_is_compared_as_the_range_compares_it() {
    let repo = TestRepo::new();
    let only_server = "[runtimes.server]\nroot = \"server\"\n";
    repo.write("fpcheck.toml", TWO)
        .write("server/app.py", "serve = 1\n")
        .write("worker/job.py", "work = 1\n")
        .write("worker/version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1", "v1.0.0");
    repo.write("fpcheck.toml", only_server)
        .write("worker/version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("2", "v1.1.0");
    repo.write("fpcheck.toml", TWO)
        .write("worker/version.json", "{\"version\": \"1.2.0\"}\n");
    repo.commit_and_tag("3", "v1.2.0");
    // Declared again with its code changed and its version unchanged.
    repo.write("fpcheck.toml", only_server);
    repo.commit_and_tag("4", "v1.3.0");
    repo.write("fpcheck.toml", TWO)
        .write("worker/job.py", "work = 2\n");
    repo.commit_and_tag("5", "v1.3.1");
    let j = run_json(&repo, &["--runtime", "worker", "--runtime", "server"]);
    let worker = &j["runtimes"][1];
    assert_eq!(worker["name"], "worker");
    assert_eq!(
        crate::support::update_lines(worker),
        [
            "v1.0.0..v1.1.0 false no_runtime_change",
            "v1.1.0..v1.2.0 false no_runtime_change",
            "v1.2.0..v1.3.0 false no_runtime_change",
            "v1.3.0..v1.3.1 true code_changed"
        ]
    );
    let again = &worker["releases"][1];
    assert_eq!(again["from_fingerprint"], worker["tags"][1]["fingerprint"]);
    assert_eq!(again["from_fingerprint"], again["to_fingerprint"]);
    assert!(again.get("settings_check").is_none());
    assert_eq!(
        again["warnings"][0]["message"],
        "runtime `worker` is not declared in fpcheck.toml at v1.1.0: that release is read with the settings of the last release that declared it (cross-checked when they differ from the new ones) and compared as usual (an unavailable fingerprint counts as a restart)"
    );
    let changed = &worker["releases"][3];
    assert_ne!(changed["from_fingerprint"], changed["to_fingerprint"]);
    assert_eq!(changed["version_changed"], false);
    // The release itself keeps the fingerprint it had (v1.0.0's settings).
    assert_eq!(
        worker["tags"][1]["fingerprint"],
        worker["tags"][0]["fingerprint"]
    );
    let code = repo.fpcheck(&[
        "history",
        "--no-cache",
        "--runtime",
        "worker",
        "--exit-code",
    ]);
    assert_eq!(code.code, 1, "{}", code.stderr);
    for (k, span) in [
        "v1.0.0..v1.1.0",
        "v1.1.0..v1.2.0",
        "v1.2.0..v1.3.0",
        "v1.3.0..v1.3.1",
    ]
    .into_iter()
    .enumerate()
    {
        let range = repo.fpcheck(&[span, "--format", "json", "--no-cache"]);
        assert_eq!(range.code, 0, "{}", range.stderr);
        let r = range.json();
        let w = r["runtimes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "worker")
            .unwrap();
        let step = &worker["releases"][k];
        assert_eq!(
            (&w["restart_required"], &w["reason"]),
            (&step["restart_required"], &step["reason"]),
            "{span}"
        );
    }
}

/// `history` over a base without `[runtimes]` and a release that splits the
/// config into several runtimes while editing their code, version
/// unchanged: the update restarts for each, as the range says.
#[test]
fn history_of_a_config_split_into_several_runtimes_restarts_on_the_change() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "x = 1\n")
        .write("version.json", "{\"version\":\"1.0.0\"}\n");
    repo.commit_and_tag("1", "v1.0.0");
    repo.write("src/app.py", "x = 2\n").write(
        "fpcheck.toml",
        "[runtimes.a]\nroot = \"src\"\n[runtimes.b]\nroot = \"src\"\n",
    );
    repo.commit_and_tag("2", "v1.0.1");
    let j = run_json(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    for r in j["runtimes"].as_array().unwrap() {
        assert_eq!(
            crate::support::update_lines(r),
            ["v1.0.0..v1.0.1 true code_changed"]
        );
    }
    let range = repo.fpcheck(&["v1.0.0..v1.0.1", "--format", "json"]).json();
    assert_eq!(range["summary"], "a and b restart");
}

/// Runtime names with an ESC and a bidi override, and a tag with one:
/// every human-facing format shows them as visible escapes, once (not
/// `\\x1b`), and JSON keeps them exact.
#[test]
fn hostile_names_are_escaped_once_and_visibly_in_every_format() {
    let repo = TestRepo::new();
    let config =
        "[runtimes.\"w\\u001b[31m\"]\nroot = \"src\"\n[runtimes.\"s\\u202eyp\"]\nroot = \"src\"\n";
    repo.write("fpcheck.toml", config)
        .write("src/app.py", "x = 1\n")
        .write("version.json", "{\"version\":\"1.0.0\"}\n");
    repo.commit_and_tag("1", "v1.0.0");
    repo.write("src/app.py", "x = 2\n")
        .write("version.json", "{\"version\":\"1.0.1\"}\n");
    repo.commit_and_tag("2", "v1.0.1");
    repo.tag("v1\u{202e}0.0.1");
    let raw = ['\u{1b}', '\u{202e}'];
    let clean = |what: &str, text: &str| {
        for c in raw {
            assert!(!text.contains(c), "{what}: raw {c:?} in {text}");
        }
        assert!(
            !text.contains("\\\\x1b") && !text.contains("&#92;&#92;"),
            "{what}: escaped twice: {text}"
        );
    };
    // history: JSON exact, table once, Markdown and HTML visible.
    let j = run_json(&repo, &[]);
    assert_eq!(
        j["summary"],
        "s\u{202e}yp: 1 of 1 update restarted; w\u{1b}[31m: 1 of 1 update restarted"
    );
    assert_eq!(j["runtimes"][1]["name"], "w\u{1b}[31m");
    let table = repo.fpcheck(&["history", "--no-cache", "--color", "never"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    clean("history table", &table.stdout);
    assert!(table.stdout.starts_with(
        "s\\u{202e}yp: 1 of 1 update restarted; w\\x1b[31m: 1 of 1 update restarted\n"
    ));
    let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    clean("history markdown", &md.stdout);
    assert!(
        md.stdout
            .contains("s&#92;u{202e}yp: 1 of 1 update restarted; w&#92;x1b&#91;31m"),
        "{}",
        md.stdout
    );
    let html = repo.fpcheck(&["history", "--no-cache", "--format", "html"]);
    assert_eq!(html.code, 0, "{}", html.stderr);
    clean("history html", &html.stdout);
    assert!(
        html.stdout
            .contains("<h2>Runtime <code>w\\x1b[31m</code></h2>"),
        "{}",
        html.stdout
    );
    assert!(html
        .stdout
        .contains("<h2>Runtime <code>s\\u{202e}yp</code></h2>"));
    // The range: its summary exact in JSON, escaped once elsewhere; the
    // tag with a bidi override shown visibly in Markdown.
    let j = repo.fpcheck(&["v1.0.0..v1.0.1", "--format", "json"]).json();
    assert_eq!(j["summary"], "s\u{202e}yp and w\u{1b}[31m restart");
    let table = repo.fpcheck(&["v1.0.0..v1.0.1", "--color", "never"]);
    clean("range table", &table.stdout);
    assert!(
        table
            .stdout
            .starts_with("s\\u{202e}yp and w\\x1b[31m restart\n"),
        "{}",
        table.stdout
    );
    let md = repo.fpcheck(&["v1.0.0..v1\u{202e}0.0.1", "--format", "markdown"]);
    assert_eq!(md.code, 0, "{}", md.stderr);
    clean("range markdown", &md.stdout);
    assert!(md.stdout.contains("v1&#92;u{202e}0.0.1"), "{}", md.stdout);
    assert!(
        md.stdout
            .contains("s&#92;u{202e}yp and w&#92;x1b&#91;31m restart"),
        "{}",
        md.stdout
    );
}

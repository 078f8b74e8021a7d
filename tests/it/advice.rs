//! The advice beside the verdict, on generated repositories: dependencies
//! and data files of a free release (possible missed restarts), a restart
//! caused only by a version string (avoidable), the MCP surface, with
//! their negatives, in the range JSON, table and Markdown and in history.

use serde_json::{json, Value};

use crate::support::TestRepo;

const SERVER: &str = "import os\n\n\ndef main():\n    return os.getpid()\n";

const PYPROJECT_1: &str =
    "[project]\nname = \"srv\"\ndependencies = [\n    \"pydocket>=0.16.6,<0.17.0\",\n]\n";
const PYPROJECT_2: &str = "[project]\nname = \"srv\"\ndependencies = [\n    \"pydocket>=0.17.2\",\n    \"jsonschema-path\",\n]\n";
const LOCK_1: &str = "version = 1\n\n[[package]]\nname = \"pydocket\"\nversion = \"0.16.6\"\n";
const LOCK_2: &str = "version = 1\n\n[[package]]\nname = \"jsonschema-path\"\nversion = \"0.3.4\"\n\n[[package]]\nname = \"pydocket\"\nversion = \"0.17.2\"\n";

/// v1.0.0: a server, and whatever `files` add.
fn first(files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", SERVER)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo
}

/// The next release `v{version}`, with `files` written.
fn next(repo: &TestRepo, version: &str, files: &[(&str, &str)]) {
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write("version.json", format!("{{\"version\": \"{version}\"}}\n"));
    repo.commit_and_tag(version, &format!("v{version}"));
}

fn range(repo: &TestRepo, range: &str) -> Value {
    repo.verdict_json(&[range])
}

fn dependencies_item() -> Value {
    json!({
        "kind": "possible_missed_restart",
        "cause": "dependencies",
        "message": "possible missed restart: the dependencies changed; running servers keep the old versions until they restart; set force_restart",
        "evidence": ["pyproject.toml:5", "pyproject.toml:4", "uv.lock:4", "uv.lock:8"],
        "changes": [
            "pyproject.toml: jsonschema-path added (any version)",
            "pyproject.toml: pydocket specifier >=0.16.6,<0.17.0 → >=0.17.2",
            "uv.lock: jsonschema-path locked at 0.3.4",
            "uv.lock: pydocket locked version 0.16.6 → 0.17.2"
        ]
    })
}

#[test]
fn a_free_release_that_changes_the_dependencies_is_a_possible_missed_restart() {
    let repo = first(&[("pyproject.toml", PYPROJECT_1), ("uv.lock", LOCK_1)]);
    next(
        &repo,
        "1.1.0",
        &[("pyproject.toml", PYPROJECT_2), ("uv.lock", LOCK_2)],
    );
    let j = range(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["advice"], json!([dependencies_item()]));

    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(
        table.stdout.ends_with(
            "\nadvice:\n  - possible missed restart: the dependencies changed; running servers keep the old versions until they restart; set force_restart\n      pyproject.toml: jsonschema-path added (any version)\n      pyproject.toml: pydocket specifier >=0.16.6,<0.17.0 → >=0.17.2\n      uv.lock: jsonschema-path locked at 0.3.4\n      uv.lock: pydocket locked version 0.16.6 → 0.17.2\n      at pyproject.toml:5, pyproject.toml:4, uv.lock:4, uv.lock:8\n"
        ),
        "{}",
        table.stdout
    );
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "markdown"]);
    assert!(
        md.stdout.contains("#### Advice\n\n- possible missed restart: the dependencies changed; running servers keep the old versions until they restart; set force&#95;restart\n  - pyproject.toml: jsonschema-path added (any version)\n"),
        "{}",
        md.stdout
    );
    assert!(md.stdout.contains("  - at <code>pyproject.toml:5</code>, <code>pyproject.toml:4</code>, <code>uv.lock:4</code>, <code>uv.lock:8</code>\n\n<sub>"), "{}", md.stdout);

    let h = repo.history_json(&["--no-cache"]);
    assert_eq!(h["summary"]["possible_missed_restarts"], 1);
    assert_eq!(h["releases"][0]["advice"], json!([dependencies_item()]));
    let table = repo.fpcheck(&["history", "--no-cache"]);
    assert!(
        table
            .stdout
            .contains(" possible missed restarts: 1 (free releases"),
        "{}",
        table.stdout
    );
}

#[test]
fn requirements_in_the_root_count_and_another_projects_manifests_do_not() {
    let repo = first(&[
        ("src/requirements.txt", "httpx==0.27.0\n"),
        ("examples/demo/pyproject.toml", PYPROJECT_1),
        ("examples/demo/requirements.txt", "rich\n"),
        ("other/uv.lock", LOCK_1),
    ]);
    // Another project's manifests only: nothing to advise.
    next(
        &repo,
        "1.1.0",
        &[
            ("examples/demo/pyproject.toml", PYPROJECT_2),
            ("examples/demo/requirements.txt", "rich>=13\n"),
            ("other/uv.lock", LOCK_2),
        ],
    );
    let j = range(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["restart_required"], false);
    assert!(j.get("advice").is_none(), "{j}");
    // The runtime's own requirements.
    next(
        &repo,
        "1.2.0",
        &[("src/requirements.txt", "# pinned\nhttpx==0.28.1\n")],
    );
    let j = range(&repo, "v1.1.0..v1.2.0");
    assert_eq!(
        j["advice"][0]["changes"],
        json!(["src/requirements.txt: httpx specifier ==0.27.0 → ==0.28.1"])
    );
    assert_eq!(
        j["advice"][0]["evidence"],
        json!(["src/requirements.txt:2"])
    );
    // A release that restarts anyway advises nothing about them.
    next(
        &repo,
        "1.3.0",
        &[
            ("src/requirements.txt", "httpx==0.28.2\n"),
            ("src/server.py", "import sys\n"),
        ],
    );
    let j = range(&repo, "v1.2.0..v1.3.0");
    assert_eq!(j["restart_required"], true);
    assert!(j.get("advice").is_none(), "{j}");
}

#[test]
fn a_free_release_that_changes_a_data_file_a_module_reads_is_a_possible_missed_restart() {
    let catalog = "from pathlib import Path\n\nLOCK = Path(__file__).with_name(\"lock.json\")\n";
    let repo = first(&[
        ("src/managed_mcp/catalog.py", catalog),
        ("src/managed_mcp/lock.json", "{}\n"),
        ("src/notes.txt", "a\n"),
    ]);
    next(
        &repo,
        "1.1.0",
        &[
            ("src/managed_mcp/lock.json", "{\"a\": 1}\n"),
            ("src/notes.txt", "b\n"),
        ],
    );
    let j = range(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["restart_required"], false);
    let item = json!({
        "kind": "possible_missed_restart",
        "cause": "data_file",
        "message": "possible missed restart: src/managed_mcp/lock.json changed and src/managed_mcp/catalog.py:3 reads it; running servers keep what they read until they restart; set force_restart",
        "evidence": ["src/managed_mcp/catalog.py:3"],
        "changes": ["src/managed_mcp/lock.json"]
    });
    assert_eq!(j["advice"], json!([item]));
    let h = repo.history_json(&["--no-cache"]);
    assert_eq!(h["releases"][0]["advice"], json!([item]));
    assert_eq!(h["summary"]["possible_missed_restarts"], 1);
    // A data file no module names: nothing.
    next(&repo, "1.2.0", &[("src/notes.txt", "c\n")]);
    let j = range(&repo, "v1.1.0..v1.2.0");
    assert!(j.get("advice").is_none(), "{j}");
    // --no-classify turns the advice off.
    next(
        &repo,
        "1.3.0",
        &[("src/managed_mcp/lock.json", "{\"a\": 2}\n")],
    );
    let j = repo.verdict_json(&["v1.2.0..v1.3.0", "--no-classify"]);
    assert!(j.get("advice").is_none(), "{j}");
    let h = repo.history_json(&["--no-cache", "--no-classify"]);
    assert_eq!(h["summary"]["possible_missed_restarts"], Value::Null);
}

#[test]
fn a_restart_caused_only_by_the_version_string_is_avoidable_for_version() {
    let init = |v: &str| {
        format!("\"\"\"The package.\"\"\"\n__version__ = \"{v}\"\n\n\ndef run():\n    return 1\n")
    };
    let repo = first(&[("src/pkg/__init__.py", &init("1.0.0"))]);
    next(&repo, "1.1.0", &[("src/pkg/__init__.py", &init("1.1.0"))]);
    let j = range(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(j["avoidable"], false);
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "version");
    assert_eq!(
        j["advice"],
        json!([{
            "kind": "avoidable",
            "cause": "version",
            "message": "this restart is avoidable: only the version string changed; keep the version out of the code (a version file, importlib.metadata)",
            "evidence": ["src/pkg/__init__.py:2"]
        }])
    );
    // The version and a real change: code, no advice.
    let changed = init("1.2.0").replace("return 1", "return 2");
    next(&repo, "1.2.0", &[("src/pkg/__init__.py", &changed)]);
    let j = range(&repo, "v1.1.0..v1.2.0");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert!(j.get("advice").is_none(), "{j}");

    let h = repo.history_json(&["--no-cache"]);
    assert_eq!(h["summary"]["avoidable_version_restarts"], 1);
    assert_eq!(h["summary"]["avoidable_restarts"], 0);
    assert_eq!(h["releases"][0]["avoidable"], false);
    assert_eq!(
        h["releases"][0]["advice"][0]["evidence"],
        json!(["src/pkg/__init__.py:2"])
    );
    assert!(h["releases"][1].get("advice").is_none());
    let table = repo.fpcheck(&["history", "--no-cache"]);
    assert!(
        table
            .stdout
            .contains(" avoidable: version 1 (only a version string changed"),
        "{}",
        table.stdout
    );
}

const TOOLS_1: &str = "import functools\n\n\n@mcp.tool()\ndef heartbeat(seconds: int = 5) -> str:\n    \"\"\"Beat.\"\"\"\n    return 'ok'\n\n\n@functools.cache\ndef helper():\n    \"\"\"Help.\"\"\"\n    return 1\n";

#[test]
fn a_tool_docstring_is_code_and_the_mcp_surface_is_listed() {
    let repo = first(&[("src/tools.py", TOOLS_1)]);
    // Only the tool's docstring: code, not avoidable, a changed tool.
    next(
        &repo,
        "1.1.0",
        &[(
            "src/tools.py",
            &TOOLS_1.replace("Beat.", "Beat, and report."),
        )],
    );
    let j = range(&repo, "v1.0.0..v1.1.0");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["avoidable"], false);
    assert_eq!(
        j["advice"],
        json!([{
            "kind": "mcp_surface",
            "cause": "changed",
            "message": "tool `heartbeat` changed; clients see it once they re-initialise",
            "evidence": ["src/tools.py:5"],
            "changes": ["description changed"]
        }])
    );
    // A non-tool function's docstring: docstrings, avoidable, no advice.
    let v2 = TOOLS_1.replace("Beat.", "Beat, and report.");
    next(
        &repo,
        "1.2.0",
        &[("src/tools.py", &v2.replace("Help.", "Helps."))],
    );
    let j = range(&repo, "v1.1.0..v1.2.0");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "docstrings");
    assert_eq!(j["avoidable"], true);
    assert!(j.get("advice").is_none(), "{j}");
    // A new tool in a new module, a signature changed.
    let v3 = v2
        .replace("Help.", "Helps.")
        .replace("seconds: int = 5", "seconds: int = 5, jitter: float = 0.0");
    next(
        &repo,
        "1.3.0",
        &[
            ("src/tools.py", &v3),
            (
                "src/more.py",
                "@server.resource(\"res://x\")\ndef x():\n    return 1\n",
            ),
        ],
    );
    let j = range(&repo, "v1.2.0..v1.3.0");
    let shown: Vec<(Value, Value, Value, Value)> = j["advice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["kind"].clone(),
                i["cause"].clone(),
                i["evidence"].clone(),
                i["changes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (json!("mcp_surface"), json!("changed"), json!(["src/tools.py:5"]), json!(["signature: (seconds: int = 5) -> str → (seconds: int = 5, jitter: float = 0.0) -> str"])),
            (json!("mcp_surface"), json!("added"), json!(["src/more.py:2"]), json!(["x()"])),
        ]
    );
}

#[test]
fn patch_sets_force_restart_on_advice_only_when_asked() {
    let catalog = "from pathlib import Path\n\nLOCK = Path(__file__).with_name(\"lock.json\")\n";
    let repo = first(&[("src/catalog.py", catalog), ("src/lock.json", "{}\n")]);
    next(&repo, "1.1.0", &[("src/lock.json", "{\"a\": 1}\n")]);
    let patch = |extra: &[&str]| {
        let mut args = vec!["patch", "v1.0.0..v1.1.0", "--json"];
        args.extend_from_slice(extra);
        let run = repo.fpcheck(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    };
    let plain = patch(&[]);
    assert_eq!(plain["patch"].get("force_restart"), None, "{plain}");
    let advised = patch(&["--force-on-advice"]);
    assert_eq!(advised["patch"]["force_restart"], true, "{advised}");
    assert_eq!(
        advised["explanations"][0],
        json!({
            "code": "force_restart_on_advice",
            "message": "version.json: force_restart set to true, as --force-on-advice asks: possible missed restart: src/lock.json changed and src/catalog.py:3 reads it; running servers keep what they read until they restart; set force_restart (at src/catalog.py:3)"
        })
    );
    // Nothing advised: the flag changes nothing.
    next(&repo, "1.2.0", &[("README.md", "# r\n")]);
    let run = repo.fpcheck(&["patch", "v1.1.0..v1.2.0", "--json", "--force-on-advice"]);
    assert_eq!(
        run.json()["patch"].get("force_restart"),
        None,
        "{}",
        run.stdout
    );
}

#[test]
fn hostile_modules_and_manifests_give_no_advice_and_no_crash() {
    // A module nested past Python's limits that names the data file, a
    // manifest that is not TOML, a requirements file that is not UTF-8.
    let deep = format!(
        "open(\"d.json\")\nx = {}1{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let repo = first(&[
        ("src/deep.py", deep.as_str()),
        ("src/d.json", "{}\n"),
        ("pyproject.toml", "[project\n"),
    ]);
    repo.write("src/requirements.txt", b"\xff\xfe\n".as_slice());
    repo.commit_and_tag("1.0.1", "v1.0.1");
    next(
        &repo,
        "1.1.0",
        &[
            ("src/d.json", "{\"a\": 1}\n"),
            ("pyproject.toml", "[project\nx\n"),
        ],
    );
    repo.write("src/requirements.txt", b"\xff\xfd\n".as_slice());
    repo.commit_and_tag("1.1.1", "v1.1.1");
    let j = range(&repo, "v1.0.1..v1.1.1");
    assert_eq!(j["restart_required"], false);
    assert!(j.get("advice").is_none(), "{j}");
    let h = repo.history_json(&["--no-cache"]);
    assert_eq!(h["summary"]["possible_missed_restarts"], 0);
}

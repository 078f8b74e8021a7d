//! `fpcheck init`: proposals from entry points, never replacing a file,
//! hostile trees bounded and never followed.

use std::path::Path;

use fpcheck::config::ConfigFile;

use crate::support::TestRepo;

/// Each `[runtimes.NAME]` as (name, root), in file order.
fn runtimes(text: &str) -> Vec<(String, String)> {
    let file = ConfigFile::parse(text, Path::new("fpcheck.toml")).expect("the proposal parses");
    if let Some(one) = file.runtime {
        return vec![(String::new(), one.root.unwrap_or_default())];
    }
    file.runtimes
        .into_iter()
        .map(|(n, t)| (n, t.root.unwrap_or_default()))
        .collect()
}

fn pair(name: &str, root: &str) -> (String, String) {
    (name.to_string(), root.to_string())
}

fn monorepo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("server/src/server.py", "serve()\n")
        .write("server/src/api/__init__.py", "")
        .write("worker/worker/__main__.py", "work()\n")
        .write("worker/worker/__init__.py", "")
        .write(
            "tools/pyproject.toml",
            "[project]\nname = \"tools\"\n[project.scripts]\nfpcli = \"toolpkg.main:run\"\nmissing = \"nopkg:run\"\n",
        )
        .write("tools/src/toolpkg/main.py", "def run(): pass\n")
        // Excluded and hidden folders are never proposed.
        .write("server/src/tests/server.py", "")
        .write(".venv/lib/server.py", "")
        .write("node_modules/x/__main__.py", "");
    repo.commit("mono");
    repo
}

#[test]
fn proposes_one_runtime_per_entry_point_and_writes_it_once() {
    let repo = monorepo();
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        runtimes(&run.stdout),
        [
            pair("server", "server/src"),
            pair("toolpkg", "tools/src/toolpkg"),
            pair("worker", "worker/worker"),
        ]
    );
    assert!(
        run.stdout.contains(
            "\n[runtimes.server]\n# found: server/src/server.py\nroot = \"server/src\"\n"
        ),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("# found: tools/pyproject.toml [project.scripts] fpcli\n"));
    assert!(
        !repo.join("fpcheck.toml").exists(),
        "--stdout writes nothing"
    );

    let run = repo.fpcheck(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "fpcheck: wrote {} with 3 runtimes",
            repo.join("fpcheck.toml").display()
        )
    );
    let written = std::fs::read_to_string(repo.join("fpcheck.toml")).unwrap();
    assert_eq!(written, repo.fpcheck(&["init", "--stdout"]).stdout);
    // No temporary file is left next to it.
    let names: Vec<String> = std::fs::read_dir(repo.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("fpcheck"))
        .collect();
    assert_eq!(names, ["fpcheck.toml"]);

    // Never replaced.
    std::fs::write(repo.join("fpcheck.toml"), "# mine\n").unwrap();
    let run = repo.fpcheck(&["init"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        format!("fpcheck: error: {} already exists: fpcheck init never replaces a file; edit it, or move it away and run init again (--stdout prints the proposal)", repo.join("fpcheck.toml").display())
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("fpcheck.toml")).unwrap(),
        "# mine\n"
    );

    // The written file drives a range over every runtime.
    std::fs::remove_file(repo.join("fpcheck.toml")).unwrap();
    assert_eq!(repo.fpcheck(&["init"]).code, 0);
    repo.commit("config");
    repo.tag("v1");
    repo.write("worker/worker/__main__.py", "work(2)\n");
    repo.commit("fix");
    let j = repo.fpcheck(&["v1..HEAD", "--format", "json"]).json();
    assert_eq!(j["summary"], "worker restarts; server and toolpkg do not");
}

#[test]
fn a_link_at_the_name_is_never_followed_or_replaced() {
    let repo = monorepo();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim");
    std::os::unix::fs::symlink(&target, repo.join("fpcheck.toml")).unwrap();
    let run = repo.fpcheck(&["init"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("already exists"), "{}", run.stderr);
    assert!(!target.exists(), "the link's target was created");
    assert!(std::fs::symlink_metadata(repo.join("fpcheck.toml"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn hostile_trees_links_fifos_odd_names_and_limits() {
    let repo = TestRepo::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("server.py"), "").unwrap();
    std::fs::create_dir_all(repo.join("app")).unwrap();
    // A link to a directory holding an entry point is not followed, nor a
    // link named like an entry point.
    std::os::unix::fs::symlink(outside.path(), repo.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("server.py"), repo.join("app/server.py"))
        .unwrap();
    // A FIFO named pyproject.toml would block a plain read.
    std::fs::create_dir_all(repo.join("fifo")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(repo.join("fifo/pyproject.toml"))
        .status()
        .unwrap();
    assert!(status.success());
    repo.write("bad/pyproject.toml", "[project\n");
    // A name TOML must escape.
    repo.write("we\"ird\\dir\tx/server.py", "");
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(runtimes(&run.stdout), [pair("", "we\"ird\\dir\tx")]);
    assert!(run.stdout.contains("\n[runtime]\n"));
    assert!(
        run.stderr
            .contains("fpcheck: skipped bad/pyproject.toml: not valid TOML"),
        "{}",
        run.stderr
    );
    // The FIFO is not a file: never opened (the run did not block).
    assert!(!run.stderr.contains("fifo"), "{}", run.stderr);

    // Depth and entry limits stop the scan and say so.
    repo.write("a/b/c/d/server.py", "");
    let run = repo.fpcheck(&["init", "--stdout", "--max-depth", "2"]);
    assert_eq!(run.code, 0);
    assert_eq!(runtimes(&run.stdout), [pair("", "we\"ird\\dir\tx")]);
    assert!(run
        .stdout
        .contains("# The scan stopped at its depth or entry limit"));
    assert!(
        run.stderr
            .contains("the scan stopped at --max-depth 2 / --max-entries 50000"),
        "{}",
        run.stderr
    );
    let run = repo.fpcheck(&["init", "--stdout", "--max-entries", "3"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("# The scan stopped"));
}

#[test]
fn nothing_found_proposes_the_default_root() {
    let repo = TestRepo::new();
    repo.write("README.md", "hi\n");
    repo.commit("docs");
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0);
    assert_eq!(runtimes(&run.stdout), [pair("", "src")]);
    assert!(run
        .stdout
        .contains("# No entry point (server.py, __main__.py, [project.scripts]) was found:"));
}

/// An SDK's layout: the top-level pyproject.toml names the package under
/// src/, and examples, docs and benchmarks hold servers of their own.
fn sdk() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"my-sdk\"\n[project.scripts]\nmy-sdk = \"my_sdk.cli:main\"\n",
    )
    .write("src/my_sdk/__init__.py", "")
    .write("src/my_sdk/cli.py", "def main(): pass\n")
    .write("src/my_sdk/server/__main__.py", "import mcp\n")
    .write("docs/snippets/server.py", "print()\n")
    .write("benchmarks/load/server.py", "print()\n")
    .write("vendor/thing/__main__.py", "print()\n");
    for (n, name) in ["weather", "notes", "echo"].iter().enumerate() {
        repo.write(
            &format!("examples/servers/{name}/pyproject.toml"),
            format!("[project]\nname = \"{name}\"\n[project.scripts]\n{name} = \"{name}.server:main\"\n"),
        )
        .write(&format!("examples/servers/{name}/{name}/server.py"), if n == 0 {
            "from mcp.server import FastMCP\n"
        } else {
            "def main(): pass\n"
        });
    }
    repo.commit("sdk");
    repo
}

#[test]
fn an_sdk_repository_gets_its_own_package_as_the_one_runtime() {
    let repo = sdk();
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Exactly one active runtime: the package pyproject.toml names.
    assert_eq!(runtimes(&run.stdout), [pair("", "src/my_sdk")]);
    let out = &run.stdout;
    assert!(
        out.contains(
            "\n[runtime]\n# found: pyproject.toml [project] name = \"my-sdk\" (the project's own package)\n\
             # found: pyproject.toml [project.scripts] my-sdk\nroot = \"src/my_sdk\"\n"
        ),
        "{out}"
    );
    // Every other candidate is listed commented out, with why, strongest
    // evidence first.
    let left: Vec<(&str, &str)> = out
        .lines()
        .zip(out.lines().skip(1))
        .filter_map(|(a, b)| {
            Some((
                a.strip_prefix("# left out: ")?,
                b.strip_prefix("# [runtimes.")?,
            ))
        })
        .collect();
    let example = "an example, not the project's runtime";
    assert_eq!(
        left,
        [
            (
                "not the project's own package (named by pyproject.toml)",
                "server]"
            ),
            (
                "under examples/: an example, not the project's runtime",
                "weather]"
            ),
            (
                "under examples/: an example, not the project's runtime",
                "echo]"
            ),
            (
                "under examples/: an example, not the project's runtime",
                "notes]"
            ),
            (
                "under benchmarks/: a benchmark, not the project's runtime",
                "load]"
            ),
            (
                "under docs/: documentation, not the project's runtime",
                "snippets]"
            ),
            (
                "under vendor/: vendored code, not the project's runtime",
                "thing]"
            ),
        ],
        "{out}"
    );
    assert!(out.contains(example));
    assert!(out.contains(
        "# found: examples/servers/weather/weather/server.py imports mcp (a server framework)\n"
    ));
    assert!(out.contains("# root = \"examples/servers/weather/weather\"\n"));

    let run = repo.fpcheck(&["init"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.trim_end().ends_with("with 1 runtime"),
        "{}",
        run.stderr
    );
}

#[test]
fn without_a_project_package_examples_are_still_left_out() {
    let repo = TestRepo::new();
    repo.write("server/src/server.py", "import fastapi\n")
        .write("worker/worker/__main__.py", "work()\n")
        .write("examples/demo/server.py", "");
    repo.commit("mono");
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        runtimes(&run.stdout),
        [
            pair("server", "server/src"),
            pair("worker", "worker/worker")
        ]
    );
    // The framework import ranks the server first.
    let server = run.stdout.find("[runtimes.server]").unwrap();
    assert!(server < run.stdout.find("[runtimes.worker]").unwrap());
    assert!(run.stdout.contains(
        "\n# left out: under examples/: an example, not the project's runtime\n# [runtimes.demo]\n"
    ));
}

/// Each runtime's `tag_pattern`, as the proposal declares it.
fn tag_patterns(text: &str) -> Vec<(String, Option<String>)> {
    let file = ConfigFile::parse(text, Path::new("fpcheck.toml")).expect("the proposal parses");
    if let Some(one) = file.runtime {
        return vec![(String::new(), one.tag_pattern)];
    }
    file.runtimes
        .into_iter()
        .map(|(n, t)| (n, t.tag_pattern))
        .collect()
}

#[test]
fn prefixed_release_tags_give_the_runtime_named_after_them_its_tag_pattern() {
    let repo = monorepo();
    repo.tag("server-v1.2.0")
        .tag("server-v1.3.0")
        .tag("worker-v1.0.0")
        .tag("mcp@1.2.0")
        .tag("docs-build");
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        tag_patterns(&run.stdout),
        [
            ("server".to_string(), Some("server-v*".to_string())),
            ("toolpkg".to_string(), None),
            ("worker".to_string(), Some("worker-v*".to_string())),
        ]
    );
    // The evidence, N of M tags, above each key.
    assert!(run.stdout.contains(
        "# found: 2 of 5 tags match server-v*: the prefix is stripped before the version is read\ntag_pattern = \"server-v*\"\n"
    ), "{}", run.stdout);
    assert!(run.stdout.contains(
        "# found: 1 of 5 tags match worker-v*: the prefix is stripped before the version is read\ntag_pattern = \"worker-v*\"\n"
    ));
    // A prefix no runtime is named after is listed, commented, only.
    assert!(
        run.stdout.contains("#   mcp@*  (1 tag)\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("#   server-v*"));
    // The proposal still declares the same runtimes.
    assert_eq!(runtimes(&run.stdout).len(), 3);
}

#[test]
fn plain_version_tags_propose_no_tag_pattern() {
    let plain = monorepo();
    plain.tag("v1.0.0").tag("v1.1.0").tag("2.0.0rc1");
    let run = plain.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(tag_patterns(&run.stdout).iter().all(|(_, p)| p.is_none()));
    assert!(!run.stdout.contains("tag_pattern"), "{}", run.stdout);
    assert!(!run.stdout.contains("with a prefix"));
}

#[test]
fn a_single_runtime_takes_the_prefix_most_tags_have() {
    let repo = TestRepo::new();
    repo.write("src/server.py", "serve()\n");
    repo.commit("one");
    repo.tag("mcp@1.0.0").tag("mcp@1.1.0").tag("v0.9.0");
    let run = repo.fpcheck(&["init", "--stdout"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        tag_patterns(&run.stdout),
        [(String::new(), Some("mcp@*".to_string()))]
    );
    assert!(run.stdout.contains("# found: 2 of 3 tags match mcp@*:"));
    // Half of the tags is not most of them.
    let half = TestRepo::new();
    half.write("src/server.py", "serve()\n");
    half.commit("one");
    half.tag("mcp@1.0.0").tag("v0.9.0");
    let run = half.fpcheck(&["init", "--stdout"]);
    assert_eq!(tag_patterns(&run.stdout), [(String::new(), None)]);
    assert!(run.stdout.contains("#   mcp@*  (1 tag)\n"));
}

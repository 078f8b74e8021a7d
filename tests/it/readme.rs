//! The README cannot drift from the tool: its "first five minutes"
//! walk-through is run here, command by command, and every output is
//! compared with the text the README shows. The contract's references and
//! the set-up it describes are checked too.

use std::path::{Path, PathBuf};
use std::process::Command;

const README: &str = include_str!("../../README.md");
const SPEC: &str = include_str!("../../docs/spec.md");

/// Where the README's walk-through keeps the demo repository; the test
/// uses a temporary folder and writes this path in its place.
const DEMO_DIR: &str = "/tmp/fpdemo";

/// The section of the README from `heading` to the next `## ` heading.
fn section(heading: &str) -> &'static str {
    let start = README
        .find(heading)
        .unwrap_or_else(|| panic!("the README has no `{heading}`"));
    let rest = &README[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

/// The fenced blocks of `lang` in `text`.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&fence) {
        let body = &rest[i + fence.len()..];
        let end = body.find("```\n").expect("a closed fence");
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

/// One `$ command` of a console block and the output shown under it.
struct Step {
    command: String,
    expected: String,
}

fn steps(block: &str) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => out.push(Step {
                command: cmd.to_string(),
                expected: String::new(),
            }),
            None => {
                let step = out.last_mut().expect("output before any command");
                step.expected.push_str(line);
                step.expected.push('\n');
            }
        }
    }
    out
}

/// Runs one README command: `cd DIR`, `rm -r PATH`, `echo 'TEXT' >> FILE`
/// or `fpcheck ARGS...`, without a shell (the README's commands have no
/// other quoting to interpret).
fn run(step: &Step, cwd: &mut PathBuf, demo: &Path) -> String {
    let words: Vec<String> = step
        .command
        .split_whitespace()
        .map(|w| w.replace(DEMO_DIR, demo.to_str().unwrap()))
        .collect();
    match words[0].as_str() {
        "cd" => {
            *cwd = PathBuf::from(&words[1]);
            String::new()
        }
        "rm" => {
            assert_eq!(words.len(), 3, "rm -r PATH");
            assert_eq!(words[1], "-r");
            std::fs::remove_dir_all(cwd.join(&words[2])).unwrap();
            String::new()
        }
        "echo" => {
            let at = words
                .iter()
                .position(|w| w == ">>")
                .expect("echo 'TEXT' >> FILE");
            let text = words[1..at].join(" ");
            let text = text.trim_matches('\'');
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(cwd.join(&words[at + 1]))
                .unwrap();
            std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes()).unwrap();
            String::new()
        }
        "fpcheck" => {
            let out = Command::new(env!("CARGO_BIN_EXE_fpcheck"))
                .current_dir(&*cwd)
                .args(&words[1..])
                .env("NO_COLOR", "1")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env_remove("COLUMNS")
                .output()
                .expect("fpcheck runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "`{}` failed ({:?}): {stderr}",
                step.command,
                out.status.code()
            );
            // What a terminal shows: the report, then the explanations
            // that go to stderr.
            format!("{stdout}{stderr}").replace(demo.to_str().unwrap(), DEMO_DIR)
        }
        other => panic!("the walk-through runs only cd, rm, echo and fpcheck, not `{other}`"),
    }
}

#[test]
fn the_first_five_minutes_run_as_written() {
    let text = section("## The first five minutes");
    let blocks = blocks(text, "console");
    assert!(blocks.len() >= 3, "the walk-through lost its commands");
    let base = tempfile::tempdir().unwrap();
    let demo = base.path().join("fpdemo");
    let mut cwd = base.path().to_path_buf();
    // FPCHECK_BLESS=1 rewrites the README's outputs with the actual ones
    // (then read the diff before committing it).
    let bless = std::env::var_os("FPCHECK_BLESS").is_some();
    let mut blessed = README.to_string();
    let mut commands = Vec::new();
    for block in &blocks {
        let mut actual_block = String::new();
        for step in steps(block) {
            let actual = run(&step, &mut cwd, &demo);
            actual_block.push_str(&format!("$ {}\n{actual}", step.command));
            if !bless {
                assert_eq!(
                    actual, step.expected,
                    "the README's output of `{}` is not what fpcheck prints \
                     (FPCHECK_BLESS=1 cargo test --test it readme:: updates it); the actual output:\n{actual}",
                    step.command
                );
            }
            commands.push(step.command);
        }
        blessed = blessed.replacen(block.as_str(), &actual_block, 1);
    }
    if bless {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        std::fs::write(path, blessed).unwrap();
    }
    // The walk-through runs every command a newcomer needs first.
    for needed in [
        "fpcheck demo --keep",
        "cd /tmp/fpdemo",
        "fpcheck v1.",
        "fpcheck history",
        "fpcheck fingerprint",
        "fpcheck patch",
        "--worktree",
        "fpcheck init",
    ] {
        assert!(
            commands.iter().any(|c| c.contains(needed)),
            "no `{needed}` in the walk-through: {commands:?}"
        );
    }
}

#[test]
fn the_quick_start_shares_one_build_and_ci_runs_it() {
    let quick = section("## Quick start");
    let sh = blocks(quick, "sh").join("");
    let commands: Vec<&str> = sh
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    // Both on the dev profile: the second reuses the first's dependencies.
    assert_eq!(
        commands,
        ["cargo run --locked -- demo", "cargo test --locked"],
        "{quick}"
    );
    assert!(!sh.contains("--release"), "{sh}");
    for tool in ["`git`", "`python3`"] {
        assert!(quick.contains(tool), "the quick start does not name {tool}");
    }
    let ci = include_str!("../../.ci/run");
    let ci_commands: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("cargo run") || l.starts_with("cargo test"))
        .collect();
    assert_eq!(
        ci_commands,
        ["cargo run --locked -- demo", "cargo test --locked"],
        "CI runs what the README says"
    );
}

/// The headings `## N. ...` of docs/spec.md.
fn spec_sections() -> Vec<u32> {
    SPEC.lines()
        .filter_map(|l| l.strip_prefix("## "))
        .filter_map(|h| h.split('.').next()?.parse().ok())
        .collect()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("rs" | "md" | "tera" | "yml" | "py")
        ) {
            out.push(path);
        }
    }
}

#[test]
fn the_contract_is_in_the_repository_and_every_citation_resolves() {
    assert_eq!(spec_sections(), (1..=8).collect::<Vec<_>>());
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![top.join("README.md"), top.join("action.yml")];
    for dir in ["src", "docs", "templates", "tests"] {
        files_under(&top.join(dir), &mut files);
    }
    let this_file = top.join("tests/it/readme.rs");
    let mut citations = 0;
    for file in files.iter().filter(|f| **f != this_file) {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            !text.contains("FINGERPRINT.md") && !text.contains("shared/spec"),
            "{} cites the contract outside the repository",
            file.display()
        );
        // "docs/spec.md section 6", "docs/spec.md sections 5-7",
        // "docs/spec.md\n   section 5": every number must be a section.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for (i, _) in flat.match_indices("docs/spec.md section") {
            let tail = &flat[i + "docs/spec.md section".len()..];
            let tail = tail.trim_start_matches('s').trim_start();
            let numbers: String = tail
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-' || *c == ',')
                .collect();
            for n in numbers.split(['-', ',']).filter(|n| !n.is_empty()) {
                let n: u32 = n.parse().unwrap();
                assert!(
                    (1..=8).contains(&n),
                    "{} cites docs/spec.md section {n}",
                    file.display()
                );
                citations += 1;
            }
        }
    }
    assert!(citations > 10, "only {citations} citations found");
    // The README links the contract.
    assert!(README.contains("[docs/spec.md](docs/spec.md)"));
}

#[test]
fn the_spec_example_and_vectors_are_what_fpcheck_computes() {
    // Section 2's worked example, computed from a directory.
    let example = SPEC
        .split('`')
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .expect("section 2 gives an example fingerprint");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "x=1\n").unwrap();
    let source = fpcheck::DirSource::new(dir.path());
    let fp = fpcheck::compute(&source, &fpcheck::Rules::default()).unwrap();
    assert_eq!(fp.as_gate_str(), example);
    // The vectors in the repository hold the shared ones unchanged, when
    // the shared copy sits beside the checkout (the project's machines and
    // CI); fpcheck's own sections (the checkout cases) come beside them.
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = top.join("../shared/spec/vectors.json");
    if let Ok(shared) = std::fs::read(&shared) {
        let shared: serde_json::Value = serde_json::from_slice(&shared).unwrap();
        let ours: serde_json::Value =
            serde_json::from_slice(&std::fs::read(top.join("tests/data/vectors.json")).unwrap())
                .unwrap();
        for (key, value) in shared.as_object().unwrap() {
            assert_eq!(
                ours.get(key),
                Some(value),
                "tests/data/vectors.json differs from the shared vectors in `{key}`"
            );
        }
    }
}

/// The "three steps on yours" run as written on a repository shaped like
/// the projects a new user brings: no version file (the versions are the
/// tags'), a package importing its sibling outside its own directory, no
/// runtime under the default `src`, and the config committed only at HEAD
/// (after `init`, as the README says: review it, then commit it). The
/// releases carry the README's own tag names, so that its commands run
/// unchanged.
#[test]
fn the_three_steps_on_yours_work_on_a_repository_shaped_like_theirs() {
    let text = section("### On your own repository");
    let commands: Vec<String> = blocks(text, "console")
        .iter()
        .flat_map(|b| steps(b))
        .map(|s| s.command)
        .collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    assert_eq!(commands[0], "fpcheck init");
    assert!(
        commands[1].starts_with("fpcheck v1.5.0..v1.6.0"),
        "{commands:?}"
    );
    assert!(commands[2].starts_with("fpcheck history"), "{commands:?}");

    let repo = crate::support::TestRepo::new();
    repo.write(
        "server/app/__main__.py",
        "from applib import parse\nparse()\n",
    )
    .write("server/app/__init__.py", "")
    .write("server/applib/__init__.py", "def parse(): return 1\n")
    .write("README.md", "# app\n")
    .commit_and_tag("first", "v1.5.0");
    repo.write("README.md", "# app, documented\n")
        .commit_and_tag("docs only", "v1.6.0");
    repo.write("server/applib/__init__.py", "def parse(): return 2\n")
        .commit_and_tag("a fix in the sibling package", "v1.7.0");
    repo.write(
        "server/app/__main__.py",
        "from applib import parse\nparse(1)\n",
    )
    .commit_and_tag("a fix in the entry point", "v1.8.0");
    let fpcheck = |command: &str| {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        let run = repo.fpcheck(&words);
        assert_eq!(run.code, 0, "`{command}`: {}", run.stderr);
        run
    };

    fpcheck(&commands[0]);
    let config = std::fs::read_to_string(repo.join("fpcheck.toml")).unwrap();
    assert!(config.contains("\nroot = \"server\"\n"), "{config}");
    assert!(
        config.contains("# server/app imports applib (server/applib)\n"),
        "{config}"
    );
    repo.commit("fpcheck.toml, reviewed");

    let range = fpcheck(&commands[1]);
    assert!(
        range.stdout.starts_with("NO RESTART (no_runtime_change)"),
        "{}",
        range.stdout
    );
    let history = fpcheck(&commands[2]);
    assert!(
        !history.stderr.contains("fingerprints_mostly_unavailable"),
        "{}",
        history.stderr
    );
    assert!(
        history.stdout.contains(
            "3 releases, 2 updates: 2 forced a restart (0 only by force_restart), 0 were free"
        ),
        "{}",
        history.stdout
    );
    let json = repo.history_json(&["v1.5.0..v1.8.0"]);
    let reasons: Vec<&str> = json["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["no_runtime_change", "code_changed", "code_changed"]
    );
    assert_eq!(json["summary"]["restarts_saved"], 1);
}

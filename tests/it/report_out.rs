//! What a script needs of the range command: `--report
//! FORMAT[:MAX_BYTES]=FILE`, several reports from one run, each within its
//! size limit by leaving out whole rows (and saying how many); and
//! `--from-name`/`--to-name`, names for ends given by commit id.

use crate::support::TestRepo;

/// v1 with one module, then 30 new modules with long names.
fn thirty_new_modules() -> (TestRepo, String, String) {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    let from = repo.commit("one");
    for n in 0..30 {
        repo.write(&format!("src/{}_{n:02}.py", "m".repeat(60)), "X = 1\n");
    }
    let to = repo.commit("thirty");
    (repo, from, to)
}

fn rows(markdown: &str) -> Vec<&str> {
    markdown
        .lines()
        .filter(|l| l.starts_with("| added |") || l.starts_with("| added (code) |"))
        .collect()
}

#[test]
fn one_run_writes_every_report_and_each_fits_its_limit_by_whole_rows() {
    let (repo, from, to) = thirty_new_modules();
    let range = format!("{from}..{to}");
    let dir = tempfile::tempdir().unwrap();
    let (json, full, small) = (
        dir.path().join("r.json"),
        dir.path().join("full.md"),
        dir.path().join("small.md"),
    );
    let limit = 2500;
    let run = repo.fpcheck(&[
        "--format=json",
        &format!("--output={}", json.display()),
        &format!("--report=markdown={}", full.display()),
        &format!("--report=markdown:{limit}={}", small.display()),
        "--",
        &range,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let alone = repo.fpcheck(&["--format=json", "--", &range]);
    assert_eq!(std::fs::read_to_string(&json).unwrap(), alone.stdout);
    let full = std::fs::read_to_string(&full).unwrap();
    assert_eq!(rows(&full).len(), 30, "{full}");
    assert!(!full.contains("more not shown"), "{full}");

    let small = std::fs::read_to_string(&small).unwrap();
    assert!(small.len() <= limit, "{} bytes", small.len());
    let shown = rows(&small).len();
    assert!(shown > 0 && shown < 30, "{shown} rows: {small}");
    assert!(
        small.contains(&format!("| … | {} more not shown |", 30 - shown)),
        "{small}"
    );
    // Whole rows only: every table line is closed, every entity complete.
    for line in small.lines().filter(|l| l.starts_with('|')) {
        assert!(line.ends_with('|'), "a cut row: {line}");
    }
    assert!(
        small.ends_with("</sub>\n") || small.ends_with("</sub>"),
        "{small}"
    );
    // The longest lists that fit: one more row would not.
    let more = repo.fpcheck(&[
        "--format=markdown",
        &format!("--max-files={}", shown + 1),
        "--",
        &range,
    ]);
    assert!(
        more.stdout.len() > limit,
        "{} rows would fit too",
        shown + 1
    );
}

#[test]
fn a_report_that_cannot_fit_is_exit_4_a_bad_spec_exit_2_and_only_it_is_not_written() {
    let (repo, from, to) = thirty_new_modules();
    let range = format!("{from}..{to}");
    let dir = tempfile::tempdir().unwrap();
    let (main, tiny) = (dir.path().join("main.json"), dir.path().join("tiny.md"));
    let run = repo.fpcheck(&[
        "--format=json",
        &format!("--output={}", main.display()),
        &format!("--report=markdown:100={}", tiny.display()),
        "--",
        &range,
    ]);
    // Not a usage error: a workflow that reads "usage" as "fix your
    // inputs" must not mistake it for a verdict.
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("even with no file listed") && run.stderr.contains("100 bytes"),
        "{}",
        run.stderr
    );
    // Each output on its own: the one that cannot fit is not written, the
    // main output is.
    assert!(
        main.exists() && !tiny.exists(),
        "only the main output written"
    );

    for (spec, says) in [
        ("pdf=x", "unknown format `pdf`"),
        ("markdown:lots=x", "`lots` is not a size"),
        ("markdown", "FORMAT[:MAX_BYTES]=FILE"),
        ("json=", "names no file"),
    ] {
        let run = repo.fpcheck(&[&format!("--report={spec}"), "--", &range]);
        assert_eq!(run.code, 2, "{spec}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{spec}: {}", run.stderr);
    }
}

#[test]
fn names_label_ends_given_by_commit_id_and_nothing_else() {
    let (repo, from, to) = thirty_new_modules();
    let range = format!("{from}..{to}");
    let run = repo.fpcheck(&[
        "--format=json",
        "--from-name=--root=nowhere",
        "--to-name=HEAD",
        "--",
        &range,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["from"]["ref"], "--root=nowhere");
    assert_eq!(json["from"]["commit"], from.as_str());
    assert_eq!(json["to"]["ref"], "HEAD");
    assert_eq!(json["to"]["commit"], to.as_str());
    assert_eq!(json["settings"]["root"], "src", "a name is never an option");
    let summary = json["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("Updating from --root=nowhere to HEAD forces"),
        "{summary}"
    );
    assert!(
        !summary.contains(&from) && !summary.contains(&to),
        "{summary}"
    );
    // The Markdown escapes the name like any ref.
    let md = repo.fpcheck(&["--format=markdown", "--from-name=<b>x</b>", "--", &range]);
    assert!(md.stdout.contains("&lt;b&gt;x&lt;/b&gt;"), "{}", md.stdout);

    // Only for an end given as its full commit id.
    let short = format!("{}..{to}", &from[..12]);
    let run = repo.fpcheck(&["--from-name=v1", "--", &short]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("needs that end given as its full commit id"),
        "{}",
        run.stderr
    );
}

/// v1.0.0 (annotated), a pre-release v1.1.0-rc1, v1.1.0, then one more
/// commit; the commit ids in order.
fn tagged_releases() -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    let mut ids = Vec::new();
    for (n, tag) in ["v1.0.0", "v1.1.0-rc1", "v1.1.0", ""].iter().enumerate() {
        repo.write("src/app.py", format!("A = {n}\n"));
        ids.push(repo.commit(&format!("commit {n}")));
        match *tag {
            "" => {}
            "v1.0.0" => {
                repo.tag_annotated(tag);
            }
            _ => {
                repo.tag(tag);
            }
        }
    }
    (repo, ids)
}

#[test]
fn resolve_only_names_the_ends_by_the_tag_rule_and_reads_no_tree() {
    let (repo, ids) = tagged_releases();
    let run = repo.fpcheck(&["--resolve-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "from v1.1.0 {}\nto HEAD {}\nnote: no range given: comparing v1.1.0, the highest version of the tags reachable from HEAD, with HEAD\n",
            ids[2], ids[3]
        )
    );
    // `to` itself a release: the one before it, pre-releases counted or not.
    for (flags, from) in [
        (vec![], ("v1.1.0-rc1", &ids[1])),
        (vec!["--tag-exclude=*-rc*"], ("v1.0.0", &ids[0])),
        (vec!["--tag-match=v*.*.?"], ("v1.0.0", &ids[0])),
    ] {
        let mut args = vec!["--resolve-only", "--format=json"];
        args.extend(flags.iter().copied());
        args.extend(["--", "..v1.1.0"]);
        let run = repo.fpcheck(&args);
        assert_eq!(run.code, 0, "{flags:?}: {}", run.stderr);
        let json = run.json();
        assert_eq!(
            (&json["from"]["ref"], &json["from"]["commit"]),
            (&serde_json::json!(from.0), &serde_json::json!(from.1)),
            "{flags:?}"
        );
        assert_eq!(
            json["to"],
            serde_json::json!({"ref": "v1.1.0", "commit": ids[2]})
        );
        // The comparison itself takes the same `from`.
        let mut args = vec!["--format=json"];
        args.extend(flags.iter().copied());
        args.extend(["--", "..v1.1.0"]);
        let full = repo.fpcheck(&args).json();
        assert_eq!(full["from"]["ref"], json["from"]["ref"], "{flags:?}");
        assert_eq!(full["from"]["commit"], json["from"]["commit"], "{flags:?}");
        assert_eq!(full["notes"], json["notes"], "{flags:?}");
    }

    // A treeless clone (commits and tags, no tree): the ends resolve, the
    // comparison cannot be made there.
    repo.git(&["config", "uploadpack.allowFilter", "true"]);
    let dir = tempfile::tempdir().unwrap();
    let clone = dir.path().join("treeless.git");
    let url = format!("file://{}", repo.path().display());
    crate::support::git_in(
        dir.path(),
        &[
            "clone",
            "-q",
            "--bare",
            "--filter=tree:0",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    let repo_flag = format!("--repo={}", clone.display());
    let run = crate::support::fpcheck_in(
        dir.path(),
        &[
            &repo_flag,
            "--resolve-only",
            "--format=json",
            "--",
            "..main",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["from"]["commit"], ids[2].as_str());
    let run = crate::support::fpcheck_in(
        dir.path(),
        &[&repo_flag, "--no-cache", "--", "v1.1.0..main"],
    );
    assert!(
        run.code == 4 && run.stderr.contains(") is missing from the repository; "),
        "the trees are really missing: {}",
        run.stderr
    );

    // Only the ends: no exit code, no patch, no extra report.
    let run = repo.fpcheck(&["--resolve-only", "--exit-code"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // A name that reads as an option is never taken for one.
    let run = repo.fpcheck(&["--resolve-only", "--", "--root=x.."]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

/// With stdout closed, the first file fpcheck opened became its stdout
/// (`-o /dev/stdout` failed with "Bad file descriptor", and a report could
/// have gone into an open file). A closed standard descriptor is reopened
/// on `/dev/null` at start-up, as Rust's own start-up does.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_dev_null_not_the_next_file_opened() {
    use std::os::unix::process::CommandExt;
    let repo = crate::support::two_releases();
    for args in [
        vec!["v1.0.0..v1.1.0"],
        vec!["v1.0.0..v1.1.0", "-o", "/dev/stdout"],
    ] {
        let mut cmd = crate::support::fpcheck_command(repo.path());
        cmd.args(&args).stderr(std::process::Stdio::piped());
        // SAFETY: close(2) between fork and exec, no allocation.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(1);
                Ok(())
            });
        }
        let out = cmd.output().expect("fpcheck runs");
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}

/// A release whose `version.json` holds a 100 KB version and
/// `force_restart`: the size-limited report still fits and carries the
/// verdict, the long values shortened with a visible ellipsis and their
/// length; the JSON keeps them exact.
#[test]
fn huge_version_values_are_shortened_for_display_and_exact_in_json() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "x = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1", "v1");
    let version = format!("2.{}", "9".repeat(100_000));
    let force = "y".repeat(100_000);
    repo.write("src/app.py", "x = 2\n").write(
        "version.json",
        serde_json::json!({"version": version, "force_restart": force}).to_string(),
    );
    repo.commit_and_tag("2", "v2");
    let dir = tempfile::tempdir().unwrap();
    let (md, json) = (dir.path().join("x.md"), dir.path().join("x.json"));
    let run = repo.fpcheck(&[
        "v1..v2",
        "--report",
        &format!("markdown:65000={}", md.display()),
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.len() <= 65000, "{} bytes", text.len());
    assert!(text.contains("Restart required"), "{text}");
    assert!(text.contains("… (100002 characters)"), "{text}");
    let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(j["to"]["version"], serde_json::Value::String(version));
    assert_eq!(j["restart_required"], true);
    let table = repo.fpcheck(&["v1..v2"]);
    assert!(table.stdout.contains("characters)"), "{}", table.stdout);
}

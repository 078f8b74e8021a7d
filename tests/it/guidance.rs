//! What the tool tells its user: a slip (no repository, two words for a
//! range, a mistyped command) gets an answer that says what to do, labels
//! say what happened, counts agree with their nouns, `history` fits the
//! terminal and publishes no local path, and the demo repository is a real
//! checkout.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{fpcheck_in, git_cmd, git_in, TestRepo};

/// Runs fpcheck with `COLUMNS` set (or not) and no colour.
fn fpcheck_cols(cwd: &Path, args: &[&str], columns: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fpcheck"));
    cmd.current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("COLUMNS");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c);
    }
    let out = cmd.output().expect("fpcheck runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn outside_any_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // A temp dir could sit inside a repository on some machines; the
    // messages below are only about the "not a repository" case.
    assert!(
        !git_cmd(dir.path())
            .args(["rev-parse", "--git-dir"])
            .output()
            .unwrap()
            .status
            .success(),
        "the temp dir is inside a repository"
    );
    dir
}

#[test]
fn outside_a_repository_only_fingerprint_suggests_dir() {
    let dir = outside_any_repository();
    for args in [&["history"][..], &["patch", "v1..v2"], &["v1.0.0..v1.1.0"]] {
        let run = fpcheck_in(dir.path(), args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("is not in a git repository"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("pass --repo PATH"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("--dir"), "{args:?}: {}", run.stderr);
    }
    let run = fpcheck_in(dir.path(), &["fingerprint"]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("or use --dir PATH for an installed runtime"),
        "{}",
        run.stderr
    );
    // And --dir really is accepted there, where it is suggested.
    std::fs::write(dir.path().join("a.py"), "x=1\n").unwrap();
    let run = fpcheck_in(dir.path(), &["fingerprint", "--dir", "."]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.trim(),
        // docs/spec.md section 2's example.
        "e9e3096aafb34e7b23c7d1366619d46c0b1de209d5978112d33f75def71bf386"
    );
}

#[test]
fn two_words_instead_of_a_range_and_mistyped_commands_get_a_suggestion() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n");
    repo.commit_and_tag("one", "v7.10.0");
    repo.tag("v7.11.0");

    let run = repo.fpcheck(&["v7.10.0", "v7.11.0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "fpcheck: error: `v7.10.0 v7.11.0` is two arguments where one range is expected: \
         did you mean v7.10.0..v7.11.0?"
    );
    // A flag in between changes nothing.
    let run = repo.fpcheck(&["v7.10.0", "--format", "json", "v7.11.0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("did you mean v7.10.0..v7.11.0?"));
    // The suggestion works.
    assert_eq!(repo.fpcheck(&["v7.10.0..v7.11.0"]).code, 0);

    for (typo, command) in [
        ("histroy", "history"),
        ("fingerprnt", "fingerprint"),
        ("demp", "demo"),
        ("snapshto", "snapshot"),
    ] {
        let run = repo.fpcheck(&[typo]);
        assert_eq!(run.code, 2, "{typo}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "`{typo}` is neither a command nor a range: did you mean `fpcheck {command}`?"
            )),
            "{typo}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("is not a range"), "{}", run.stderr);
        // One sentence, one space between its parts.
        assert!(
            run.stderr
                .contains("`? (a range is FROM..TO, e.g. v7.10.0..v7.11.0)"),
            "{}",
            run.stderr
        );
    }
    // A word that is no command's typo keeps the range's own message.
    let run = repo.fpcheck(&["v7.11.0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is not a range"), "{}", run.stderr);
}

/// v1.0.0, then v1.1.0 which only edits an existing scripts file, then
/// v1.2.0 which adds one, then v1.3.0 which edits a migration.
fn scripts_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "s\n")
        .write("src/scripts/reindex.py", "r1\n")
        .write("src/migrations/0001.py", "m1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/scripts/reindex.py", "r2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    repo.write("src/scripts/backfill.py", "b\n")
        .write("version.json", "{\"version\": \"1.2.0\"}\n");
    repo.commit_and_tag("1.2.0", "v1.2.0");
    repo.write("src/migrations/0001.py", "m2\n")
        .write("version.json", "{\"version\": \"1.3.0\"}\n");
    repo.commit_and_tag("1.3.0", "v1.3.0");
    repo
}

#[test]
fn matrix_rows_are_labelled_by_what_happened() {
    let repo = scripts_project();
    let row = |range: &str| -> Value {
        let run = repo.fpcheck(&[range, "--format", "json"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()["matrix_row"].clone()
    };
    assert_eq!(
        row("v1.0.0..v1.1.0"),
        serde_json::json!({"number": 5, "touches": "a change under scripts/"})
    );
    assert_eq!(
        row("v1.1.0..v1.2.0"),
        serde_json::json!({"number": 5, "touches": "a new file under scripts/"})
    );
    assert_eq!(
        row("v1.2.0..v1.3.0"),
        serde_json::json!({"number": 6, "touches": "a change in migrations/"})
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(
        table
            .stdout
            .contains("behaviour matrix row 5: a change under scripts/\n"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("new file"), "{}", table.stdout);
}

#[test]
fn counts_agree_with_their_nouns() {
    // Two releases, one update, which is free and saves one restart.
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit_and_tag("1.0.1", "v1.0.1");
    let (code, table, err) = fpcheck_cols(repo.path(), &["history"], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains(
            "2 releases, 1 update: 0 forced a restart (0 only by force_restart), 1 was free; \
             the fingerprint saved 1 restart over restarting on every version bump."
        ),
        "{table}"
    );
    let md = repo.fpcheck(&["history", "--format", "markdown"]).stdout;
    assert!(
        md.contains("2 releases, 1 update: **0** forced running clients to restart"),
        "{md}"
    );
    assert!(md.contains("**1** was free"), "{md}");
    assert!(md.contains("saved **1** restart compared"), "{md}");
    let html = repo.fpcheck(&["history", "--format", "html"]).stdout;
    assert!(html.contains("<b>1</b>restart saved"), "{html}");
    assert!(html.contains("0 runtime files changed"), "{html}");
    for bad in ["1 were", "1 restarts", "1 updates", "1 releases"] {
        assert!(!table.contains(bad), "{bad}: {table}");
        assert!(!md.contains(bad), "{bad}: {md}");
    }
}

/// Many pre-release tags: long update names and reason codes.
fn prerelease_project() -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..6u32 {
        repo.write("src/a.py", format!("a{}\n", i / 2)).write(
            "version.json",
            format!("{{\"version\": \"7.38.{i}-rc.{i}\"}}\n"),
        );
        if i == 4 {
            // A directory named like a module: unavailable.
            repo.write("src/broken.py/x.py", "x\n");
        }
        repo.commit(&format!("r{i}"));
        repo.tag(&format!("v7.38.{i}-rc.{i}"));
    }
    repo
}

#[test]
fn the_history_table_fits_the_width_and_abbreviates_long_reasons() {
    let repo = prerelease_project();
    for width in [60usize, 80, 120] {
        let (code, out, err) = fpcheck_cols(repo.path(), &["history"], Some(&width.to_string()));
        assert_eq!(code, 0, "{err}");
        let table_lines: Vec<&str> = out
            .lines()
            .take_while(|l| l.starts_with(['┌', '│', '╞', '├', '└']))
            .collect();
        assert!(table_lines.len() > 6, "{out}");
        for line in &table_lines {
            assert!(
                line.chars().count() <= width,
                "{width}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
    // Wide enough: one line per update (header, 5 rows, borders).
    let (_, wide, _) = fpcheck_cols(repo.path(), &["history"], Some("200"));
    assert_eq!(
        wide.lines().filter(|l| l.starts_with('│')).count(),
        6,
        "{wide}"
    );
    // The table abbreviates; a legend says what the abbreviation means.
    assert!(wide.contains("fp unavailable"), "{wide}");
    assert!(!wide.contains("│ fingerprint_unavailable"), "{wide}");
    assert!(
        wide.contains("reasons: fp unavailable = fingerprint_unavailable"),
        "{wide}"
    );
    // JSON keeps the codes.
    let j = repo.fpcheck(&["history", "--format", "json"]).json();
    assert!(j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["reason"] == "fingerprint_unavailable"));
}

#[test]
fn history_accepts_color_like_the_other_commands() {
    let repo = prerelease_project();
    let (code, always, err) = fpcheck_cols(repo.path(), &["history", "--color", "always"], None);
    assert_eq!(code, 0, "{err}");
    assert!(always.contains("\u{1b}["), "no colour: {always}");
    let (code, never, _) = fpcheck_cols(repo.path(), &["history", "--color", "never"], None);
    assert_eq!(code, 0);
    assert!(!never.contains('\u{1b}'));
    let (code, auto, _) = fpcheck_cols(repo.path(), &["history"], None);
    assert_eq!(code, 0);
    assert!(!auto.contains('\u{1b}'), "a pipe gets no colour");
    // Colour never goes into a file.
    let out = repo.join("h.txt");
    let (code, _, _) = fpcheck_cols(
        repo.path(),
        &["history", "--color", "always", "-o", out.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0);
    assert!(!std::fs::read_to_string(out).unwrap().contains('\u{1b}'));
    let (code, _, err) = fpcheck_cols(repo.path(), &["history", "--color", "sometimes"], None);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn the_html_page_names_the_origin_without_credentials_and_opens_at_the_newest() {
    let repo = prerelease_project();
    repo.git(&[
        "remote",
        "add",
        "origin",
        "https://deploy:s3cr3t-token@git.example.com:8443/acme/server.git",
    ]);
    let html = repo.fpcheck(&["history", "--format", "html"]).stdout;
    assert!(
        // tera's autoescape writes `/` as `&#x2F;`, which a browser shows as `/`.
        html.contains("<p class=\"lede\">git.example.com&#x2F;acme&#x2F;server · runtime root"),
        "{html}"
    );
    assert!(!html.contains("s3cr3t"), "credentials leaked");
    assert!(!html.contains("deploy"), "user leaked");
    let local = std::fs::canonicalize(repo.path()).unwrap();
    assert!(
        !html.contains(local.to_str().unwrap()),
        "the local path is published"
    );
    let j = repo.fpcheck(&["history", "--format", "json"]).json();
    assert_eq!(j["name"], "git.example.com/acme/server");

    // scp-like origins, and a local origin or none: the folder's name.
    repo.git(&[
        "remote",
        "set-url",
        "origin",
        "git@github.com:acme/server.git",
    ]);
    let j = repo.fpcheck(&["history", "--format", "json"]).json();
    assert_eq!(j["name"], "github.com/acme/server");
    repo.git(&["remote", "set-url", "origin", "/srv/git/server-mirror.git"]);
    let j = repo.fpcheck(&["history", "--format", "json"]).json();
    assert_eq!(j["name"], "server-mirror");
    repo.git(&["remote", "remove", "origin"]);
    let j = repo.fpcheck(&["history", "--format", "json"]).json();
    let folder = local.file_name().unwrap().to_str().unwrap();
    assert_eq!(j["name"], folder);

    // The timeline scrolls from its right end (the newest releases), with
    // no script; the newest release is drawn last, at the right.
    assert!(html.contains("direction: rtl"), "{html}");
    assert!(html.contains(".timeline svg { direction: ltr"), "{html}");
    assert!(!html.contains("<script"));
    let first = html.find(">v7.38.1-rc.1</text>").unwrap();
    let last = html.find(">v7.38.5-rc.5</text>").unwrap();
    assert!(first < last);
}

#[test]
fn the_html_summary_names_the_releases_that_saved_a_restart() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("README.md", "docs\n")
        .write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit_and_tag("1.0.1", "v1.0.1");
    repo.write("src/a.py", "b\n")
        .write("version.json", "{\"version\": \"1.0.2\"}\n");
    repo.commit_and_tag("1.0.2", "v1.0.2");
    repo.write("CHANGELOG.md", "c\n")
        .write("version.json", "{\"version\": \"1.0.3\"}\n");
    repo.commit_and_tag("1.0.3", "v1.0.3");
    repo.write("NOTES.md", "same version\n");
    repo.commit_and_tag("no version bump", "v1.0.4");
    let html = repo.fpcheck(&["history", "--format", "html"]).stdout;
    assert!(
        html.contains("Releases that saved a restart: <code>v1.0.1</code>, <code>v1.0.3</code>."),
        "{html}"
    );
    assert!(html.contains("<b>2</b>restarts saved"), "{html}");
    // One card for saved restarts; the free update that changed no version
    // is explained in words instead.
    assert!(!html.contains("were free"), "{html}");
    assert!(
        html.contains("1 other update left the version unchanged and restarted nothing."),
        "{html}"
    );
}

#[test]
fn demo_keep_leaves_a_clean_checkout_of_the_last_release() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("fpdemo");
    let run = fpcheck_in(base.path(), &["demo", "--keep", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Every file of the last release is there, and git sees nothing to do.
    assert_eq!(
        git_in(&dir, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("version.json")).unwrap(),
        "{\n  \"version\": \"1.8.0\",\n  \"force_restart\": false\n}\n"
    );
    let tracked = git_in(&dir, &["ls-files"]);
    for line in tracked.lines() {
        assert!(dir.join(line).is_file(), "{line} is not checked out");
    }
    assert_eq!(
        git_in(&dir, &["diff", "--stat", "HEAD"]),
        "",
        "the files differ from HEAD"
    );
    // --worktree compares the files on disk.
    std::fs::write(
        dir.join("src/plugins/memory.py"),
        "def serve():\n    return 'v3'\n",
    )
    .unwrap();
    let run = fpcheck_in(&dir, &["v1.6.0..", "--worktree", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["to"]["worktree"], true);
    let changed: Vec<&str> = j["changes"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"src/plugins/memory.py"), "{changed:?}");
    // The other commands work there too.
    assert_eq!(fpcheck_in(&dir, &["history"]).code, 0);
    assert_eq!(
        fpcheck_in(&dir, &["fingerprint", "--rev", "v1.1.0"]).code,
        0
    );
}

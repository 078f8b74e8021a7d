//! Classification in reports on real repositories: `change_kind`,
//! `avoidable`, the table, Markdown and history lines, `--no-classify`.

use serde_json::{json, Value};

use crate::support::TestRepo;

const SERVER: &str = "\"\"\"The server.\"\"\"\nimport os\n\n\ndef main(port=8080):\n    \"\"\"Serve.\"\"\"\n    return os.getpid() + port  # the pid\n";
const TOOLS: &str = "def tool(x):\n    return x * 2\n";

/// v1.0.0 with two runtime files; `edit` makes v1.1.0 from it.
fn release(edit: impl FnOnce(&TestRepo)) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", SERVER)
        .write("src/tools.py", TOOLS)
        .write("README.md", "# readme\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    edit(&repo);
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    repo
}

fn json_of(repo: &TestRepo, extra: &[&str]) -> Value {
    let mut args = vec!["v1.0.0..v1.1.0", "--format", "json"];
    args.extend_from_slice(extra);
    let run = repo.fpcheck(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn a_comment_only_release_is_an_avoidable_restart() {
    let repo = release(|r| {
        r.write(
            "src/server.py",
            SERVER.replace("# the pid", "# the process id, plus the port\n\n"),
        );
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(j["avoidable"], true);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/server.py", "status": "modified", "change_kind": "layout"}])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(
        table.stdout.contains("  M  src/server.py  (layout)\n"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains(
        "\nthis restart is avoidable: 1 file changed only comments or docstrings; hold it for the next code release\n"
    ), "{}", table.stdout);
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "markdown"]);
    assert!(md.stdout.contains(
        "**This restart is avoidable:** 1 file changed only comments or docstrings; hold it for the next code release."
    ), "{}", md.stdout);
    assert!(
        md.stdout
            .contains("| modified (layout) | <code>src/server.py</code> |"),
        "{}",
        md.stdout
    );
    // The verdict stays the gate's.
    assert_eq!(table.code, 0);
}

#[test]
fn a_file_over_the_read_limit_is_code_without_being_parsed() {
    // A 1 MiB comment: more than classification reads from a blob (a parse
    // would take memory many times its size), so the change counts as code;
    // a file just under the limit is parsed.
    let big = format!("x = 1\n#{}\n", "a".repeat(1 << 20));
    let under = format!("x = 1\n#{}\n", "a".repeat((1 << 20) - 100));
    let repo = TestRepo::new();
    repo.write("src/big.py", &big)
        .write("src/under.py", &under)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/big.py", big.replacen("#a", "#b", 1))
        .write("src/under.py", under.replacen("#a", "#b", 1))
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["avoidable"], false);
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/big.py", "status": "modified", "change_kind": "code"},
            {"path": "src/under.py", "status": "modified", "change_kind": "layout"}
        ])
    );
    // `history` too: it classifies the blobs it kept (up to its own limit,
    // 1 MiB today), and the classifier's limit applies to those as well.
    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["releases"][0]["avoidable"], false);
    repo.write("src/big.py", big.replacen("#a", "#c", 1))
        .write("version.json", "{\"version\": \"1.2.0\"}\n");
    repo.commit_and_tag("1.2.0", "v1.2.0");
    // Packed, the versions are deltas, inflated whole and kept.
    repo.git(&["gc", "--quiet"]);
    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.json()["releases"][1]["avoidable"], false);
}

/// A 2 MB file of nested brackets (Python: "too many nested parentheses")
/// took hundreds of MiB to parse; it is now refused before parsing.
#[test]
fn deeply_nested_files_are_code_without_being_parsed() {
    let nested = format!("x = {}1{}\n", "(".repeat(1_000_000), ")".repeat(1_000_000));
    let repo = TestRepo::new();
    repo.write("src/deep.py", &nested)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/deep.py", format!("# c\n{nested}"))
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let started = std::time::Instant::now();
    let j = json_of(&repo, &[]);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/deep.py", "status": "modified", "change_kind": "code"}])
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[test]
fn docstrings_and_layout_in_two_files_are_avoidable_together() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("Serve.", "Serve forever."))
            .write("src/tools.py", "def tool( x ):\n\n    return x*2\n");
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], true);
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/server.py", "status": "modified", "change_kind": "docstrings"},
            {"path": "src/tools.py", "status": "modified", "change_kind": "layout"}
        ])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(table.stdout.contains(
        "this restart is avoidable: 2 files changed only comments or docstrings; hold them for the next code release\n"
    ), "{}", table.stdout);
}

#[test]
fn one_code_change_makes_the_restart_necessary() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"))
            .write("src/tools.py", TOOLS.replace("2", "3"));
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], false);
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/server.py", "status": "modified", "change_kind": "layout"},
            {"path": "src/tools.py", "status": "modified", "change_kind": "code"}
        ])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(!table.stdout.contains("avoidable"), "{}", table.stdout);
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "markdown"]);
    assert!(!md.stdout.contains("avoidable"), "{}", md.stdout);
}

#[test]
fn additions_renames_links_and_unparsable_files_are_code() {
    // A new module next to a comment change.
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"))
            .write("src/new.py", "# only a comment\n");
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], false);
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["changes"]["runtime"][0]["status"], "added");

    // A rename with a comment edit: the module's import path changed.
    let repo = release(|r| {
        r.remove("src/server.py")
            .write("src/app.py", SERVER.replace("# the pid", "# pid"));
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["changes"]["runtime"][0]["status"], "renamed");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["avoidable"], false);

    // A file that does not parse, on either side, whatever the edit.
    let repo = TestRepo::new();
    repo.write("src/broken.py", "def f(:\n    pass\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/broken.py", "def f(:\n    pass  # still broken\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["avoidable"], false);

    // A runtime link pointed elsewhere, both targets only differing by a
    // comment: the link is code.
    let repo = TestRepo::new();
    repo.write("src/a.py", "x = 1\n")
        .write("src/b.py", "x = 1  # b\n")
        .symlink("src/link.py", "a.py")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.symlink("src/link.py", "b.py")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/link.py", "status": "modified", "change_kind": "code"}])
    );
    assert_eq!(j["avoidable"], false);
}

#[test]
fn force_restart_makes_nothing_avoidable() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    // The same release, with force_restart on.
    repo.write(
        "version.json",
        "{\"version\": \"1.2.0\", \"force_restart\": true}\n",
    )
    .write("src/server.py", SERVER.replace("# the pid", "# the pid!"));
    repo.commit_and_tag("1.2.0", "v1.2.0");
    let run = repo.fpcheck(&["v1.1.0..v1.2.0", "--format", "json"]);
    let j = run.json();
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "layout");
    assert_eq!(j["avoidable"], false);
}

#[test]
fn no_classify_leaves_the_report_as_it_was() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    let j = json_of(&repo, &["--no-classify"]);
    assert_eq!(j["avoidable"], Value::Null);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/server.py", "status": "modified"}])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0", "--no-classify"]);
    assert!(
        table.stdout.contains("  M  src/server.py\n"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("avoidable"), "{}", table.stdout);
}

#[test]
fn the_working_tree_is_classified_before_committing() {
    let repo = release(|_| {});
    repo.write("src/tools.py", "# Tools.\ndef tool(x):\n    return x * 2\n");
    let run = repo.fpcheck(&["v1.1.0..", "--worktree", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/tools.py", "status": "modified", "change_kind": "layout"}])
    );
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["avoidable"], true);
}

#[test]
fn history_counts_and_marks_avoidable_restarts() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    let next = |version: &str, edit: &dyn Fn(&TestRepo)| {
        edit(&repo);
        repo.write("version.json", format!("{{\"version\": \"{version}\"}}\n"));
        repo.commit_and_tag(version, &format!("v{version}"));
    };
    next("1.2.0", &|r| {
        r.write("src/tools.py", TOOLS.replace("2", "4"));
    });
    next("1.3.0", &|r| {
        r.write("src/server.py", SERVER.replace("Serve.", "Serve well."))
            .write(
                "src/tools.py",
                format!("# Tools.\n{}", TOOLS.replace("2", "4")),
            );
    });
    next("1.4.0", &|r| {
        r.write("README.md", "# more\n");
    });
    next("1.5.0", &|r| {
        r.write("src/extra.py", "\n");
    });

    let j = repo.history_json(&["--no-cache"]);
    assert_eq!(
        release_flags(&j),
        vec![
            json!(["v1.1.0", true, true]),
            json!(["v1.2.0", true, false]),
            json!(["v1.3.0", true, true]),
            json!(["v1.4.0", false, false]),
            json!(["v1.5.0", true, false]),
        ]
    );
    assert_eq!(j["summary"]["avoidable_restarts"], 2);
    assert_eq!(j["summary"]["restarts_forced"], 4);

    let table = repo.fpcheck(&["history", "--no-cache"]);
    assert!(
        table
            .stdout
            .contains(" 2 restarts were forced only by comments or docstrings (avoidable)."),
        "{}",
        table.stdout
    );
    // Two rows and the summary (the reason cell may wrap).
    assert_eq!(
        table.stdout.matches("(avoidable)").count(),
        3,
        "{}",
        table.stdout
    );
    let html = repo.fpcheck(&["history", "--no-cache", "--format", "html"]);
    assert_eq!(html.stdout.matches("<rect class=\"avoidable\"").count(), 2);
    assert!(html
        .stdout
        .contains("<b>2</b>avoidable (comments or docstrings only)"));
    let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
    assert!(
        md.stdout
            .contains("**2** restarts were forced only by comments or docstrings (avoidable)."),
        "{}",
        md.stdout
    );

    let off = repo
        .fpcheck(&["history", "--format", "json", "--no-cache", "--no-classify"])
        .json();
    assert_eq!(off["summary"]["avoidable_restarts"], Value::Null);
    assert!(off["releases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["avoidable"].is_null()));
    let html = repo.fpcheck(&["history", "--no-cache", "--no-classify", "--format", "html"]);
    assert!(!html.stdout.contains("avoidable"), "{}", html.stdout);
}

/// Each history update's `avoidable` is the range report's, release after
/// release: paths changed many times (each version parsed once, from the
/// one before), several paths in one update, a code change next to a
/// cosmetic one, a file reached through a link, a release that does not
/// restart in the middle of a path's changes, and an edit far down a file
/// (compared only where it changed).
#[test]
fn history_marks_the_same_restarts_as_ranges_do() {
    let long: String = (0..40)
        .map(|i| format!("def f{i}(x):\n    \"\"\"Doc {i}.\"\"\"\n    return x + {i}\n\n\n"))
        .collect();
    let repo = TestRepo::new();
    repo.write("src/a.py", &long)
        .write("src/b.py", TOOLS)
        .write("lib/real.py", "x = 1\n")
        .symlink("src/link.py", "../lib/real.py")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    let a2 = long.replace("return x + 30", "return x + 30  # why");
    let a3 = a2.replace("Doc 31.", "Doc thirty-one.");
    let a4 = a3.replace("return x + 39", "return x - 39");
    let a5 = format!("# header\n{a4}");
    let edits: Vec<Vec<(&str, String)>> = vec![
        vec![("src/a.py", a2.clone())], // layout
        vec![
            ("src/a.py", a3.clone()),
            ("src/b.py", format!("# b\n{TOOLS}")),
        ], // docstrings + layout
        vec![("README.md", "# readme\n".to_string())], // no restart
        vec![("src/a.py", a4.clone()), ("src/b.py", TOOLS.to_string())], // code + layout
        vec![("lib/real.py", "x = 1  # through a link\n".to_string())], // a link: code
        vec![("src/a.py", a5.clone())], // layout at the top
        vec![("src/b.py", TOOLS.replace("x * 2", "x*2"))], // layout
        vec![("src/b.py", TOOLS.replace("x * 2", "x * 3"))], // code
    ];
    repo.release_updates(&edits);
    for threads in ["1", "2", "3"] {
        let j = repo.history_json(&["--no-cache", "--threads", threads]);
        let from_history: Vec<Value> = j["releases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["avoidable"].clone())
            .collect();
        assert_eq!(
            from_history,
            vec![
                json!(true),
                json!(true),
                json!(false),
                json!(false),
                json!(false),
                json!(true),
                json!(true),
                json!(false),
            ],
            "--threads {threads}"
        );
        assert_each_range_agrees(&repo, &j);
    }
}

/// History tells most code changes by the kinds of their tokens, without
/// parsing (a statement added: nothing parsed), and parses the changes
/// whose kinds are the same: a changed number, a docstring, a comment.
#[test]
fn history_tells_code_by_its_tokens_before_parsing() {
    let repo = TestRepo::new();
    repo.write("src/a.py", TOOLS)
        .write("src/b.py", SERVER)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    let added = format!("{TOOLS}\n\ndef other():\n    return 1\n");
    let three = added.replace("return 1", "return 3");
    let edits: Vec<Vec<(&str, String)>> = vec![
        vec![
            ("src/a.py", added.clone()),
            ("src/b.py", SERVER.replace("# the pid", "# pid")),
        ], // a statement added (and a comment changed)
        vec![("src/a.py", added.replace("return 1", "return 2"))], // code, same kinds
        vec![(
            "src/a.py",
            added.replace("return 1", "\"\"\"Doc.\"\"\"\n    return 2"),
        )], // docstrings
        vec![("src/a.py", format!("# a\n{three}"))],               // code (and the docstring goes)
        vec![("src/a.py", format!("# b\n{three}"))],               // layout
    ];
    repo.release_updates(&edits);
    let first = repo.history_json(&["v1.0.0..v1.1.0", "--no-cache"]);
    assert_eq!(release_flags(&first), vec![json!(["v1.1.0", true, false])]);
    assert_eq!(first["stats"]["classify_parsed"], 0);
    let j = repo.history_json(&["--no-cache"]);
    assert_eq!(
        release_flags(&j),
        vec![
            json!(["v1.1.0", true, false]),
            json!(["v1.2.0", true, false]),
            json!(["v1.3.0", true, true]),
            json!(["v1.4.0", true, false]),
            json!(["v1.5.0", true, true]),
        ]
    );
    assert_each_range_agrees(&repo, &j);
}

/// Where `.gitattributes` converts the runtime's files (CRLF line ends on
/// checkout), history compares the checkout's bytes, the bytes the
/// selection names, as the range does: a comment-only release is
/// avoidable, a code change is not.
#[test]
fn history_compares_the_checkouts_bytes_where_attributes_convert_them() {
    let repo = TestRepo::new();
    repo.write(".gitattributes", "*.py text eol=crlf\n")
        .write("src/server.py", SERVER)
        .write("src/tools.py", TOOLS)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.release_updates(&[
        vec![("src/server.py", SERVER.replace("# the pid", "# pid"))],
        vec![("src/tools.py", TOOLS.replace("x * 2", "x * 3"))],
        vec![(
            "src/tools.py",
            format!("# Tools.\n{}", TOOLS.replace("x * 2", "x * 3")),
        )],
    ]);
    for cache in [&["--no-cache"][..], &[], &[]] {
        let j = repo.history_json(cache);
        assert_eq!(
            release_flags(&j),
            vec![
                json!(["v1.1.0", true, true]),
                json!(["v1.2.0", true, false]),
                json!(["v1.3.0", true, true]),
            ],
            "{cache:?}"
        );
        assert_each_range_agrees(&repo, &j);
    }
}

/// A release that changes the settings is never avoidable, though the one
/// file the new settings still select changed only a comment: the new
/// settings exclude a file whose code changed (the settings cross-check
/// restarts for it), and the diff the classifier sees does not list it.
#[test]
fn a_settings_change_is_never_avoidable() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "x = 1  # hi\n")
        .write("src/secret/x.py", "def run(): return \"safe\"\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/a.py", "x = 1  # hello\n")
        .write("src/secret/x.py", "def run(): return \"EVIL\"\n")
        .write("fpcheck.toml", "[runtime]\nexclude = [\"secret\"]\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");

    let j = json_of(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["settings_check"]["runtime_changed"], true);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/a.py", "status": "modified", "change_kind": "layout"}])
    );
    assert_eq!(j["avoidable"], false);

    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let h = run.json();
    assert_eq!(h["releases"][0]["restart_required"], true);
    assert_eq!(h["releases"][0]["avoidable"], false);
    assert_eq!(h["summary"]["avoidable_restarts"], 0);

    // The same settings at both ends and only the comment changed:
    // avoidable, in both (the settings are what made the difference).
    repo.write("src/a.py", "x = 1  # hey\n")
        .write("version.json", "{\"version\": \"1.2.0\"}\n");
    repo.commit_and_tag("1.2.0", "v1.2.0");
    let run = repo.fpcheck(&["v1.1.0..v1.2.0", "--format", "json"]);
    assert_eq!(run.json()["avoidable"], true, "{}", run.stdout);
    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.json()["releases"][1]["avoidable"], true);

    // Settings that select the same files, and a comment change: still
    // not avoidable (the settings differ).
    repo.write("src/a.py", "x = 1  # hoy\n")
        .write(
            "fpcheck.toml",
            "[runtime]\nexclude = [\"secret\"]\nextensions = [\".py\", \".pyi\"]\n",
        )
        .write("version.json", "{\"version\": \"1.3.0\"}\n");
    repo.commit_and_tag("1.3.0", "v1.3.0");
    let run = repo.fpcheck(&["v1.2.0..v1.3.0", "--format", "json"]);
    let j = run.json();
    assert_eq!(j["reason"], "code_changed", "{}", run.stdout);
    assert_eq!(j["avoidable"], false);
    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    let h = run.json();
    assert_eq!(h["releases"][2]["restart_required"], true);
    assert_eq!(h["releases"][2]["avoidable"], false);
    assert_eq!(h["summary"]["avoidable_restarts"], 1);
}

/// A runtime may list extensions that are not Python source: their changes
/// are `code` whatever they are (a `#` line in a data file or a template is
/// not a comment to whatever reads it), while a stub (`.pyi`) is Python
/// syntax and classified as such; in ranges and in `history` alike.
#[test]
fn only_python_source_names_are_parsed() {
    let repo = TestRepo::new();
    let text = "x = 1  # one\n\"\"\"Words.\"\"\"\n";
    repo.write(
        "fpcheck.toml",
        "[runtime]\nextensions = [\".py\", \".pyi\", \".txt\"]\n",
    )
    .write("src/app.py", text)
    .write("src/app.pyi", text)
    .write("src/words.txt", text)
    .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    let edited = text.replace("# one", "# two");
    repo.release_updates(&[
        vec![("src/words.txt", edited.clone())],
        vec![("src/app.py", edited.clone()), ("src/app.pyi", edited)],
    ]);
    let kinds = |range: &str| {
        let run = repo.fpcheck(&[range, "--format", "json", "--no-cache"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let j = run.json();
        (j["changes"]["runtime"].clone(), j["avoidable"].clone())
    };
    assert_eq!(
        kinds("v1.0.0..v1.1.0"),
        (
            json!([{"path": "src/words.txt", "status": "modified", "change_kind": "code"}]),
            json!(false)
        )
    );
    assert_eq!(
        kinds("v1.1.0..v1.2.0"),
        (
            json!([
                {"path": "src/app.py", "status": "modified", "change_kind": "layout"},
                {"path": "src/app.pyi", "status": "modified", "change_kind": "layout"}
            ]),
            json!(true)
        )
    );
    let flags = release_flags(&repo.history_json(&["--no-cache"]));
    assert_eq!(
        flags,
        [
            json!(["v1.1.0", true, false]),
            json!(["v1.2.0", true, true])
        ]
    );
}

/// Each release's `[to, restart_required, avoidable]`.
/// Each update of `history`, asked of the range alone, is as avoidable
/// as the history says.
fn assert_each_range_agrees(repo: &TestRepo, history: &Value) {
    for s in history["releases"].as_array().unwrap() {
        let range = format!(
            "{}..{}",
            s["from"].as_str().unwrap(),
            s["to"].as_str().unwrap()
        );
        let r = repo.fpcheck(&[&range, "--format", "json"]).json();
        assert_eq!(r["avoidable"], s["avoidable"], "{range}");
    }
}

fn release_flags(history: &Value) -> Vec<Value> {
    history["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!([s["to"], s["restart_required"], s["avoidable"]]))
        .collect()
}

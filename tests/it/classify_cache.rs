//! The persistent cache of change kinds (`.git/fpcheck/change-kinds-v1`):
//! a second `history` parses nothing and answers the same, a damaged file
//! is ignored, `--no-cache` neither reads nor writes it.

use serde_json::{json, Value};

use crate::support::TestRepo;

const FILE: &str = ".git/fpcheck/change-kinds-v1";

/// Releases changing paths many times: layout, docstrings and code edits,
/// a code change next to a cosmetic one, and a cosmetic edit reached
/// through a link (whose blobs compare as `layout`, but a link is `code`).
fn project() -> TestRepo {
    let long: String = (0..30)
        .map(|i| format!("def f{i}(x):\n    \"\"\"Doc {i}.\"\"\"\n    return x + {i}\n\n\n"))
        .collect();
    let tools = "def tool(x):\n    return x * 2\n";
    let repo = TestRepo::new();
    repo.write("src/a.py", &long)
        .write("src/b.py", tools)
        .write("lib/real.py", "x = 1\n")
        .symlink("src/link.py", "../lib/real.py")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    let a2 = long.replace("return x + 20", "return x + 20  # why");
    let a3 = a2.replace("Doc 21.", "Doc twenty-one.");
    let a4 = a3.replace("return x + 29", "return x - 29");
    let edits: Vec<Vec<(&str, String)>> = vec![
        vec![("src/a.py", a2)],
        vec![("src/a.py", a3), ("src/b.py", format!("# b\n{tools}"))],
        vec![("src/a.py", a4.clone()), ("src/b.py", tools.to_string())],
        vec![("lib/real.py", "x = 1  # through a link\n".to_string())],
        vec![("src/a.py", format!("# header\n{a4}"))],
        vec![("src/b.py", tools.replace("x * 2", "x * 3"))],
    ];
    repo.release_updates(&edits);
    repo
}

/// What every update of this project is, as a fresh run finds it.
const AVOIDABLE: [bool; 6] = [true, true, false, false, true, false];

/// The changes a first run with one thread compares, so remembers: a.py
/// four times, b.py three times (the smaller file is compared first, also
/// in the update where a.py's code changed); the link's update is decided
/// by the link check, without a parse.
const ENTRIES: u64 = 7;

/// One thread unless `extra` says otherwise: which changes a first run
/// compares depends on the order the threads find `code` in.
fn history(repo: &TestRepo, extra: &[&str]) -> Value {
    let mut args = vec![];
    if !extra.contains(&"--threads") {
        args.extend(["--threads", "1"]);
    }
    args.extend_from_slice(extra);
    repo.history_json(&args)
}

fn avoidable(j: &Value) -> Vec<bool> {
    j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["avoidable"].as_bool().unwrap())
        .collect()
}

fn stat(j: &Value, name: &str) -> u64 {
    j["stats"][name].as_u64().unwrap()
}

/// The second run takes every kind from the cache and parses no file, with
/// every thread count; the link's change stays `code` (the link check is
/// made again, not remembered).
#[test]
fn a_second_run_parses_nothing_and_answers_the_same() {
    let repo = project();
    let first = history(&repo, &[]);
    assert_eq!(avoidable(&first), AVOIDABLE);
    assert!(stat(&first, "classify_parsed") > 0);
    assert_eq!(stat(&first, "classify_cached"), 0);
    let lines = std::fs::read_to_string(repo.join(FILE)).unwrap();
    assert_eq!(lines.lines().count() as u64, ENTRIES, "{lines}");
    for threads in ["1", "2", "3"] {
        let again = history(&repo, &["--threads", threads]);
        assert_eq!(avoidable(&again), AVOIDABLE, "--threads {threads}");
        assert_eq!(stat(&again, "classify_parsed"), 0, "--threads {threads}");
        assert_eq!(
            stat(&again, "classify_cached"),
            ENTRIES,
            "--threads {threads}"
        );
    }
    assert_eq!(std::fs::read_to_string(repo.join(FILE)).unwrap(), lines);
}

/// `--no-cache` neither reads the file (it parses as a first run does) nor
/// writes it; nor does `--no-classify`.
#[test]
fn no_cache_neither_reads_nor_writes_the_kinds() {
    let repo = project();
    let cold = history(&repo, &["--no-cache"]);
    assert_eq!(avoidable(&cold), AVOIDABLE);
    assert!(!repo.join(FILE).exists());
    history(&repo, &["--no-classify"]);
    assert!(!repo.join(FILE).exists());
    history(&repo, &[]);
    let before = std::fs::read(repo.join(FILE)).unwrap();
    let again = history(&repo, &["--no-cache"]);
    assert_eq!(avoidable(&again), AVOIDABLE);
    assert_eq!(stat(&again, "classify_cached"), 0);
    assert_eq!(
        stat(&again, "classify_parsed"),
        stat(&cold, "classify_parsed")
    );
    assert_eq!(std::fs::read(repo.join(FILE)).unwrap(), before);
}

/// A truncated file, garbage, a line whose kind was changed (its checksum
/// no longer holds), a FIFO or a link in its place: each damaged line is a
/// miss, classified again, and the answers stay those of a fresh run.
#[test]
fn a_damaged_cache_is_ignored_safely() {
    let repo = project();
    history(&repo, &[]);
    let good = std::fs::read_to_string(repo.join(FILE)).unwrap();
    let code = format!("{:064x}", 3);
    let layout = format!("{:064x}", 1);
    assert!(good.contains(&code) && good.contains(&layout), "{good}");
    let lines: Vec<&str> = good.lines().collect();
    let cut = good.len() - lines.last().unwrap().len() / 2 - 1;
    let damaged = [
        // Half of the last line gone.
        (good[..cut].to_string(), ENTRIES - 1),
        ("\u{0}garbage\n\n   \nnot a line at all\n".repeat(50), 0),
        // Every `code` answer turned into `layout`: the checksums fail.
        (
            good.replace(&code, &layout),
            ENTRIES - good.matches(&code).count() as u64,
        ),
        (String::new(), 0),
    ];
    for (text, whole) in damaged {
        std::fs::write(repo.join(FILE), &text).unwrap();
        let j = history(&repo, &[]);
        assert_eq!(avoidable(&j), AVOIDABLE, "{text:?}");
        assert_eq!(stat(&j, "classify_cached"), whole, "{text:?}");
        if whole < ENTRIES {
            assert!(stat(&j, "classify_parsed") > 0);
        }
        // Rewritten whole by that run.
        assert_eq!(std::fs::read_to_string(repo.join(FILE)).unwrap(), good);
    }
    // Not a regular file: never opened for reading (a FIFO would block),
    // and replaced by the run's own file, never written through (nor is
    // the fingerprint cache's).
    let fingerprints = repo.join(".git/fpcheck/fingerprints-v3");
    for fifo in [repo.join(FILE), fingerprints.clone()] {
        std::fs::remove_file(&fifo).unwrap();
        crate::support::mkfifo(&fifo, 0o600);
    }
    let j = history(&repo, &[]);
    assert_eq!(avoidable(&j), AVOIDABLE);
    assert_eq!(stat(&j, "classify_cached"), 0);
    assert_eq!(stat(&j, "cached"), 0);
    assert_eq!(std::fs::read_to_string(repo.join(FILE)).unwrap(), good);
    assert!(std::fs::metadata(&fingerprints).unwrap().is_file());
    // A link to a good copy elsewhere is not followed.
    let elsewhere = repo.join("kinds-copy");
    std::fs::write(&elsewhere, &good).unwrap();
    std::fs::remove_file(repo.join(FILE)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(FILE)).unwrap();
    let j = history(&repo, &[]);
    assert_eq!(avoidable(&j), AVOIDABLE);
    assert_eq!(stat(&j, "classify_cached"), 0);
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), good);
}

/// A range report remembers its kinds in the same file, under the same
/// keys: `history` then parses nothing for that change, and the range
/// answers from the file without reading the blobs (with the newer blob
/// gone from the object store, the warm range still says `layout`, where
/// `--no-cache`, which neither reads nor writes the file, has to read it
/// and fails).
#[test]
fn a_range_remembers_and_reuses_kinds() {
    let repo = TestRepo::new();
    let text = "def f(x):\n    return x + 1  # one\n";
    repo.write("src/a.py", text)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/a.py", text.replace("# one", "# two"))
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let range = |extra: &[&str]| {
        let mut args = vec!["v1.0.0..v1.1.0", "--format", "json"];
        args.extend_from_slice(extra);
        let run = repo.fpcheck(&args);
        assert_eq!(run.code, 0, "{extra:?}: {}", run.stderr);
        run.json()
    };
    let layout = json!([{"path": "src/a.py", "status": "modified", "change_kind": "layout"}]);
    let cold = range(&["--no-cache"]);
    assert_eq!(cold["changes"]["runtime"], layout);
    assert!(!repo.join(FILE).exists());
    let warm = range(&[]);
    assert_eq!(warm["changes"]["runtime"], layout);
    assert_eq!(warm["avoidable"], true);
    let lines = std::fs::read_to_string(repo.join(FILE)).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    let j = history(&repo, &[]);
    assert_eq!(avoidable(&j), [true]);
    assert_eq!(
        (stat(&j, "classify_cached"), stat(&j, "classify_parsed")),
        (1, 0)
    );
    // The newer blob, gone: only remembered answers (its fingerprint, its
    // kind) can still answer.
    let blob = repo.git(&["rev-parse", "v1.1.0:src/a.py"]);
    let blob = blob.trim();
    std::fs::remove_file(repo.join(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .unwrap();
    let warm = range(&[]);
    assert_eq!(warm["changes"]["runtime"], layout, "{warm}");
    assert_eq!(warm["avoidable"], true);
    repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json", "--no-cache"])
        .assert_error(4, &format!("{blob}) is missing from the repository"));
    assert_eq!(std::fs::read_to_string(repo.join(FILE)).unwrap(), lines);
}

/// History needs one bit per update: an update is decided at its first
/// `code` change, and the cheapest are tried first. A link costs no parse
/// (a link is `code`), and a small file's change is compared before a
/// large one's, so the large file of an update whose small file changed
/// code is never parsed.
#[test]
fn an_update_is_decided_by_its_cheapest_code_change() {
    let big: String = (0..400)
        .map(|i| format!("def f{i}(x):\n    return x + {i}\n\n\n"))
        .collect();
    let repo = TestRepo::new();
    repo.write("src/a.py", &big)
        .write("src/z.py", "x = 1\n")
        .write("lib/real.py", "y = 1\n")
        .symlink("src/link.py", "../lib/real.py")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    let edits: Vec<Vec<(&str, String)>> = vec![
        // A comment in the large file, code in the small one.
        vec![
            ("src/a.py", format!("# one\n{big}")),
            ("src/z.py", "x = 2\n".to_string()),
        ],
        // A comment in the large file, a comment reached through the link.
        vec![
            ("src/a.py", format!("# two\n{big}")),
            ("lib/real.py", "y = 1  # through a link\n".to_string()),
        ],
        // Comments only: both are compared.
        vec![
            ("src/a.py", format!("# three\n{big}")),
            ("src/z.py", "x = 2  # why\n".to_string()),
        ],
    ];
    repo.release_updates(&edits);
    for threads in ["1", "2"] {
        let j = history(&repo, &["--no-cache", "--threads", threads]);
        assert_eq!(avoidable(&j), [false, false, true], "--threads {threads}");
        // The first two updates: z.py twice (each side parsed whole: one
        // statement), a.py never, nothing for the link's update.
        let j = history(
            &repo,
            &["v1.0.0..v1.2.0", "--no-cache", "--threads", threads],
        );
        assert_eq!(avoidable(&j), [false, false], "--threads {threads}");
        assert_eq!(stat(&j, "classify_parsed"), 2, "--threads {threads}: {j}");
    }
}

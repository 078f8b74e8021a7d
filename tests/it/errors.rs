//! One classification of failures: each library error has a kind, and the
//! command line maps kinds to exit codes in one place.

use fpcheck::error::{Classified, Kind};
use fpcheck::history::{self, HistoryError, HistoryOptions};

use crate::support::two_releases;

/// A worker thread of `history` that panics is a bug in fpcheck: its own
/// kind and exit code (6), never a usage error or an unreadable input.
#[test]
fn a_history_worker_panic_is_an_internal_error_with_its_own_exit_code() {
    let repo = two_releases();
    let git = fpcheck::source::git::Session::open(Some(repo.path())).unwrap();
    let opts = HistoryOptions {
        threads: 2,
        ..HistoryOptions::default()
    };
    let panicking = |_: usize, _: usize| panic!("injected by the test");
    let request = fpcheck::config::SettingsRequest {
        origin: fpcheck::config::SettingsOrigin::None,
        overrides: Default::default(),
        fallback_rule: Default::default(),
        fallback: None,
        fallback_end: None,
    };
    let err = history::run(&git, &request, &opts, &panicking).unwrap_err();
    assert!(matches!(err, HistoryError::Internal(_)), "{err:?}");
    assert_eq!(err.kind(), Kind::Internal);
    assert_eq!(
        err.to_string(),
        "a worker thread failed (a bug in fpcheck): injected by the test"
    );
    assert_eq!(fpcheck::cli::exit::of(err.kind()), 6);
}

/// The documented exit codes of each kind.
#[test]
fn kinds_map_to_the_documented_exit_codes() {
    use fpcheck::cli::exit;
    assert_eq!(
        [Kind::Usage, Kind::Input, Kind::Output, Kind::Internal].map(exit::of),
        [2, 4, 5, 6]
    );
    let readme = std::fs::read_to_string("README.md").unwrap();
    for (code, words) in [
        (2, "usage error"),
        (4, "the input cannot be read"),
        (5, "the output cannot be written"),
        (6, "internal error"),
    ] {
        assert!(readme.contains(&format!("| {code} | {words}")), "{code}");
    }
}

/// A panic is a bug, never a verdict: exit 6 with a request for a bug
/// report, not Rust's 101. Test builds panic on request
/// (`FPCHECK_DEBUG_PANIC`), before any command runs.
#[test]
fn a_panic_exits_6_asking_for_a_bug_report() {
    let repo = crate::support::two_releases();
    for args in [
        &["v1.0.0..v1.1.0", "--exit-code"][..],
        &["history"],
        &["fingerprint"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_fpcheck"))
            .current_dir(repo.path())
            .args(args)
            .env("FPCHECK_DEBUG_PANIC", "1")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("fpcheck runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(6), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            stderr.contains("fpcheck: error: internal error (a bug in fpcheck): FPCHECK_DEBUG_PANIC is set; no answer was given: please file a bug report"),
            "{args:?}: {stderr}"
        );
    }
}

/// Names in error messages are escaped exactly once, where the message is
/// shown: the library quotes them raw and the command line escapes the
/// whole line (both used to escape, so an ESC showed as `\\x1b`). A config
/// path and a runtime name, each with an ESC and a bidi control.
#[test]
fn names_in_error_messages_are_escaped_exactly_once() {
    let repo = two_releases();
    repo.write("fpcheck.toml", "[runtimes.web]\nroot = \"src\"\n");
    repo.commit("runtimes");
    let config = "c\u{1b}[31m\u{202e}.toml";
    repo.write(config, "[runtime\n");
    let run = repo.fpcheck(&["fingerprint", "--config", config]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "fpcheck: error: c\\x1b[31m\\u{202e}.toml is not a valid fpcheck config: line 1, column 9: invalid table header expected `.`, `]`\n"
    );
    let run = repo.fpcheck(&["fingerprint", "--runtime", "w\u{1b}\u{2066}"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "fpcheck: error: fpcheck.toml at HEAD: --runtime w\\x1b\\u{2066}: no such runtime in the config (declared: web)\n"
    );
    assert_eq!(
        repo.fpcheck(&["HEAD..HEAD", "--runtime", "web", "--runtime", "w\u{1b}\u{2066}"]).stderr,
        "fpcheck: error: --runtime w\\x1b\\u{2066}: no such runtime at either end (declared: web)\n"
    );
}

/// A bad flag is the flag's fault: with a committed fpcheck.toml at both
/// ends, its error names `--exclude` and not the file, which holds no such
/// name; a bad name in the file is still put down to the file.
#[test]
fn a_bad_flag_is_named_as_the_flag_not_as_the_committed_file() {
    let repo = two_releases();
    repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\n");
    repo.commit("config");
    repo.tag("v1.2.0");
    for args in [
        &["--exclude", "a/b", "v1.1.0..v1.2.0"][..],
        &["history", "--exclude", "a/b"],
        &["fingerprint", "--exclude", "a/b", "--rev", "v1.2.0"],
    ] {
        let run = repo.fpcheck(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr,
            "fpcheck: error: excluded name `a/b` contains `/` (given with --exclude): \
             exclusions are single path segments (e.g. `tests`), matched at any depth\n",
            "{args:?}"
        );
    }
    let run = repo.fpcheck(&["--ext", "", "v1.1.0..v1.2.0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("fpcheck: error: no runtime extensions: pass --ext .py"),
        "{}",
        run.stderr
    );
    for args in [
        &["--root", "/abs", "v1.1.0..v1.2.0"][..],
        &["history", "--root", "/abs"],
        &["fingerprint", "--root", "/abs", "--rev", "v1.2.0"],
    ] {
        let run = repo.fpcheck(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .starts_with("fpcheck: error: runtime root `/abs` is absolute"),
            "{args:?}: {}",
            run.stderr
        );
    }
    repo.write("fpcheck.toml", "[runtime]\nexclude = [\"a/b\"]\n");
    repo.commit("bad config");
    let run = repo.fpcheck(&["v1.2.0..HEAD"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "fpcheck.toml at HEAD: excluded name `a/b` contains `/`: exclusions are single"
        ),
        "{}",
        run.stderr
    );
}

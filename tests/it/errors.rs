//! One classification of failures: each library error has a kind, and the
//! command line maps kinds to exit codes in one place.

use fpcheck::error::{Classified, Kind};
use fpcheck::history::{self, HistoryError, Options};

use crate::support::two_releases;

/// A worker thread of `history` that panics is a bug in fpcheck: its own
/// kind and exit code (6), never a usage error or an unreadable input.
#[test]
fn a_history_worker_panic_is_an_internal_error_with_its_own_exit_code() {
    let repo = two_releases();
    let git = fpcheck::source::git::open_repo(Some(repo.path())).unwrap();
    let opts = Options {
        threads: 2,
        ..Options::default()
    };
    let panicking = |_: usize, _: usize| panic!("injected by the test");
    let request = fpcheck::config::Request {
        choice: fpcheck::config::ConfigChoice::None,
        flags: Default::default(),
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

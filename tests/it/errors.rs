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

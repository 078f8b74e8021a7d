//! `--json` and `--format json` are one option: every command that has
//! either accepts both, with the same output.

use crate::support::two_releases;

#[test]
fn json_and_format_json_print_the_same_everywhere() {
    let repo = two_releases();
    let pairs: &[(&[&str], &[&str])] = &[
        (
            &["v1.0.0..v1.1.0", "--json"],
            &["v1.0.0..v1.1.0", "--format", "json"],
        ),
        (
            &["history", "--json", "--no-cache"],
            &["history", "--format", "json", "--no-cache"],
        ),
        (
            &["fingerprint", "--json"],
            &["fingerprint", "--format", "json"],
        ),
        (
            &["patch", "v1.0.0..v1.1.0", "--json"],
            &["patch", "v1.0.0..v1.1.0", "--format", "json"],
        ),
    ];
    for (a, b) in pairs {
        let (x, y) = (repo.fpcheck(a), repo.fpcheck(b));
        assert_eq!(x.code, y.code, "{a:?}: {} / {}", x.stderr, y.stderr);
        assert!(x.code == 0 || x.code == 1, "{a:?}: {}", x.stderr);
        let _: serde_json::Value = x.json();
        assert_eq!(x.stdout, y.stdout, "{a:?} against {b:?}");
    }
    // `--format text` is the default of the commands that only had --json.
    let text = repo.fpcheck(&["fingerprint", "--format", "text"]);
    assert_eq!(text.stdout, repo.fpcheck(&["fingerprint"]).stdout);
    // Both spellings at once conflict, as two --format would.
    for args in [
        &["v1.0.0..v1.1.0", "--json", "--format", "table"][..],
        &["history", "--json", "--format", "html"],
        &["fingerprint", "--json", "--format", "text"],
    ] {
        assert_eq!(repo.fpcheck(args).code, 2, "{args:?}");
    }
}

//! A release without a version file is reported with its tag's version,
//! labelled `(tag)`, and counted so in `restarts_saved`; the reference
//! updater's reading (version.json only) stays as it is.

use crate::support::TestRepo;

/// v1.0.0, v1.1.0 (comment-free code change), v1.2.0 and v1.3.0 (README
/// only): no version file anywhere.
fn tags_only() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 1\n");
    repo.commit_and_tag("one", "v1.0.0");
    repo.write("src/app.py", "A = 2\n");
    repo.commit_and_tag("two", "v1.1.0");
    repo.write("README.md", "docs\n");
    repo.commit_and_tag("three", "v1.2.0");
    repo.write("README.md", "more docs\n");
    repo.commit_and_tag("four", "v1.3.0");
    repo
}

#[test]
fn a_release_without_a_version_file_has_its_tags_version() {
    let repo = tags_only();
    let j = repo.history_json(&["--no-cache"]);
    let step = &j["releases"][1];
    assert_eq!(step["from"], "v1.1.0");
    // The updater's reading: no version file, no version.
    assert_eq!(step["from_version"], serde_json::Value::Null);
    assert_eq!(step["version_changed"], false);
    // The reported version: the tag's, with its source.
    assert_eq!(
        step["from_release"],
        serde_json::json!({"version": "1.1.0", "source": "tag", "shown": "1.1.0 (tag)"})
    );
    assert_eq!(step["to_release"]["shown"], "1.2.0 (tag)");
    assert_eq!(step["release_version_changed"], true);
    assert_eq!(j["summary"]["restarts_saved"], 2);
    assert_eq!(j["summary"]["versions_from_tags"], 4);
    assert_eq!(j["summary"]["free_releases"], 2);

    let table = repo.fpcheck(&["history", "--no-cache"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(
        table.stdout.contains("1.1.0 (tag) → 1.2.0 (tag)"),
        "{}",
        table.stdout
    );
    assert!(
        table.stdout.contains(
            "the fingerprint saved 2 restarts over restarting on every version bump. \
             4 releases have no version file: their tag's version is shown (tag) and counted; \
             the reference updater reads version.json only and sees none."
        ),
        "{}",
        table.stdout
    );
    for format in ["markdown", "html"] {
        let run = repo.fpcheck(&["history", "--no-cache", "--format", format]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains("1.1.0 (tag) → 1.2.0 (tag)"),
            "{format}: {}",
            run.stdout
        );
    }
    let md = repo
        .fpcheck(&["history", "--no-cache", "--format", "markdown"])
        .stdout;
    assert!(md.contains("The fingerprint saved **2** restarts"), "{md}");
    assert!(
        md.contains("the reference updater reads `version.json` only"),
        "{md}"
    );

    // A version file, where there is one, is the version (not the tag).
    repo.write("version.json", "{\"version\": \"9.9.9\"}\n");
    repo.commit_and_tag("five", "v1.4.0");
    let j = repo.history_json(&["--no-cache"]);
    let last = &j["releases"][3];
    assert_eq!(last["to_release"]["shown"], "9.9.9");
    assert_eq!(last["to_release"]["source"], "version_file");
    assert_eq!(last["to_version"], "9.9.9");
    assert_eq!(j["summary"]["versions_from_tags"], 4);
}

#[test]
fn a_range_between_tags_without_a_version_file_reports_the_tags_versions() {
    let repo = tags_only();
    let j = repo.verdict_json(&["v1.1.0..v1.2.0"]);
    assert_eq!(j["from"]["version"], serde_json::Value::Null);
    assert_eq!(
        j["from"]["release_version"],
        serde_json::json!({"version": "1.1.0", "source": "tag", "shown": "1.1.0 (tag)"})
    );
    assert_eq!(j["to"]["release_version"]["shown"], "1.2.0 (tag)");
    let table = repo.fpcheck(&["v1.1.0..v1.2.0"]).stdout;
    assert!(table.contains("1.1.0 (tag)"), "{table}");
    let md = repo
        .fpcheck(&["v1.1.0..v1.2.0", "--format", "markdown"])
        .stdout;
    assert!(
        md.contains("| version | 1.1.0 (tag) | 1.2.0 (tag) |"),
        "{md}"
    );
    // A commit that is not given as a tag has no tag version.
    let j = repo.verdict_json(&["v1.1.0..HEAD"]);
    assert_eq!(j["to"]["release_version"], serde_json::Value::Null);
}

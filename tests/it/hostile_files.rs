//! Files planted where fpcheck reads or keeps its own: a kernel file
//! linked into a runtime directory, and `.git/fpcheck` made a link out of
//! the repository.

use std::time::{Duration, Instant};

use crate::support::{fpcheck_command, TestRepo};

/// `fpcheck ARGS` in `cwd`, killed (and the test failed) if it runs for
/// more than ten seconds: the bound a read of ~256 GiB would break.
fn within_seconds(cwd: &std::path::Path, args: &[&str]) -> (i32, String, String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let start = Instant::now();
    let mut child = fpcheck_command(cwd)
        .args(args)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fpcheck {args:?} still reading after ten seconds");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p| std::fs::read_to_string(p).unwrap();
    (
        status.code().unwrap(),
        read(&out),
        read(&err),
        start.elapsed(),
    )
}

/// A link to `/proc/self/pagemap` (a procfs file: st_size 0, ~256 GiB of
/// reads) in a runtime directory: refused as a kernel file at once, so the
/// fingerprint is unavailable (a restart), in `fingerprint --dir` and in
/// the gate's `status`.
#[test]
fn a_link_to_a_procfs_file_is_unreadable_not_read_for_ever() {
    let dir = tempfile::tempdir().unwrap();
    let rt = dir.path().join("rt");
    std::fs::create_dir(&rt).unwrap();
    std::fs::write(rt.join("a.py"), "a = 1\n").unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", rt.join("b.py")).unwrap();
    let (code, stdout, stderr, took) =
        within_seconds(dir.path(), &["fingerprint", "--dir", "rt", "--json"]);
    assert_eq!(code, 3, "{stdout} {stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["fingerprint"], "", "{j}");
    let reason = j["unavailable_reason"].as_str().unwrap();
    assert!(reason.contains("b.py"), "{reason}");
    assert!(reason.contains("proc"), "{reason}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The gate's status reads the installed runtime the same way.
    std::fs::create_dir(dir.path().join("state")).unwrap();
    let status = [
        "status",
        "--dir",
        "rt",
        "--marker",
        "state/marker.json",
        "--process-fingerprint",
        "3c43745c84d45b3a91549d9f364119f930f26b9b87ab5772fd95040bd8d043d6",
        "--process-version",
        "1.0.0",
        "--json",
    ];
    let (code, stdout, stderr, took) = within_seconds(dir.path(), &status);
    assert_eq!(code, 0, "{stdout} {stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["installed_fingerprint"], "", "{j}");
    assert_eq!(
        j["installed_unavailable_reason"],
        "rt/b.py: is a file of the kernel's proc file system, not a file's content"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// `.git/fpcheck` a link to a directory outside the repository: neither
/// cache (fingerprints, change kinds) is read or written there, the
/// commands answer as without a cache, and a second run hits nothing.
#[test]
fn a_linked_private_directory_is_no_cache_and_never_written() {
    let repo = TestRepo::new();
    repo.write("src/server.py", "s1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/server.py", "s2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), repo.join(".git/fpcheck")).unwrap();
    let first = repo.history_json(&[]);
    let range = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]);
    assert_eq!(range.code, 0, "{}", range.stderr);
    let second = repo.history_json(&[]);
    assert_eq!(first["releases"], second["releases"]);
    assert_eq!(second["stats"]["cached"], 0, "{second}");
    assert_eq!(second["stats"]["classify_cached"], 0, "{second}");
    let written: Vec<_> = std::fs::read_dir(elsewhere.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(written.is_empty(), "{written:?}");
    // The link is left as it was.
    assert!(std::fs::symlink_metadata(repo.join(".git/fpcheck"))
        .unwrap()
        .file_type()
        .is_symlink());
}

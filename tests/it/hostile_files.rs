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

/// v1.0.0 and v1.1.0, each changing `src/server.py` and the version.
fn two_server_releases() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "s1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.write("src/server.py", "s2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v1.1.0");
    repo
}

/// `.git/fpcheck` a link to a directory outside the repository: neither
/// cache (fingerprints, change kinds) is read or written there, the
/// commands answer as without a cache, and a second run hits nothing.
#[test]
fn a_linked_private_directory_is_no_cache_and_never_written() {
    let repo = two_server_releases();
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

/// Sets `path`'s access and modification times `secs` seconds back.
fn age(path: &std::path::Path, secs: i64) {
    use std::os::unix::ffi::OsStrExt;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let t = libc::timespec {
        tv_sec: (now - secs) as libc::time_t,
        tv_nsec: 0,
    };
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and two timespecs.
    let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), [t, t].as_ptr(), 0) };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

/// Temporary files a run killed mid-save left in `.git/fpcheck` are swept
/// by the next save: those of a process that is gone, and those older than
/// a day; a fresh one of a live process (a save in progress) stays. A link
/// named like one is removed itself, never followed (what it leads to
/// stays); a directory so named is not descended into and does not stop
/// the sweep; names of other shapes and files elsewhere are left.
#[test]
fn leftovers_of_killed_saves_are_swept_and_nothing_else() {
    let repo = two_server_releases();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let live = std::process::id();
    let private = repo.join(".git/fpcheck");
    std::fs::create_dir(&private).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("precious");
    std::fs::write(&target, "keep\n").unwrap();
    let target_dir = outside.path().join("dir");
    std::fs::create_dir(&target_dir).unwrap();
    std::fs::write(target_dir.join("inner"), "keep\n").unwrap();
    let plant = |name: &str| {
        let path = private.join(name);
        std::fs::write(&path, "half a save").unwrap();
        path
    };
    let gone = [
        plant(&format!(".fingerprints-v3.tmp-{dead}-0")),
        plant(&format!(".objects-v1.tmp-{dead}-7")),
        plant(&format!(".fingerprints-v2.tmp-{dead}-1")),
    ]
    .to_vec();
    let old_live = plant(&format!(".change-kinds-v1.tmp-{live}-5"));
    age(&old_live, 2 * 24 * 60 * 60);
    let fresh_live = plant(&format!(".fingerprints-v3.tmp-{live}-0"));
    let hour_old_live = plant(&format!(".objects-v1.tmp-{live}-1"));
    age(&hour_old_live, 60 * 60);
    let link = private.join(format!(".fingerprints-v3.tmp-{dead}-2"));
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dir_link = private.join(format!(".fingerprints-v3.tmp-{dead}-4"));
    std::os::unix::fs::symlink(&target_dir, &dir_link).unwrap();
    let dir = private.join(format!(".fingerprints-v3.tmp-{dead}-3"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("inside"), "x").unwrap();
    let fifo = private.join(format!(".objects-v1.tmp-{dead}-3"));
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path inside the test's temporary repository.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let other_shapes = [
        plant(&format!("notes.tmp-{dead}-0")),
        plant(&format!(".fingerprints-v3.tmp-{dead}-0.bak")),
        plant(&format!(".fingerprints-v3.tmp-0{dead}-0")),
    ];
    let elsewhere = [
        repo.join(&format!(".git/.fingerprints-v3.tmp-{dead}-0")),
        repo.join(&format!(".fingerprints-v3.tmp-{dead}-0")),
    ];
    for path in &elsewhere {
        std::fs::write(path, "not fpcheck's directory").unwrap();
    }

    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        private.join("fingerprints-v3").is_file(),
        "the cache was saved"
    );

    let exists = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok();
    for path in gone.iter().chain([&old_live, &link, &dir_link]) {
        assert!(!exists(path), "{} was not swept", path.display());
    }
    for path in
        other_shapes
            .iter()
            .chain(&elsewhere)
            .chain([&fresh_live, &hour_old_live, &dir, &fifo])
    {
        assert!(exists(path), "{} was removed", path.display());
    }
    assert_eq!(std::fs::read_to_string(dir.join("inside")).unwrap(), "x");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert_eq!(
        std::fs::read_to_string(target_dir.join("inner")).unwrap(),
        "keep\n"
    );
    // The fresh one of this (live) process is still there after another save.
    repo.write("src/server.py", "s3\n")
        .write("version.json", "{\"version\": \"1.2.0\"}\n");
    repo.commit_and_tag("1.2.0", "v1.2.0");
    let again = repo.fpcheck(&["v1.1.0..v1.2.0", "--format", "json"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(exists(&fresh_live));
}

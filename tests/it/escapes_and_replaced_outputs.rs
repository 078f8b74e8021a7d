//! What a pull request controls (its committed config, its working tree,
//! the arguments a workflow builds from it) cannot reach the terminal raw,
//! write into git's directory, panic the tool, or have an output that is a
//! FIFO, a device or another user's link written through; each case is
//! built as the hostile input itself.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::Value;

use crate::support::{is_char_device, two_releases, Run};

fn no_raw_controls(run: &Run, what: &str) {
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{what}: raw ESC or BEL on {name}: {text:?}"
        );
    }
}

/// Errors quote the pull request's committed config (its root, excluded
/// names, runtime names, version file): they reached the terminal raw.
#[test]
fn errors_quoting_a_committed_config_escape_control_characters() {
    let cases = [
        (
            "[runtime]\nroot = \"/\\u001b]0;pwned\\u0007\"\n",
            "runtime root `/\\x1b]0;pwned\\x07` is absolute",
        ),
        (
            "[runtime]\nexclude = [\"a/\\u001b[2J\"]\n",
            "excluded name `a/\\x1b[2J` contains `/`",
        ),
    ];
    for (config, shown) in cases {
        let repo = two_releases();
        repo.write("fpcheck.toml", config);
        repo.commit("hostile config");
        let run = repo.fpcheck(&["v1.0.0..HEAD"]);
        assert_eq!(run.code, 2, "{config}: {}", run.stderr);
        no_raw_controls(&run, config);
        assert!(run.stderr.contains(shown), "{config}: {}", run.stderr);
    }
    // Several runtimes are each analysed now: their names reach
    // the summary and the block headers, escaped.
    let repo = two_releases();
    repo.write(
        "fpcheck.toml",
        "[runtimes.\"\\u001b[31mNO RESTART\"]\nroot = \"src\"\n[runtimes.b]\nroot = \"src\"\n",
    );
    repo.commit("hostile runtime name");
    let run = repo.fpcheck(&["v1.0.0..HEAD"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    no_raw_controls(&run, "a runtime name");
    assert!(run.stdout.contains("\\x1b[31mNO RESTART"), "{}", run.stdout);
}

#[test]
fn patch_messages_escape_a_hostile_version_file() {
    let repo = two_releases();
    repo.write(
        "fpcheck.toml",
        "[runtime]\nversion_file = \"\\u001b[1A/version.json\"\n",
    );
    repo.commit("hostile version_file");
    for args in [
        &["patch", "v1.1.0..HEAD"][..],
        &["patch", "v1.1.0..HEAD", "--write"],
    ] {
        let run = repo.fpcheck(args);
        no_raw_controls(&run, &args.join(" "));
        assert!(run.stderr.contains("\\x1b[1A"), "{args:?}: {}", run.stderr);
    }
    // A name that exists: the "created" note quotes it too.
    repo.write(
        "fpcheck.toml",
        "[runtime]\nversion_file = \"v\\u0007.json\"\n",
    );
    repo.commit("bell");
    let run = repo.fpcheck(&["patch", "v1.1.0..HEAD", "--write"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    no_raw_controls(&run, "created note");
    assert!(run.stderr.contains("created v\\x07.json"), "{}", run.stderr);
}

/// `.GIT` is the git directory on a case-insensitive disk (macOS, Windows),
/// and git refuses the name in any case at any depth: `patch --write` must
/// not write there, and `--worktree` must not read there.
#[test]
fn git_directory_names_in_any_case_are_never_written_nor_read() {
    let repo = two_releases();
    repo.write(
        "fpcheck.toml",
        "[runtime]\nversion_file = \".GIT/hooks.json\"\n",
    );
    std::fs::create_dir(repo.join(".GIT")).unwrap();
    let run = repo.fpcheck(&["patch", "v1.0.0..", "--worktree", "--write"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("inside the git directory"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_dir(repo.join(".GIT")).unwrap().count(), 0);

    // --worktree: a link into `.Git/`, and a `.GIT` directory in the root,
    // hold what the commit holds (git adds neither file).
    let repo = two_releases();
    repo.symlink("src/cfg.py", "../.Git/config.py");
    repo.commit("a link into .Git");
    let commit = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]).json();
    repo.write(".Git/config.py", "[core]\n");
    repo.write("src/.GIT/extra.py", "x = 1\n");
    let worktree: Value = repo
        .fpcheck(&["v1.0.0..", "--worktree", "--format", "json"])
        .json();
    assert_eq!(
        (
            &worktree["to"]["fingerprint"],
            &worktree["to"]["unavailable_reason"]
        ),
        (
            &commit["to"]["fingerprint"],
            &commit["to"]["unavailable_reason"]
        )
    );
    assert_eq!(
        commit["to"]["unavailable_reason"],
        "src/cfg.py: symlink to ../.Git/config.py is broken"
    );
}

/// A TOML error's message is one line, without escapes of its own breaks.
#[test]
fn a_toml_error_is_one_readable_line() {
    let repo = two_releases();
    repo.write("fpcheck.toml", format!("[{}b]\n", "a.".repeat(200)));
    repo.commit("deep header");
    let run = repo.fpcheck(&["v1.0.0..HEAD"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("\\x0a"), "{}", run.stderr);
}

fn hostile_word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("--".to_string()),
        Just("-".to_string()),
        Just("..".to_string()),
        Just("...".to_string()),
        Just("--root=/".to_string()),
        Just("v1.0.0..".to_string()),
        Just("..v1.0.0".to_string()),
        Just("v1.0.0..HEAD:src".to_string()),
        Just("HEAD^{tree}..HEAD".to_string()),
        Just("../outside".to_string()),
        Just("src/app.py".to_string()),
        Just("\u{1b}[2J".to_string()),
        Just(".git/config".to_string()),
        Just("--worktree".to_string()),
        Just("--write".to_string()),
        Just("--version-file".to_string()),
        Just("--root".to_string()),
        Just("--config".to_string()),
        Just("--rev".to_string()),
        Just("--exclude".to_string()),
        // No `/`, `.` nor a leading `-`: nothing generated can name a path
        // outside the repository or a new option.
        "[a-z:@^~]{0,8}",
    ]
}

/// No argument combination of the range, `patch` and `fingerprint` makes
/// fpcheck panic (a panic exits 101), whatever paths and names it is given.
/// Nothing generated can write outside the repository: no output option
/// (`-o`, `--patch-out`) is generated, and the only path that climbs
/// (`../outside`) is refused as a version file and read-only elsewhere.
#[test]
fn no_argument_combination_panics() {
    let repo = two_releases();
    repo.symlink("src/loop.py", "loop.py");
    repo.symlink("src/abs.py", "/etc/passwd");
    repo.write("src/deep/x.py", "y = 1\n");
    let config = proptest::test_runner::Config {
        cases: 48,
        failure_persistence: None,
        ..Default::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let strategy = (
        prop_oneof![
            Just(vec![]),
            Just(vec!["patch".to_string()]),
            Just(vec!["fingerprint".to_string()]),
        ],
        proptest::collection::vec(hostile_word(), 0..5),
    );
    runner
        .run(&strategy, |(command, words)| {
            let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
            args.extend(words.iter().map(String::as_str));
            let run = repo.fpcheck(&args);
            prop_assert!(
                run.code != 101 && !run.stderr.contains("panicked"),
                "{args:?}: {} {}",
                run.code,
                run.stderr
            );
            Ok(())
        })
        .unwrap();
}

/// Runs fpcheck in `cwd`, killed after `secs` seconds: `None` when it hung.
fn run_with_timeout(cwd: &Path, args: &[&str], secs: u64) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fpcheck"))
        .current_dir(cwd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn chown_nobody(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: lchown with a valid NUL-terminated path, inside a temporary
    // directory; 65534 is `nobody`, standing for another local user.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
}

/// The installed tree's marker directory is writable by another local user.
/// Written in place, their FIFO at an output hung fpcheck forever, and their
/// link to a device made a root gate write the marker into the device,
/// report "marker written" and leave no marker. Another user's node is
/// replaced, as a regular file would be.
#[test]
fn another_users_fifo_or_link_to_a_device_at_an_output_is_replaced() {
    let tree = tempfile::tempdir().unwrap();
    let top = tree.path();
    std::fs::create_dir_all(top.join("src")).unwrap();
    std::fs::create_dir_all(top.join("markers")).unwrap();
    std::fs::write(top.join("src/app.py"), "x = 1\n").unwrap();
    std::fs::write(top.join("src/version.json"), "{\"version\": \"1.0.0\"}\n").unwrap();
    let code = run_with_timeout(
        top,
        &["snapshot", "--dir", "src", "--out", "before.json"],
        60,
    );
    assert_eq!(code, Some(0));
    std::fs::write(top.join("src/app.py"), "x = 2\n").unwrap();
    std::fs::write(top.join("src/version.json"), "{\"version\": \"1.1.0\"}\n").unwrap();
    let device = top.join("disk");
    let c = std::ffi::CString::new(device.to_str().unwrap()).unwrap();
    // SAFETY: mknod with a valid NUL-terminated path, in a temporary
    // directory; (1, 3) is the null device's number, standing for a disk.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());

    // `snapshot --out` writes without reading first; the gate reads the
    // old marker before writing it, so it meets a FIFO on its read side
    // (the gate's own hostile case) and is tried with the link only.
    let cases = [
        (
            "fifo",
            "markers/before.json",
            &["snapshot", "--dir", "src", "--out"][..],
        ),
        (
            "link to a device",
            "markers/before.json",
            &["snapshot", "--dir", "src", "--out"],
        ),
        (
            "link to a device",
            "markers/MARKER.json",
            &[
                "gate",
                "--dir",
                "src",
                "--before",
                "before.json",
                "--marker",
            ],
        ),
    ];
    for (planted, rel, command) in cases {
        let target = top.join(rel);
        let _ = std::fs::remove_file(&target);
        if planted == "fifo" {
            crate::support::mkfifo(&target, 0o666);
        } else {
            std::os::unix::fs::symlink(&device, &target).unwrap();
        }
        chown_nobody(&target);
        let mut args = command.to_vec();
        args.push(rel);
        let code = run_with_timeout(top, &args, 60);
        assert_eq!(code, Some(0), "{planted} at {rel}: hung or failed");
        let meta = std::fs::symlink_metadata(&target).unwrap();
        assert!(meta.file_type().is_file(), "{planted} at {rel}: {meta:?}");
        let j: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
        assert!(j.is_object(), "{planted} at {rel}: {j}");
        if rel.ends_with("MARKER.json") {
            assert_eq!(j["required"], true, "{j}");
        }
        assert!(is_char_device(&device));
    }

    // A device is root's making whoever owns it (a terminal belongs to its
    // user): written in place, never replaced.
    chown_nobody(&device);
    let code = run_with_timeout(top, &["snapshot", "--dir", "src", "--out", "disk"], 60);
    assert_eq!(code, Some(0));
    assert!(is_char_device(&device));

    // A link of the user's own (here root's) is followed whoever owns what
    // it leads to, as `/dev/stdout` leads to the calling shell's pipe.
    let pipe = top.join("pipe");
    crate::support::mkfifo(&pipe, 0o666);
    chown_nobody(&pipe);
    std::os::unix::fs::symlink(&pipe, top.join("stdout")).unwrap();
    let reader = {
        let pipe = pipe.clone();
        std::thread::spawn(move || std::fs::read(pipe).unwrap())
    };
    let code = run_with_timeout(top, &["snapshot", "--dir", "src", "--out", "stdout"], 60);
    assert_eq!(code, Some(0));
    assert!(!reader.join().unwrap().is_empty());
    let link = std::fs::symlink_metadata(top.join("stdout")).unwrap();
    assert!(link.file_type().is_symlink());

    // The user's own FIFO (here root's) is still written in place.
    let out = top.join("report.json");
    crate::support::mkfifo(&out, 0o600);
    let reader = {
        let out = out.clone();
        std::thread::spawn(move || std::fs::read(out).unwrap())
    };
    let code = run_with_timeout(
        top,
        &["snapshot", "--dir", "src", "--out", "report.json"],
        60,
    );
    assert_eq!(code, Some(0));
    assert!(!reader.join().unwrap().is_empty());
    assert!(std::fs::symlink_metadata(&out)
        .unwrap()
        .file_type()
        .is_fifo());
}

/// A nested repository (a checked-out submodule, a clone inside the tree)
/// is a gitlink in the commit, whose files it cannot see: the fingerprint is
/// unavailable. `--worktree` hashed its files instead, and could answer "no
/// restart" where the commit answers "restart".
#[test]
fn a_nested_repository_in_the_worktree_is_a_submodule_as_in_the_commit() {
    let repo = two_releases();
    let nested = repo.join("src/vendored");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("lib.py"), "v = 1\n").unwrap();
    crate::support::git_in(&nested, &["init", "-q"]);
    crate::support::git_in(&nested, &["add", "-A"]);
    crate::support::git_in(
        &nested,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "v",
        ],
    );
    // A link into it, too: git mode says the link points into a submodule.
    repo.symlink("src/via.py", "vendored/lib.py");
    let worktree = repo
        .fpcheck(&["v1.0.0..", "--worktree", "--format", "json"])
        .json();
    repo.commit("embed the repository");
    assert_eq!(
        repo.git(&["ls-files", "-s", "src/vendored"])
            .split(' ')
            .next(),
        Some("160000")
    );
    let commit = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]).json();
    assert_eq!(commit["to"]["fingerprint"], "", "{commit}");
    assert_eq!(worktree["to"]["fingerprint"], "", "{worktree}");
    assert_eq!(worktree["restart_required"], commit["restart_required"]);

    // Without the link, the reasons are the same words.
    repo.remove("src/via.py");
    let worktree = repo
        .fpcheck(&["v1.0.0..", "--worktree", "--format", "json"])
        .json();
    repo.commit("no link");
    let commit = repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]).json();
    assert_eq!(
        worktree["to"]["unavailable_reason"],
        commit["to"]["unavailable_reason"]
    );
    assert!(
        commit["to"]["unavailable_reason"]
            .as_str()
            .unwrap()
            .contains("src/vendored is a submodule"),
        "{commit}"
    );
}

/// `fingerprint`'s unavailable reason and every `fpcheck: warning:` line
/// (fingerprint, snapshot, gate) quote file names and link targets.
#[test]
fn fingerprint_and_snapshot_warnings_escape_names() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("ok.py"), "a = 1\n").unwrap();
    std::os::unix::fs::symlink("/nowhere/\u{1b}]0;pwn\u{7}", src.join("\u{1b}[31mx.py")).unwrap();
    for args in [
        &["fingerprint", "--dir", "src"][..],
        &["snapshot", "--dir", "src"],
    ] {
        let run = crate::support::fpcheck_in(dir.path(), args);
        no_raw_controls(&run, &args.join(" "));
        assert!(
            run.stderr
                .contains("src/\\x1b[31mx.py: symlink to /nowhere/\\x1b]0;pwn\\x07"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

/// `-o /dev/stdout` with stdout redirected to a file (`> report.json`, or
/// `>> log` in CI): `/dev/stdout` is root's link to `/proc/self/fd/1`,
/// which led to a regular file, so the report was renamed over the link,
/// replacing the machine's `/dev/stdout` with a plain file, and the
/// redirected file stayed empty. Built here with our own link to the
/// child's descriptor in a temp dir (never the real `/dev/stdout`): every
/// output flag writes through the descriptor, appending as `>>` asked, and
/// the link stays a link.
#[test]
fn an_output_that_is_our_own_descriptor_is_written_through_it() {
    let repo = two_releases();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let twice = dir.path().join("out");
    std::os::unix::fs::symlink(&link, &twice).unwrap();
    let link_s = link.to_str().unwrap();
    let twice_s = twice.to_str().unwrap();
    let main_out = dir.path().join("table.txt").to_str().unwrap().to_string();
    let report = format!("json={link_s}");
    let cases: [Vec<&str>; 5] = [
        vec!["v1.0.0..v1.1.0", "--format", "json", "-o", link_s],
        vec!["v1.0.0..v1.1.0", "--format", "json", "-o", twice_s],
        vec!["v1.0.0..v1.1.0", "-o", &main_out, "--report", &report],
        vec!["history", "--format", "json", "-o", link_s],
        vec![
            "v1.0.0..v1.1.0",
            "--format",
            "json",
            "-o",
            "/proc/self/fd/1",
        ],
    ];
    for args in cases {
        let captured = dir.path().join("captured");
        std::fs::write(&captured, b"prior\n").unwrap();
        let stdout = std::fs::OpenOptions::new()
            .append(true)
            .open(&captured)
            .unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_fpcheck"))
            .current_dir(repo.path())
            .args(&args)
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}");
        let text = std::fs::read_to_string(&captured).unwrap();
        let report = text
            .strip_prefix("prior\n")
            .unwrap_or_else(|| panic!("{args:?}: not appended: {text:?}"));
        let json: Value = serde_json::from_str(report)
            .unwrap_or_else(|e| panic!("{args:?}: not the report ({e}): {report:?}"));
        assert_eq!(json["schema_version"], 1, "{args:?}");
        for l in [&link, &twice] {
            let meta = std::fs::symlink_metadata(l).unwrap();
            assert!(meta.file_type().is_symlink(), "{args:?}: {l:?} replaced");
        }
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(left.is_empty(), "{args:?}: {left:?}");
    }
}

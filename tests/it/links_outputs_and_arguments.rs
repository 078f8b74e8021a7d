//! Hostile repositories, configs and files: fpcheck never reads
//! or writes outside the repository through links, never replaces a device
//! or FIFO, never lets a pull request choose the settings its base is judged
//! by, and never takes a revision for an option.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use serde_json::Value;

use crate::support::{is_char_device, mkfifo, two_releases, Run};

fn json(run: &Run) -> Value {
    assert!(
        run.code == 0 || run.code == 1,
        "{}{}",
        run.stdout,
        run.stderr
    );
    run.json()
}

fn mknod_char(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mknod with a valid NUL-terminated path; (1, 3) is the null
    // device's number, made inside a temporary directory (tests run as root).
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
}

// patch --write.

#[test]
fn patch_write_never_leaves_the_working_tree_nor_enters_git() {
    let repo = two_releases();
    let outside = tempfile::tempdir().unwrap();
    // A directory of the version file's path is a link out of the tree.
    repo.symlink("meta", outside.path().to_str().unwrap());
    let run = repo.fpcheck(&[
        "patch",
        "v1.0.0..",
        "--write",
        "--version-file",
        "meta/version.json",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("outside the working tree")
            && run.stderr.contains("nothing was written"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);

    // The config's version_file points into .git, directly or by a link.
    for (target, link) in [
        (".git/hooks/post-checkout", None),
        ("gitdir/config.json", Some(".git")),
    ] {
        if let Some(to) = link {
            repo.symlink("gitdir", to);
        }
        repo.write(
            "fpcheck.toml",
            format!("[runtime]\nversion_file = \"{target}\"\n"),
        );
        let run = repo.fpcheck(&["patch", "v1.0.0..", "--worktree", "--write"]);
        assert_eq!(run.code, 2, "{target}: {}", run.stderr);
        assert!(
            run.stderr.contains("inside the git directory"),
            "{target}: {}",
            run.stderr
        );
    }
    assert!(!repo.join(".git/hooks/post-checkout").exists());
    assert!(!repo.join(".git/config.json").exists());

    // A link inside the tree is still followed, and the file it names edited.
    repo.remove("fpcheck.toml").remove("gitdir").remove("meta");
    repo.write("meta/real.json", "{\"version\": \"1.1.0\"}\n");
    repo.symlink("meta/version.json", "real.json");
    let run = repo.fpcheck(&[
        "patch",
        "v1.0.0..",
        "--write",
        "--version-file",
        "meta/version.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(repo.join("meta/version.json").is_symlink());
    let written: Value =
        serde_json::from_slice(&std::fs::read(repo.join("meta/real.json")).unwrap()).unwrap();
    assert_eq!(written["runtime_fingerprint"].as_str().unwrap().len(), 64);
}

// the config.

#[test]
fn a_config_link_is_refused_and_an_error_never_quotes_the_file() {
    let repo = two_releases();
    let secret = tempfile::tempdir().unwrap();
    let secret_file = secret.path().join("environ");
    std::fs::write(&secret_file, "TOKEN=hunter2\n").unwrap();

    // In the working tree (read for --worktree) and through --config.
    repo.symlink("fpcheck.toml", secret_file.to_str().unwrap());
    for args in [
        vec!["v1.0.0..", "--worktree"],
        vec!["v1.0.0..v1.1.0", "--config", "fpcheck.toml"],
    ] {
        let run = repo.fpcheck(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
        assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    }
    // Committed as a link at an end.
    repo.commit("config link");
    let run = repo.fpcheck(&["v1.0.0..HEAD"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "fpcheck: error: cannot read the config fpcheck.toml at HEAD: it is a symbolic link, which fpcheck never follows for its config: commit the file itself"
    );

    // A TOML error says where, never what the line holds.
    repo.remove("fpcheck.toml");
    repo.write("fpcheck.toml", "[runtime]\nroot = \"src\"\nTOKEN hunter2\n");
    let run = repo.fpcheck(&["v1.0.0..", "--worktree"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.trim_end().ends_with(
            "fpcheck.toml is not a valid fpcheck config: line 3, column 7: expected `.`, `=`"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
}

// --worktree answers what its commit would.

#[test]
fn worktree_links_resolve_inside_the_repository_as_the_commit_would() {
    let outside = tempfile::tempdir().unwrap();
    let passwd = outside.path().join("passwd");
    std::fs::write(&passwd, "root:x:0:0\n").unwrap();
    let cases: [(&str, String); 4] = [
        ("src/pw.py", passwd.display().to_string()),
        ("src/up.py", "../../outside.py".into()),
        ("src/git.py", "../.git/config".into()),
        ("src/ok.py", "../lib/ok.py".into()),
    ];
    for (link, target) in &cases {
        let repo = two_releases();
        repo.write("lib/ok.py", "shared = 1\n");
        repo.symlink(link, target);
        let worktree = json(&repo.fpcheck(&["v1.0.0..", "--worktree", "--format", "json"]));
        repo.commit("as the working tree is");
        let commit = json(&repo.fpcheck(&["v1.0.0..HEAD", "--format", "json"]));
        assert_eq!(
            (
                &worktree["to"]["fingerprint"],
                &worktree["to"]["unavailable_reason"]
            ),
            (
                &commit["to"]["fingerprint"],
                &commit["to"]["unavailable_reason"]
            ),
            "{link} -> {target}"
        );
        let inside = *link == "src/ok.py";
        assert_eq!(
            commit["to"]["fingerprint"] != "",
            inside,
            "{link}: {commit}"
        );
    }
    // The reason names the link and why, in the words git mode uses.
    let repo = two_releases();
    repo.symlink("src/pw.py", passwd.to_str().unwrap());
    let j = json(&repo.fpcheck(&["v1.0.0..", "--worktree", "--format", "json"]));
    assert_eq!(
        j["to"]["unavailable_reason"],
        format!(
            "src/pw.py: symlink to {} is absolute (a checkout would read outside the repository)",
            passwd.display()
        )
    );
}

#[test]
fn a_worktree_root_that_is_a_link_out_of_the_repository_is_not_read() {
    let repo = two_releases();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("evil.py"), "x = 1\n").unwrap();
    repo.remove("src");
    repo.symlink("src", outside.path().to_str().unwrap());
    let j = json(&repo.fpcheck(&["v1.0.0..", "--worktree", "--format", "json"]));
    assert_eq!(j["to"]["fingerprint"], "");
    assert_eq!(j["restart_required"], true);
    let reason = j["to"]["unavailable_reason"].as_str().unwrap();
    assert!(
        reason.contains("is a symbolic link that is absolute"),
        "{reason}"
    );
}

// devices and FIFOs as output targets.

#[test]
fn outputs_to_a_device_or_a_fifo_are_written_in_place() {
    let repo = two_releases();
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    mknod_char(&null);
    let null_s = null.to_str().unwrap();
    for args in [
        vec!["v1.0.0..v1.1.0", "-o", null_s],
        vec!["v1.0.0..v1.1.0", "--patch-out", null_s],
        vec!["snapshot", "--dir", "src", "--out", null_s],
    ] {
        let run = repo.fpcheck(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(is_char_device(&null), "{args:?} replaced the device");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // The gate's marker, when a restart is required, is refused.
    let before = dir.path().join("before.json");
    repo.write("src/version.json", "{\"version\": \"2.0.0\"}\n");
    let run = repo.fpcheck(&[
        "snapshot",
        "--dir",
        "src",
        "--out",
        before.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    repo.write("src/app.py", "def main(): return 3\n")
        .write("src/version.json", "{\"version\": \"2.1.0\"}\n");
    let run = repo.fpcheck(&[
        "gate",
        "--dir",
        "src",
        "--before",
        before.to_str().unwrap(),
        "--marker",
        null_s,
    ]);
    // The marker is fpcheck's own file, not an output stream: a device
    // there is neither written nor replaced, and the gate asks for a
    // restart (exit 5) saying what is there.
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stdout.contains("marker       NOT written"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("it is a character device, not a regular file"),
        "{}",
        run.stderr
    );
    assert!(is_char_device(&null), "gate --marker replaced the device");

    let fifo = dir.path().join("report");
    mkfifo(&fifo, 0o600);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let run = repo.fpcheck(&[
        "v1.0.0..v1.1.0",
        "--format",
        "json",
        "-o",
        fifo.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = reader.join().unwrap();
    let j: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(j["restart_required"], true);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

// revisions that read as options.

#[test]
fn revisions_starting_with_a_dash_are_refused_and_double_dash_ends_options() {
    let repo = two_releases();
    let ok = repo.fpcheck(&["--format", "json", "--", "v1.0.0..v1.1.0"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ok.json()["restart_required"], true);
    for range in ["--root=nowhere..HEAD", "-x", "v1.0.0..--root=x"] {
        let run = repo.fpcheck(&["--", range]);
        assert_eq!(run.code, 2, "{range}: {}", run.stderr);
        assert!(
            run.stderr.contains("starts with `-`"),
            "{range}: {}",
            run.stderr
        );
        let run = repo.fpcheck(&["patch", "--", range]);
        assert_eq!(run.code, 2, "patch {range}: {}", run.stderr);
    }
    let run = repo.fpcheck(&["fingerprint", "--rev=-x"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("starts with `-`"), "{}", run.stderr);
}

// a root at neither end.

#[test]
fn a_root_at_neither_end_is_a_usage_error_naming_what_exists() {
    let repo = two_releases();
    repo.write("lib/x.py", "x\n");
    repo.commit("lib");
    let run = repo.fpcheck(&["v1.0.0..HEAD", "--root", "scr"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "fpcheck: error: the runtime root `scr` exists at neither end (directories at the repository's top: lib, src): pass --root DIR, or set `root` in fpcheck.toml"
    );
    assert!(run.stdout.is_empty());
    let run = repo.fpcheck(&["v1.0.0..", "--worktree", "--root", "scr"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Missing at one end only: the spec's answer (unavailable, restart).
    let j = json(&repo.fpcheck(&["v1.0.0..HEAD", "--root", "lib", "--format", "json"]));
    assert_eq!(j["reason"], "fingerprint_unavailable");
    assert_eq!(j["restart_required"], true);
}

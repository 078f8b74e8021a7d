use super::*;

fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    names.sort();
    names
}

/// Makes a FIFO at `path` (in a test's temp dir) with `mode`.
#[cfg(unix)]
fn mkfifo(path: &Path, mode: libc::mode_t) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    let made = unsafe { libc::mkfifo(c.as_ptr(), mode) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// Makes a character device 1:3 (what /dev/null is) at `path`, in a
/// test's temp dir: never the real one.
#[cfg(unix)]
fn like_dev_null(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mknod with a valid NUL-terminated path.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
    assert_eq!(
        made,
        0,
        "mknod {} needs root, as the tests run",
        path.display()
    );
}

#[cfg(unix)]
#[test]
fn descriptors_are_named_as_a_shell_names_them() {
    let pid = std::process::id();
    for (path, fd) in [
        ("/dev/fd/1".to_string(), Some(1)),
        ("/proc/self/fd/2".to_string(), Some(2)),
        ("/proc/thread-self/fd/7".to_string(), Some(7)),
        (format!("/proc/{pid}/fd/3"), Some(3)),
        (format!("/proc/{}/fd/3", pid + 1), None),
        ("/proc/self/fd/x".to_string(), None),
        ("/proc/self/fd/-1".to_string(), None),
        ("/proc/self/../self/fd/1".to_string(), None),
        ("proc/self/fd/1".to_string(), None),
        ("/tmp/fd/1".to_string(), None),
    ] {
        assert_eq!(descriptor_name(Path::new(&path)), fd, "{path}");
    }
}

/// A link of our own to one of our descriptors (what `/dev/stdout` is)
/// whose file is a regular one: written through the descriptor, at its
/// offset and in its mode, and the link stays. Before, the rename
/// replaced the link with the report (as root: `/dev/stdout` itself).
#[cfg(unix)]
#[test]
fn a_link_to_our_descriptor_is_written_through_it_and_kept() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("captured");
    fs::write(&file, b"prior\n").unwrap();
    let open = OpenOptions::new().append(true).open(&file).unwrap();
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink(format!("/proc/self/fd/{}", open.as_raw_fd()), &link).unwrap();
    let twice = dir.path().join("stdout2");
    std::os::unix::fs::symlink("stdout", &twice).unwrap();
    write_atomic(&link, b"one\n").unwrap();
    write_atomic(&twice, b"two\n").unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"prior\none\ntwo\n");
    for l in [&link, &twice] {
        assert!(fs::symlink_metadata(l).unwrap().file_type().is_symlink());
    }
    assert!(leftovers(dir.path()).is_empty());
}

/// Another user's link to one of our descriptors is not followed as
/// ours: it is judged as any other target (replaced, as a regular file
/// would be), so it cannot steer a root gate's marker into a file the
/// gate holds open.
#[cfg(unix)]
#[test]
fn another_users_link_to_our_descriptor_is_not_ours() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("held");
    fs::write(&file, b"held\n").unwrap();
    let open = OpenOptions::new().append(true).open(&file).unwrap();
    let link = dir.path().join("marker");
    std::os::unix::fs::symlink(format!("/proc/self/fd/{}", open.as_raw_fd()), &link).unwrap();
    let c = std::ffi::CString::new(link.to_str().unwrap()).unwrap();
    // SAFETY: lchown with a valid NUL-terminated path in a temp dir;
    // 65534 is `nobody`, standing for another local user.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), 65534, 65534) }, 0);
    assert_eq!(own_descriptor(&link), None);
    write_atomic(&link, b"marker\n").unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"held\n");
    assert_eq!(fs::read(&link).unwrap(), b"marker\n");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_file());
}

#[test]
fn replaces_and_creates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    write_atomic(&path, b"one").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"one");
    write_atomic(&path, b"two").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"two");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn a_failure_before_the_rename_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    write_atomic(&path, b"old").unwrap();
    let mut seen = None;
    let err = write_atomic_with(&path, b"new", |tmp| {
        // The new bytes are complete in the temporary file...
        seen = Some(fs::read(tmp).unwrap());
        Err(io::Error::other("injected"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "injected");
    assert_eq!(seen.as_deref(), Some(&b"new"[..]));
    // ...and the target still holds the old ones, with nothing left over.
    assert_eq!(fs::read(&path).unwrap(), b"old");
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn leftovers_of_this_target_only_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.json");
    for name in [
        ".m.json.tmp-1-0",
        ".m.json.tmp-2-5",
        ".other.json.tmp-1-0",
        "m.json",
    ] {
        fs::write(dir.path().join(name), b"x").unwrap();
    }
    assert_eq!(remove_leftovers(&path).unwrap(), 2);
    assert_eq!(leftovers(dir.path()), [".other.json.tmp-1-0"]);
    assert!(path.exists());
}

/// A directory named like a leftover (made first, so any order meets it)
/// is neither descended into nor a reason to stop; a link so named is
/// removed itself, what it leads to kept.
#[cfg(unix)]
#[test]
fn an_odd_leftover_does_not_stop_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("keep");
    fs::write(&target, b"k").unwrap();
    let path = dir.path().join("m.json");
    for i in 0..4 {
        let sub = dir.path().join(format!(".m.json.tmp-9-{i}"));
        fs::create_dir(&sub).unwrap();
        fs::write(sub.join("inner"), b"x").unwrap();
    }
    for i in 4..8 {
        fs::write(dir.path().join(format!(".m.json.tmp-9-{i}")), b"x").unwrap();
    }
    std::os::unix::fs::symlink(&target, dir.path().join(".m.json.tmp-9-8")).unwrap();
    assert_eq!(remove_leftovers(&path).unwrap(), 5);
    let left = leftovers(dir.path());
    assert_eq!(
        left,
        (0..4)
            .map(|i| format!(".m.json.tmp-9-{i}"))
            .collect::<Vec<_>>()
    );
    assert!(dir.path().join(".m.json.tmp-9-0/inner").exists());
    assert_eq!(fs::read(&target).unwrap(), b"k");
}

#[cfg(unix)]
#[test]
fn permissions_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.json");
    fs::write(&path, b"{}").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic(&path, b"{\"a\":1}").unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_in_place_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo, 0o600);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    write_atomic(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(leftovers(dir.path()).is_empty());
}

/// The name judged a FIFO is swapped for a link to a regular file
/// before the write opens it: the file is left alone.
#[cfg(unix)]
#[test]
fn a_special_file_swapped_before_the_write_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo, 0o600);
    let node = special_node(&fifo).unwrap().expect("our FIFO is special");
    let victim = dir.path().join("victim");
    fs::write(&victim, b"precious").unwrap();
    fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink(&victim, &fifo).unwrap();
    let err = write_in_place(&fifo, &node, b"overwritten").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
}

/// Our device node, judged special, is swapped for a FIFO that no one
/// will ever read (another user's, in a directory they can write): the
/// write is refused at once instead of waiting forever.
#[cfg(unix)]
#[test]
fn a_fifo_swapped_in_for_our_node_is_never_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    like_dev_null(&target);
    let node = special_node(&target)
        .unwrap()
        .expect("our device is special");
    fs::remove_file(&target).unwrap();
    mkfifo(&target, 0o666);
    let (tx, rx) = std::sync::mpsc::channel();
    let path = target.clone();
    std::thread::spawn(move || {
        let _ = tx.send(write_in_place(&path, &node, b"lost"));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the write waited on a FIFO it had not judged");
    let err = result.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
}

/// With no reader on our own FIFO and no /proc, the non-blocking path
/// says so instead of hanging.
#[cfg(unix)]
#[test]
fn the_fallback_refuses_a_fifo_without_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo, 0o600);
    let node = special_node(&fifo).unwrap().expect("our FIFO is special");
    let err = open_nonblocking(&fifo, &node).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "{err}");
    assert!(err.to_string().contains("no one is reading"), "{err}");
}

/// The race `patch --write` loses to a concurrent writer of the tree:
/// the directory was checked, then swapped for a link out of the tree.
#[cfg(unix)]
#[test]
fn beneath_never_follows_a_directory_swapped_for_a_link() {
    use std::os::unix::fs::PermissionsExt;
    let top = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(top.path().join("a/b")).unwrap();
    let name = std::ffi::OsStr::new("v.json");
    write_atomic_beneath(top.path(), Path::new("a/b"), name, b"one").unwrap();
    let target = top.path().join("a/b/v.json");
    fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
    write_atomic_beneath(top.path(), Path::new("a/b"), name, b"two").unwrap();
    assert_eq!(fs::read(&target).unwrap(), b"two");
    let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert!(leftovers(&top.path().join("a/b")).is_empty());

    // `a` becomes a link to a tree outside with the same shape.
    fs::create_dir_all(outside.path().join("b")).unwrap();
    fs::rename(top.path().join("a"), top.path().join("a.old")).unwrap();
    std::os::unix::fs::symlink(outside.path(), top.path().join("a")).unwrap();
    let err = write_atomic_beneath(top.path(), Path::new("a/b"), name, b"out").unwrap_err();
    assert!(
        matches!(err.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)),
        "{err}"
    );
    assert_eq!(fs::read_dir(outside.path().join("b")).unwrap().count(), 0);

    // A link, a FIFO or a directory at the name itself is never replaced.
    let dir = top.path().join("a.old/b");
    fs::remove_file(dir.join("v.json")).unwrap();
    std::os::unix::fs::symlink("elsewhere.json", dir.join("v.json")).unwrap();
    mkfifo(&dir.join("fifo"), 0o600);
    fs::create_dir(dir.join("sub")).unwrap();
    for n in ["v.json", "fifo", "sub"] {
        let err = write_atomic_beneath(
            top.path(),
            Path::new("a.old/b"),
            std::ffi::OsStr::new(n),
            b"x",
        )
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{n}: {err}");
    }
    assert!(fs::symlink_metadata(dir.join("v.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(!dir.join("elsewhere.json").exists());
    assert!(leftovers(&dir).is_empty());
    // A path that climbs is refused before anything is opened.
    let err = write_atomic_beneath(top.path(), Path::new("../x"), name, b"x").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn a_missing_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope/m.json");
    assert_eq!(
        write_atomic(&path, b"x").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

/// A chain of two links to another user's FIFO, the second link theirs
/// (`out -> ours -> theirs -> pipe`): the target is their choice, so the
/// name is replaced as a regular file would be, never written into nor
/// waited on. Before, only the first link's owner was checked. With every
/// link ours, the chain is trusted and the FIFO is special.
#[cfg(unix)]
#[test]
fn another_users_link_anywhere_in_a_chain_is_not_trusted() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let c = |p: &Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: lchown with valid NUL-terminated paths in a temp dir; 65534
    // is `nobody`, standing for another local user.
    let give_away =
        |p: &Path, uid: u32| assert_eq!(unsafe { libc::lchown(c(p).as_ptr(), uid, uid) }, 0);
    mkfifo(&at("pipe"), 0o600);
    give_away(&at("pipe"), 65534);
    std::os::unix::fs::symlink("pipe", at("theirs")).unwrap();
    give_away(&at("theirs"), 65534);
    std::os::unix::fs::symlink("theirs", at("ours")).unwrap();
    std::os::unix::fs::symlink("ours", at("out")).unwrap();
    assert!(!trusted_chain(&at("out")));
    assert!(special_node(&at("out")).unwrap().is_none());
    write_atomic(&at("out"), b"marker\n").unwrap();
    assert_eq!(fs::read(at("out")).unwrap(), b"marker\n");
    assert!(fs::symlink_metadata(at("out"))
        .unwrap()
        .file_type()
        .is_file());
    assert!(fs::symlink_metadata(at("pipe"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(leftovers(dir.path()).is_empty());
    // Every link ours (the FIFO still another user's): trusted, special.
    std::os::unix::fs::symlink("ours", at("out2")).unwrap();
    // SAFETY: geteuid has no preconditions.
    give_away(&at("theirs"), unsafe { libc::geteuid() });
    assert!(trusted_chain(&at("out2")));
    assert!(special_node(&at("out2")).unwrap().is_some());
}

/// What a hostile or careless hand can leave at a private file's name,
/// made in a temp dir: a FIFO, a device like `/dev/null`, a link to a
/// file in another temp dir (`outside`, which holds `outside`), a
/// dangling link, a directory.
#[cfg(unix)]
struct Planted {
    nodes: Vec<(&'static str, PathBuf)>,
    outside: PathBuf,
    /// The planted directory, then the one outside it (kept alive).
    dirs: [tempfile::TempDir; 2],
}

#[cfg(unix)]
fn plant() -> Planted {
    let (top, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (dir, outside) = (top.path(), elsewhere.path().join("elsewhere"));
    fs::write(&outside, b"outside").unwrap();
    let mut planted = Vec::new();
    let mut node = |kind: &'static str| {
        let path = dir.join(kind);
        planted.push((kind, path.clone()));
        path
    };
    mkfifo(&node("FIFO"), 0o666);
    like_dev_null(&node("character device"));
    std::os::unix::fs::symlink(&outside, node("symbolic link")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), node("dangling link")).unwrap();
    fs::create_dir(node("directory")).unwrap();
    fs::write(dir.join("directory/kept"), b"kept").unwrap();
    Planted {
        nodes: planted,
        outside,
        dirs: [top, elsewhere],
    }
}

/// `Occupied::Replace` (fpcheck's own directory): every planted node but
/// a directory is replaced by the new file; nothing is written through
/// (the link's target and the device are untouched); a directory is
/// refused and kept whole; no temporary file is left.
#[cfg(unix)]
#[test]
fn a_private_file_replaces_what_was_planted_at_its_name() {
    let planted = plant();
    for (kind, path) in &planted.nodes {
        let got = replace_private(path, b"cache", Occupied::Replace);
        if *kind == "directory" {
            let err = got.unwrap_err().to_string();
            assert_eq!(
                err,
                "it is a directory, not a regular file, and is left alone"
            );
            assert_eq!(fs::read(path.join("kept")).unwrap(), b"kept");
        } else {
            got.unwrap();
            let meta = fs::symlink_metadata(path).unwrap();
            assert!(meta.is_file(), "{kind}");
            assert_eq!(fs::read(path).unwrap(), b"cache", "{kind}");
        }
    }
    assert_eq!(fs::read(&planted.outside).unwrap(), b"outside");
    assert!(leftovers(planted.dirs[0].path()).is_empty());
}

/// `Occupied::Refuse` (a name the user gave): every planted node is left
/// as it was and the write refused, naming what is there; a regular file
/// is replaced with its mode kept, and a missing one created.
#[cfg(unix)]
#[test]
fn a_named_private_file_leaves_anything_but_a_regular_file_alone() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let planted = plant();
    for (kind, path) in &planted.nodes {
        let before = fs::symlink_metadata(path).unwrap().file_type();
        let err = replace_private(path, b"cache", Occupied::Refuse).unwrap_err();
        let kind_seen = if *kind == "dangling link" {
            "symbolic link"
        } else {
            kind
        };
        assert_eq!(
            err.to_string(),
            format!("it is a {kind_seen}, not a regular file, and is left alone")
        );
        let after = fs::symlink_metadata(path).unwrap().file_type();
        assert_eq!(
            (after.is_fifo(), after.is_char_device(), after.is_symlink()),
            (
                before.is_fifo(),
                before.is_char_device(),
                before.is_symlink()
            ),
            "{kind}"
        );
    }
    assert_eq!(fs::read(&planted.outside).unwrap(), b"outside");
    let dir = planted.dirs[0].path();
    let file = dir.join("file");
    fs::write(&file, b"old").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    replace_private(&file, b"cache", Occupied::Refuse).unwrap();
    assert_eq!(fs::read(&file).unwrap(), b"cache");
    let mode = fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    replace_private(&dir.join("new"), b"cache", Occupied::Refuse).unwrap();
    assert_eq!(fs::read(dir.join("new")).unwrap(), b"cache");
    assert!(leftovers(dir).is_empty());
}

#[test]
fn only_names_fpcheck_makes_are_temporary_files() {
    let made = temp_name("fingerprints-v3");
    assert_eq!(temp_pid(made.as_bytes()), Some(std::process::id() as i32));
    assert_eq!(temp_pid(b".objects-v1.tmp-12-0"), Some(12));
    assert_eq!(temp_pid(b".a.tmp-b.tmp-7-3"), Some(7));
    for other in [
        &b"fingerprints-v3"[..],
        b"fingerprints-v3.tmp-12-0",
        b"..tmp-12-0",
        b".x.tmp-0-0",
        b".x.tmp-012-0",
        b".x.tmp-12-01",
        b".x.tmp-12-",
        b".x.tmp--1-0",
        b".x.tmp-12-0-1",
        b".x.tmp-99999999999-0",
        b".x.tmp-12-0.bak",
    ] {
        assert_eq!(temp_pid(other), None, "{}", String::from_utf8_lossy(other));
    }
}

/// A marker that replaces a link takes nothing of the link's target: not
/// its setuid bit, not its world-writable mode, and the target is untouched.
#[test]
fn a_replaced_link_lends_the_marker_no_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    fs::write(&target, b"theirs").unwrap();
    fs::set_permissions(&target, fs::Permissions::from_mode(0o4777)).unwrap();
    let marker = dir.path().join("marker.json");
    std::os::unix::fs::symlink(&target, &marker).unwrap();
    super::replace_own(&marker, b"{}\n").unwrap();
    let meta = fs::symlink_metadata(&marker).unwrap();
    assert!(meta.is_file());
    assert_eq!(
        meta.permissions().mode() & 0o7022,
        0,
        "{:o}",
        meta.permissions().mode()
    );
    assert_eq!(fs::read(&target).unwrap(), b"theirs");
}

//! Atomic, durable file replacement.
//!
//! A reader of the file (a running server checking its restart marker, a
//! release tool reading `version.json`) must see either the old bytes or the
//! new ones, never a half-written file, whatever happens to the writer: a
//! crash, `kill -9`, a full disk, power loss. So the new bytes go to a
//! temporary file in the *same directory* (a rename is atomic only within
//! one file system), which is flushed to disk before it is renamed over the
//! target, and the directory is flushed after the rename so that the rename
//! itself survives a power loss.
//!
//! Atomic replacement is for regular files only. A target that is a device
//! or a FIFO (`-o /dev/null`, `-o /dev/stdout`, a named pipe a tool reads
//! from) is written in place, as a shell redirection would: renaming a file
//! over it would destroy the device node (as root, the machine's own
//! `/dev/null`) and leave every later reader with a plain file. Only when
//! root or the user running fpcheck owns it (and the link to it, if the
//! target is a link), though: another user's FIFO or link to a device in a
//! marker directory they can write is replaced (see `special_node`).
//! A name for one of fpcheck's own descriptors (`/dev/stdout`,
//! `/dev/fd/N`, `/proc/self/fd/N`) is written through that descriptor, as
//! a shell does, whatever it leads to: with stdout redirected to a file,
//! a rename would replace root's `/dev/stdout` link itself.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Replaces `path` with `bytes` atomically and durably.
///
/// The file's permissions are kept when it exists. On error the target is
/// untouched and the temporary file is removed; a crash can leave a
/// temporary file named `.NAME.tmp-*` beside the target, never a torn
/// target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`], calling `before_rename` with the temporary file's path
/// once it is written and flushed, just before the rename. An error from it
/// aborts the write, leaving the target untouched. Useful to validate the
/// new file in place, and to inject faults in tests. A target that is a
/// device or a FIFO is written in place (see the module's comment), with
/// no temporary file and so no call to `before_rename`.
pub fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(fd) = own_descriptor(path) {
        return write_descriptor(fd, bytes);
    }
    if let Some(node) = special_node(path)? {
        return write_in_place(path, &node, bytes);
    }
    let dir = parent_dir(path);
    let (tmp, mut file) = create_temp(&dir, path)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Ok(meta) = fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        // The data must be on disk before the rename makes it visible:
        // otherwise a power loss can leave the new name on empty blocks.
        file.sync_all()?;
        drop(file);
        before_rename(&tmp)?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(&dir)
}

/// [`write_atomic`] of `top/dir/name`, where no directory below `top` is
/// followed through a symbolic link: each one is opened with `O_NOFOLLOW`
/// from the one above, and the temporary file is created and renamed
/// relative to the last one. A directory swapped for a link after the
/// caller checked the path (to lead the write out of a working tree) makes
/// the write fail instead; so does anything but a regular file at `name`.
/// `top` itself is trusted (the caller's real path of it).
#[cfg(unix)]
pub fn write_atomic_beneath(
    top: &Path,
    dir: &Path,
    name: &std::ffi::OsStr,
    bytes: &[u8],
) -> io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut current = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(top)?;
    for part in dir.components() {
        let std::path::Component::Normal(part) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a plain path below {}",
                    dir.display(),
                    top.display()
                ),
            ));
        };
        current = beneath::open_dir(&current, part)?;
    }
    // `mode_t` is u16 on some systems: the casts are not always no-ops.
    #[allow(clippy::unnecessary_cast)]
    let mode = match beneath::mode_nofollow(&current, name)? {
        Some(mode) if mode & libc::S_IFMT as u32 == libc::S_IFREG as u32 => Some(mode & 0o7777),
        Some(_) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file (a link, directory or device is never replaced)",
            ))
        }
        None => None,
    };
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = std::ffi::OsString::from(format!(
            ".{}.tmp-{}-{n}",
            name.to_string_lossy(),
            std::process::id()
        ));
        match beneath::create_new(&current, &tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        beneath::rename(&current, &tmp, name)
    })();
    if let Err(e) = result {
        beneath::unlink(&current, &tmp);
        return Err(e);
    }
    current.sync_all()
}

/// The `*at` calls of [`write_atomic_beneath`], relative to an open directory.
#[cfg(unix)]
mod beneath {
    use std::ffi::{CString, OsStr};
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;

    fn c_name(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name holds a NUL byte"))
    }

    fn checked(fd: libc::c_int) -> io::Result<File> {
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just returned by openat, owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The directory `name` in `dir`; a link there is ELOOP, not followed.
    pub(super) fn open_dir(dir: &File, name: &OsStr) -> io::Result<File> {
        let c = c_name(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid descriptor and NUL-terminated name.
        checked(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) })
    }

    /// A new file `name` in `dir` (O_EXCL: never an existing file or link).
    pub(super) fn create_new(dir: &File, name: &OsStr) -> io::Result<File> {
        let c = c_name(name)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid descriptor and NUL-terminated name; mode as for File::create.
        checked(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, 0o666 as libc::c_uint) })
    }

    /// The mode of what is at `name` in `dir`, a link not followed;
    /// `None` when nothing is there.
    pub(super) fn mode_nofollow(dir: &File, name: &OsStr) -> io::Result<Option<u32>> {
        let c = c_name(name)?;
        // SAFETY: `stat` is plain data, written by fstatat before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor, NUL-terminated name and out pointer.
        let r = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::NotFound {
                Ok(None)
            } else {
                Err(e)
            };
        }
        Ok(Some(st.st_mode as u32))
    }

    pub(super) fn rename(dir: &File, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let fd = dir.as_raw_fd();
        // SAFETY: valid descriptors and NUL-terminated names.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub(super) fn unlink(dir: &File, name: &OsStr) {
        if let Ok(c) = c_name(name) {
            // SAFETY: a valid descriptor and NUL-terminated name.
            unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) };
        }
    }
}

/// Removes `path` and flushes its directory, so the removal survives a
/// power loss. A file already gone is not an error.
pub fn remove_durable(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => sync_dir(&parent_dir(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes temporary files that writers of `path` killed mid-write left
/// behind; returns how many. Only call it while holding a lock that every
/// writer of `path` takes: otherwise it could delete a live writer's file.
pub fn remove_leftovers(path: &Path) -> io::Result<usize> {
    let prefix = format!(".{}.tmp-", file_name(path));
    let mut removed = 0;
    for entry in fs::read_dir(parent_dir(path))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// `Some` when `path` (links followed, as a write would) is a device, FIFO or
/// socket that a rename must not replace: reached through a link that root
/// or the user running fpcheck owns, or else a device, or a FIFO or socket
/// that root or that user owns. Anything else is another user's node in a
/// directory they can write, planted to make a root gate write into a disk
/// (`MARKER.json -> /dev/sda`) or hang on a FIFO no one reads: it is
/// replaced, as a regular file would be.
///
/// Gives the metadata of the node judged special, so that
/// [`write_in_place`] can check it opened that very node.
fn special_node(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::metadata(path) {
        Ok(meta) => {
            let t = meta.file_type();
            if t.is_file() || t.is_dir() {
                return Ok(None);
            }
            let special = match fs::symlink_metadata(path) {
                // A link's owner chose its target: `/dev/stdout` (root's)
                // leads to a pipe that the calling shell's user owns.
                Ok(link) if link.file_type().is_symlink() => trusted_owner(&link),
                // Only root makes device nodes (a terminal may belong to
                // another user); anyone can make a FIFO.
                _ => is_device(&t) || trusted_owner(&meta),
            };
            Ok(special.then_some(meta))
        }
        // Nothing there (or a broken link): the rename creates the file.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The descriptor `path` names when it is one of this process's own, as
/// a shell redirection reads `/dev/stdout`, `/dev/stderr` and `/dev/fd/N`:
/// `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N` or
/// `/proc/PID/fd/N` (PID ours), or a chain of links leading to one, each
/// link owned by root or the user running fpcheck. Through such a link
/// (`/dev/stdout -> /proc/self/fd/1`) the target's type says nothing
/// about the name: with stdout redirected to a file, `-o /dev/stdout`
/// looked like a regular file and the rename replaced the machine's
/// `/dev/stdout` link (root's, in `/dev`) with the report. Another user's
/// link is not followed here: it is judged as any other target is.
#[cfg(unix)]
fn own_descriptor(path: &Path) -> Option<i32> {
    let mut current = path.to_path_buf();
    // As the kernel's own limit on nested links.
    for _ in 0..40 {
        if let Some(fd) = descriptor_name(&current) {
            return Some(fd);
        }
        let meta = fs::symlink_metadata(&current).ok()?;
        if !meta.file_type().is_symlink() || !trusted_owner(&meta) {
            return None;
        }
        let target = fs::read_link(&current).ok()?;
        current = if target.is_absolute() {
            target
        } else {
            parent_dir(&current).join(target)
        };
    }
    None
}

/// `N` when `path` is spelled as one of this process's descriptors.
#[cfg(unix)]
fn descriptor_name(path: &Path) -> Option<i32> {
    use std::path::Component;
    let fd: i32 = path.file_name()?.to_str()?.parse().ok()?;
    let dir: Vec<&std::ffi::OsStr> = path
        .parent()?
        .components()
        .map(|c| match c {
            Component::RootDir => Some(std::ffi::OsStr::new("/")),
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let pid = std::process::id().to_string();
    let ours = |p: &std::ffi::OsStr| p == "self" || p == "thread-self" || p == pid.as_str();
    let named = match dir.as_slice() {
        [root, dev, fd] => *root == "/" && *dev == "dev" && *fd == "fd",
        [root, proc, who, fd] => *root == "/" && *proc == "proc" && ours(who) && *fd == "fd",
        _ => false,
    };
    (named && fd >= 0).then_some(fd)
}

/// Writes `bytes` to this process's descriptor `fd`, at its offset and in
/// its mode (appending when the shell opened it with `>>`), without
/// closing it.
#[cfg(unix)]
fn write_descriptor(fd: i32, bytes: &[u8]) -> io::Result<()> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup has no memory preconditions; a bad descriptor is EBADF.
    let copy = unsafe { libc::dup(fd) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is a descriptor just made by dup, owned by nothing else.
    let mut file = unsafe { File::from_raw_fd(copy) };
    file.write_all(bytes)?;
    file.flush()
}

/// Owned by root or by the effective user (as `fs.protected_symlinks`
/// trusts a link).
#[cfg(unix)]
fn trusted_owner(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    meta.uid() == 0 || meta.uid() == unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
fn trusted_owner(_meta: &fs::Metadata) -> bool {
    true
}

#[cfg(unix)]
fn is_device(t: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_char_device() || t.is_block_device()
}

#[cfg(not(unix))]
fn is_device(_t: &fs::FileType) -> bool {
    false
}

/// Writes into an existing special file without creating or truncating
/// anything; a FIFO blocks until a reader opens it, as with `> fifo`.
/// Nothing is written unless the file opened is `node`, the one judged
/// special: a name swapped since (for a link to a regular file, or for
/// another user's FIFO that no one reads, in a directory another user can
/// write) is refused, not written over nor waited on.
fn write_in_place(path: &Path, node: &fs::Metadata, bytes: &[u8]) -> io::Result<()> {
    let mut file = open_verified(path, node)?;
    file.write_all(bytes)?;
    file.flush()
}

fn replaced_error(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} was replaced while fpcheck was writing it: nothing written; run again",
            path.display()
        ),
    )
}

/// Opens `path` for writing only if it is still `node`. On Linux the name
/// is first pinned with `O_PATH` (which neither blocks on a FIFO nor needs
/// permission), checked, and then that very node is opened for writing
/// through `/proc/self/fd`: a FIFO swapped in after the check can never be
/// the one the open waits on.
#[cfg(target_os = "linux")]
fn open_verified(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let pinned = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
        .open(path)?;
    if !same_node(&pinned.metadata()?, node) {
        return Err(replaced_error(path));
    }
    let through = PathBuf::from(format!("/proc/self/fd/{}", pinned_fd(&pinned)));
    let mut options = OpenOptions::new();
    // A terminal device must not become our controlling terminal.
    options.write(true).custom_flags(libc::O_NOCTTY);
    match options.open(&through) {
        Ok(file) if same_node(&file.metadata()?, node) => Ok(file),
        Ok(_) => Err(replaced_error(path)),
        // No /proc: open the name without blocking instead (below).
        Err(e) if e.kind() == io::ErrorKind::NotFound => open_nonblocking(path, node),
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_verified(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    open_nonblocking(path, node)
}

#[cfg(target_os = "linux")]
fn pinned_fd(file: &File) -> i32 {
    use std::os::fd::AsRawFd;
    file.as_raw_fd()
}

/// Opens `path` for writing without waiting on a FIFO, checks that it is
/// `node`, then makes the descriptor blocking for the write. A FIFO with
/// no reader at that moment is an error, not a hang.
#[cfg(unix)]
fn open_nonblocking(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                io::Error::new(
                    io::ErrorKind::WouldBlock,
                    format!(
                        "{}: a FIFO that no one is reading: nothing written",
                        path.display()
                    ),
                )
            } else {
                e
            }
        })?;
    if !same_node(&file.metadata()?, node) {
        return Err(replaced_error(path));
    }
    // SAFETY: fcntl on a descriptor we own, with valid commands.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    let file = OpenOptions::new().write(true).open(path)?;
    if !same_node(&file.metadata()?, node) {
        return Err(replaced_error(path));
    }
    Ok(file)
}

#[cfg(unix)]
fn same_node(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // The type and device number too: a node removed and another made in
    // its place can get the freed inode number.
    let kind = |m: &fs::Metadata| m.mode() & libc::S_IFMT;
    a.dev() == b.dev() && a.ino() == b.ino() && kind(a) == kind(b) && a.rdev() == b.rdev()
}

#[cfg(not(unix))]
fn same_node(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.file_type() == b.file_type()
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates a fresh temporary file beside `target`. The name is unique per
/// process and call, and `create_new` refuses to reuse a leftover.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = file_name(target);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into())
}

/// Flushes a directory's entries (the rename) to disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    // Windows cannot open a directory as a file; its rename is flushed with
    // the file system's journal.
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
        let c = std::ffi::CString::new(target.to_str().unwrap()).unwrap();
        // SAFETY: mknod/mkfifo with a valid NUL-terminated path. A character
        // device 1:3 (what /dev/null is) made here, in a temp dir.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
        assert_eq!(made, 0, "mknod needs root, as the tests run");
        let node = special_node(&target)
            .unwrap()
            .expect("our device is special");
        fs::remove_file(&target).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
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
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
        let c = std::ffi::CString::new(dir.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
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
}

//! Targets that are not regular files: devices, FIFOs and fpcheck's own
//! descriptors, written in place (see the module above), and only when the
//! node opened is the one judged.

use super::*;

/// `Some` when `path` (links followed, as a write would) is a device, FIFO or
/// socket that a rename must not replace: reached through a chain of links
/// that root or the user running fpcheck owns, every one of them, or else a
/// device, or a FIFO or socket that root or that user owns. Anything else is another user's node in a
/// directory they can write, planted to make a root gate write into a disk
/// (`MARKER.json -> /dev/sda`) or hang on a FIFO no one reads: it is
/// replaced, as a regular file would be.
///
/// Gives the metadata of the node judged special, so that
/// [`write_in_place`] can check it opened that very node.
pub(super) fn special_node(path: &Path) -> io::Result<Option<fs::Metadata>> {
    match fs::metadata(path) {
        Ok(meta) => {
            let t = meta.file_type();
            if t.is_file() || t.is_dir() {
                return Ok(None);
            }
            let special = match fs::symlink_metadata(path) {
                // A link's owner chose its target: `/dev/stdout` (root's)
                // leads to a pipe that the calling shell's user owns. Every
                // link of a chain chose the next one: one of another
                // user's anywhere (`out -> ours -> theirs -> /dev/sda`)
                // steers the write where that user wants.
                Ok(link) if link.file_type().is_symlink() => trusted_chain(path),
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

/// Whether every link in the chain at `path` (its last component, followed
/// link by link as the kernel would) is owned by root or the user running
/// fpcheck. A link whose target names nothing ends the chain: the kernel
/// resolves it itself (`/proc/self/fd/1 -> pipe:[123]`), and its own owner
/// was checked. More links than the kernel follows is untrusted.
pub(super) fn trusted_chain(path: &Path) -> bool {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&current) {
            Ok(meta) => meta,
            Err(e) => return e.kind() == io::ErrorKind::NotFound && current != path,
        };
        if !meta.file_type().is_symlink() {
            return true;
        }
        if !trusted_owner(&meta) {
            return false;
        }
        let Ok(target) = fs::read_link(&current) else {
            return false;
        };
        current = if target.is_absolute() {
            target
        } else {
            parent_dir(&current).join(target)
        };
    }
    false
}

/// As the kernel's own limit on nested links.
const MAX_LINKS: usize = 40;

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
pub(super) fn own_descriptor(path: &Path) -> Option<i32> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
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
pub(super) fn descriptor_name(path: &Path) -> Option<i32> {
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
pub(super) fn write_descriptor(fd: i32, bytes: &[u8]) -> io::Result<()> {
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
pub(super) fn trusted_owner(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    meta.uid() == 0 || meta.uid() == unsafe { libc::geteuid() }
}

#[cfg(not(unix))]
pub(super) fn trusted_owner(_meta: &fs::Metadata) -> bool {
    true
}

#[cfg(unix)]
pub(super) fn is_device(t: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    t.is_char_device() || t.is_block_device()
}

#[cfg(not(unix))]
pub(super) fn is_device(_t: &fs::FileType) -> bool {
    false
}

/// Writes into an existing special file without creating or truncating
/// anything; a FIFO blocks until a reader opens it, as with `> fifo`.
/// Nothing is written unless the file opened is `node`, the one judged
/// special: a name swapped since (for a link to a regular file, or for
/// another user's FIFO that no one reads, in a directory another user can
/// write) is refused, not written over nor waited on.
pub(super) fn write_in_place(path: &Path, node: &fs::Metadata, bytes: &[u8]) -> io::Result<()> {
    let mut file = open_verified(path, node)?;
    file.write_all(bytes)?;
    file.flush()
}

pub(super) fn replaced_error(path: &Path) -> io::Error {
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
pub(super) fn open_verified(path: &Path, node: &fs::Metadata) -> io::Result<File> {
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
pub(super) fn open_verified(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    open_nonblocking(path, node)
}

#[cfg(target_os = "linux")]
pub(super) fn pinned_fd(file: &File) -> i32 {
    use std::os::fd::AsRawFd;
    file.as_raw_fd()
}

/// Opens `path` for writing without waiting on a FIFO, checks that it is
/// `node`, then makes the descriptor blocking for the write. A FIFO with
/// no reader at that moment is an error, not a hang.
#[cfg(unix)]
pub(super) fn open_nonblocking(path: &Path, node: &fs::Metadata) -> io::Result<File> {
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
pub(super) fn open_nonblocking(path: &Path, node: &fs::Metadata) -> io::Result<File> {
    let file = OpenOptions::new().write(true).open(path)?;
    if !same_node(&file.metadata()?, node) {
        return Err(replaced_error(path));
    }
    Ok(file)
}

#[cfg(unix)]
pub(super) fn same_node(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    // The type and device number too: a node removed and another made in
    // its place can get the freed inode number.
    // S_IFMT is a u16 on macOS, a u32 on Linux.
    #[allow(clippy::unnecessary_cast)]
    let kind = |m: &fs::Metadata| m.mode() & libc::S_IFMT as u32;
    a.dev() == b.dev() && a.ino() == b.ino() && kind(a) == kind(b) && a.rdev() == b.rdev()
}

#[cfg(not(unix))]
pub(super) fn same_node(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.file_type() == b.file_type()
}

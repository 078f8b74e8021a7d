//! The files fpcheck keeps in the repository's git directory (its caches,
//! the object memo): opened without following links, read bounded, and
//! replaced whole, so that a hostile repository cannot point them
//! elsewhere.

use std::path::Path;
#[cfg(not(unix))]
use std::path::PathBuf;

/// An open directory (a path where there are no `*at` calls).
#[cfg(unix)]
pub(crate) type Opened = std::fs::File;
#[cfg(not(unix))]
pub(crate) type Opened = PathBuf;

/// Opens `common/dir` without following a link at `dir` (made with mkdir
/// first if `create`); `Ok(None)` when it is missing and not to be made.
/// A link there (to a directory out of the repository, say) or anything
/// but a directory is an error: the cache is then not kept at all.
#[cfg(unix)]
pub(crate) fn private_dir(
    common: &Path,
    dir: &str,
    create: bool,
) -> std::io::Result<Option<Opened>> {
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::fs::OpenOptionsExt;
    let top = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(common)?;
    let name = std::ffi::CString::new(dir).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    let open = || {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat(2) on a NUL-terminated name; the descriptor is owned below.
        let fd = unsafe { libc::openat(top.as_raw_fd(), name.as_ptr(), flags) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    };
    match open() {
        Ok(d) => return Ok(Some(d)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    // SAFETY: mkdirat(2) on a NUL-terminated name relative to an open directory.
    if unsafe { libc::mkdirat(top.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    open().map(Some)
}

/// The file `name` in the opened directory, if it is a regular file of at
/// most `limit` bytes.
#[cfg(unix)]
pub(crate) fn read_bytes_in(dir: &std::fs::File, name: &str, limit: usize) -> Option<Vec<u8>> {
    use std::os::fd::AsFd;
    let name = std::ffi::CString::new(name).ok()?;
    let (file, size) =
        crate::safe_io::open_regular_at(Some(dir.as_fd()), &name, crate::safe_io::Links::Refuse)
            .ok()?;
    crate::safe_io::read_opened(&file, size, limit as u64).ok()
}

/// Another file fpcheck keeps in its own directory of the git directory
/// (`DIR/NAME` relative to `common`, as the fingerprint cache keeps its
/// file): its bytes when it is a regular file of at most
/// `limit` bytes, with the same checks. The object memo's.
pub(crate) fn read_private(common: &Path, file: &str, limit: usize) -> Option<Vec<u8>> {
    let (dir, name) = file.rsplit_once('/').expect("a cache file is DIR/NAME");
    let opened = private_dir(common, dir, false).ok()??;
    read_bytes_in(&opened, name, limit)
}

/// Replaces `DIR/NAME` relative to `common` atomically, as the caches are
/// written (the directory made with mkdir, never through a link).
pub(crate) fn write_private(common: &Path, file: &str, bytes: &[u8]) -> std::io::Result<()> {
    let (dir, name) = file.rsplit_once('/').expect("a cache file is DIR/NAME");
    let opened = private_dir(common, dir, true)?.expect("made when missing");
    write_in(&opened, name, bytes)
}

/// Sweeps the temporary files runs killed mid-save left in the directory
/// (see [`crate::atomic::sweep_temps_in`]), then replaces `name` in it.
#[cfg(unix)]
pub(crate) fn write_in(dir: &std::fs::File, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    crate::atomic::sweep_temps_in(dir);
    crate::atomic::replace_private_in(dir, std::ffi::OsStr::new(name), bytes)
}

/// Elsewhere, by path: `dir` must be a directory and no link.
#[cfg(not(unix))]
pub(crate) fn private_dir(
    common: &Path,
    dir: &str,
    create: bool,
) -> std::io::Result<Option<Opened>> {
    let path = common.join(dir);
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => Ok(Some(path)),
        Ok(_) => Err(std::io::ErrorKind::InvalidInput.into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
            std::fs::create_dir(&path)?;
            Ok(Some(path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
pub(crate) fn read_bytes_in(dir: &Path, name: &str, limit: usize) -> Option<Vec<u8>> {
    let path = dir.join(name);
    crate::safe_io::read_regular(&path, crate::safe_io::Links::Refuse, limit as u64).ok()
}

#[cfg(not(unix))]
pub(crate) fn write_in(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    crate::atomic::sweep_temps_in(dir);
    crate::atomic::replace_private(&dir.join(name), bytes, crate::atomic::Occupied::Replace)
}

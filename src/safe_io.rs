//! Reading files that an attacker may have planted.
//!
//! Every JSON file fpcheck reads (a marker, a snapshot, a version file, a
//! cache, the config) can be replaced by whoever controls the tree: a FIFO
//! that blocks `open` or `read` forever, a link to `/dev/zero` that never
//! ends, a directory, a 10 GB file. [`read_regular`] opens without blocking,
//! checks on the *opened* descriptor that it is a regular file (so a swap
//! between a check and the open cannot fool it), and reads at most `limit`
//! bytes, so memory and time stay bounded whatever is there.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// The most bytes fpcheck reads from any JSON or TOML file it is given.
pub(crate) const JSON_LIMIT: u64 = 16 * 1024 * 1024;

/// Whether the last component of the path may be a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow a link (the installed gate's files may be links).
    Follow,
    /// Refuse a link: the file must be the path itself (the config).
    Refuse,
}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// Nothing is at the path.
    #[error("does not exist")]
    Missing,
    /// The path is a symbolic link, and links were refused.
    #[error("is a symbolic link, which fpcheck does not follow here")]
    Link,
    /// The path is not a regular file (a directory, FIFO, socket, device).
    #[error("is a {0}, not a regular file")]
    NotRegular(&'static str),
    /// The file is larger than the limit.
    #[error("is larger than {limit} bytes")]
    TooLarge {
        /// The limit that was passed.
        limit: u64,
    },
    /// Any other failure (permission denied, an I/O error).
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl ReadError {
    /// True when nothing is at the path (as opposed to something unreadable).
    pub(crate) fn is_missing(&self) -> bool {
        matches!(self, ReadError::Missing)
    }
}

/// Reads the regular file at `path`, at most `limit` bytes.
pub(crate) fn read_regular(path: &Path, links: Links, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path, links)?;
    let mut bytes = Vec::new();
    // Read one byte past the limit: a file that grew after fstat is caught too.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(never_ends)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Opens `path` for reading, refusing anything but a regular file, without
/// ever blocking on a FIFO.
pub(crate) fn open_regular(path: &Path, links: Links) -> Result<File, ReadError> {
    if links == Links::Refuse {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => return Err(ReadError::Link),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    let file = match open_options(links).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) if is_loop(&e) => return Err(ReadError::Link),
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_name(&meta.file_type())));
    }
    // The descriptor stays non-blocking: reads of a true regular file
    // ignore the flag, and a kernel file that passes for one but waits for
    // data that may never come (`/proc/kmsg`, tracefs' `trace_pipe`) then
    // answers `EAGAIN` instead of hanging the caller ([`never_ends`]).
    Ok(file)
}

/// A read that would block is no file content: a kernel "regular" file
/// that waits for events (`/proc/kmsg`) linked into the tree. It is an
/// error naming that, never a wait (or a retry that would wait).
pub(crate) fn never_ends(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            "its reads would wait for data that may never come (a kernel file such as /proc/kmsg, not a file's content)",
        )
    } else {
        e
    }
}

/// A name for a file type, for messages.
pub(crate) fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
        if t.is_socket() {
            return "socket";
        }
    }
    if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symbolic link"
    } else if t.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

#[cfg(unix)]
fn open_options(links: Links) -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let mut o = OpenOptions::new();
    o.read(true).custom_flags(flags);
    o
}

#[cfg(not(unix))]
fn open_options(_links: Links) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.read(true);
    o
}

#[cfg(unix)]
fn is_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_loop(_e: &io::Error) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read_regular(&p, Links::Refuse, 10).unwrap(), b"{}");
    }

    #[test]
    fn refuses_large_missing_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        std::fs::write(&p, b"0123456789").unwrap();
        assert!(matches!(
            read_regular(&p, Links::Follow, 9),
            Err(ReadError::TooLarge { limit: 9 })
        ));
        assert!(read_regular(&dir.path().join("nope"), Links::Follow, 9)
            .unwrap_err()
            .is_missing());
        assert!(matches!(
            read_regular(dir.path(), Links::Follow, 9),
            Err(ReadError::NotRegular("directory"))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_links_when_asked_and_never_blocks_on_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.json");
        std::fs::write(&target, b"1").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            read_regular(&link, Links::Refuse, 9),
            Err(ReadError::Link)
        ));
        assert_eq!(read_regular(&link, Links::Follow, 9).unwrap(), b"1");

        let fifo = dir.path().join("f.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, Links::Follow, 9),
            Err(ReadError::NotRegular("FIFO"))
        ));
    }
}

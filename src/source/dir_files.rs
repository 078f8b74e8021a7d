//! Reading the selected files of a directory for one fingerprint, with as
//! few system calls as the checks allow.
//!
//! A [`DirFiles`] lives for one fingerprint on one thread. Files come in
//! hash order, so consecutive files mostly share a directory: it is opened
//! once (`O_PATH`, following links as a full path would) and each file is
//! opened relative to it, instead of the kernel walking the whole path
//! again for every file (that walk was a tenth of a 300-file fingerprint).
//! The descriptor is never kept past the fingerprint: a later one must see
//! a directory that was replaced meanwhile.
//!
//! Every file keeps the checks of [`crate::safe_io::open_regular`]: opened
//! non-blocking (a FIFO swapped in after the walk cannot block the open),
//! refused unless the *opened* descriptor is a regular file (a FIFO or a
//! device), links in its place followed as the reference gate follows them.
//! What is dropped is only work that changes nothing for a descriptor read
//! once to its end and closed: the `fcntl` pair that cleared `O_NONBLOCK`
//! (reads of a regular file ignore it; should one ever answer `EAGAIN`,
//! the flag is cleared then and the read retried), the separate `stat` of
//! the path, and zeroing the buffers read into.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{DirSource, FileReader, Node, SourceError, Whole};
use crate::safe_io::{kind_name, ReadError};

/// The buffer a file is streamed through: a 16 KiB runtime file takes one
/// `read`, and the buffer stays in the core's L2 cache for SHA-256.
const STREAM_BUF: usize = 64 * 1024;

/// One fingerprint's reader of a [`DirSource`] (see the module comment).
pub(super) struct DirFiles {
    source: DirSource,
    /// The directory of the last file opened, and its `O_PATH` descriptor.
    dir: Option<(Vec<u8>, OwnedFd)>,
    /// The file name being opened, NUL-terminated (reused).
    name: Vec<u8>,
    /// The buffer [`FileReader::read`] streams through (allocated on first
    /// use, never zeroed).
    buf: Vec<u8>,
}

impl DirFiles {
    pub(super) fn new(source: DirSource) -> Self {
        DirFiles {
            source,
            dir: None,
            name: Vec::new(),
            buf: Vec::new(),
        }
    }

    fn unreadable(&self, rel: &str, e: ReadError) -> SourceError {
        match e {
            ReadError::Io(e) => self.source.unreadable(rel.as_bytes(), &e),
            other => SourceError::Unreadable {
                path: crate::select::display_path(&self.source.display, rel.as_bytes()),
                why: other.to_string(),
            },
        }
    }

    /// Opens the regular file at `path` (relative to its directory's
    /// descriptor when it can), and gives its size at open.
    fn open(&mut self, path: &Path) -> Result<(File, u64), ReadError> {
        let fd = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
                let parent = parent.as_os_str().as_bytes();
                if self.dir.as_ref().is_none_or(|(p, _)| p[..] != *parent) {
                    self.dir = None;
                    // A directory that cannot be opened (gone, unreadable):
                    // the full path below fails as it always did.
                    if let Ok(fd) = open_dir(parent) {
                        self.dir = Some((parent.to_vec(), fd));
                    }
                }
                match &self.dir {
                    Some((_, dir)) => {
                        let name = nul_terminated(&mut self.name, name.as_bytes())?;
                        open_file(dir.as_raw_fd(), name)
                    }
                    None => open_file(libc::AT_FDCWD, &cstring(path)?),
                }
            }
            _ => open_file(libc::AT_FDCWD, &cstring(path)?),
        }?;
        let file = File::from(fd);
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(ReadError::NotRegular(kind_name(&meta.file_type())));
        }
        Ok((file, meta.len()))
    }
}

/// Stream buffers kept between fingerprints (two: one per thread): a
/// long-running process fingerprints again and again, and a fresh 64 KiB
/// each time costs a `malloc` that consolidates the heap.
static SPARE_BUFS: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

impl Drop for DirFiles {
    fn drop(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        if buf.capacity() != STREAM_BUF {
            return;
        }
        buf.clear();
        if let Ok(mut spare) = SPARE_BUFS.lock() {
            if spare.len() < 2 {
                spare.push(buf);
            }
        }
    }
}

impl FileReader for DirFiles {
    fn read(
        &mut self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let path = path_of(content);
        let (file, _) = self.open(path).map_err(|e| self.unreadable(rel, e))?;
        let mut buf = std::mem::take(&mut self.buf);
        if buf.capacity() < STREAM_BUF {
            buf = SPARE_BUFS
                .lock()
                .ok()
                .and_then(|mut s| s.pop())
                .unwrap_or_else(|| Vec::with_capacity(STREAM_BUF));
        }
        let result = loop {
            buf.clear();
            match read_some(&file, &mut buf, STREAM_BUF) {
                Ok(0) => break Ok(()),
                Ok(_) => sink(&buf),
                Err(e) => break Err(e),
            }
        };
        self.buf = buf;
        result.map_err(|e| self.unreadable(rel, ReadError::Io(e)))
    }

    fn read_whole(
        &mut self,
        rel: &str,
        content: &Node,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Whole, SourceError> {
        let path = path_of(content);
        let (file, size) = self.open(path).map_err(|e| self.unreadable(rel, e))?;
        if size > limit as u64 {
            return Ok(Whole::TooBig);
        }
        let start = out.len();
        // Room for one byte more than the size: a file that grew since its
        // `fstat` is seen growing, and the last read finds the end at once.
        out.reserve(size as usize + 1);
        loop {
            let left = limit + 1 - (out.len() - start);
            match read_some(&file, out, left) {
                Ok(0) => return Ok(Whole::Read(out.len() - start)),
                Ok(_) if out.len() - start > limit => {
                    out.truncate(start);
                    return Ok(Whole::TooBig);
                }
                Ok(_) => {}
                Err(e) => {
                    out.truncate(start);
                    return Err(self.unreadable(rel, ReadError::Io(e)));
                }
            }
        }
    }
}

fn path_of(content: &Node) -> &Path {
    match content {
        Node::Path(path) => path,
        Node::Object(_) => unreachable!("a directory source only hands out paths"),
    }
}

/// Appends at most `max` bytes read from `file` to `out`, into the room it
/// has (grown only when it has none), retrying interruptions, and clearing `O_NONBLOCK` should a
/// read ever answer `EAGAIN`. Returns how many bytes were read (0: the end).
fn read_some(file: &File, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    if out.len() == out.capacity() {
        out.reserve(max.min(STREAM_BUF));
    }
    loop {
        let spare = out.spare_capacity_mut();
        let want = spare.len().min(max);
        // SAFETY: `spare` is `want` (or more) writable bytes owned by `out`;
        // read(2) writes at most `want` of them and says how many.
        let n = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), want) };
        if n >= 0 {
            let n = n as usize;
            // SAFETY: the kernel initialised these `n` bytes just above.
            unsafe { out.set_len(out.len() + n) };
            return Ok(n);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => crate::safe_io::clear_nonblock(file)?,
            _ => return Err(e),
        }
    }
}

/// Opens the directory `path` to open files relative to it (`O_PATH`: no
/// read permission needed, nothing read through it but names).
fn open_dir(path: &[u8]) -> io::Result<OwnedFd> {
    let path = std::ffi::CString::new(path).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `name` relative to `dir` as [`crate::safe_io::open_regular`] does
/// with [`crate::safe_io::Links::Follow`], errors mapped the same way.
fn open_file(dir: libc::c_int, name: &CStr) -> Result<OwnedFd, ReadError> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: openat(2) on a NUL-terminated name; the descriptor is owned below.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ENOENT) => ReadError::Missing,
            Some(libc::ELOOP) => ReadError::Link,
            _ => ReadError::Io(e),
        });
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn nul_terminated<'b>(buf: &'b mut Vec<u8>, name: &[u8]) -> Result<&'b CStr, ReadError> {
    buf.clear();
    buf.extend_from_slice(name);
    buf.push(0);
    CStr::from_bytes_with_nul(buf).map_err(|_| ReadError::Io(io::ErrorKind::InvalidInput.into()))
}

fn cstring(path: &Path) -> Result<std::ffi::CString, ReadError> {
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ReadError::Io(io::ErrorKind::InvalidInput.into()))
}

//! Reading files that an attacker may have planted.
//!
//! Every JSON file fpcheck reads (a marker, a snapshot, a version file, a
//! cache, the config) can be replaced by whoever controls the tree: a FIFO
//! that blocks `open` or `read` forever, a link to `/dev/zero` that never
//! ends, a directory, a 10 GB file. [`read_regular`] opens without blocking,
//! checks on the *opened* descriptor that it is a regular file (so a swap
//! between a check and the open cannot fool it), and reads at most `limit`
//! bytes, so memory and time stay bounded whatever is there.

use std::fs::File;
#[cfg(not(unix))]
use std::fs::OpenOptions;
use std::io;
#[cfg(not(unix))]
use std::io::Read;
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
    /// A file of a kernel pseudo file system (procfs, sysfs...): it passes
    /// for a regular file (often of size 0) but describes the running
    /// system, and may never end (`/proc/self/pagemap`: ~256 GiB).
    #[cfg(unix)]
    #[error("is a file of the kernel's {0} file system, not a file's content")]
    Pseudo(&'static str),
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
    let (file, size) = open_sized(path, links)?;
    read_opened(&file, size, limit)
}

/// [`read_regular`] for a file opened by [`open_regular_at`] or
/// [`open_sized`] (of `size` bytes at open): all of it, at most `limit`
/// bytes.
pub(crate) fn read_opened(file: &File, size: u64, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    let cap = usize::try_from(limit).unwrap_or(usize::MAX - 1);
    match read_capped(file, size, &mut bytes, cap)? {
        Some(_) => Ok(bytes),
        None => Err(ReadError::TooLarge { limit }),
    }
}

/// Opens `path` for reading, refusing anything but a regular file, without
/// ever blocking on a FIFO.
pub(crate) fn open_regular(path: &Path, links: Links) -> Result<File, ReadError> {
    open_sized(path, links).map(|(file, _)| file)
}

/// [`open_regular`], with the file's size at open.
#[cfg(unix)]
pub(crate) fn open_sized(path: &Path, links: Links) -> Result<(File, u64), ReadError> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ReadError::Io(io::ErrorKind::InvalidInput.into()))?;
    open_regular_at(None, &path, links)
}

/// Opens `name` relative to the directory `dir` (`None`: as a path from
/// the current directory), refusing anything but a regular file: the one
/// place fpcheck opens a file that whoever controls the tree may have
/// replaced. Gives the file and its size at open.
///
/// - Opened non-blocking, so a FIFO swapped in after any earlier check
///   cannot block the open.
/// - `O_NOFOLLOW` with [`Links::Refuse`]: a link at `name` is
///   [`ReadError::Link`], decided by the open itself (no check before it
///   that a swap could outrun); a link loop is that too.
/// - The *opened* descriptor must be a regular file: a FIFO, a device, a
///   directory or a socket is [`ReadError::NotRegular`], never read.
/// - The descriptor stays non-blocking: reads of a true regular file
///   ignore the flag, and a kernel file that passes for one but waits for
///   data that may never come (`/proc/kmsg`, tracefs' `trace_pipe`) then
///   answers `EAGAIN` instead of hanging the caller ([`never_ends`]).
#[cfg(unix)]
pub(crate) fn open_regular_at(
    dir: Option<std::os::fd::BorrowedFd<'_>>,
    name: &std::ffi::CStr,
    links: Links,
) -> Result<(File, u64), ReadError> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let mut flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let dir = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
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
    let file = unsafe { File::from_raw_fd(fd) };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_name(&meta.file_type())));
    }
    if let Some(fs) = pseudo_file_system(&file) {
        return Err(ReadError::Pseudo(fs));
    }
    Ok((file, meta.len()))
}

/// The name of the kernel pseudo file system `file` is on, if it is on
/// one: its files look regular (`st_size` 0, or 4096) but are generated
/// on read, without end for some (`/proc/self/pagemap` yields ~256 GiB,
/// `/sys/kernel/debug/...` may wait), and never a runtime's content. An
/// `fstatfs` failure is no verdict (the size bound of the reads still
/// holds).
#[cfg(target_os = "linux")]
fn pseudo_file_system(file: &File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    // Magic numbers of linux/magic.h (as u32: `f_type`'s type and sign
    // differ between C libraries and word sizes).
    const PSEUDO: [(u32, &str); 18] = [
        (0x9fa0, "proc"),
        (0x6265_6572, "sysfs"),
        (0x6462_6720, "debugfs"),
        (0x7472_6163, "tracefs"),
        (0x7363_6673, "securityfs"),
        (0x0027_e0eb, "cgroup"),
        (0x6367_7270, "cgroup2"),
        (0x6265_6570, "configfs"),
        (0xde5e_81e4, "efivarfs"),
        (0xcafe_4a11, "bpf"),
        (0x6165_676c, "pstore"),
        (0x4249_4e4d, "binfmt_misc"),
        (0x6573_5543, "fusectl"),
        (0xf97c_ff8c, "selinuxfs"),
        (0x4341_5d53, "smackfs"),
        (0x6e73_6673, "nsfs"),
        (0x1cd1, "devpts"),
        (0x6c6f_6f70, "binder"),
    ];
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs(2) on an open descriptor fills the struct on success.
    if unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstatfs succeeded, so the struct is initialised.
    let magic = unsafe { st.assume_init() }.f_type as u32;
    PSEUDO
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

#[cfg(all(unix, not(target_os = "linux")))]
fn pseudo_file_system(_file: &File) -> Option<&'static str> {
    None
}

#[cfg(not(unix))]
pub(crate) fn open_sized(path: &Path, links: Links) -> Result<(File, u64), ReadError> {
    if links == Links::Refuse {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => return Err(ReadError::Link),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    let file = match OpenOptions::new().read(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_name(&meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// Appends the whole of `file` (of `size` bytes at open) to `out`, unless
/// it holds more than `limit` bytes: then `out` is left as it was and the
/// answer is `None`. Otherwise, how many bytes were appended. The file is
/// read at most one byte past its size at open: one that grew after its
/// `fstat` is an error ([`grew`]), as is a read that would block
/// ([`never_ends`]); `out` is then left as it was too.
pub(crate) fn read_capped(
    file: &File,
    size: u64,
    out: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<usize>> {
    if size > limit as u64 {
        return Ok(None);
    }
    let size = size as usize;
    let start = out.len();
    // Room for one byte more than the size: a file that grew since its
    // `fstat` is seen growing, and the last read finds the end at once.
    out.reserve(size + 1);
    loop {
        let left = size + 1 - (out.len() - start);
        match read_some(file, out, left) {
            Ok(0) => return Ok(Some(out.len() - start)),
            Ok(_) if out.len() - start > size => {
                out.truncate(start);
                return Err(grew(size as u64));
            }
            Ok(_) => {}
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        }
    }
}

/// Hands everything `file` (of `size` bytes at open) holds to `sink`, a
/// piece at a time through `buf` (cleared before each read; pieces of up
/// to its capacity, or [`READ_STEP`] if it has none). Never more than
/// `size` bytes: a file that yields more grew while read, or is a kernel
/// file that makes up its content (a procfs file's size is 0), and is an
/// error ([`grew`]), so no read is longer than the file was.
pub(crate) fn stream(
    file: &File,
    size: u64,
    buf: &mut Vec<u8>,
    sink: &mut dyn FnMut(&[u8]),
) -> io::Result<()> {
    let max = buf.capacity().max(READ_STEP);
    let mut left = size;
    loop {
        buf.clear();
        // One byte past what is left: the end is found, or the growth.
        let want = usize::try_from(left.saturating_add(1)).map_or(max, |l| l.min(max));
        let n = read_some(file, buf, want)? as u64;
        if n == 0 {
            return Ok(());
        }
        if n > left {
            return Err(grew(size));
        }
        left -= n;
        sink(buf);
    }
}

/// The error for a file that yields more bytes than its size at open: its
/// content is no one state of it (it grew while read), or it is made up on
/// read by the kernel. Either way it is unreadable, never read on.
pub(crate) fn grew(size: u64) -> io::Error {
    io::Error::other(format!(
        "it yields more than the {size} bytes its size said when opened (it grew while \
         read, or the kernel makes it up): not a file's content"
    ))
}

/// How much [`read_some`] grows a buffer with no room left by at once.
pub(crate) const READ_STEP: usize = 64 * 1024;

/// Appends at most `max` bytes read from `file` to `out`, into the room it
/// has (grown by up to [`READ_STEP`] only when it has none, and never
/// zeroed), retrying interruptions; a read that would block is an error
/// ([`never_ends`]). Returns how many bytes were read (0: the end).
pub(crate) fn read_some(file: &File, out: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    if out.len() == out.capacity() {
        out.reserve(max.min(READ_STEP));
    }
    loop {
        let spare = out.spare_capacity_mut();
        let want = spare.len().min(max);
        match read_into(file, &mut spare[..want]) {
            Ok(n) => {
                // SAFETY: `read_into` initialised these `n` bytes.
                unsafe { out.set_len(out.len() + n) };
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(never_ends(e)),
        }
    }
}

/// One read(2) into `spare`; says how many bytes it initialised.
#[cfg(unix)]
fn read_into(file: &File, spare: &mut [std::mem::MaybeUninit<u8>]) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: `spare` is writable memory of its length; read(2) writes at
    // most that many bytes and says how many.
    let n = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

#[cfg(not(unix))]
fn read_into(mut file: &File, spare: &mut [std::mem::MaybeUninit<u8>]) -> io::Result<usize> {
    spare.fill(std::mem::MaybeUninit::new(0));
    // SAFETY: every byte was just initialised.
    let bytes = unsafe { &mut *(spare as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
    file.read(bytes)
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

/// An I/O error as a sentence fragment: "Permission denied (os error 13)"
/// reads better without the number.
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
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

#[cfg(all(test, unix))]
mod at_tests {
    use super::*;
    use std::ffi::CString;
    use std::os::fd::AsFd;

    /// Relative to a directory's descriptor, as from a path: a link is
    /// followed or refused as asked, a dangling name is `Missing`, and the
    /// size comes from the opened descriptor.
    #[test]
    fn opens_relative_to_a_directory_as_from_a_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"12345").unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("l")).unwrap();
        let d = File::open(dir.path()).unwrap();
        let at = |name: &str, links| {
            let name = CString::new(name).unwrap();
            open_regular_at(Some(d.as_fd()), &name, links).map(|(_, size)| size)
        };
        assert_eq!(at("f", Links::Refuse).unwrap(), 5);
        assert_eq!(at("l", Links::Follow).unwrap(), 5);
        assert!(matches!(at("l", Links::Refuse), Err(ReadError::Link)));
        assert!(matches!(at("nope", Links::Follow), Err(ReadError::Missing)));
        assert!(matches!(
            at(".", Links::Follow),
            Err(ReadError::NotRegular("directory"))
        ));
    }

    /// A file that holds more than its size at open said (it grew) is
    /// caught by the read one byte past that size, however far below the
    /// limit; `out` is left as it was. One past the limit is `None`.
    #[test]
    fn a_file_past_its_size_or_the_limit_leaves_out_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        let file = File::open(&p).unwrap();
        let mut out = b"kept".to_vec();
        // Told 4 bytes at open: the reads find 10.
        let err = read_capped(&file, 4, &mut out, 100).unwrap_err();
        assert!(err.to_string().contains("more than the 4 bytes"), "{err}");
        assert_eq!(out, b"kept");
        let file = File::open(&p).unwrap();
        assert_eq!(read_capped(&file, 10, &mut out, 9).unwrap(), None);
        assert_eq!(out, b"kept");
        let file = File::open(&p).unwrap();
        assert_eq!(read_capped(&file, 10, &mut out, 10).unwrap(), Some(10));
        assert_eq!(out, b"kept0123456789");
    }

    /// A stream stops one byte past the size at open: a file that grew,
    /// or a kernel file of size 0, is an error, and no byte past the size
    /// reaches the sink.
    #[test]
    fn a_stream_stops_past_the_size_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"0123456789").unwrap();
        let mut got = Vec::new();
        let file = File::open(&p).unwrap();
        stream(&file, 10, &mut Vec::new(), &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, b"0123456789");
        for told in [0, 4, 9] {
            let mut got = Vec::new();
            let file = File::open(&p).unwrap();
            let err = stream(&file, told, &mut Vec::with_capacity(3), &mut |b| {
                got.extend_from_slice(b)
            })
            .unwrap_err();
            assert!(err.to_string().contains("grew while read"), "{err}");
            assert!(got.len() as u64 <= told, "{told}: {got:?}");
        }
    }

    /// A procfs file passes for a regular file: refused at open, by its
    /// file system (read only: nothing is written to /proc).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_procfs_file_is_refused_at_open() {
        let name = CString::new("/proc/self/pagemap").unwrap();
        assert!(matches!(
            open_regular_at(None, &name, Links::Follow),
            Err(ReadError::Pseudo("proc"))
        ));
        let name = CString::new("/proc/self/status").unwrap();
        let err = open_regular_at(None, &name, Links::Follow).unwrap_err();
        assert_eq!(
            err.to_string(),
            "is a file of the kernel's proc file system, not a file's content"
        );
    }
}

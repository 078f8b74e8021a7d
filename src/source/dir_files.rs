//! Reading the selected files of a directory for one fingerprint, with as
//! few system calls as the checks allow.
//!
//! A [`DirFiles`] lives for one fingerprint on one thread. Files come in
//! hash order, so consecutive files mostly share a directory: it is opened
//! once (`O_PATH`, following links as a full path would) and each file is
//! opened relative to it, instead of the kernel walking the whole path
//! again for every file. The descriptor is never kept past the
//! fingerprint: a later one must see a directory replaced meanwhile.
//!
//! Every file is opened and read by the same [`crate::safe_io`] functions
//! as [`DirSource::read`] and every JSON file: [`open_regular_at`] (opened
//! non-blocking, refused unless the *opened* descriptor is a regular file,
//! links in its place followed as the reference gate follows them) and
//! [`read_some`](crate::safe_io::read_some) (a read that would wait, as
//! `/proc/kmsg`'s does, is an error, never a hang), with the same words in
//! errors.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::dir::{STREAM_BUF, STREAM_BUFS};
use super::{DirSource, FileReader, Node, SourceError, Whole};
use crate::safe_io::{open_regular_at, open_sized, read_capped, stream, Links, ReadError};

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

    /// Opens the regular file at `path` (relative to its directory's
    /// descriptor when it can), and gives its size at open.
    fn open(&mut self, path: &Path) -> Result<(File, u64), ReadError> {
        match (path.parent(), path.file_name()) {
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
                        open_regular_at(Some(dir.as_fd()), name, Links::Follow)
                    }
                    None => open_sized(path, Links::Follow),
                }
            }
            _ => open_sized(path, Links::Follow),
        }
    }

    /// Opens file `rel` (at `content`'s path), with its size at open; an
    /// error names `rel` as [`DirSource`]'s own reads do.
    fn open_node(&mut self, rel: &str, content: &Node) -> Result<(File, u64), SourceError> {
        self.open(path_of(content))
            .map_err(|e| self.source.unreadable_file(rel, e))
    }
}

impl Drop for DirFiles {
    fn drop(&mut self) {
        STREAM_BUFS.give(std::mem::take(&mut self.buf));
    }
}

impl FileReader for DirFiles {
    fn read(
        &mut self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let (file, size) = self.open_node(rel, content)?;
        if self.buf.capacity() < STREAM_BUF {
            self.buf = STREAM_BUFS.take();
        }
        stream(&file, size, &mut self.buf, sink)
            .map_err(|e| self.source.unreadable_file(rel, e.into()))
    }

    fn read_whole(
        &mut self,
        rel: &str,
        content: &Node,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Whole, SourceError> {
        let (file, size) = self.open_node(rel, content)?;
        match read_capped(&file, size, out, limit) {
            Ok(Some(n)) => Ok(Whole::Read(n)),
            Ok(None) => Ok(Whole::TooBig),
            Err(e) => Err(self.source.unreadable_file(rel, e.into())),
        }
    }
}

fn path_of(content: &Node) -> &Path {
    match content {
        Node::Path(path) => path,
        Node::Object(_) => unreachable!("a directory source only hands out paths"),
    }
}

/// How a directory is opened to open files relative to it: `O_PATH` where
/// it exists (Linux: no read permission needed, nothing read through it but
/// names), a plain read-only open elsewhere.
#[cfg(target_os = "linux")]
const DIR_FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;

/// Opens the directory `path` to open files relative to it.
fn open_dir(path: &[u8]) -> io::Result<OwnedFd> {
    let path = std::ffi::CString::new(path).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: open(2) on a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), DIR_FLAGS) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
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

#[cfg(test)]
mod tests {

    /// A descriptor whose reads would wait (here an empty pipe whose writer
    /// stays open, standing for `/proc/kmsg`, which a test must not read)
    /// is an error at once, never a wait. (`pipe2` is Linux's.)
    #[cfg(target_os = "linux")]
    #[test]
    fn a_read_that_would_block_is_an_error_not_a_wait() {
        let mut fds = [0; 2];
        // SAFETY: pipe2(2) fills the two descriptors, owned below.
        assert_eq!(
            unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK) },
            0
        );
        // SAFETY: both descriptors were just created and are owned here.
        let (reader, _writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        let err = crate::safe_io::read_some(&reader, &mut Vec::new(), 4096).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(err.to_string().contains("/proc/kmsg"), "{err}");
    }

    use super::*;
    use crate::source::Source;
    use std::path::PathBuf;

    fn reader(root: &Path) -> DirFiles {
        DirFiles::new(DirSource::with_display(root, "rt"))
    }

    fn read(r: &mut DirFiles, root: &Path, rel: &str) -> Result<Vec<u8>, String> {
        let mut got = Vec::new();
        r.read(rel, &Node::Path(root.join(rel)), &mut |b| {
            got.extend_from_slice(b)
        })
        .map(|()| got)
        .map_err(|e| e.to_string())
    }

    fn whole(r: &mut DirFiles, root: &Path, rel: &str, limit: usize) -> Result<Vec<u8>, String> {
        let mut out = b"kept".to_vec();
        match r.read_whole(rel, &Node::Path(root.join(rel)), &mut out, limit) {
            Ok(Whole::Read(n)) => {
                assert_eq!(out.len(), 4 + n);
                Ok(out[4..].to_vec())
            }
            Ok(Whole::TooBig) => {
                assert_eq!(out, b"kept", "nothing appended");
                Err("too big".into())
            }
            Err(e) => {
                assert_eq!(out, b"kept", "nothing appended");
                Err(e.to_string())
            }
        }
    }

    fn mknod(path: &Path, mode: libc::mode_t, dev: libc::dev_t) {
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mknod with a valid NUL-terminated path in a temp dir.
        assert_eq!(unsafe { libc::mknod(c.as_ptr(), mode, dev) }, 0, "{path:?}");
    }

    /// Files of several directories, in and out of order, big and small,
    /// through one reader (its directory switching) and both ways of
    /// reading: each gives exactly its bytes.
    #[test]
    fn reads_every_file_whole_across_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for (i, size) in [0, 1, 4095, STREAM_BUF - 1, STREAM_BUF, 3 * STREAM_BUF + 7]
            .into_iter()
            .enumerate()
        {
            let rel = format!("d{}/s{}/f{i}.py", i % 2, i % 3);
            let body: Vec<u8> = (0..size).map(|j| (j * 7 + i) as u8).collect();
            std::fs::create_dir_all(root.join(&rel).parent().unwrap()).unwrap();
            std::fs::write(root.join(&rel), &body).unwrap();
            files.push((rel, body));
        }
        let mut r = reader(root);
        for (rel, body) in files.iter().chain(files.iter().rev()) {
            assert_eq!(&read(&mut r, root, rel).unwrap(), body, "{rel}");
            assert_eq!(&whole(&mut r, root, rel, 4 * STREAM_BUF).unwrap(), body);
        }
        // Over the limit: nothing appended, whether fstat or the reads say so.
        let (rel, body) = &files[5];
        assert_eq!(
            whole(&mut r, root, rel, body.len() - 1).unwrap_err(),
            "too big"
        );
        assert_eq!(&whole(&mut r, root, rel, body.len()).unwrap(), body);
    }

    /// What a hostile tree can swap in after the walk is refused on the
    /// opened descriptor, without blocking or reading it, with the words
    /// `safe_io::open_regular` uses; a link is followed to its file.
    #[test]
    fn fifos_devices_and_directories_are_refused_links_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/real.py"), b"real").unwrap();
        mknod(&root.join("pkg/fifo.py"), libc::S_IFIFO | 0o600, 0);
        // Like /dev/zero: reading it would never end.
        mknod(
            &root.join("pkg/zero.py"),
            libc::S_IFCHR | 0o600,
            libc::makedev(1, 5),
        );
        std::fs::create_dir(root.join("pkg/dir.py")).unwrap();
        std::os::unix::fs::symlink("real.py", root.join("pkg/link.py")).unwrap();
        std::os::unix::fs::symlink("loop.py", root.join("pkg/loop.py")).unwrap();
        std::os::unix::fs::symlink("fifo.py", root.join("pkg/tofifo.py")).unwrap();
        let mut r = reader(root);
        for (rel, want) in [
            (
                "pkg/fifo.py",
                Err("rt/pkg/fifo.py: is a FIFO, not a regular file"),
            ),
            (
                "pkg/tofifo.py",
                Err("rt/pkg/tofifo.py: is a FIFO, not a regular file"),
            ),
            (
                "pkg/zero.py",
                Err("rt/pkg/zero.py: is a character device, not a regular file"),
            ),
            (
                "pkg/dir.py",
                Err("rt/pkg/dir.py: is a directory, not a regular file"),
            ),
            (
                "pkg/loop.py",
                Err("rt/pkg/loop.py: is a symbolic link, which fpcheck does not follow here"),
            ),
            ("pkg/gone.py", Err("rt/pkg/gone.py: does not exist")),
            ("nodir/gone.py", Err("rt/nodir/gone.py: does not exist")),
            ("pkg/link.py", Ok(b"real".to_vec())),
        ] {
            let want = want.map_err(str::to_string);
            assert_eq!(read(&mut r, root, rel), want, "{rel}");
            assert_eq!(whole(&mut r, root, rel, 1 << 20), want, "{rel}");
            // The same words as the one-file path gives.
            let one = DirSource::with_display(root, "rt");
            let mut got = Vec::new();
            let old = one
                .read(rel, &Node::Path(root.join(rel)), &mut |b| {
                    got.extend_from_slice(b)
                })
                .map(|()| got)
                .map_err(|e| e.to_string());
            assert_eq!(old, want, "{rel}");
        }
    }

    /// A reader keeps a directory open only while it lives (one
    /// fingerprint): the next one sees a directory replaced meanwhile.
    #[test]
    fn a_replaced_directory_is_seen_by_the_next_reader() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/a.py"), b"old").unwrap();
        let mut first = reader(root);
        assert_eq!(read(&mut first, root, "pkg/a.py").unwrap(), b"old");
        drop(first);
        std::fs::rename(root.join("pkg"), root.join("gone")).unwrap();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("pkg/a.py"), b"new").unwrap();
        let mut next = reader(root);
        assert_eq!(read(&mut next, root, "pkg/a.py").unwrap(), b"new");
        // A file at the top of the root (its directory is the root).
        std::fs::write(root.join("top.py"), b"top").unwrap();
        let top: PathBuf = root.join("top.py");
        let mut got = Vec::new();
        next.read("top.py", &Node::Path(top), &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, b"top");
    }
}

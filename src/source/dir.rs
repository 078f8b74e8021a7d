//! A directory on disk: the installed runtime, or a working tree.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{Entry, EntryKind, MetaFile, Node, Origin, RootState, Source, SourceError, Target};
use crate::buf_pool::BufPool;
use crate::safe_io::{self, ReadError};
use crate::source::display_path;

/// The buffer a file is streamed through: a 16 KiB runtime file takes one
/// `read`, and the buffer stays in the core's L2 cache for SHA-256.
pub(super) const STREAM_BUF: usize = 64 * 1024;

/// Stream buffers kept between fingerprints (two: one per thread), lent to
/// [`DirSource::read`] for one file and to each `DirFiles` reader.
pub(super) static STREAM_BUFS: BufPool = BufPool::new(STREAM_BUF, 2);

/// Reads a runtime root directory the way the reference gate does: the
/// directory itself may be reached through a link, links below it are never
/// descended into, and a selected link is read through to its final target.
#[derive(Clone, Debug)]
pub struct DirSource {
    root: PathBuf,
    display: String,
    parent_lookup: bool,
}

impl DirSource {
    /// A source rooted at `root`; messages name paths below it as
    /// `root/...`, as given.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let display = root.display().to_string();
        DirSource {
            root,
            display,
            parent_lookup: true,
        }
    }

    /// Like [`DirSource::new`], naming the root `display` in messages (a
    /// working tree's `src` rather than its absolute path).
    pub fn with_display(root: impl Into<PathBuf>, display: impl Into<String>) -> Self {
        DirSource {
            root: root.into(),
            display: display.into(),
            parent_lookup: true,
        }
    }

    /// Never read version files from the root's parent: for a working
    /// tree whose root is its top, the parent is not part of the release.
    pub fn without_parent_lookup(mut self) -> Self {
        self.parent_lookup = false;
        self
    }

    /// A version file's name as the user knows it: beside the root's
    /// display name, so a working tree says `version.json`, not an
    /// absolute path.
    fn meta_display(&self, name: &str, in_parent: bool) -> String {
        let shown = Path::new(&self.display);
        let dir = if in_parent {
            match shown.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                Some(_) if shown != Path::new(".") => PathBuf::new(),
                _ => {
                    return self
                        .root
                        .parent()
                        .unwrap_or(&self.root)
                        .join(name)
                        .display()
                        .to_string()
                }
            }
        } else {
            shown.to_path_buf()
        };
        dir.join(name).display().to_string()
    }

    fn unreadable(&self, rel: &[u8], err: &io::Error) -> SourceError {
        SourceError::Unreadable {
            path: display_path(&self.display, rel),
            why: io_reason(err),
        }
    }

    /// A file that [`safe_io::open_regular_at`] refused or could not be
    /// read to its end: the same words whichever reader read it.
    pub(super) fn unreadable_file(&self, rel: &str, err: ReadError) -> SourceError {
        match err {
            ReadError::Io(e) => self.unreadable(rel.as_bytes(), &e),
            other => SourceError::Unreadable {
                path: display_path(&self.display, rel.as_bytes()),
                why: other.to_string(),
            },
        }
    }
}

impl Source for DirSource {
    fn root_display(&self) -> String {
        self.display.clone()
    }

    fn root(&self) -> Result<RootState, SourceError> {
        Ok(match fs::metadata(&self.root) {
            Ok(m) if m.is_dir() => RootState::Dir(Node::Path(self.root.clone())),
            Ok(_) => RootState::NotADirectory,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(&self.root).is_ok() {
                    RootState::Unresolvable("is a broken symbolic link".into())
                } else {
                    RootState::Missing
                }
            }
            Err(e) => RootState::Unresolvable(format!("cannot be read: {}", io_reason(&e))),
        })
    }

    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
        let Node::Path(dir) = dir else {
            unreachable!("a directory source only hands out paths")
        };
        let mut entries = Vec::new();
        for item in fs::read_dir(dir).map_err(|e| self.unreadable(rel, &e))? {
            let item = item.map_err(|e| self.unreadable(rel, &e))?;
            let name = item.file_name();
            let kind = match item.file_type() {
                Ok(t) if t.is_symlink() => EntryKind::Symlink,
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_file() => EntryKind::File,
                Ok(_) => EntryKind::Other,
                Err(e) => {
                    let mut path = rel.to_vec();
                    path.push(b'/');
                    path.extend_from_slice(name.as_encoded_bytes());
                    return Err(self.unreadable(&path, &e));
                }
            };
            entries.push(Entry {
                name: name.as_encoded_bytes().to_vec(),
                kind,
                node: Node::Path(item.path()),
            });
        }
        Ok(entries)
    }

    fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError> {
        let Node::Path(path) = &entry.node else {
            unreachable!("a directory source only hands out paths")
        };
        if entry.kind == EntryKind::File {
            return Ok(Target::File(entry.node.clone()));
        }
        let target = fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        Ok(match fs::metadata(path) {
            Ok(m) if m.is_file() => Target::File(entry.node.clone()),
            Ok(m) if m.is_dir() => {
                Target::Unavailable(format!(": symlink to {target} points at a directory"))
            }
            Ok(_) => Target::Unavailable(format!(": symlink to {target} is not a regular file")),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Target::Unavailable(format!(": symlink to {target} is broken"))
            }
            Err(e) if is_loop(&e) => Target::Unavailable(format!(": symlink to {target} loops")),
            Err(e) => return Err(self.unreadable(rel, &e)),
        })
    }

    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let Node::Path(path) = content else {
            unreachable!("a directory source only hands out paths")
        };
        // The walk saw a regular file, but whoever controls the tree can swap
        // in a FIFO or a device before this open: refuse it, never block.
        let (file, size) = safe_io::open_sized(path, safe_io::Links::Follow)
            .map_err(|e| self.unreadable_file(rel, e))?;
        // A kept buffer, never zeroed: a fresh zeroed one per file cost
        // more than reading a small file does.
        let mut buf = STREAM_BUFS.take();
        let read = safe_io::stream(&file, size, &mut buf, sink);
        STREAM_BUFS.give(buf);
        read.map_err(|e| self.unreadable_file(rel, e.into()))
    }

    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError> {
        let dir = if in_parent {
            if !self.parent_lookup {
                return Ok(None);
            }
            match parent_of(&self.root) {
                Some(p) => p,
                None => return Ok(None),
            }
        } else {
            self.root.clone()
        };
        let path = dir.join(name);
        // Bounded and non-blocking: a FIFO or a link to a device here must
        // neither hang nor exhaust memory. A file that is there but cannot
        // be read is reported, never silently skipped (the gate errs toward
        // "restart" on it).
        let display = self.meta_display(name, in_parent);
        let limit = crate::safe_io::JSON_LIMIT;
        match crate::safe_io::read_regular(&path, crate::safe_io::Links::Follow, limit) {
            Ok(bytes) => Ok(Some(MetaFile {
                display,
                bytes,
                problem: None,
            })),
            Err(e) if e.is_missing() => Ok(None),
            Err(e) => Ok(Some(MetaFile {
                display,
                bytes: Vec::new(),
                problem: Some(e.to_string()),
            })),
        }
    }

    fn origin(&self) -> Origin {
        Origin::Dir {
            dir: self.root.display().to_string(),
        }
    }

    /// The descriptor-relative reader where the platform has `openat`;
    /// elsewhere each file is opened by its path ([`Source::read`]).
    #[cfg(unix)]
    fn file_reader(&self) -> Option<Box<dyn super::FileReader + Send>> {
        Some(Box::new(super::dir_files::DirFiles::new(self.clone())))
    }
}

/// The parent the gate would look in: `Path(R).parent`, made absolute so
/// that a root given as `.` still has one.
fn parent_of(root: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(root).ok()?;
    abs.parent().map(Path::to_path_buf)
}

fn is_loop(e: &io::Error) -> bool {
    // ELOOP is 40 on Linux, 62 on macOS and the BSDs.
    matches!(e.raw_os_error(), Some(40) | Some(62))
}

fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    // "Permission denied (os error 13)" reads better without the number.
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file swapped for a FIFO after the walk is refused, not waited on.
    #[test]
    fn a_fifo_swapped_in_after_the_walk_is_unreadable_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("app.py");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let src = DirSource::with_display(dir.path(), "rt");
        let err = src
            .read("app.py", &Node::Path(fifo), &mut |_| {
                panic!("nothing to read")
            })
            .unwrap_err();
        match err {
            SourceError::Unreadable { path, why } => {
                assert_eq!(path, "rt/app.py");
                assert_eq!(why, "is a FIFO, not a regular file");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

//! A repository's working tree, read as its next commit would hold it.
//!
//! `--worktree` asks "what would this release do if I committed it now", so
//! the answer must be the one git mode gives for that commit: a symbolic
//! link is resolved by its target text *inside the repository* (as
//! [`super::GitSource`] walks a tree), never through the file system to
//! wherever it points. A link to `/etc/passwd` or `../../secret` makes the
//! fingerprint unavailable, exactly as in the commit, and is never opened;
//! nothing under `.git` is ever read. (`--dir` keeps the installed gate's
//! semantics, see [`super::DirSource`].)

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::{
    DirSource, Entry, EntryKind, MetaFile, Node, Origin, RootState, Source, SourceError, Target,
};
use crate::safe_io::{self, Links};
use crate::select::display_path;

/// How many symbolic links one lookup may follow, as Linux (and git mode) allow.
const MAX_LINK_HOPS: usize = 40;

/// The runtime root of a working tree.
#[derive(Clone, Debug)]
pub struct WorktreeSource {
    top: PathBuf,
    /// The configured root, normalised (`""` is the top).
    root: String,
    /// The root's real directory as components below the top, links in its
    /// path resolved inside the repository; its state otherwise.
    root_parts: Result<Vec<OsString>, RootState>,
    /// Reads the root's real directories and regular files.
    dir: DirSource,
}

/// What a path inside the working tree leads to, links resolved inside it.
enum Found {
    Dir(Vec<OsString>),
    File(PathBuf),
    Missing,
    Other,
    LeavesRepository,
    Absolute,
    Loop,
    Unreadable(io::Error),
}

impl WorktreeSource {
    /// The working tree whose top is `top`, rooted at `root` (from the top).
    pub fn new(top: &Path, root: &str) -> Self {
        let root: String = root
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect::<Vec<_>>()
            .join("/");
        let root_parts = match walk(top, Vec::new(), root.as_bytes()) {
            Found::Dir(parts) => Ok(parts),
            Found::File(_) | Found::Other => Err(RootState::NotADirectory),
            Found::Missing => Err(RootState::Missing),
            Found::Unreadable(e) => Err(RootState::Unresolvable(format!("cannot be read: {e}"))),
            other => Err(RootState::Unresolvable(format!(
                "is a symbolic link that {}",
                failure(&other)
            ))),
        };
        let real = match &root_parts {
            Ok(parts) => parts.iter().fold(top.to_path_buf(), |p, c| p.join(c)),
            Err(_) => top.join(&root),
        };
        let display = if root.is_empty() { "." } else { root.as_str() };
        let dir = DirSource::with_display(real, display).without_parent_lookup();
        WorktreeSource {
            top: top.to_path_buf(),
            root,
            root_parts,
            dir,
        }
    }
}

impl Source for WorktreeSource {
    fn root_display(&self) -> String {
        self.dir.root_display()
    }

    fn root(&self) -> Result<RootState, SourceError> {
        match &self.root_parts {
            Ok(_) => self.dir.root(),
            Err(state) => Ok(state.clone()),
        }
    }

    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
        let mut entries = self.dir.read_dir(dir, rel)?;
        // A commit never holds `.git` (git refuses the name at any depth).
        entries.retain(|e| e.name != b".git");
        Ok(entries)
    }

    fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError> {
        if entry.kind != EntryKind::Symlink {
            return self.dir.resolve(rel, entry);
        }
        let Node::Path(link) = &entry.node else {
            unreachable!("a working tree only hands out paths")
        };
        let unreadable = |e: &io::Error| SourceError::Unreadable {
            path: display_path(&self.root_display(), rel),
            why: e.to_string(),
        };
        let target = std::fs::read_link(link).map_err(|e| unreadable(&e))?;
        let bytes = target.as_os_str().as_encoded_bytes().to_vec();
        let shown = String::from_utf8_lossy(&bytes).into_owned();
        if bytes.starts_with(b"/") {
            return Ok(Target::Unavailable(format!(
                ": symlink to {shown} {}",
                failure(&Found::Absolute)
            )));
        }
        // The link's directory: the root's real path, then the real
        // directories below it that led to the link.
        let mut stack = self.root_parts.clone().unwrap_or_default();
        if let Some(i) = rel.iter().rposition(|b| *b == b'/') {
            stack.extend(components(&rel[..i]).into_iter().map(os));
        }
        Ok(match walk(&self.top, stack, &bytes) {
            Found::File(path) => Target::File(Node::Path(path)),
            Found::Unreadable(e) => return Err(unreadable(&e)),
            other => Target::Unavailable(format!(": symlink to {shown} {}", failure(&other))),
        })
    }

    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        self.dir.read(rel, content, sink)
    }

    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError> {
        let dir = if in_parent {
            if self.root.is_empty() {
                return Ok(None); // the parent of the top is outside the repository
            }
            self.root.rfind('/').map_or("", |i| &self.root[..i])
        } else {
            self.root.as_str()
        };
        let path = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        let Found::File(real) = walk(&self.top, Vec::new(), path.as_bytes()) else {
            return Ok(None);
        };
        // As in git mode and for the gate: a version file that cannot be
        // read is skipped.
        Ok(
            safe_io::read_regular(&real, Links::Refuse, safe_io::JSON_LIMIT)
                .ok()
                .map(|bytes| MetaFile {
                    display: path,
                    bytes,
                }),
        )
    }

    fn origin(&self) -> Origin {
        Origin::Dir {
            dir: self.top.join(&self.root).display().to_string(),
        }
    }
}

/// Follows `path` from the directory `stack` (components below `top`) the
/// way git mode walks a tree: `..` steps up but never above the top, a link
/// is replaced by its target text, an absolute target is refused.
fn walk(top: &Path, mut stack: Vec<OsString>, path: &[u8]) -> Found {
    let mut pending: VecDeque<Vec<u8>> = components(path).into();
    let mut hops = 0;
    while let Some(name) = pending.pop_front() {
        let last = pending.is_empty();
        if name == b"." {
            if last {
                return Found::Dir(stack);
            }
            continue;
        }
        if name == b".." {
            if stack.pop().is_none() {
                return Found::LeavesRepository;
            }
            continue;
        }
        if name == b".git" {
            return Found::Missing;
        }
        let here = stack
            .iter()
            .fold(top.to_path_buf(), |p, c| p.join(c))
            .join(os(name.clone()));
        let meta = match std::fs::symlink_metadata(&here) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Found::Missing
            }
            Err(e) => return Found::Unreadable(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Found::Loop;
            }
            let target = match std::fs::read_link(&here) {
                Ok(t) => t.into_os_string().into_encoded_bytes(),
                Err(e) => return Found::Unreadable(e),
            };
            if target.starts_with(b"/") {
                return Found::Absolute;
            }
            for part in components(&target).into_iter().rev() {
                pending.push_front(part);
            }
        } else if kind.is_dir() {
            stack.push(os(name));
            if last {
                return Found::Dir(stack);
            }
        } else if !last {
            // A file in the middle of a path is ENOTDIR: as broken as missing.
            return Found::Missing;
        } else if kind.is_file() {
            return Found::File(here);
        } else {
            return Found::Other;
        }
    }
    Found::Dir(stack)
}

/// The segments of a link target or path; a trailing `/` becomes a final
/// `.` (it demands a directory), as in git mode.
fn components(path: &[u8]) -> Vec<Vec<u8>> {
    let mut parts: Vec<Vec<u8>> = path
        .split(|b| *b == b'/')
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if path.ends_with(b"/") && !parts.is_empty() {
        parts.push(b".".to_vec());
    }
    parts
}

fn os(bytes: Vec<u8>) -> OsString {
    // SAFETY: the bytes come from `as_encoded_bytes` of an OsStr (a link
    // target or a path read from disk), split at ASCII `/` only.
    unsafe { OsString::from_encoded_bytes_unchecked(bytes) }
}

/// The same words as git mode, so both modes explain a link alike.
fn failure(found: &Found) -> &'static str {
    match found {
        Found::Dir(_) => "points at a directory",
        Found::File(_) => "points at a file",
        Found::Missing => "is broken",
        Found::Other => "is not a regular file",
        Found::LeavesRepository => "leaves the repository",
        Found::Absolute => "is absolute (a checkout would read outside the repository)",
        Found::Loop => "loops",
        Found::Unreadable(_) => "cannot be read",
    }
}

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

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use super::links::{self, Found, Step};
use super::{
    DirSource, Entry, EntryKind, MetaFile, Node, Origin, RootState, Source, SourceError, Target,
};
use crate::safe_io::{self, Links};
use crate::source::display_path;

/// The runtime root of a working tree.
#[derive(Clone, Debug)]
pub struct WorktreeSource {
    top: PathBuf,
    /// The configured root, normalised (`""` is the top).
    root: String,
    /// The real directories from the top down to the root, links in its
    /// path resolved inside the repository; the root's state otherwise.
    root_stack: Result<Vec<PathBuf>, RootState>,
    /// The links the root's path followed: a lookup below the root counts
    /// them too, as the kernel does (see [`links::walk`]).
    root_links: usize,
    /// Reads the root's real directories and regular files.
    dir: DirSource,
}

impl WorktreeSource {
    /// The working tree whose top is `top`, rooted at `root` (from the top).
    pub fn new(top: &Path, root: &str) -> Self {
        let root = crate::source::normalise_root(root);
        let mut root_links = 0;
        let root_stack = match walk(vec![top.to_path_buf()], root.as_bytes(), &mut root_links) {
            Ok(Found::Dir(stack)) => Ok(stack),
            Ok(Found::File(_) | Found::Other) => Err(RootState::NotADirectory),
            Ok(Found::Missing) => Err(RootState::Missing),
            Ok(other) => Err(RootState::Unresolvable(format!(
                "is a symbolic link that {}",
                other.link_failure()
            ))),
            Err(e) => Err(RootState::Unresolvable(format!("cannot be read: {e}"))),
        };
        let real = match &root_stack {
            Ok(stack) => stack.last().expect("the top at least").clone(),
            Err(_) => top.join(&root),
        };
        let display = crate::source::show_root(&root);
        let dir = DirSource::with_display(real, display).without_parent_lookup();
        WorktreeSource {
            top: top.to_path_buf(),
            root,
            root_stack,
            root_links,
            dir,
        }
    }
}

/// [`links::walk`] on disk: links are read, never followed by
/// the system; `hops` links were followed before in the same lookup.
fn walk(stack: Vec<PathBuf>, path: &[u8], hops: &mut usize) -> io::Result<Found<PathBuf, PathBuf>> {
    links::walk(stack, path, hops, |dir: &PathBuf, name: &[u8]| {
        // A commit never holds `.git` (git refuses the name at any depth, in
        // any case: `.GIT` is the git directory on a case-insensitive disk).
        if name.eq_ignore_ascii_case(b".git") {
            return Ok(Step::Missing);
        }
        let here = dir.join(os(name.to_vec()));
        let meta = match std::fs::symlink_metadata(&here) {
            Ok(m) => m,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(Step::Missing)
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        Ok(if kind.is_symlink() {
            Step::Link(
                std::fs::read_link(&here)?
                    .into_os_string()
                    .into_encoded_bytes(),
            )
        } else if kind.is_dir() && is_nested_repository(&here) {
            // The commit holds a gitlink here, whose files it cannot see.
            Step::Other
        } else if kind.is_dir() {
            Step::Dir(here)
        } else if kind.is_file() {
            Step::File(here)
        } else {
            Step::Other
        })
    })
}

/// A directory holding `.git` (a checked-out submodule, a nested clone):
/// `git add` records it as a gitlink (mode 160000), not as its files.
fn is_nested_repository(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(".git")).is_ok()
}

fn os(bytes: Vec<u8>) -> OsString {
    // SAFETY: the bytes come from `as_encoded_bytes` of an OsStr (a link
    // target or a path read from disk), split at ASCII `/` only.
    unsafe { OsString::from_encoded_bytes_unchecked(bytes) }
}

impl Source for WorktreeSource {
    fn root_display(&self) -> String {
        self.dir.root_display()
    }

    fn root(&self) -> Result<RootState, SourceError> {
        match &self.root_stack {
            Ok(_) => self.dir.root(),
            Err(state) => Ok(state.clone()),
        }
    }

    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
        let mut entries = self.dir.read_dir(dir, rel)?;
        // A commit never holds `.git` (git refuses the name at any depth, in
        // any case).
        entries.retain(|e| !e.name.eq_ignore_ascii_case(b".git"));
        for entry in &mut entries {
            if let (EntryKind::Dir, Node::Path(path)) = (entry.kind, &entry.node) {
                if is_nested_repository(path) {
                    entry.kind = EntryKind::Submodule;
                }
            }
        }
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
            let absolute: Found<PathBuf, PathBuf> = Found::Absolute;
            return Ok(Target::Unavailable(format!(
                ": symlink to {shown} {}",
                absolute.link_failure()
            )));
        }
        // The link's directory: the root's real path, then the real
        // directories below it that led to the link.
        let mut stack = self.root_stack.clone().unwrap_or_default();
        if let Some(i) = rel.iter().rposition(|b| *b == b'/') {
            for part in links::components(&rel[..i]) {
                let next = stack.last().expect("the root's stack").join(os(part));
                stack.push(next);
            }
        }
        // One lookup, as the kernel counts it: the root's links, this
        // link, then its target's.
        let mut hops = self.root_links + 1;
        Ok(match walk(stack, &bytes, &mut hops) {
            Ok(Found::File(path)) => Target::File(Node::Path(path)),
            Ok(other) => {
                Target::Unavailable(format!(": symlink to {shown} {}", other.link_failure()))
            }
            Err(e) => return Err(unreadable(&e)),
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
        let Some(path) = super::meta_path(&self.root, name, in_parent) else {
            return Ok(None);
        };
        let real = match walk(vec![self.top.clone()], path.as_bytes(), &mut 0) {
            Ok(Found::File(real)) => real,
            // A directory, FIFO, socket or device where the gate reads: not
            // skipped, in the words of the installed directory's reading
            // (`--dir`, the gate), which reports it as unreadable: what it
            // would say cannot be ruled out (docs/gate.md).
            Ok(found @ (Found::Dir(_) | Found::Other)) => {
                let problem = match found {
                    Found::Dir(_) => safe_io::ReadError::NotRegular("directory").to_string(),
                    _ => "is not a regular file".into(),
                };
                return Ok(Some(MetaFile {
                    display: path,
                    bytes: Vec::new(),
                    problem: Some(problem),
                }));
            }
            _ => return Ok(None),
        };
        // As for the gate: a version file that is there but cannot be read
        // is reported (`problem`), so the release reading errs toward
        // "restart" and says so.
        match safe_io::read_regular(&real, Links::Refuse, safe_io::JSON_LIMIT) {
            Ok(bytes) => Ok(Some(MetaFile {
                display: path,
                bytes,
                problem: None,
            })),
            Err(e) if e.is_missing() => Ok(None),
            Err(e) => Ok(Some(MetaFile {
                display: path,
                bytes: Vec::new(),
                problem: Some(e.to_string()),
            })),
        }
    }

    fn origin(&self) -> Origin {
        Origin::Dir {
            dir: self.top.join(&self.root).display().to_string(),
        }
    }
}

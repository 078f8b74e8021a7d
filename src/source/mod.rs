//! Where bytes come from: a git tree at a revision, or a directory on disk.
//!
//! Both sources answer the same few questions (what is in this directory,
//! where does this symbolic link lead, what are this file's bytes), so the
//! selection rules, the fingerprint and everything built on them never know
//! which one they read. Symbolic-link resolution lives here because it is the
//! one thing that differs: the file system follows links itself, a tree must
//! be walked by hand.

use std::path::PathBuf;

mod dir;
#[cfg(unix)]
mod dir_files;
pub mod git;
mod links;
mod worktree;

/// The deepest path git reads (`core.maxTreeDepth`, 4096 by default):
/// deeper trees cost quadratic time to walk and git itself refuses them.
pub(crate) const MAX_TREE_DEPTH: usize = 4096;

mod limits;
mod paths;
pub use dir::DirSource;
pub use git::{GitSource, Revision, ScanRule, ScanStep};
pub(crate) use limits::{Budget, MAX_DIRS, MAX_ENTRIES};
pub(crate) use paths::{display_path, normalise_root, show_root, too_deep};
pub use worktree::WorktreeSource;

/// A handle on an object of a source: a blob or tree id, or a path on disk.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// A git object id (a blob for files, a tree for directories).
    Object(gix::ObjectId),
    /// A path on disk.
    Path(PathBuf),
}

/// One selected runtime file, ready to be hashed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SelectedFile {
    /// Path relative to the runtime root, `/`-separated: the bytes hashed.
    pub path: String,
    /// Where the file's bytes are (symbolic links already resolved).
    pub content: Node,
}

impl Node {
    /// The git object id, when the node is one.
    pub fn object_id(&self) -> Option<gix::ObjectId> {
        match self {
            Node::Object(id) => Some(*id),
            Node::Path(_) => None,
        }
    }
}

/// What a directory entry is, without following symbolic links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (git: a blob, executable or not).
    File,
    /// A symbolic link, to anything.
    Symlink,
    /// A real directory (git: a tree).
    Dir,
    /// A git submodule (gitlink); never seen on disk.
    Submodule,
    /// A FIFO, socket or device: never readable as a runtime file.
    Other,
}

/// One entry of a directory.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The entry's own name (one path segment), as raw bytes.
    pub name: Vec<u8>,
    /// What it is.
    pub kind: EntryKind,
    /// Where it is: for a symbolic link, the link itself.
    pub node: Node,
}

/// The state of the runtime root.
#[derive(Clone, Debug)]
pub enum RootState {
    /// A directory to walk.
    Dir(Node),
    /// Nothing at that path.
    Missing,
    /// A file, or a link to one.
    NotADirectory,
    /// A link that cannot be followed, or unreadable: the sentence says why.
    Unresolvable(String),
}

/// Where a selected entry's bytes are, or why they cannot be read as a file.
#[derive(Clone, Debug)]
pub enum Target {
    /// A readable file.
    File(Node),
    /// A sentence fragment that follows the path, e.g. `is a directory`.
    Unavailable(String),
}

/// A small file read beside the runtime (`version.json`, `package.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetaFile {
    /// The path as the user knows it (`src/version.json`).
    pub display: String,
    /// Its bytes (empty when `problem` is set).
    pub bytes: Vec<u8>,
    /// Why a file that is there cannot be read (permissions, a FIFO, a
    /// directory, too large): what it says cannot be ruled out.
    pub problem: Option<String>,
}

/// Errors reading a source. `Unreadable` is a property of the tree being
/// fingerprinted (it makes the fingerprint unavailable); every other variant
/// means the input itself is broken and no answer can be given.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A path below the root cannot be read: the fingerprint is unavailable.
    #[error("{path}: {why}")]
    Unreadable {
        /// The path as the user knows it.
        path: String,
        /// What went wrong.
        why: String,
    },
    /// A tree on the path is malformed (duplicate entries, names `.`, `..`
    /// or with `/`, unparsable entries) or nested deeper than git allows:
    /// like [`SourceError::Unreadable`], it makes the fingerprint
    /// unavailable; unlike it, it is never a directory the walk may skip.
    #[error("{path}: {why}")]
    Malformed {
        /// The path as the user knows it.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// The repository cannot be opened or read.
    #[error("{0}")]
    Repository(crate::setting::Message),
    /// gix failed: `message` says what fpcheck was doing and what to do,
    /// `source` is gix's error, kept for callers that walk the chain.
    #[error("{message}{}", git_detail(source.as_ref()))]
    Git {
        /// What failed, and what to do about it.
        message: crate::setting::Message,
        /// gix's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// An object the answer depends on is not in the repository.
    #[error("{what} ({id}) is missing from the repository; {hint}")]
    MissingObject {
        /// What the object is, e.g. `blob of src/app.py`.
        what: String,
        /// Its id.
        id: gix::ObjectId,
        /// What to do about it.
        hint: String,
    },
}

impl crate::error::Classified for SourceError {
    fn kind(&self) -> crate::error::Kind {
        crate::error::Kind::Input
    }
}

impl SourceError {
    /// The message with the settings it names spelled as `spelling` says
    /// ([`std::fmt::Display`] spells them as the command line's flags).
    pub fn spelled(&self, spelling: crate::setting::Spelling) -> String {
        match self {
            SourceError::Repository(m) => m.spelled(spelling),
            SourceError::Git { message, source } => {
                format!(
                    "{}{}",
                    message.spelled(spelling),
                    git_detail(source.as_ref())
                )
            }
            other => other.to_string(),
        }
    }
}

/// The words of gix's error chain worth showing, as ` (a: b)`: gix's
/// parser frames (`couldn't parse revision, input="v8"`,
/// `delegate.traverse(...) failed`) repeat the input and say nothing more.
fn git_detail(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        let text = e.to_string().replace('\n', " ");
        let noise = text.contains("input=") || text.contains("couldn't parse revision");
        if !noise && !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(": "))
    }
}

/// The path from the top of the repository of the version file `name` in
/// the runtime root `root` (`in_parent == false`) or in its parent; `None`
/// for the parent of the top, which is outside the repository. The lookup
/// of section 5, shared by the git and working-tree sources.
pub(crate) fn meta_path(root: &str, name: &str, in_parent: bool) -> Option<String> {
    let dir = if in_parent {
        if root.is_empty() {
            return None;
        }
        root.rfind('/').map_or("", |i| &root[..i])
    } else {
        root
    };
    Some(if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    })
}

/// A tree of files to fingerprint, rooted at the runtime root.
pub trait Source {
    /// The runtime root as the user knows it, used to name paths in messages.
    fn root_display(&self) -> String;

    /// Whether the runtime root is a directory, following symbolic links.
    fn root(&self) -> Result<RootState, SourceError>;

    /// The entries of a directory; `rel` is its path below the root.
    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError>;

    /// Where a selected file or link at `rel` leads.
    fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError>;

    /// Streams a file's bytes into `sink`; `rel` names it in errors.
    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError>;

    /// Reads a small file in the runtime root (`in_parent == false`) or in
    /// its parent, following links; `None` when there is no such file.
    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError>;

    /// Where this source's bytes come from, for reports.
    fn origin(&self) -> Origin;

    /// How many directories deep the runtime root is, counted as git
    /// counts a tree's depth (from the top of the repository), so that the
    /// walk below it stops where git's `core.maxTreeDepth` would.
    fn root_depth(&self) -> usize {
        0
    }

    /// Warnings about the bytes this source gives for `files`, such as
    /// `.gitattributes` conversions a checkout would apply.
    fn warnings(
        &self,
        _files: &[SelectedFile],
    ) -> Result<Vec<crate::warning::Warning>, SourceError> {
        Ok(Vec::new())
    }

    /// A reader of this source's files for one fingerprint, which a
    /// thread may own (one per thread), when reading needs nothing this
    /// source cannot share (a directory: paths only): a fingerprint then
    /// reads on two threads, and each reader keeps what it opened only
    /// until it is dropped. `None` by default: files are read with
    /// [`Source::read`].
    fn file_reader(&self) -> Option<Box<dyn FileReader + Send>> {
        None
    }
}

/// See [`Source::file_reader`].
pub trait FileReader {
    /// As [`Source::read`].
    fn read(
        &mut self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError>;

    /// Appends the whole file to `out`, unless it holds more than `limit`
    /// bytes (then `out` is left as it was).
    fn read_whole(
        &mut self,
        rel: &str,
        content: &Node,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Whole, SourceError>;
}

/// What [`FileReader::read_whole`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whole {
    /// Appended this many bytes: the whole file.
    Read(usize),
    /// Appended nothing: the file holds more than the limit.
    TooBig,
}

/// Where a source's bytes come from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Origin {
    /// A tree in a git repository.
    Git {
        /// The repository's path.
        repo: String,
        /// The revision as given.
        rev: String,
        /// The commit it resolved to (`null` for a bare tree spec).
        commit: Option<String>,
        /// The tree hashed.
        tree: String,
    },
    /// A directory on disk.
    Dir {
        /// The runtime root directory.
        dir: String,
    },
}

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
pub mod git;
mod links;
mod worktree;

pub use dir::DirSource;
pub use git::{GitSource, Revision};
pub use worktree::WorktreeSource;

/// A handle on an object of a source: a blob or tree id, or a path on disk.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// A git object id (a blob for files, a tree for directories).
    Object(gix::ObjectId),
    /// A path on disk.
    Path(PathBuf),
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
    /// The repository cannot be opened or read.
    #[error("{0}")]
    Repository(String),
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

    /// Warnings about the bytes this source gives for `files`, such as
    /// `.gitattributes` conversions a checkout would apply.
    fn warnings(&self, _files: &[crate::select::SelectedFile]) -> Result<Vec<String>, SourceError> {
        Ok(Vec::new())
    }
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

//! Why no patch can be made or written.

use crate::source::SourceError;

/// Why no patch can be made or written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The version file is not JSON.
    #[error("{path}:{line}:{column}: not valid JSON: {message}")]
    InvalidJson {
        /// The file, from the top of the repository.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message, without its position.
        message: String,
    },
    /// The version file is JSON but not an object.
    #[error("{path}:{line}: the document is {found}, not a JSON object")]
    NotAnObject {
        /// The file.
        path: String,
        /// Where the document starts.
        line: usize,
        /// What it is instead.
        found: &'static str,
    },
    /// A key appears twice in one object.
    #[error("{path}:{line}: duplicate key \"{key}\" in {} (first at line {first_line}): the gate would silently use the last one", if pointer.is_empty() { "the top-level object" } else { pointer.as_str() })]
    DuplicateKey {
        /// The file.
        path: String,
        /// The second occurrence.
        line: usize,
        /// The first.
        first_line: usize,
        /// The key.
        key: String,
        /// The object holding it, as a JSON Pointer (`""`: the top).
        pointer: String,
    },
    /// A file cannot be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The repository cannot be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// `--version-file` (or the config's) is unusable.
    #[error("{0}")]
    BadVersionFile(crate::setting::Message),
    /// `--write` without a working tree.
    #[error("{0}")]
    NoWorktree(String),
    /// `--write` when the `to` side is not checked out.
    #[error("{0}")]
    WrongCheckout(crate::setting::Message),
    /// The file changed on disk since it was read.
    #[error("{0} changed while fpcheck was reading it: nothing was written; run again")]
    Raced(String),
    /// The write failed; the file is untouched.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The edited text does not say what the patch says: a bug, caught
    /// before anything is written.
    #[error("internal error, nothing was written: {0}")]
    Internal(String),
}

impl crate::error::Classified for PatchError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            PatchError::BadVersionFile(_)
            | PatchError::NoWorktree(_)
            | PatchError::WrongCheckout(_) => crate::error::Kind::Usage,
            PatchError::InvalidJson { .. }
            | PatchError::NotAnObject { .. }
            | PatchError::DuplicateKey { .. }
            | PatchError::Read { .. } => crate::error::Kind::Input,
            PatchError::Source(e) => crate::error::Classified::kind(e),
            PatchError::Write { .. } | PatchError::Raced(_) => crate::error::Kind::Output,
            PatchError::Internal(_) => crate::error::Kind::Internal,
        }
    }
}

//! One classification of failures. Every error the library returns has a
//! [`Kind`], decided here for all of them; the command line turns a kind
//! into an exit code in one place (`cli::exit::of`), and the Python package
//! into an exception class.

use crate::config::ConfigError;
use crate::demo::DemoError;
use crate::gate::GateError;
use crate::history::HistoryError;
use crate::init::InitError;
use crate::patch::PatchError;
use crate::range::RangeError;
use crate::source::SourceError;

/// What kind of failure an error is, whatever command met it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The flags or the configuration are wrong or contradict the inputs.
    Usage,
    /// An input cannot be read: not a repository, an unknown revision,
    /// missing objects, unreadable or corrupt files.
    Input,
    /// An output cannot be written (a file, the marker, its lock).
    Output,
    /// A bug in fpcheck, caught before it could give a wrong answer (a
    /// worker thread that panicked, an edit that does not re-read as
    /// planned).
    Internal,
}

/// An error with a [`Kind`].
pub trait Classified: std::error::Error {
    /// The kind of this failure.
    fn kind(&self) -> Kind;
}

impl Classified for SourceError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classified for ConfigError {
    fn kind(&self) -> Kind {
        Kind::Usage
    }
}

impl Classified for RangeError {
    fn kind(&self) -> Kind {
        match self {
            RangeError::BadRange(_) | RangeError::NoRoot(_) | RangeError::Config(_) => Kind::Usage,
            RangeError::NoTag(_) => Kind::Input,
            RangeError::Source(e) => e.kind(),
        }
    }
}

impl Classified for HistoryError {
    fn kind(&self) -> Kind {
        match self {
            HistoryError::Usage(_) => Kind::Usage,
            HistoryError::UnknownTag(_) => Kind::Input,
            HistoryError::Internal(_) => Kind::Internal,
            HistoryError::Config(e) => e.kind(),
            HistoryError::Source(e) => e.kind(),
        }
    }
}

impl Classified for PatchError {
    fn kind(&self) -> Kind {
        match self {
            PatchError::BadVersionFile(_)
            | PatchError::NoWorktree(_)
            | PatchError::WrongCheckout(_) => Kind::Usage,
            PatchError::InvalidJson { .. }
            | PatchError::NotAnObject { .. }
            | PatchError::DuplicateKey { .. }
            | PatchError::Read { .. } => Kind::Input,
            PatchError::Source(e) => e.kind(),
            PatchError::Write { .. } | PatchError::Raced(_) => Kind::Output,
            PatchError::Internal(_) => Kind::Internal,
        }
    }
}

impl Classified for GateError {
    fn kind(&self) -> Kind {
        match self {
            GateError::SettingsMismatch { .. } | GateError::UnknownClient { .. } => Kind::Usage,
            GateError::SnapshotUnreadable { .. }
            | GateError::SnapshotInvalid { .. }
            | GateError::MarkerCorrupt { .. } => Kind::Input,
            GateError::Source(e) => e.kind(),
            GateError::Lock { .. } | GateError::Write { .. } => Kind::Output,
        }
    }
}

impl Classified for InitError {
    fn kind(&self) -> Kind {
        match self {
            InitError::Exists(_) => Kind::Usage,
            InitError::Write { .. } => Kind::Output,
        }
    }
}

impl Classified for DemoError {
    fn kind(&self) -> Kind {
        match self {
            DemoError::Build { .. } => Kind::Input,
            DemoError::CheckOut { .. } => Kind::Output,
            DemoError::Range(e) => e.kind(),
        }
    }
}

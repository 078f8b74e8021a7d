//! The Python exceptions: one `FpcheckError` family, each class named for
//! the cause, so callers catch what they can act on (never a bare
//! `RuntimeError`).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use fpcheck::config::ConfigError as CoreConfigError;
use fpcheck::gate::GateError;
use fpcheck::range::RangeError;
use fpcheck::setting::{Message, Spelling};
use fpcheck::SourceError;

create_exception!(
    fpcheck,
    FpcheckError,
    PyException,
    "Base class of every error fpcheck raises."
);
create_exception!(
    fpcheck,
    ConfigError,
    FpcheckError,
    "Bad settings: an fpcheck.toml, extensions, excluded names, a keyword."
);
create_exception!(
    fpcheck,
    InputError,
    FpcheckError,
    "An input cannot be read."
);
create_exception!(
    fpcheck,
    RepositoryError,
    InputError,
    "Not a git repository, or the repository cannot be read."
);
create_exception!(
    fpcheck,
    RevisionError,
    InputError,
    "A revision (tag, branch, commit) does not resolve to a commit or tree."
);
create_exception!(
    fpcheck,
    MissingObjectError,
    InputError,
    "An object the answer depends on is missing (shallow or partial clone)."
);
create_exception!(
    fpcheck,
    UnreadableError,
    InputError,
    "The runtime directory or a file in it cannot be read."
);
create_exception!(
    fpcheck,
    SnapshotError,
    InputError,
    "The snapshot is unreadable, corrupt, foreign or of another schema."
);
create_exception!(
    fpcheck,
    MarkerError,
    InputError,
    "The restart marker cannot be read as a JSON object."
);
create_exception!(
    fpcheck,
    OutputError,
    FpcheckError,
    "An output (the marker, its lock) cannot be written."
);
create_exception!(
    fpcheck,
    LockError,
    OutputError,
    "The lock beside the marker cannot be taken."
);
create_exception!(
    fpcheck,
    WriteError,
    OutputError,
    "The marker cannot be written or removed."
);

/// Adds every class to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FpcheckError", py.get_type::<FpcheckError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("RepositoryError", py.get_type::<RepositoryError>())?;
    m.add("RevisionError", py.get_type::<RevisionError>())?;
    m.add("MissingObjectError", py.get_type::<MissingObjectError>())?;
    m.add("UnreadableError", py.get_type::<UnreadableError>())?;
    m.add("SnapshotError", py.get_type::<SnapshotError>())?;
    m.add("MarkerError", py.get_type::<MarkerError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add("LockError", py.get_type::<LockError>())?;
    m.add("WriteError", py.get_type::<WriteError>())?;
    Ok(())
}

/// An error of the core, before it meets Python (the GIL is released
/// while it is made).
#[derive(Debug)]
pub enum Error {
    Config(String),
    Repository(String),
    Revision(String),
    MissingObject(String),
    Unreadable(String),
    Snapshot(String),
    Marker(String),
    Lock(String),
    Write(String),
    /// A gate error after which the gate still reported (and may have
    /// written the marker): the report rides on the exception.
    Gate(Box<Error>, serde_json::Value),
}

impl Error {
    /// Opening a repository failed.
    pub fn repository(e: SourceError) -> Error {
        match e {
            SourceError::Repository(m) => Error::Repository(keywords(&m)),
            other => Error::from(other),
        }
    }

    /// Resolving a revision failed.
    pub fn revision(e: SourceError) -> Error {
        match e {
            SourceError::Repository(m) => Error::Revision(keywords(&m)),
            // An unknown revision keeps gix's error as its source.
            e @ SourceError::Git { .. } => Error::Revision(e.spelled(Spelling::Keyword)),
            other => Error::from(other),
        }
    }

    /// The Python exception. Its message is escaped here, once (names
    /// from a repository may hold control or bidi characters; the core's
    /// messages quote them raw).
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let shown = |m: String| fpcheck::term::escape(&m).into_owned();
        match self {
            Error::Config(m) => ConfigError::new_err(shown(m)),
            Error::Repository(m) => RepositoryError::new_err(shown(m)),
            Error::Revision(m) => RevisionError::new_err(shown(m)),
            Error::MissingObject(m) => MissingObjectError::new_err(shown(m)),
            Error::Unreadable(m) => UnreadableError::new_err(shown(m)),
            Error::Snapshot(m) => SnapshotError::new_err(shown(m)),
            Error::Marker(m) => MarkerError::new_err(shown(m)),
            Error::Lock(m) => LockError::new_err(shown(m)),
            Error::Write(m) => WriteError::new_err(shown(m)),
            Error::Gate(inner, report) => {
                let err = inner.into_py(py);
                let attached = crate::convert::to_py(py, &report)
                    .and_then(|r| err.value(py).setattr("report", r));
                match attached {
                    Ok(()) => err,
                    Err(e) => e,
                }
            }
        }
    }
}

/// A core message with its settings named as this package's keyword
/// arguments (`repo=`), not as the command line's flags (`--repo PATH`).
fn keywords(m: &Message) -> String {
    m.spelled(Spelling::Keyword)
}

impl From<SourceError> for Error {
    fn from(e: SourceError) -> Self {
        match e {
            SourceError::Repository(m) => Error::Repository(keywords(&m)),
            SourceError::Git { .. } => Error::Repository(e.spelled(Spelling::Keyword)),
            SourceError::MissingObject { .. } => Error::MissingObject(e.to_string()),
            SourceError::Unreadable { .. } | SourceError::Malformed { .. } => {
                Error::Unreadable(e.to_string())
            }
        }
    }
}

impl From<CoreConfigError> for Error {
    fn from(e: CoreConfigError) -> Self {
        match e {
            CoreConfigError::Invalid(m) | CoreConfigError::Flag(m) => Error::Config(keywords(&m)),
            CoreConfigError::Source(e) => Error::from(e),
            other => Error::Config(other.to_string()),
        }
    }
}

impl From<RangeError> for Error {
    fn from(e: RangeError) -> Self {
        match e {
            RangeError::Source(s) => Error::from(s),
            RangeError::BadRange(m) => Error::Config(keywords(&m)),
            RangeError::NoTag(m) => Error::Revision(m),
            RangeError::NoRoot(m) => Error::Config(keywords(&m)),
            RangeError::Config(c) => Error::from(c),
        }
    }
}

impl From<GateError> for Error {
    fn from(e: GateError) -> Self {
        let message = e.to_string();
        match e {
            GateError::SnapshotUnreadable { .. } | GateError::SnapshotInvalid { .. } => {
                Error::Snapshot(message)
            }
            // A bad argument, like a settings mismatch: nothing was read or written.
            GateError::SettingsMismatch { .. } | GateError::UnknownClient { .. } => {
                Error::Config(message)
            }
            GateError::Lock { .. } => Error::Lock(message),
            GateError::Write { .. } => Error::Write(message),
            GateError::MarkerCorrupt { .. } => Error::Marker(message),
            GateError::Source(s) => Error::from(s),
        }
    }
}

/// Runs `f` without the GIL and raises its error as the right class.
pub fn detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> Result<T, Error> + Send,
    T: Send,
{
    py.detach(f).map_err(|e| e.into_py(py))
}

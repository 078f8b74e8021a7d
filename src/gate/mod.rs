//! The runtime gate for production updaters (docs/spec.md sections 5-7):
//! what the reference Python gate does around an update and on every tool
//! call, with files the reference itself can read.
//!
//! - [`snapshot`]: the runtime's state before an update (version,
//!   `force_restart`, fingerprint, each file's own digest);
//! - [`run`]: the gate after the update: compare, [`decision`] (section 6),
//!   and write the [`marker`] atomically under a [`lock`];
//! - [`status`]: the running process's question, [`check`] (section 7),
//!   optionally through a [`cache`] of file stats;
//! - [`ack`]: a client confirms its restart; the marker goes once no one
//!   needs it;
//! - [`client`]: the known clients, their actions, and name normalisation.
//!
//! The decisions are pure functions; the modules around them only read and
//! write files, and never fail open: what cannot be read counts as
//! "restart".

pub mod ack;
pub mod cache;
pub mod clock;
pub mod lock;
pub mod run;
pub mod snapshot;
pub mod status;

use crate::source::SourceError;

pub use crate::safe_io::io_reason;

/// Why a gate command could not do its job.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The snapshot file cannot be read.
    #[error("cannot read the snapshot {path}: {why}")]
    SnapshotUnreadable {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The snapshot file is corrupt, foreign, or of another schema.
    #[error("{path} is not a usable snapshot: {why}")]
    SnapshotInvalid {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// The flags select files differently from the snapshot.
    #[error(
        "the snapshot was taken with other settings ({snapshot}) than given now ({given}): \
         drop the flags or take a new snapshot"
    )]
    SettingsMismatch {
        /// The snapshot's settings.
        snapshot: String,
        /// The flags'.
        given: String,
    },
    /// The lock beside the marker cannot be taken.
    #[error("cannot lock {path}: {why}")]
    Lock {
        /// The lock file.
        path: String,
        /// Why.
        why: String,
    },
    /// The marker cannot be written or removed.
    #[error("cannot write {path}: {why}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// The marker cannot be read as a JSON object, so it cannot be updated.
    #[error("the marker {path} {why}")]
    MarkerCorrupt {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// A client name that is not a known client.
    #[error(
        "{name:?} is not a known client: use claude_code, claude_desktop or codex \
         (or an alias: claude, claudecode, claude_desktop_app, desktop)"
    )]
    UnknownClient {
        /// The name as given.
        name: String,
    },
    /// The runtime cannot be read at all.
    #[error(transparent)]
    Source(#[from] SourceError),
}

impl crate::error::Classified for GateError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            GateError::SettingsMismatch { .. } | GateError::UnknownClient { .. } => {
                crate::error::Kind::Usage
            }
            GateError::SnapshotUnreadable { .. }
            | GateError::SnapshotInvalid { .. }
            | GateError::MarkerCorrupt { .. } => crate::error::Kind::Input,
            GateError::Source(e) => crate::error::Classified::kind(e),
            GateError::Lock { .. } | GateError::Write { .. } => crate::error::Kind::Output,
        }
    }
}

/// The class of a [`GateError`] (see [`crate::error`]).
pub use crate::error::Kind as ErrorKind;

/// What a [`GateError`] is about, one value per variant: lets a caller that
/// only kept the class of a failure (the gate's report) tell its causes
/// apart without reading the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The snapshot cannot be read, or is not a usable snapshot.
    Snapshot,
    /// The flags select files differently from the snapshot.
    Settings,
    /// A client name that is not a known client.
    Client,
    /// The lock beside the marker cannot be taken.
    Lock,
    /// The marker (or its directory) cannot be written or removed.
    Write,
    /// The marker cannot be read as a JSON object.
    Marker,
    /// The runtime cannot be read.
    Runtime,
}

impl GateError {
    /// The cause of this error.
    pub fn cause(&self) -> Cause {
        match self {
            GateError::SnapshotUnreadable { .. } | GateError::SnapshotInvalid { .. } => {
                Cause::Snapshot
            }
            GateError::SettingsMismatch { .. } => Cause::Settings,
            GateError::UnknownClient { .. } => Cause::Client,
            GateError::Lock { .. } => Cause::Lock,
            GateError::Write { .. } => Cause::Write,
            GateError::MarkerCorrupt { .. } => Cause::Marker,
            GateError::Source(_) => Cause::Runtime,
        }
    }
}

/// The schema of the JSON documents `snapshot`, `gate`, `status` and `ack`
/// print (the snapshot file has its own, [`snapshot::SCHEMA_VERSION`]).
pub(crate) const JSON_SCHEMA: u32 = 1;

/// The JSON document of a gate command's report (`gate --json`,
/// `status --json`, `ack --json`): `schema_version` first, then the
/// report's fields. The CLI prints exactly this; the Python package returns
/// it.
pub fn document<T: serde::Serialize>(report: &T) -> serde_json::Value {
    #[derive(serde::Serialize)]
    struct Doc<'a, T: serde::Serialize> {
        schema_version: u32,
        #[serde(flatten)]
        body: &'a T,
    }
    serde_json::to_value(Doc {
        schema_version: JSON_SCHEMA,
        body: report,
    })
    .expect("reports are plain data")
}

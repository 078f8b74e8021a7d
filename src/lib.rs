//! fpcheck: will this release force running servers to restart, and why?
//!
//! A long-running server restarts only when the code it runs changed. Its
//! gate hashes the runtime files (by default every `.py` file under `src/`,
//! minus out-of-process folders) into a *runtime fingerprint*. This crate
//! computes that fingerprint byte for byte, from a git tree at any revision
//! (through gix, no checkout) or from a directory on disk, and builds the
//! release verdict, its report and the production gate on top of it.
//!
//! The stages, each a module named for its concept:
//! [`source`] (where bytes come from) → [`select`] (which files count) →
//! [`fingerprint`] (the hash).

#![warn(missing_docs, unreachable_pub)]

// `cli` names this crate `fpcheck::`, as it did when it lived in the binary.
extern crate self as fpcheck;

pub mod advice;
pub mod atomic;
mod buf_pool;
pub mod cache;
pub mod changes;
pub mod classify;
/// The command line, shared by the binary and the Python package's
/// `fpcheck` command; not a stable API.
#[doc(hidden)]
pub mod cli;
pub mod config;
pub mod demo;
pub mod error;
pub mod fingerprint;
pub mod gate;
pub mod history;
pub mod imports;
pub mod init;
mod own_files;
pub mod pair;
pub mod patch;
pub mod pretty;
pub mod pyjson;
pub mod range;
pub mod release;
pub mod report;
pub mod safe_io;
pub mod select;
pub mod setting;
pub mod side;
pub mod source;
pub mod tags;
pub mod term;
mod threads;
pub mod verdict;
pub mod version;
pub mod warning;
pub mod witness;

pub use fingerprint::{compute, Fingerprint};
pub use select::{Rules, Selection};
pub use source::SelectedFile;
pub use source::{DirSource, GitSource, Revision, Source, SourceError};

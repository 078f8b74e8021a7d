//! fpcheck's integration tests: real repositories and directories.

mod support;

mod fingerprint;
mod history;
mod range;
mod vectors;

//! fpcheck's integration tests: real repositories and directories.

mod support;

mod fingerprint;
mod range;
mod vectors;

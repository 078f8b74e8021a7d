//! fpcheck's integration tests: real repositories and directories.

mod support;

mod action;
mod fingerprint;
mod gate;
mod history;
mod init;
mod monorepo;
mod patch;
mod property;
mod pyjson;
mod range;
mod trust;
mod vectors;

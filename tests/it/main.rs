//! fpcheck's integration tests: real repositories and directories.

mod support;

mod action;
mod classify;
mod fingerprint;
mod gate;
mod history;
mod patch;
mod property;
mod pyjson;
mod range;
mod report_out;
mod tags;
mod trust;
mod vectors;

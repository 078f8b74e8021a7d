//! fpcheck's integration tests: real repositories and directories.

mod support;

mod action;
mod attributes;
mod classify;
mod classify_cache;
mod classify_corpus;
mod classify_edits;
mod classify_tricky;
mod errors;
mod fingerprint;
mod gate;
mod history;
mod history_runtimes;
mod history_settings;
mod hostile_files;
mod hostile_git;
mod init;
mod monorepo;
mod newcomer;
mod object_memo;
mod patch;
mod property;
mod pyjson;
mod range;
mod readme;
mod report_out;
mod settings_check;
mod tags;
mod trust;
mod trust_review;
mod unchanged;
mod vectors;
mod warnings;

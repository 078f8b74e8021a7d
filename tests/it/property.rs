//! The fingerprint's property: for generated runtime trees, the fingerprint from
//! the commit (tree mode), from the `src/` directory of a checkout of that
//! commit (directory mode), and from the Python reference
//! (`tests/reference_fingerprint.py`) are the same string and select the same
//! files.
//!
//! Trees are built under `src/` of a real repository: names with punctuation,
//! unicode, dots and spaces; excluded names at any depth; empty, text and
//! binary contents; links to files and to directories, links that leave the
//! root but stay in the repository, broken and looping links, links through
//! other links; directories named `*.py`; and sometimes a submodule (a
//! gitlink), which makes tree mode unavailable unless it is excluded. Link
//! targets never leave the repository and are never absolute: there a
//! checkout differs from the tree by design.
//!
//! `checkouts` generates trees whose checkout differs from the stored
//! bytes (nested roots beside copies of their directories, paths that are
//! not UTF-8, link chains around the kernel's limit, version files under
//! attributes) and compares them with a real `git clone`.
//!
//! `PROPTEST_CASES` sets the number of cases (48 by default).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use fpcheck::select::DEFAULT_EXCLUDE;
use fpcheck::source::git::Session;
use fpcheck::{DirSource, GitSource, Revision, Rules};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;

use crate::support::{git_in, write_tree, TestRepo};

/// Any commit id does for a gitlink: nothing ever reads the submodule.
const GITLINK_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

mod checkouts;
mod hostile;
mod trees;

/// A setting from the environment (as proptest reads it), or this default.
fn env_or(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

//! Advice to the releaser, beside the verdict and never an input to it:
//! what a static reading of both ends says the gate cannot see (a free
//! release that changed the runtime's dependencies or a data file a
//! module reads: a possible missed restart), a restart that only moved a
//! version string (avoidable), and the MCP tools, resources and prompts
//! clients see (added, removed, changed). Each item names its evidence as
//! `file:line`. See docs/advice.md for what each detector reads and what
//! it cannot see.
//!
//! Objects are read only through the session, from the two ends' trees;
//! parsed files are remembered by blob id in a [`Memo`] the caller keeps
//! for a run (a history reads the same manifests and modules release
//! after release).

use std::collections::{BTreeMap, HashMap};

use gix::ObjectId;
use serde::Serialize;

use crate::classify::Avoidable;
use crate::pair::Pair;
use crate::source::git::Session;

mod data;
mod deps;
mod surface;
mod tree;

/// What an item advises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdviceKind {
    /// A free release whose running servers may keep stale code or data.
    PossibleMissedRestart,
    /// A restart that could have waited.
    Avoidable,
    /// The tools, resources or prompts clients see changed: they must
    /// re-initialise to see them.
    McpSurface,
}

/// Why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdviceCause {
    /// Declared dependencies or their locked versions changed.
    Dependencies,
    /// A data file a runtime module reads by name changed.
    DataFile,
    /// Only version strings changed.
    Version,
    /// A registered function was added.
    Added,
    /// A registered function was removed.
    Removed,
    /// A registered function's signature or description changed.
    Changed,
}

/// One piece of advice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Item {
    /// What it advises.
    pub kind: AdviceKind,
    /// Why.
    pub cause: AdviceCause,
    /// One sentence for humans.
    pub message: String,
    /// Where it shows, as `file:line` (paths from the top of the
    /// repository, lines from 1).
    pub evidence: Vec<String>,
    /// What changed, one line each (package by package, tool by tool).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

impl Item {
    /// Whether this item is a possible missed restart.
    pub fn is_missed_restart(&self) -> bool {
        self.kind == AdviceKind::PossibleMissedRestart
    }
}

/// Whether any item is a possible missed restart.
pub fn has_missed_restart(items: &[Item]) -> bool {
    items.iter().any(Item::is_missed_restart)
}

/// What the detectors need of an update.
pub struct Update<'a> {
    /// The ends' top trees (`None`: unreadable, nothing is advised).
    pub trees: Pair<ObjectId>,
    /// The runtime's root, from the top (`""` for the top).
    pub root: &'a str,
    /// Which files below the root are the runtime's at the `to` end (the
    /// modules whose reads count; the files that are not data).
    pub runtime: Runtime<'a>,
    /// The verdict: running clients restart.
    pub restart_required: bool,
    /// Why a required restart could have waited, when it could.
    pub avoidable: Option<Avoidable>,
    /// The runtime files whose change may be `version` (for evidence: those
    /// with a version assignment are named).
    pub version_files: Vec<String>,
    /// Read the MCP surface (a range report; `history` leaves it out).
    pub surface: bool,
    /// The bytes of a blob the caller already inflated, when it kept them
    /// (a history reads every runtime file for its fingerprints): the
    /// modules searched for data-file names are then not inflated again.
    pub inflated: Inflated<'a>,
}

/// The bytes of a blob its caller already inflated, by id: `None` when not
/// kept (then the blob is read from the store).
pub type Inflated<'a> = &'a dyn Fn(ObjectId) -> Option<std::sync::Arc<Vec<u8>>>;

/// How the runtime files of the `to` end are known.
#[derive(Clone, Copy)]
pub enum Runtime<'a> {
    /// By the rules (a range).
    Rules(&'a crate::select::Rules),
    /// By the selection itself: path below the root → blob (a history).
    Selection(&'a BTreeMap<String, ObjectId>),
}

impl Runtime<'_> {
    /// Whether `path` (below the root) is a runtime file.
    pub fn has(&self, path: &str) -> bool {
        match self {
            Runtime::Rules(rules) => {
                rules.classify(path.as_bytes()) == crate::select::Class::Runtime
            }
            Runtime::Selection(ids) => ids.contains_key(path),
        }
    }
}

/// Parses remembered by blob id for one run.
#[derive(Default)]
pub struct Memo {
    manifests: HashMap<ObjectId, std::sync::Arc<deps::Manifest>>,
    reads: HashMap<ObjectId, std::sync::Arc<Vec<data::Read>>>,
    names: HashMap<ObjectId, std::sync::Arc<Vec<u64>>>,
    tools: HashMap<ObjectId, std::sync::Arc<Vec<surface::Registered>>>,
}

/// The advice for one update, in a fixed order: possible missed restarts
/// (dependencies, then data files), avoidable, then the MCP surface.
pub fn advise(repo: &Session, u: &Update<'_>, memo: &mut Memo) -> Vec<Item> {
    let mut items = Vec::new();
    if !u.restart_required {
        items.extend(deps::advise(repo, u, memo));
        items.extend(data::advise(repo, u, memo));
    }
    if u.avoidable == Some(Avoidable::Version) {
        items.push(version_item(repo, u));
    }
    if u.surface {
        items.extend(surface::advise(repo, u, memo));
    }
    items
}

/// The advice of a restart caused only by version strings.
fn version_item(repo: &Session, u: &Update<'_>) -> Item {
    let evidence = u
        .version_files
        .iter()
        .filter_map(|path| {
            let line =
                tree::text_at(repo, u.trees.to, path).and_then(|text| version_line(&text))?;
            Some(format!("{path}:{line}"))
        })
        .collect();
    Item {
        kind: AdviceKind::Avoidable,
        cause: AdviceCause::Version,
        message: "this restart is avoidable: only the version string changed; keep the version \
                  out of the code (a version file, importlib.metadata)"
            .to_string(),
        evidence,
        changes: Vec::new(),
    }
}

/// The line (from 1) of the first module-level version assignment.
fn version_line(text: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            ["__version__", "VERSION"].iter().any(|name| {
                l.strip_prefix(name)
                    .is_some_and(|rest| rest.trim_start().starts_with(['=', ':']))
            })
        })
        .map(|i| i + 1)
}

/// Where each line of a text starts, to name a byte's line (from 1) by a
/// binary search rather than a count from the start for each.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn of(text: &str) -> Lines {
        let starts = std::iter::once(0)
            .chain(memchr_lines(text.as_bytes()))
            .collect();
        Lines(starts)
    }

    /// The line (from 1) of byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|start| *start <= offset)
    }
}

/// The offsets just past each line break.
fn memchr_lines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
}

/// A path under a directory: the one rule, [`crate::changes::join`].
pub(crate) use crate::changes::join;

/// Counts of advice over many updates, for `history`'s summary.
pub fn count(items: &[Item], kind: AdviceKind, cause: Option<AdviceCause>) -> usize {
    items
        .iter()
        .filter(|i| i.kind == kind && cause.is_none_or(|c| i.cause == c))
        .count()
}

/// The ordered evidence of `items` (for tests and reports).
pub fn evidence(items: &[Item]) -> BTreeMap<String, Vec<String>> {
    items
        .iter()
        .map(|i| (i.message.clone(), i.evidence.clone()))
        .collect()
}

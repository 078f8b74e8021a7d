//! What a release changed, sorted into what counts and what does not (and
//! why), from tree diffs: no blob is read unless rename detection needs it.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use serde::Serialize;

use crate::pair::Pair;
use crate::select::{Class, Rules};
use crate::source::git::Session;
use crate::source::Revision;

/// How a path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    /// New at the `to` side.
    Added,
    /// Gone at the `to` side.
    Deleted,
    /// Other bytes.
    Modified,
    /// Moved (`old_path` says from where), possibly with edits.
    Renamed,
    /// Only the executable bit changed: the bytes are the same.
    ModeChanged,
    /// A file became a symbolic link or the other way round.
    TypeChanged,
    /// A runtime symbolic link whose target's bytes changed elsewhere.
    TargetChanged,
    /// The stored blob is the same, but `.gitattributes` make a checkout
    /// write other bytes.
    AttributesChanged,
}

impl ChangeStatus {
    /// A one-letter code, as `git status --short` uses.
    pub fn letter(self) -> &'static str {
        match self {
            ChangeStatus::Added => "A",
            ChangeStatus::Deleted => "D",
            ChangeStatus::Modified => "M",
            ChangeStatus::Renamed => "R",
            ChangeStatus::ModeChanged => "m",
            ChangeStatus::TypeChanged => "T",
            ChangeStatus::TargetChanged => "L",
            ChangeStatus::AttributesChanged => "G",
        }
    }
}

/// How a runtime file changed, as far as Python is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Only comments, blank lines or whitespace that is not indentation.
    Layout,
    /// Also module, class or function docstrings (visible as `__doc__`).
    Docstrings,
    /// Also the literal value of a module-level `__version__` or `VERSION`
    /// assignment: the restart only tells running servers a new number.
    Version,
    /// Anything else; also files that do not parse, links, additions,
    /// deletions, renames and mode changes.
    Code,
}

impl ChangeKind {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Layout => "layout",
            ChangeKind::Docstrings => "docstrings",
            ChangeKind::Version => "version",
            ChangeKind::Code => "code",
        }
    }

    /// `layout` or `docstrings`: the restart could have waited for this file.
    pub fn is_cosmetic(self) -> bool {
        matches!(self, ChangeKind::Layout | ChangeKind::Docstrings)
    }

    /// Anything but `code`: what Python executes is the same but for
    /// comments, docstrings or a version string.
    pub fn is_avoidable(self) -> bool {
        self != ChangeKind::Code
    }
}

/// A change to a runtime file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RuntimeChange {
    /// The path from the top of the repository.
    pub path: String,
    /// How it changed.
    pub status: ChangeStatus,
    /// For renames, where it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// What the change is to Python (see [`crate::classify`]); absent with
    /// `--no-classify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_kind: Option<ChangeKind>,
}

/// Why a changed path does not count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Why {
    /// Not under the runtime root.
    OutsideRoot,
    /// Under an excluded name (`excluded_name` says which).
    Excluded,
    /// Not a runtime extension.
    NotRuntimeExtension,
}

/// A change that does not move the fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct IgnoredChange {
    /// The path from the top of the repository.
    pub path: String,
    /// How it changed.
    pub status: ChangeStatus,
    /// Why it does not count.
    pub why: Why,
    /// The excluded name, for `why == excluded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded_name: Option<String>,
    /// For renames, where it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
}

/// Everything a release changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Changes to runtime files, by path.
    pub runtime: Vec<RuntimeChange>,
    /// Changes that do not count, by path.
    pub ignored: Vec<IgnoredChange>,
    /// False when the ignored list could not be made (the working tree is
    /// compared by its runtime files only).
    pub ignored_complete: bool,
}

/// One raw change from a diff, paths relative to the diffed trees.
#[derive(Clone, Debug)]
struct Raw {
    path: String,
    old_path: Option<String>,
    status: ChangeStatus,
}

/// The changes between two commits' trees. `roots` are the runtime roots
/// from the top (`""` for the top), the `to` end's sorting the changes;
/// `root_trees` are their trees, if any.
pub(crate) fn between_trees(
    repo: &Session,
    revs: Pair<&Revision>,
    root_trees: Pair<Option<ObjectId>>,
    roots: Pair<&str>,
    rules: &Rules,
) -> Result<Changes, DiffError> {
    let mut changes = Changes {
        ignored_complete: true,
        ..Changes::default()
    };
    let root = roots.to;
    let names = revs.map(|rev| rev.spec.as_str());
    let (raws, too_deep) = diff(repo, names, root_trees, true)?;
    if too_deep {
        // The root's own trees: the fingerprint stopped at the same depth.
        return Err(format!(
            "a tree under {root} is nested deeper than {} directories (git's core.maxTreeDepth) \
             or changes more than {} paths",
            crate::source::MAX_TREE_DEPTH,
            crate::source::MAX_ENTRIES
        )
        .into());
    }
    for raw in raws {
        classify_under_root(&mut changes, raw, roots, rules);
    }
    if !root.is_empty() {
        let prefix = format!("{root}/");
        let trees = revs.map(|rev| Some(rev.tree));
        let (raws, too_deep) = diff(repo, names, trees, false)?;
        // Outside the root, a tree too deep only cuts the list of ignored
        // changes short.
        if too_deep {
            changes.ignored_complete = false;
        }
        // A file under a moved root's old place is listed once, as the
        // runtime change it is.
        let listed: std::collections::HashSet<String> =
            changes.runtime.iter().map(|c| c.path.clone()).collect();
        for raw in raws {
            if raw.path.starts_with(&prefix) || raw.path == root || listed.contains(&raw.path) {
                continue;
            }
            changes.ignored.push(IgnoredChange {
                path: raw.path,
                status: raw.status,
                why: Why::OutsideRoot,
                excluded_name: None,
                old_path: raw.old_path,
            });
        }
    }
    changes.runtime.sort();
    changes.ignored.sort();
    Ok(changes)
}

/// Runtime changes between two selections (path → blob id), for sides that
/// have no tree to diff (a working tree). Exact renames are paired.
pub(crate) fn between_selections(
    from: &BTreeMap<String, ObjectId>,
    to: &BTreeMap<String, ObjectId>,
    roots: Pair<&str>,
) -> Changes {
    let mut deleted: Vec<&String> = from.keys().filter(|p| !to.contains_key(*p)).collect();
    let mut runtime = Vec::new();
    for (path, id) in to {
        match from.get(path) {
            Some(old) if old == id => {}
            Some(_) => runtime.push(change(roots, path, ChangeStatus::Modified, None)),
            None => {
                let renamed_from = deleted.iter().position(|p| from[*p] == *id);
                match renamed_from {
                    Some(i) => {
                        let old = deleted.remove(i);
                        runtime.push(change(roots, path, ChangeStatus::Renamed, Some(old)));
                    }
                    None => runtime.push(change(roots, path, ChangeStatus::Added, None)),
                }
            }
        }
    }
    runtime.extend(
        deleted
            .into_iter()
            .map(|p| change(roots, p, ChangeStatus::Deleted, None)),
    );
    runtime.sort();
    Changes {
        runtime,
        ignored: Vec::new(),
        ignored_complete: false,
    }
}

/// Adds `target_changed` for runtime links whose resolved bytes changed
/// although the diff under the root shows nothing at their path.
pub(crate) fn add_target_changes(
    changes: &mut Changes,
    from: &BTreeMap<String, ObjectId>,
    to: &BTreeMap<String, ObjectId>,
    root: &str,
) {
    let listed: BTreeSet<String> = changes.runtime.iter().map(|c| c.path.clone()).collect();
    for (path, id) in to {
        if from.get(path).is_some_and(|old| old != id) {
            let full = join(root, path);
            if !listed.contains(&full) {
                changes.runtime.push(RuntimeChange {
                    path: full,
                    status: ChangeStatus::TargetChanged,
                    old_path: None,
                    change_kind: None,
                });
            }
        }
    }
    changes.runtime.sort();
}

fn change(
    roots: Pair<&str>,
    path: &str,
    status: ChangeStatus,
    old: Option<&String>,
) -> RuntimeChange {
    RuntimeChange {
        path: join(root_of(roots, status), path),
        status,
        old_path: old.map(|o| join(roots.from, o)),
        change_kind: None,
    }
}

/// The root a change's path is named by: the end it exists at (a deleted
/// file is at the old end only; every other change is at the new end).
fn root_of(roots: Pair<&str>, status: ChangeStatus) -> &str {
    if status == ChangeStatus::Deleted {
        roots.from
    } else {
        roots.to
    }
}

/// `path` below `root`, from the top of the repository.
pub(crate) fn join(root: &str, path: &str) -> String {
    if root.is_empty() {
        path.to_string()
    } else {
        format!("{root}/{path}")
    }
}

fn classify_under_root(changes: &mut Changes, raw: Raw, roots: Pair<&str>, rules: &Rules) {
    let root = root_of(roots, raw.status);
    let class = rules.classify(raw.path.as_bytes());
    let old_class = raw.old_path.as_ref().map(|p| rules.classify(p.as_bytes()));
    let is_runtime = |c: &Class| *c == Class::Runtime;
    match (&old_class, class) {
        // A rename across the line counts as a deletion or an addition.
        (Some(old), new) if is_runtime(old) != is_runtime(&new) => {
            let old_path = raw.old_path.clone().expect("a rename has a source");
            let (gone, came) = (
                Raw {
                    path: old_path,
                    old_path: None,
                    status: ChangeStatus::Deleted,
                },
                Raw {
                    path: raw.path,
                    old_path: None,
                    status: ChangeStatus::Added,
                },
            );
            classify_under_root(changes, gone, roots, rules);
            classify_under_root(changes, came, roots, rules);
        }
        (_, Class::Runtime) => changes.runtime.push(RuntimeChange {
            path: join(root, &raw.path),
            status: raw.status,
            old_path: raw.old_path.map(|p| join(roots.from, &p)),
            change_kind: None,
        }),
        (_, class) => {
            let (why, excluded_name) = match class {
                Class::Excluded(name) => (Why::Excluded, Some(name.to_string())),
                _ => (Why::NotRuntimeExtension, None),
            };
            changes.ignored.push(IgnoredChange {
                path: join(root, &raw.path),
                status: raw.status,
                why,
                excluded_name,
                old_path: raw.old_path.map(|p| join(roots.from, &p)),
            });
        }
    }
}

/// Why two trees cannot be compared: gix's error, or a tree nested deeper
/// than git reads.
pub(crate) type DiffError = Box<dyn std::error::Error + Send + Sync>;

/// The non-tree changes between two trees (absent = empty), and whether the diff stopped at git's
/// depth limit (the changes are then those found before it).
///
/// One traversal: it stops at git's depth limit, and only what it found
/// within the limit goes to rename tracking, which keeps every addition's
/// path until the end (gigabytes for a tree nested tens of thousands deep).
/// Rename tracking (and the resource cache it needs, which loads an index)
/// runs only when there is something to pair: a deletion and an addition.
fn diff(
    repo: &Session,
    revs: Pair<&str>,
    trees: Pair<Option<ObjectId>>,
    renames: bool,
) -> Result<(Vec<Raw>, bool), DiffError> {
    let tree = |id: Option<ObjectId>, rev: &str| match id {
        Some(id) => repo.tree(id, &format!("a tree of {rev}"), rev),
        None => Ok(repo.repo().empty_tree()),
    };
    let (old, new) = (tree(trees.from, revs.from)?, tree(trees.to, revs.to)?);
    if old.id == new.id {
        return Ok((Vec::new(), false));
    }
    let mut seen = Collect::default();
    let result = gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&old.data, old.id.kind()),
        gix::objs::TreeRefIter::from_bytes(&new.data, new.id.kind()),
        &mut gix::diff::tree::State::default(),
        repo,
        &mut seen,
    );
    // Stopping early makes gix report a cancellation: not a failure here.
    if seen.too_deep {
        let raws = seen
            .changes
            .iter()
            .filter_map(|(c, l)| raw(c, l.as_ref()))
            .collect();
        return Ok((raws, true));
    }
    result?;
    let pairs = |kind: fn(&TreeChange) -> bool| {
        seen.changes
            .iter()
            .any(|(c, _)| kind(c) && !c.entry_mode().is_tree())
    };
    let has_pair = pairs(|c| matches!(c, TreeChange::Deletion { .. }))
        && pairs(|c| matches!(c, TreeChange::Addition { .. }));
    if renames && has_pair {
        // Similarity needs blob contents; a partial clone may lack some, so
        // fall back to exact paths rather than fail.
        if let Ok(raws) = with_renames(repo, seen.changes.clone()) {
            return Ok((raws, false));
        }
    }
    let raws = seen
        .changes
        .iter()
        .filter_map(|(c, l)| raw(c, l.as_ref()))
        .collect();
    Ok((raws, false))
}

type TreeChange = gix::diff::tree::visit::Change;

/// The changes of one tree diff with their paths, up to git's depth limit.
#[derive(Default)]
struct Collect {
    path: gix::diff::tree::Recorder,
    changes: Vec<(TreeChange, gix::bstr::BString)>,
    /// Stopped at git's depth limit or at the most changes listed.
    too_deep: bool,
}

impl gix::diff::tree::Visit for Collect {
    fn pop_front_tracked_path_and_set_current(&mut self) {
        self.path.pop_front_tracked_path_and_set_current();
    }

    fn push_back_tracked_path_component(&mut self, component: &gix::bstr::BStr) {
        self.path.push_back_tracked_path_component(component);
    }

    fn push_path_component(&mut self, component: &gix::bstr::BStr) {
        self.path.push_path_component(component);
    }

    fn pop_path_component(&mut self) {
        self.path.pop_path_component();
    }

    fn visit(&mut self, change: TreeChange) -> gix::diff::tree::visit::Action {
        let location = self.path.path();
        let depth = location.iter().filter(|b| **b == b'/').count() + 1;
        // Past git's depth, or past as many changes as a selection walk
        // visits entries (a tree naming one subtree many times over is
        // 2^n paths from a few objects: `source::MAX_DIRS`), stop.
        if depth > crate::source::MAX_TREE_DEPTH || self.changes.len() >= crate::source::MAX_ENTRIES
        {
            self.too_deep = true;
            return std::ops::ControlFlow::Break(());
        }
        self.changes.push((change, location.to_owned()));
        std::ops::ControlFlow::Continue(())
    }
}

/// `changes` with renames paired, as git's default rename detection does.
fn with_renames(
    repo: &Session,
    changes: Vec<(TreeChange, gix::bstr::BString)>,
) -> Result<Vec<Raw>, DiffError> {
    let mut out = Vec::new();
    let mut tracker = gix::diff::rewrites::Tracker::new(gix::diff::Rewrites::default());
    for (change, location) in changes {
        if let Some(change) = tracker.try_push_change(change, location.as_ref()) {
            out.extend(raw(&change, location.as_ref()));
        }
    }
    let mut cache = repo
        .repo()
        .diff_resource_cache_for_tree_diff()
        .map_err(|e| DiffError::from(e.to_string()))?;
    tracker
        .emit(
            |dest, source| {
                match source {
                    Some(source) if !dest.change.entry_mode().is_tree() => out.push(Raw {
                        path: dest.location.to_string(),
                        old_path: Some(source.location.to_string()),
                        status: ChangeStatus::Renamed,
                    }),
                    Some(_) => {}
                    None => out.extend(raw(&dest.change, dest.location)),
                }
                std::ops::ControlFlow::Continue(())
            },
            &mut cache,
            repo,
            // Copies are not tracked: no source tree is needed.
            |_| Ok::<(), std::convert::Infallible>(()),
        )
        .map_err(|e| DiffError::from(e.to_string()))?;
    Ok(out)
}

/// The raw change of a non-tree entry (`None` for trees).
fn raw(change: &TreeChange, location: &gix::bstr::BStr) -> Option<Raw> {
    let path = location.to_string();
    let status = match change {
        TreeChange::Addition { entry_mode, .. } if !entry_mode.is_tree() => ChangeStatus::Added,
        TreeChange::Deletion { entry_mode, .. } if !entry_mode.is_tree() => ChangeStatus::Deleted,
        TreeChange::Modification {
            previous_entry_mode,
            previous_oid,
            entry_mode,
            oid,
        } if !entry_mode.is_tree() && !previous_entry_mode.is_tree() => {
            if previous_entry_mode.is_link() != entry_mode.is_link() {
                ChangeStatus::TypeChanged
            } else if previous_oid == oid {
                ChangeStatus::ModeChanged
            } else {
                ChangeStatus::Modified
            }
        }
        // A tree replaced by a file (or back) shows as a modification.
        TreeChange::Modification { entry_mode, .. } if !entry_mode.is_tree() => ChangeStatus::Added,
        TreeChange::Modification {
            previous_entry_mode,
            ..
        } if !previous_entry_mode.is_tree() => ChangeStatus::Deleted,
        _ => return None,
    };
    Some(Raw {
        path,
        old_path: None,
        status,
    })
}

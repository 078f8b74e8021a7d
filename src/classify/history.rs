//! Classification of a whole history: which restarts were avoidable.
//!
//! Only updates whose restart is caused by changed code are looked at, and
//! an update with anything but modified files is decided without reading
//! a byte. The files left are classified path by path, each path's versions
//! in release order: a version is the older side of the path's next change,
//! so it is parsed once (incrementally from the version before it) and each
//! comparison walks only the statements the edit touched (`window.rs`).
//! Paths are spread over the threads, so no version is parsed twice. A
//! path's change is skipped once its update is known to have changed code,
//! unless the path's next change needs its newer side.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use gix::ObjectId;

use super::apply::{blob_at, read_blob};
use super::{compare_parsed, Classifier, Parsed};
use crate::changes::{self, Status};

/// One update of a history, as classification sees it.
pub struct Update<'a> {
    /// Its restart is caused by changed code (`restart_required`, reason
    /// `code_changed`, no `force_restart`): only then can it be avoidable.
    pub candidate: bool,
    /// The commits' trees, older end first.
    pub trees: (ObjectId, ObjectId),
    /// Each end's selection: path below the runtime root → blob id.
    pub ids: (
        &'a BTreeMap<String, ObjectId>,
        &'a BTreeMap<String, ObjectId>,
    ),
    /// The runtime root the changes are sorted by (from the top).
    pub root: &'a str,
}

/// One modified file of a candidate update.
struct Change {
    update: usize,
    /// From the top of the repository.
    path: String,
    old: ObjectId,
    new: ObjectId,
}

/// For each update, whether its restart was avoidable: a candidate whose
/// runtime changes are all modifications of regular files, each `layout`
/// or `docstrings`. `threads` 0 means one per core.
pub fn avoidable_updates(
    repo: &gix::Repository,
    updates: &[Update<'_>],
    threads: usize,
) -> Vec<bool> {
    let code: Vec<AtomicBool> = updates
        .iter()
        .map(|u| AtomicBool::new(!u.candidate))
        .collect();
    let mut by_path: BTreeMap<String, Vec<Change>> = BTreeMap::new();
    for (i, u) in updates.iter().enumerate().filter(|(_, u)| u.candidate) {
        match modified(i, u) {
            Some(files) => {
                for c in files {
                    by_path.entry(c.path.clone()).or_default().push(c);
                }
            }
            None => code[i].store(true, Ordering::Relaxed),
        }
    }
    let threads = crate::history::worker_threads(threads, by_path.len());
    let shares = share(by_path.into_values().collect(), threads);
    let sync = repo.clone().into_sync();
    std::thread::scope(|s| {
        for share in shares {
            let (sync, code) = (&sync, &code);
            s.spawn(move || {
                let repo = crate::history::thread_repo(sync);
                let mut classifier = Classifier::new();
                for changes in share {
                    classify_path(&repo, &mut classifier, updates, &changes, code);
                }
            });
        }
    });
    code.into_iter().map(|c| !c.into_inner()).collect()
}

/// The modified files of update `i`, `None` when anything else changed (an
/// addition, a deletion, a rename, a mode or type change: `code`) or
/// nothing did.
fn modified(i: usize, u: &Update<'_>) -> Option<Vec<Change>> {
    let root = u.root;
    let changes = changes::between_selections(u.ids.0, u.ids.1, root);
    if changes.runtime.is_empty() {
        return None;
    }
    changes
        .runtime
        .iter()
        .map(|c| {
            if c.status != Status::Modified {
                return None;
            }
            let rel = below(root, &c.path);
            Some(Change {
                update: i,
                path: c.path.clone(),
                old: *u.ids.0.get(rel)?,
                new: *u.ids.1.get(rel)?,
            })
        })
        .collect()
}

/// Splits the paths' changes into `threads` shares of about as many
/// changes each (the largest first, each to the lightest share).
fn share(mut paths: Vec<Vec<Change>>, threads: usize) -> Vec<Vec<Vec<Change>>> {
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let mut shares: Vec<(usize, Vec<Vec<Change>>)> =
        (0..threads).map(|_| (0, Vec::new())).collect();
    for p in paths {
        let lightest = shares
            .iter_mut()
            .min_by_key(|(n, _)| *n)
            .expect("at least one thread");
        lightest.0 += p.len();
        lightest.1.push(p);
    }
    shares.into_iter().map(|(_, s)| s).collect()
}

/// Classifies one path's changes in release order, marking the updates
/// with a `code` change.
fn classify_path(
    repo: &gix::Repository,
    classifier: &mut Classifier,
    updates: &[Update<'_>],
    changes: &[Change],
    code: &[AtomicBool],
) {
    let mut kept: Option<(ObjectId, Parsed)> = None;
    for (k, c) in changes.iter().enumerate() {
        let needed_later = changes.get(k + 1).is_some_and(|next| next.old == c.new);
        if code[c.update].load(Ordering::Relaxed) && !needed_later {
            continue;
        }
        let old = match kept.take() {
            Some((id, parsed)) if id == c.old => Some(parsed),
            _ => read_blob(repo, c.old).map(|bytes| classifier.parse(bytes, None)),
        };
        let new = old
            .as_ref()
            .and_then(|old| Some(classifier.parse(read_blob(repo, c.new)?, Some(old))));
        let cosmetic = match (&old, &new) {
            (Some(old), Some(new)) => {
                compare_parsed(old, new).is_cosmetic() && own_blobs(repo, updates, c)
            }
            _ => false,
        };
        if !cosmetic {
            code[c.update].store(true, Ordering::Relaxed);
        }
        kept = new.map(|n| (c.new, n));
    }
}

/// Whether the selection's blobs are the path's own at both ends, not a
/// symbolic link's target (a link is `code`).
fn own_blobs(repo: &gix::Repository, updates: &[Update<'_>], c: &Change) -> bool {
    let trees = updates[c.update].trees;
    blob_at(repo, trees.0, &c.path) == Some(c.old) && blob_at(repo, trees.1, &c.path) == Some(c.new)
}

/// `path` (from the top) below the runtime root.
fn below<'p>(root: &str, path: &'p str) -> &'p str {
    if root.is_empty() {
        return path;
    }
    path.strip_prefix(root)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
}

//! Classification of a whole history: which restarts were avoidable.
//!
//! Only updates whose restart is caused by changed code are looked at, and
//! an update with anything but modified files is decided without reading
//! a byte. Kinds remembered from earlier runs (`cache.rs`) are looked up
//! first, so that an update with a remembered `code` change is decided
//! before anything is parsed. The files left are classified path by path,
//! each path's versions in release order: a version is the older side of
//! the path's next change, so it is parsed once, and only where it
//! differs from the version before it (`window.rs`); each comparison
//! walks only the units that parse did not share. Paths are spread over the threads, so no
//! version is parsed twice. A path's change is skipped once its update is
//! known to have changed code, and its versions are parsed only as long as
//! a later change still needs them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gix::ObjectId;

use super::apply::{blob_at, read_blob, FILE_LIMIT};
use super::cache::KindCache;
use super::{compare_parsed, ChangeKind, Classifier, Parsed};
use crate::changes;

/// One update of a history, as classification sees it.
pub(crate) struct Update<'a> {
    /// Its restart is caused by changed code (`restart_required`, reason
    /// `code_changed`, no `force_restart`): only then can it be avoidable.
    pub(crate) candidate: bool,
    /// The commits' trees, older end first.
    pub(crate) trees: (ObjectId, ObjectId),
    /// Each end's selection: path below the runtime root → blob id.
    pub(crate) ids: (
        &'a BTreeMap<String, ObjectId>,
        &'a BTreeMap<String, ObjectId>,
    ),
    /// The runtime root the changes are sorted by (from the top).
    pub(crate) root: &'a str,
}

/// One modified file of a candidate update.
struct Change {
    update: usize,
    /// From the top of the repository.
    path: String,
    old: ObjectId,
    new: ObjectId,
    /// Its kind, remembered from an earlier run.
    known: Option<ChangeKind>,
}

/// The bytes of a blob the history already inflated (`None`: read it).
pub(crate) type Inflated<'a> = &'a (dyn Fn(ObjectId) -> Option<Arc<Vec<u8>>> + Sync);

/// What classifying a history found, and the work it took.
pub(crate) struct Outcome {
    /// For each update, whether its restart was avoidable.
    pub(crate) avoidable: Vec<bool>,
    /// File versions parsed.
    pub(crate) parsed: usize,
    /// Changes whose kind came from the persistent cache.
    pub(crate) cached: usize,
}

/// For each update, whether its restart was avoidable: a candidate whose
/// runtime changes are all modifications of regular files, each `layout`
/// or `docstrings`. `threads` 0 means one per core. Kinds remembered in
/// `cache` are not computed again, and the new ones are put there.
pub(crate) fn avoidable_updates(
    repo: &gix::Repository,
    (updates, inflated): (&[Update<'_>], Inflated<'_>),
    threads: usize,
    cache: &mut KindCache,
) -> Outcome {
    let code: Vec<AtomicBool> = updates
        .iter()
        .map(|u| AtomicBool::new(!u.candidate))
        .collect();
    let (by_path, cached) = changes_by_path(updates, cache, &code);
    let threads = crate::history::worker_threads(threads, by_path.len());
    let shares = share(by_path.into_values().collect(), threads);
    let sync = repo.clone().into_sync();
    let done: Vec<Learnt> = std::thread::scope(|s| {
        let handles: Vec<_> = shares
            .into_iter()
            .map(|share| {
                let (sync, code) = (&sync, &code);
                s.spawn(move || {
                    let repo = crate::history::thread_repo(sync);
                    let blobs = Blobs {
                        repo: &repo,
                        inflated,
                    };
                    let mut classifier = Classifier::new();
                    let mut learnt = Learnt::default();
                    for changes in share {
                        classify_path(
                            &blobs,
                            &mut classifier,
                            updates,
                            &changes,
                            code,
                            &mut learnt,
                        );
                    }
                    learnt.parsed = classifier.parses();
                    learnt
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut parsed = 0;
    for learnt in done {
        parsed += learnt.parsed;
        for (old, new, kind) in learnt.kinds {
            cache.put(old, new, kind);
        }
    }
    Outcome {
        avoidable: code.into_iter().map(|c| !c.into_inner()).collect(),
        parsed,
        cached,
    }
}

/// The modified files of the candidate updates, by path, in release order,
/// each with its remembered kind, and how many were remembered. Marks the
/// updates already known to change code: anything but modified files, or
/// a remembered `code` change (so that none of their other files is
/// parsed).
fn changes_by_path(
    updates: &[Update<'_>],
    cache: &KindCache,
    code: &[AtomicBool],
) -> (BTreeMap<String, Vec<Change>>, usize) {
    let mut by_path: BTreeMap<String, Vec<Change>> = BTreeMap::new();
    let mut cached = 0;
    for (i, u) in updates.iter().enumerate().filter(|(_, u)| u.candidate) {
        let Some(files) = modified(i, u) else {
            code[i].store(true, Ordering::Relaxed);
            continue;
        };
        for mut c in files {
            c.known = cache.get(c.old, c.new);
            cached += usize::from(c.known.is_some());
            if c.known == Some(ChangeKind::Code) {
                code[i].store(true, Ordering::Relaxed);
            }
            by_path.entry(c.path.clone()).or_default().push(c);
        }
    }
    (by_path, cached)
}

/// What one thread computed: kinds to remember, and its parses.
#[derive(Default)]
struct Learnt {
    kinds: Vec<(ObjectId, ObjectId, ChangeKind)>,
    parsed: usize,
}

/// The modified files of update `i`, `None` when anything else changed (an
/// addition, a deletion, a rename, a mode or type change, a file that is not
/// Python source by its name: `code`) or nothing did.
fn modified(i: usize, u: &Update<'_>) -> Option<Vec<Change>> {
    let (from, to) = u.ids;
    // The same paths at both ends, or something was added, deleted or
    // renamed (what `changes::between_selections` would say, without its
    // lookups: both are sorted).
    if from.len() != to.len() {
        return None;
    }
    let mut files = Vec::new();
    for ((path, old), (other, new)) in from.iter().zip(to) {
        if path != other {
            return None;
        }
        if old != new {
            if !super::is_python_source(path) {
                return None;
            }
            files.push(Change {
                update: i,
                path: changes::join(u.root, path),
                old: *old,
                new: *new,
                known: None,
            });
        }
    }
    (!files.is_empty()).then_some(files)
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
/// with a `code` change. A version is parsed only for a change still to be
/// compared: not for one whose kind is remembered, nor for one whose
/// update is already known to change code. Versions are parsed where
/// they changed, each from the one before, as long as a later change of
/// the chain is still to be compared; a chain broken by decided changes
/// starts again with one fresh parse of the next compared change's older
/// side.
fn classify_path(
    blobs: &Blobs<'_>,
    classifier: &mut Classifier,
    updates: &[Update<'_>],
    changes: &[Change],
    code: &[AtomicBool],
    learnt: &mut Learnt,
) {
    let mut kept: Option<(ObjectId, Parsed)> = None;
    for (k, c) in changes.iter().enumerate() {
        let previous = kept.take().filter(|(id, _)| *id == c.old).map(|(_, p)| p);
        if let Some(kind) = c.known {
            // The link check is the trees', not remembered.
            let cosmetic = kind.is_cosmetic()
                && (code[c.update].load(Ordering::Relaxed) || own_blobs(blobs.repo, updates, c));
            if !cosmetic {
                code[c.update].store(true, Ordering::Relaxed);
            }
        }
        if !open(c, code) {
            if previous.is_some() && compared_later(changes, k, code) {
                kept = blobs
                    .read(c.new)
                    .map(|bytes| (c.new, classifier.parse(bytes, previous.as_ref())));
            }
            continue;
        }
        let old = previous.or_else(|| blobs.read(c.old).map(|b| classifier.parse(b, None)));
        let new = old
            .as_ref()
            .and_then(|old| Some(classifier.parse(blobs.read(c.new)?, Some(old))));
        let cosmetic = match (&old, &new) {
            (Some(old), Some(new)) => {
                let kind = compare_parsed(old, new);
                learnt.kinds.push((c.old, c.new, kind));
                kind.is_cosmetic() && own_blobs(blobs.repo, updates, c)
            }
            _ => false,
        };
        if !cosmetic {
            code[c.update].store(true, Ordering::Relaxed);
        }
        if compared_later(changes, k, code) {
            kept = new.map(|n| (c.new, n));
        }
    }
}

/// Where a thread reads blobs: those the history kept, else the
/// repository.
struct Blobs<'a> {
    repo: &'a gix::Repository,
    inflated: Inflated<'a>,
}

impl Blobs<'_> {
    /// The bytes of blob `id` (see [`read_blob`]); a kept blob over
    /// [`FILE_LIMIT`] is not parsed either.
    fn read(&self, id: ObjectId) -> Option<Arc<Vec<u8>>> {
        match (self.inflated)(id) {
            Some(kept) => (kept.len() as u64 <= FILE_LIMIT).then_some(kept),
            None => read_blob(self.repo, id).map(Arc::new),
        }
    }
}

/// A change still to be compared: its kind is not remembered and its
/// update is not known to change code (yet: other threads may find it).
fn open(c: &Change, code: &[AtomicBool]) -> bool {
    c.known.is_none() && !code[c.update].load(Ordering::Relaxed)
}

/// Whether a change after the `k`th is still to be compared and can be
/// reached from its newer side: each change up to it starts from the
/// version the one before it ends at.
fn compared_later(changes: &[Change], k: usize, code: &[AtomicBool]) -> bool {
    changes[k..]
        .windows(2)
        .take_while(|w| w[1].old == w[0].new)
        .any(|w| open(&w[1], code))
}

/// Whether the selection's blobs are the path's own at both ends, not a
/// symbolic link's target (a link is `code`).
fn own_blobs(repo: &gix::Repository, updates: &[Update<'_>], c: &Change) -> bool {
    let trees = updates[c.update].trees;
    blob_at(repo, trees.0, &c.path) == Some(c.old) && blob_at(repo, trees.1, &c.path) == Some(c.new)
}

//! Classification of a whole history: which restarts were avoidable.
//!
//! History needs one bit per update (could its restart have waited?), not
//! every file's kind, so an update is decided at its first `code` change.
//! Only updates whose restart is caused by changed code are looked at, and
//! an update with anything but modified files is decided without reading
//! a byte. Kinds remembered from earlier runs (`cache.rs`) are looked up
//! first, so that an update with a remembered `code` change is decided
//! before anything is parsed. The changes left are tried cheapest first:
//! links (a link is `code`) and files too large to classify cost a tree
//! lookup; then the lexer compares the shapes of the changes whose older
//! side the thread does not hold parsed (`shape.rs`: most code changes are
//! told there, for a fraction of a parse); then the changes with the
//! fewest bytes left to parse, so that a large file is parsed whole only
//! when every cheaper change of its update is cosmetic. Updates are spread over the threads in
//! runs of neighbours; a thread keeps the last version it parsed of each
//! path, so that a later change of that path is parsed where it differs
//! from it (`window.rs`) rather than whole.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use gix::ObjectId;

use crate::source::git::Session;

use super::apply::{blob_at, read_blob, FILE_LIMIT};
use super::cache::KindCache;
use super::{compare_parsed, Avoidable, ChangeKind, Classifier, Parsed};
use crate::changes;
use crate::pair::Pair;

/// One update of a history, as classification sees it.
pub(crate) struct Update<'a> {
    /// Its restart is caused by changed code (`restart_required`, reason
    /// `code_changed`, no `force_restart`): only then can it be avoidable.
    pub(crate) candidate: bool,
    /// The commits' trees, older end first.
    pub(crate) trees: Pair<ObjectId>,
    /// Each end's selection: path below the runtime root → blob id.
    pub(crate) ids: Pair<&'a BTreeMap<String, ObjectId>>,
    /// The runtime root the changes are sorted by (from the top).
    pub(crate) root: &'a str,
}

/// One modified file of a candidate update.
struct Change {
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
    /// For each update, why its restart was avoidable (`None`: it was not).
    pub(crate) avoidable: Vec<Option<Avoidable>>,
    /// File versions parsed.
    pub(crate) parsed: usize,
    /// Changes whose kind came from the persistent cache.
    pub(crate) cached: usize,
}

/// How many neighbouring updates a thread takes at a time: neighbours
/// change the same files from the versions the thread just parsed.
const RUN: usize = 32;

/// For each update, whether its restart was avoidable: a candidate whose
/// runtime changes are all modifications of regular files, each `layout`
/// or `docstrings`. `threads` 0 means one per core. Kinds remembered in
/// `cache` are not computed again, and the new ones are put there.
pub(crate) fn avoidable_updates(
    repo: &Session,
    (updates, inflated): (&[Update<'_>], Inflated<'_>),
    threads: usize,
    cache: &mut KindCache,
) -> Outcome {
    let mut avoidable: Vec<Option<Avoidable>> = vec![None; updates.len()];
    let (open, cached) = open_updates(updates, cache);
    let threads = crate::threads::worker_threads(threads, open.len().div_ceil(RUN));
    let next = AtomicUsize::new(0);
    let done: Vec<Learnt> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (next, open) = (&next, &open);
                let repo = repo.for_thread();
                s.spawn(move || {
                    let blobs = Blobs {
                        repo: &repo,
                        inflated,
                    };
                    let mut work = Work {
                        classifier: Classifier::new(),
                        kept: HashMap::new(),
                        learnt: Learnt::default(),
                    };
                    loop {
                        let start = next.fetch_add(RUN, Ordering::Relaxed);
                        let Some(run) = open.get(start..(start + RUN).min(open.len())) else {
                            break;
                        };
                        for (i, changes) in run {
                            let why = avoidable_by(&blobs, &updates[*i], changes, &mut work);
                            work.learnt.decided.push((*i, why));
                        }
                    }
                    work.learnt.parsed = work.classifier.parses();
                    work.learnt
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
        for (i, why) in learnt.decided {
            avoidable[i] = why;
        }
    }
    Outcome {
        avoidable,
        parsed,
        cached,
    }
}

/// The candidate updates still to be decided, in release order, each with
/// its modified files and their remembered kinds, and how many kinds were
/// remembered. Decides (not avoidable) the updates with anything but
/// modified files, or with a remembered `code` change.
fn open_updates(updates: &[Update<'_>], cache: &KindCache) -> (Vec<(usize, Vec<Change>)>, usize) {
    let mut open = Vec::new();
    let mut cached = 0;
    for (i, u) in updates.iter().enumerate().filter(|(_, u)| u.candidate) {
        let Some(mut files) = modified(u) else {
            continue;
        };
        let mut code = false;
        for c in &mut files {
            c.known = cache.get(c.old, c.new);
            cached += usize::from(c.known.is_some());
            code |= c.known == Some(ChangeKind::Code);
        }
        if !code {
            open.push((i, files));
        }
    }
    (open, cached)
}

/// What one thread computed: kinds to remember, its decisions and its
/// parses.
#[derive(Default)]
struct Learnt {
    kinds: Vec<(ObjectId, ObjectId, ChangeKind)>,
    /// Update index → why its restart was avoidable.
    decided: Vec<(usize, Option<Avoidable>)>,
    parsed: usize,
}

/// A thread's parser, the last version it parsed of each path, and what it
/// learnt.
struct Work {
    classifier: Classifier,
    kept: HashMap<String, (ObjectId, Parsed)>,
    learnt: Learnt,
}

/// The modified files of update `u`, `None` when anything else changed (an
/// addition, a deletion, a rename, a mode or type change, a file that is not
/// Python source by its name: `code`) or nothing did.
fn modified(u: &Update<'_>) -> Option<Vec<Change>> {
    let Pair { from, to } = u.ids;
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
                path: changes::join(u.root, path),
                old: *old,
                new: *new,
                known: None,
            });
        }
    }
    (!files.is_empty()).then_some(files)
}

/// Whether every change of an update is cosmetic (`layout` or
/// `docstrings`, of the path's own blobs), stopping at the first that is
/// not. The cheap checks come first: links, then the blobs (a file over
/// [`FILE_LIMIT`] or unreadable is `code`), then the shapes; then the changes are
/// classified by the bytes left to parse: of the older side, none when
/// the thread holds it parsed, those that differ from the version it holds
/// of the path, else the whole file; of the newer side, those that differ
/// from the older one.
fn avoidable_by(
    blobs: &Blobs<'_>,
    u: &Update<'_>,
    changes: &[Change],
    work: &mut Work,
) -> Option<Avoidable> {
    // The link check is the trees', never remembered.
    let mut own = Vec::with_capacity(changes.len());
    for c in changes {
        let (Some(old), Some(new)) = (
            own_bytes(blobs.repo, (u.trees.from, &c.path), c.old),
            own_bytes(blobs.repo, (u.trees.to, &c.path), c.new),
        ) else {
            return None;
        };
        own.push((old, new));
    }
    let mut todo = Vec::new();
    for (c, (old, new)) in changes.iter().zip(own).filter(|(c, _)| c.known.is_none()) {
        let (Some(old), Some(new)) = (blobs.read(c.old, old), blobs.read(c.new, new)) else {
            return None;
        };
        let older = match work.kept.get(&c.path) {
            Some((id, _)) if *id == c.old => 0,
            Some((_, held)) => differing(&held.source, &old),
            None => old.len(),
        };
        todo.push((older + differing(&old, &new), c, old, new));
    }
    todo.sort_by_key(|(cost, ..)| *cost);
    // The lexer tells most code changes for less than a parse; a change
    // whose older side the thread holds parsed is parsed where it differs,
    // which is cheaper still.
    for (_, c, old, new) in &todo {
        let held = matches!(work.kept.get(&c.path), Some((id, _)) if *id == c.old);
        if !held && super::proven_code(old, new) {
            work.learnt.kinds.push((c.old, c.new, ChangeKind::Code));
            return None;
        }
    }
    let mut kinds: Vec<ChangeKind> = changes.iter().filter_map(|c| c.known).collect();
    for (_, c, old, new) in todo {
        let kind = classified(c, (old, new), work);
        if kind == ChangeKind::Code {
            return None;
        }
        kinds.push(kind);
    }
    Avoidable::of(&kinds)
}

/// How many bytes of `new` differ from `old` (between what they share at
/// both ends): what a windowed parse of `new` reads.
fn differing(old: &[u8], new: &[u8]) -> usize {
    let (prefix, suffix) = super::window::shared(old, new);
    new.len().saturating_sub(prefix + suffix)
}

/// Classifies one change (parsing its older side from the version the
/// thread holds of the path, when it holds one), remembers its kind and
/// keeps its newer side; its kind.
fn classified(c: &Change, (old, new): (Arc<Vec<u8>>, Arc<Vec<u8>>), work: &mut Work) -> ChangeKind {
    let old = match work.kept.remove(&c.path) {
        Some((id, parsed)) if id == c.old => parsed,
        Some((_, parsed)) => work.classifier.parse(old, Some(&parsed)),
        None => work.classifier.parse(old, None),
    };
    let new = work.classifier.parse(new, Some(&old));
    let kind = compare_parsed(&old, &new);
    work.learnt.kinds.push((c.old, c.new, kind));
    work.kept.insert(c.path.clone(), (c.new, new));
    kind
}

/// Where a thread reads blobs: those the history kept, else the
/// repository.
struct Blobs<'a> {
    repo: &'a Session,
    inflated: Inflated<'a>,
}

impl Blobs<'_> {
    /// The bytes of blob `id` (see [`read_blob`]), or the checkout's bytes
    /// `own` found; a kept blob over [`FILE_LIMIT`] is not parsed either.
    fn read(&self, id: ObjectId, own: Own) -> Option<Arc<Vec<u8>>> {
        if let Own::Checkout(bytes) = own {
            return Some(bytes);
        }
        match (self.inflated)(id) {
            Some(kept) => (kept.len() as u64 <= FILE_LIMIT).then_some(kept),
            None => read_blob(self.repo, id).map(Arc::new),
        }
    }
}

/// Where the bytes the selection names by `id` come from.
enum Own {
    /// The path's own blob, `id` itself.
    Blob,
    /// A checkout's bytes (`.gitattributes` converts the file), read.
    Checkout(Arc<Vec<u8>>),
}

/// Whether the selection's bytes `id` are the path's own in `tree`, not
/// a symbolic link's target (a link is `code`): its blob, or the bytes a
/// checkout writes of it, which are what the selection names when
/// `.gitattributes` converts the file (the range's classifier reads the
/// same). `None` when they are not, or cannot be known. The conversion is
/// looked for only when the blob is not `id`: with no attributes, a tree
/// lookup.
fn own_bytes(repo: &Session, (tree, path): (ObjectId, &str), id: ObjectId) -> Option<Own> {
    let blob = blob_at(repo, tree, path)?;
    if blob == id {
        return Some(Own::Blob);
    }
    match crate::source::git::checkout_of(repo, tree, path, blob, FILE_LIMIT)? {
        (checkout, Some(bytes)) if checkout == id => Some(Own::Checkout(Arc::new(bytes))),
        _ => None,
    }
}

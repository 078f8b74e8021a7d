//! A cheap proof that a runtime root's selection depends on its tree alone:
//! a scan of the tree objects below the root that looks at each entry's
//! mode and name only (no path is built, no selection is kept).
//!
//! An unchanged range (same settings, same root tree id at both ends) needs
//! no fingerprint when both ends select the same list of (path, blob id).
//! Equal root trees give equal lists unless a selected link resolves through
//! a tree above the root (`src/x.py -> ../lib/x.py`), whose content may
//! differ between the ends. Whether such a link exists is written nowhere
//! but in the trees below the root, so one end's trees must be read: this
//! scan reads them as fast as they can be read, and says "walk" (`None`) at
//! the first thing only the full selection walk handles: a selected link, a
//! `.gitattributes`, anything the walk would report as a problem, a tree it
//! cannot read. Which entries are selected is not decided here: the caller
//! passes the selection's rule, as a [`ScanStep`] for each entry.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use gix::objs::tree::EntryKind as GitKind;
use gix::prelude::FindExt;
use gix::ObjectId;

use super::GitSource;
use crate::source::{Budget, EntryKind, MAX_TREE_DEPTH};

/// What a scan does with one entry, as the selection's rule says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanStep {
    /// Nothing: neither a runtime file nor a directory that may hold one.
    Skip,
    /// A runtime file (a regular file).
    Count,
    /// A directory to scan.
    Enter,
    /// Something only the full walk handles.
    Walk,
}

/// The selection's rule for one entry, by its name and kind.
pub type ScanRule<'r> = &'r (dyn Fn(&[u8], EntryKind) -> ScanStep + Sync);

/// Below this many trees waiting to be read, one thread reads them all:
/// starting a second costs more than it saves.
const SHARE_AT: usize = 16;

impl GitSource {
    /// The number of files the selection walk would select, when the scan
    /// proves that walk would find no problem, resolve no link and see no
    /// `.gitattributes` below the root (then the selection is a function
    /// of the root tree, its depth and `rule`); `None` when the full walk
    /// must answer. Read errors are `None` too: the walk reports them in
    /// its own words. Inflating the trees is nearly all of the cost: once
    /// enough of them wait, a second thread (when there is a second core)
    /// reads them too.
    pub fn plain_selection(&self, rule: ScanRule<'_>) -> Option<usize> {
        let super::RootTree {
            id: root, depth, ..
        } = self.root_tree()?;
        let scan = Scan {
            rule,
            // As in the selection walk: how deep a directory below the
            // root may be for its entries to stay within core.maxTreeDepth.
            max_below_root: MAX_TREE_DEPTH.saturating_sub(depth + 1),
            queue: Mutex::new(Queue {
                pending: vec![(root, 0)],
                busy: 0,
            }),
            ready: Condvar::new(),
            stop: AtomicBool::new(false),
            files: AtomicUsize::new(0),
            budget: Budget::default(),
        };
        // Trees are read once each: a cache would only copy them.
        let odb = || {
            let mut odb = self.repo.objects().clone();
            odb.unset_object_cache();
            odb
        };
        std::thread::scope(|threads| {
            // A second thread only with a core to spare, as for hashing.
            let spare = crate::threads::parallel() && crate::threads::idle_core();
            let mut helper = spare.then(odb);
            scan.work(&odb(), |waiting| {
                if waiting >= SHARE_AT {
                    if let Some(odb) = helper.take() {
                        let scan = &scan;
                        threads.spawn(move || scan.work(&odb, |_| {}));
                    }
                }
            });
        });
        let files = scan.files.into_inner();
        (!scan.stop.into_inner() && files > 0).then_some(files)
    }
}

/// The trees left to read, shared by the threads of a scan.
struct Queue {
    /// Tree ids and their depth below the root.
    pending: Vec<(ObjectId, usize)>,
    /// Trees being read: their subtrees may still come.
    busy: usize,
}

struct Scan<'r> {
    rule: ScanRule<'r>,
    max_below_root: usize,
    queue: Mutex<Queue>,
    ready: Condvar,
    /// Something only the full walk handles was found: stop everywhere.
    stop: AtomicBool,
    files: AtomicUsize,
    /// Trees entered and entries seen, counted as the walk counts them:
    /// past its limits (a tree naming the same subtree many times over)
    /// the walk answers, with its limit.
    budget: Budget,
}

impl Scan<'_> {
    /// Reads trees from the queue until none is left (or the scan stops),
    /// telling `progress` how many wait after each.
    fn work(&self, odb: &gix::OdbHandle, mut progress: impl FnMut(usize)) {
        let mut buf = Vec::new();
        let mut subtrees = Vec::new();
        let mut files = 0;
        while let Some((id, depth)) = self.next() {
            let plain = self.tree(odb, &mut buf, (id, depth), &mut subtrees, &mut files);
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.busy -= 1;
            if !plain {
                self.stop.store(true, Ordering::Relaxed);
            }
            queue.pending.append(&mut subtrees);
            let waiting = queue.pending.len();
            drop(queue);
            self.ready.notify_all();
            progress(waiting);
        }
        self.files.fetch_add(files, Ordering::Relaxed);
    }

    /// The next tree to read; `None` when all are read or the scan stopped.
    fn next(&self) -> Option<(ObjectId, usize)> {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(task) = queue.pending.pop() {
                queue.busy += 1;
                return Some(task);
            }
            if queue.busy == 0 {
                return None;
            }
            queue = self.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Scans one tree: counts its selected files into `files` and puts its
    /// subtrees to read in `subtrees`; `false` when the full walk must
    /// answer.
    fn tree(
        &self,
        odb: &gix::OdbHandle,
        buf: &mut Vec<u8>,
        (id, depth): (ObjectId, usize),
        subtrees: &mut Vec<(ObjectId, usize)>,
        files: &mut usize,
    ) -> bool {
        // Counted before anything else, the empty tree included: the walk
        // counts every directory it enters.
        if !self.budget.enter_dir() {
            return false;
        }
        if id.is_empty_tree() {
            return true;
        }
        let tree = match odb.find(&id, buf) {
            Ok(object) if object.kind == gix::object::Kind::Tree => object,
            _ => return false,
        };
        let mut order = Order::default();
        let mut rest = tree.data;
        let mut seen = 0;
        while !rest.is_empty() {
            let Some((entry, after)) = entry(rest, id.kind().len_in_bytes()) else {
                return false;
            };
            rest = after;
            seen += 1;
            let (name, kind, ascii) = (entry.name, entry.kind, entry.ascii);
            if entry.slash || !order.admits(name, kind) {
                return false;
            }
            // A `.gitattributes` is the walk's to warn about, whatever the
            // rules make of its name (`--ext .gitattributes` selects it),
            // a link too: git reads a link's text as the attributes.
            if super::attributes::is_attribute_file(name, kind) {
                return false;
            }
            let step = (self.rule)(name, entry_kind(kind));
            if step == ScanStep::Skip {
                continue;
            }
            // Paths must be UTF-8: a name that is not is left to the walk.
            if !ascii && std::str::from_utf8(name).is_err() {
                return false;
            }
            match step {
                ScanStep::Skip => {}
                ScanStep::Count => *files += 1,
                // A directory too deep for git is a problem.
                ScanStep::Enter if depth < self.max_below_root => {
                    subtrees.push((ObjectId::from_bytes_or_panic(entry.oid), depth + 1));
                }
                ScanStep::Enter | ScanStep::Walk => return false,
            }
        }
        // Every entry, as the walk counts them (excluded and not selected
        // ones too).
        self.budget.visit(seen)
    }
}

/// What a tree entry's mode makes it, as every source names kinds.
fn entry_kind(kind: GitKind) -> EntryKind {
    match kind {
        GitKind::Blob | GitKind::BlobExecutable => EntryKind::File,
        GitKind::Tree => EntryKind::Dir,
        GitKind::Link => EntryKind::Symlink,
        GitKind::Commit => EntryKind::Submodule,
    }
}

/// One entry of a tree, as [`entry`] reads it.
struct Entry<'a> {
    kind: GitKind,
    name: &'a [u8],
    oid: &'a [u8],
    /// The name holds a `/`.
    slash: bool,
    /// The name is ASCII (then UTF-8 without a check).
    ascii: bool,
}

/// The first entry of a tree's bytes (`MODE NAME\0ID`) and the bytes after
/// it. Only the modes git writes are read: any other (or a truncated
/// entry) is `None`, left to the walk (gix reads some other modes, and the
/// walk reads trees through gix). One pass over the name finds its end and
/// what [`Order::admits`] checks.
fn entry(data: &[u8], id_len: usize) -> Option<(Entry<'_>, &[u8])> {
    let space = if data.get(5) == Some(&b' ') { 5 } else { 6 };
    let kind = match data.get(..=space)? {
        b"100644 " => GitKind::Blob,
        b"40000 " => GitKind::Tree,
        b"100755 " => GitKind::BlobExecutable,
        b"120000 " => GitKind::Link,
        b"160000 " => GitKind::Commit,
        _ => return None,
    };
    let data = &data[space + 1..];
    let (mut slash, mut high) = (false, 0u8);
    let mut nul = None;
    for (i, &b) in data.iter().enumerate() {
        if b == 0 {
            nul = Some(i);
            break;
        }
        slash |= b == b'/';
        high |= b;
    }
    let nul = nul?;
    let (name, data) = (&data[..nul], &data[nul + 1..]);
    if data.len() < id_len {
        return None;
    }
    let (oid, rest) = data.split_at(id_len);
    let entry = Entry {
        kind,
        name,
        oid,
        slash,
        ascii: high.is_ascii(),
    };
    Some((entry, rest))
}

/// The entries of one tree, checked as they come against what makes a tree
/// malformed (see `tree::malformed`): names no checkout can hold, and two
/// entries of one name. git writes a tree's entries sorted (a tree's name
/// compared as `name/`), so entries in strictly increasing order can only
/// repeat a name as a file `x` and a tree `x` (with `x.py` between them, say);
/// those are caught by looking each tree's name up among the files before
/// it. A tree out of order is left to the full walk.
#[derive(Default)]
struct Order<'a> {
    last: Option<(&'a [u8], bool)>,
    files: Vec<&'a [u8]>,
}

impl<'a> Order<'a> {
    /// Whether a checkout could hold this entry (whose name holds no `/`
    /// or NUL: see [`entry`]) after the ones before it.
    fn admits(&mut self, name: &'a [u8], kind: GitKind) -> bool {
        if name.is_empty() || name == b"." || name == b".." || name.eq_ignore_ascii_case(b".git") {
            return false;
        }
        let is_tree = kind == GitKind::Tree;
        if let Some((last, last_tree)) = self.last {
            if git_order(last, last_tree, name, is_tree) != std::cmp::Ordering::Less {
                return false;
            }
        }
        self.last = Some((name, is_tree));
        if is_tree {
            // Files are in plain byte order among themselves.
            if self.files.binary_search(&name).is_ok() {
                return false;
            }
        } else {
            self.files.push(name);
        }
        true
    }
}

/// Whether a tree with these entries (name, kind) is well formed, as
/// [`Order`] proves it: `false` leaves the question to a closer look.
pub(super) fn well_formed<'a>(entries: impl Iterator<Item = (&'a [u8], GitKind)>) -> bool {
    let mut order = Order::default();
    for (name, kind) in entries {
        if name.contains(&b'/') || name.contains(&0) || !order.admits(name, kind) {
            return false;
        }
    }
    true
}

/// git's order of tree entries: by name, a tree's name read as `name/`.
fn git_order(a: &[u8], a_tree: bool, b: &[u8], b_tree: bool) -> std::cmp::Ordering {
    let common = a.len().min(b.len());
    // Names are short: a loop beats a call to memcmp.
    if let Some(i) = (0..common).find(|&i| a[i] != b[i]) {
        return a[i].cmp(&b[i]);
    }
    let next = |name: &[u8], tree: bool| match name.get(common) {
        Some(b) => Some(*b),
        None if tree => Some(b'/'),
        None => None,
    };
    next(a, a_tree).cmp(&next(b, b_tree))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering::*;

    /// Entries as git writes them; any other mode, or a cut entry, is
    /// left to the walk.
    #[test]
    fn entries_are_read_in_the_modes_git_writes() {
        let id = [7u8; 20];
        let mut data = b"100644 a.py\0".to_vec();
        data.extend_from_slice(&id);
        data.extend_from_slice(b"40000 d\0");
        data.extend_from_slice(&id);
        let (e, rest) = entry(&data, 20).unwrap();
        assert_eq!(
            (e.kind, e.name, e.oid),
            (GitKind::Blob, &b"a.py"[..], &id[..])
        );
        assert!(e.ascii && !e.slash);
        let (e, rest) = entry(rest, 20).unwrap();
        assert_eq!((e.kind, e.name, rest), (GitKind::Tree, &b"d"[..], &b""[..]));
        let mut data = "120000 a/\u{e9}\0".as_bytes().to_vec();
        data.extend_from_slice(&id);
        let (e, _) = entry(&data, 20).unwrap();
        assert!(e.kind == GitKind::Link && e.slash && !e.ascii);
        for odd in [
            &b"100664 a\0"[..],
            b"040000 d\0",
            b"644 a\0",
            b"1006440 a\0",
        ] {
            let mut data = odd.to_vec();
            data.extend_from_slice(&id);
            assert!(entry(&data, 20).is_none(), "{odd:?}");
        }
        assert!(entry(b"100644 a.py\0abc", 20).is_none());
        assert!(entry(b"100644 a.py", 20).is_none());
    }

    #[test]
    fn trees_sort_as_their_name_and_a_slash() {
        assert_eq!(git_order(b"a", false, b"b", false), Less);
        assert_eq!(git_order(b"a", false, b"a", false), Equal);
        // `a.py` (file) before `a/` (tree), `a` (file) before `a.py`.
        assert_eq!(git_order(b"a.py", false, b"a", true), Less);
        assert_eq!(git_order(b"a", false, b"a.py", false), Less);
        assert_eq!(git_order(b"a", true, b"a0", false), Less);
        assert_eq!(git_order(b"a", false, b"a", true), Less);
    }

    #[test]
    fn a_file_and_a_tree_of_one_name_are_caught_with_entries_between() {
        let mut order = Order::default();
        assert!(order.admits(b"x", GitKind::Blob));
        assert!(order.admits(b"x.py", GitKind::Blob));
        assert!(!order.admits(b"x", GitKind::Tree));
        let mut order = Order::default();
        assert!(order.admits(b"x.py", GitKind::Blob));
        assert!(order.admits(b"x", GitKind::Tree));
        assert!(order.admits(b"y", GitKind::Link));
        assert!(!order.admits(b"y", GitKind::Blob), "out of order");
        for bad in [&b""[..], b".", b"..", b".GIT"] {
            assert!(!Order::default().admits(bad, GitKind::Blob), "{bad:?}");
        }
    }
}

//! How much one walk below a runtime root may read: past these bounds the
//! selection is unavailable (a restart), never an endless walk.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most directories one selection walk reads. A git tree may name
/// the same subtree many times (`a` and `b` both the next tree, 35 levels
/// down): a few hundred bytes of objects that are 2^35 directories once
/// walked. No real runtime is near these bounds; past them the fingerprint
/// is unavailable (a restart), never an endless walk.
pub(crate) const MAX_DIRS: usize = 1 << 18;

/// The most entries one selection walk visits (see [`MAX_DIRS`]: a tree of
/// 10,000 entries naming one tree of 10,000 files is 10^8 paths). A runtime of a
/// million files is far beyond any server this gates (the 200,000-file
/// benchmark monorepo's largest runtime holds 120,000).
pub(crate) const MAX_ENTRIES: usize = 1 << 20;

/// What one selection walk has visited, against [`MAX_DIRS`] and
/// [`MAX_ENTRIES`]. The walk counts through it, and so does the scan that
/// stands in for the walk on an unchanged root
/// ([`GitSource::plain_selection`](crate::source::GitSource::plain_selection)): the scan must stop wherever the walk
/// would, or a range calls "same selection" what `fingerprint` calls
/// unavailable. Atomic because the scan's threads share one.
#[derive(Default)]
pub(crate) struct Budget {
    dirs: AtomicUsize,
    entries: AtomicUsize,
}

impl Budget {
    /// Counts one directory entered: the root, an empty one, every one the
    /// walk reads. `false` once past [`MAX_DIRS`].
    pub(crate) fn enter_dir(&self) -> bool {
        self.dirs.fetch_add(1, Ordering::Relaxed) < MAX_DIRS
    }

    /// Counts `n` entries of entered directories, each one whatever it is
    /// (excluded, not selected, a directory). `false` once past
    /// [`MAX_ENTRIES`].
    pub(crate) fn visit(&self, n: usize) -> bool {
        let before = self.entries.fetch_add(n, Ordering::Relaxed);
        before.saturating_add(n) <= MAX_ENTRIES
    }
}

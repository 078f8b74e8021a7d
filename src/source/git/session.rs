//! One repository as one run reads it: the gix handle, the object memo in
//! front of its store, and what was looked up or parsed from its objects.
//!
//! Why a value and not process-wide state: the Python package analyses
//! several repositories at once, from several threads, in one process; a
//! cache keyed by object id alone would serve one repository's parse to
//! another's identical id only by luck of content, and a memo installed for
//! one would be consulted by the other's look-ups. Everything here belongs
//! to one [`Session`] and is dropped with it.
//!
//! A session is cheap to clone (a new gix handle on the same store, the
//! same memo and caches), and a clone may move to another thread
//! ([`Session::for_thread`]): threads share the memo and caches, each with
//! its own handle. Every object read goes through the session's handle, so
//! the memo and the missing-object policy apply to all of them.

use std::any::{Any, TypeId};
use std::path::Path;
use std::sync::{Arc, Mutex};

use gix::ObjectId;

use super::memo::{self, Memo};
use super::tree::TreeEntry;
use crate::source::SourceError;

/// The largest tree [`Session::looked_up`] keeps, in entries.
const KEPT_ENTRIES: usize = 4096;

/// How many trees [`Session::looked_up`] keeps.
const LOOKED_UP: usize = 8;

/// How many parsed blobs [`Session::parsed`] keeps (oldest dropped first).
const PARSED: usize = 16;

/// A parsed blob, by the type it was parsed into and its id.
type Parsed = (TypeId, ObjectId, Arc<dyn Any + Send + Sync>);

/// What a session and its clones share: looked-up trees and parsed blobs.
/// An object id names its bytes (`git replace` is never read, see
/// `open_options`), so nothing kept here goes stale within the session.
#[derive(Default)]
struct Kept {
    trees: Mutex<Vec<(ObjectId, Arc<Vec<TreeEntry>>)>>,
    parsed: Mutex<Vec<Parsed>>,
}

/// One repository for one run (a CLI command, one call of the Python
/// package): every git object fpcheck reads is read through it.
pub struct Session {
    repo: gix::Repository,
    memo: Option<Arc<Memo>>,
    kept: Arc<Kept>,
}

impl Session {
    /// A session over `repo` (opened by [`super::open_repo`]: without
    /// `git replace`), with no memo.
    pub fn new(repo: gix::Repository) -> Self {
        Session {
            repo,
            memo: None,
            kept: Arc::default(),
        }
    }

    /// [`super::open_repo`], as a session.
    pub fn open(path: Option<&Path>) -> Result<Self, SourceError> {
        super::open_repo(path).map(Session::new)
    }

    /// The repository handle, for what is not an object: references,
    /// configuration, paths.
    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    /// This session with the persistent object memo of its git directory
    /// in front of its object store, and the guard that saves the memo
    /// when dropped (see [`memo`]). The caches stay shared.
    pub(crate) fn with_memo(&self) -> (Session, memo::Installed) {
        let memo = Arc::new(Memo::open(
            self.repo.common_dir().to_path_buf(),
            self.repo.object_hash(),
        ));
        let mut repo = self.repo.clone();
        memo::set_cache(&mut repo, &memo);
        let session = Session {
            repo,
            memo: Some(Arc::clone(&memo)),
            kept: Arc::clone(&self.kept),
        };
        (session, memo::Installed::new(memo))
    }

    /// A clone for a worker thread: its own handle (its pack cache capped,
    /// as each thread has one), the same memo and caches.
    pub fn for_thread(&self) -> Session {
        let mut session = self.clone();
        session.repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                32 << 20,
            ))
        });
        session
    }

    /// The kind and size of object `id` from the memo, when it holds it
    /// (without touching the store) and `odb` is this session's handle or
    /// a clone of it with its object cache (the memo is that cache's
    /// front; a handle without one reads only the store).
    pub(crate) fn memo_header(
        &self,
        odb: &gix::OdbHandle,
        id: &ObjectId,
    ) -> Option<(gix::object::Kind, u64)> {
        if !odb.has_object_cache() {
            return None;
        }
        self.memo.as_ref()?.header(id)
    }

    /// The size of object `id`: from the memo when it holds the object,
    /// else from its header in the store.
    pub(crate) fn object_size(&self, id: ObjectId) -> Result<u64, gix::Error> {
        if let Some((_, size)) = self.memo_header(&self.repo.objects, &id) {
            return Ok(size);
        }
        self.repo.find_header(id).map(|h| h.size())
    }

    /// The entries of tree `id` when kept by [`Session::keep_tree`].
    pub(super) fn kept_tree(&self, id: ObjectId) -> Option<Arc<Vec<TreeEntry>>> {
        let trees = self.kept.trees.lock().unwrap_or_else(|e| e.into_inner());
        (trees.iter())
            .find(|(k, _)| *k == id)
            .map(|(_, entries)| Arc::clone(entries))
    }

    /// Keeps the entries of tree `id` for the next path look-ups: only the
    /// last [`LOOKED_UP`] trees, none over [`KEPT_ENTRIES`] entries (memory
    /// in a long-lived process, the Python one).
    pub(super) fn keep_tree(&self, id: ObjectId, entries: &Arc<Vec<TreeEntry>>) {
        if entries.len() > KEPT_ENTRIES {
            return;
        }
        let mut trees = self.kept.trees.lock().unwrap_or_else(|e| e.into_inner());
        if trees.len() >= LOOKED_UP {
            trees.remove(0);
        }
        trees.push((id, Arc::clone(entries)));
    }

    /// Blob `id` as parsed into a `T` earlier in this session (a range
    /// reads each end's `fpcheck.toml` several times, a history mostly the
    /// same one at every release). A blob id names the bytes, so a parse
    /// never goes stale.
    pub fn parsed<T: Clone + Send + Sync + 'static>(&self, id: ObjectId) -> Option<T> {
        let parsed = self.kept.parsed.lock().unwrap_or_else(|e| e.into_inner());
        (parsed.iter())
            .find(|(t, k, _)| *t == TypeId::of::<T>() && *k == id)
            .and_then(|(_, _, value)| value.downcast_ref::<T>().cloned())
    }

    /// Keeps `value`, parsed from blob `id`, for [`Session::parsed`]; only
    /// the last [`PARSED`] are kept.
    pub fn keep_parsed<T: Send + Sync + 'static>(&self, id: ObjectId, value: T) {
        let mut parsed = self.kept.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if parsed.len() >= PARSED {
            parsed.remove(0);
        }
        parsed.push((TypeId::of::<T>(), id, Arc::new(value)));
    }
}

impl Clone for Session {
    /// A clone of a `gix::Repository` gets its object cache from the
    /// repository's configuration again: the memo is put back in front.
    fn clone(&self) -> Self {
        let mut repo = self.repo.clone();
        if let Some(memo) = &self.memo {
            memo::set_cache(&mut repo, memo);
        }
        Session {
            repo,
            memo: self.memo.clone(),
            kept: Arc::clone(&self.kept),
        }
    }
}

/// The repository's references, configuration and paths, and for now its
/// objects too: every handle a session gives out has the memo in front of
/// its object store, so reads through it are the session's reads.
impl std::ops::Deref for Session {
    type Target = gix::Repository;

    fn deref(&self) -> &gix::Repository {
        &self.repo
    }
}

impl From<gix::Repository> for Session {
    fn from(repo: gix::Repository) -> Self {
        Session::new(repo)
    }
}

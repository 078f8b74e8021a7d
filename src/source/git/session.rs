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
    /// A session over `repo`, with no memo. Private: the memo, the kept
    /// trees and the fingerprint cache key answers by object id, which is
    /// sound only for a repository [`super::open_repo`] opened without
    /// `git replace`, so [`Session::open`] is the only way in.
    fn new(repo: gix::Repository) -> Self {
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
    /// configuration, paths, the object hash. Objects are read through the
    /// session's own methods ([`Session::blob`], [`Session::tree`]...).
    pub fn repo(&self) -> &gix::Repository {
        &self.repo
    }

    /// The object store behind the session's handle, for the readers of
    /// this module (streamed blobs, raw trees, headers).
    pub(super) fn objects(&self) -> &gix::OdbHandle {
        &self.repo.objects
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

    /// The one answer to an object the store lacks: `what` names what
    /// needed it (`the blob of fpcheck.toml at v1.2.0`), `rev` the revision
    /// it was reached from, which the hint says to fetch. A partial or
    /// shallow clone is the usual cause, whichever object it is.
    pub fn missing(&self, id: ObjectId, what: &str, rev: &str) -> SourceError {
        SourceError::MissingObject {
            what: what.to_string(),
            id,
            hint: format!(
                "{} may be a partial or shallow clone: fetch the revision in full \
                 (`git fetch origin {rev}`) or run fpcheck in a complete clone",
                super::repo_display(&self.repo),
            ),
        }
    }

    /// An object the store has but cannot give: `what` names it.
    fn unreadable(
        id: ObjectId,
        what: &str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> SourceError {
        SourceError::Git {
            message: format!("cannot read {what} ({id})").into(),
            source: Box::new(source),
        }
    }

    /// Object `id`, of whatever kind; `what` and `rev` as in
    /// [`Session::missing`], which it is when the store lacks it.
    pub fn object(
        &self,
        id: ObjectId,
        what: &str,
        rev: &str,
    ) -> Result<gix::Object<'_>, SourceError> {
        match self.repo.try_find_object(id) {
            Ok(Some(object)) => Ok(object),
            Ok(None) => Err(self.missing(id, what, rev)),
            Err(e) => Err(Session::unreadable(id, what, e)),
        }
    }

    /// Blob `id` ([`Session::object`], which must be a blob).
    pub fn blob(&self, id: ObjectId, what: &str, rev: &str) -> Result<gix::Blob<'_>, SourceError> {
        (self.object(id, what, rev)?.try_into_blob()).map_err(|e| Session::unreadable(id, what, e))
    }

    /// Tree `id` ([`Session::object`], which must be a tree).
    pub fn tree(&self, id: ObjectId, what: &str, rev: &str) -> Result<gix::Tree<'_>, SourceError> {
        (self.object(id, what, rev)?.try_into_tree()).map_err(|e| Session::unreadable(id, what, e))
    }

    /// Commit `id` ([`Session::object`], which must be a commit).
    pub fn commit(
        &self,
        id: ObjectId,
        what: &str,
        rev: &str,
    ) -> Result<gix::Commit<'_>, SourceError> {
        (self.object(id, what, rev)?.try_into_commit())
            .map_err(|e| Session::unreadable(id, what, e))
    }

    /// The tree of commit `id`; `what` names the commit.
    pub fn commit_tree(
        &self,
        id: ObjectId,
        what: &str,
        rev: &str,
    ) -> Result<ObjectId, SourceError> {
        let commit = self.commit(id, what, rev)?;
        let tree = commit.tree_id().map_err(|e| SourceError::Git {
            message: format!("{what} ({id}) has no tree").into(),
            source: Box::new(e),
        })?;
        Ok(tree.detach())
    }

    /// The kind and size of object `id`, from the memo when it holds the
    /// object, else from its header in the store.
    pub fn header(
        &self,
        id: ObjectId,
        what: &str,
        rev: &str,
    ) -> Result<(gix::object::Kind, u64), SourceError> {
        if let Some(header) = self.memo_header(&self.repo.objects, &id) {
            return Ok(header);
        }
        match self.repo.try_find_header(id) {
            Ok(Some(header)) => Ok((header.kind(), header.size())),
            Ok(None) => Err(self.missing(id, what, rev)),
            Err(e) => Err(Session::unreadable(id, what, e)),
        }
    }

    /// Blob `id` whole, when the store has it, it reads, and its header
    /// says at most `limit` bytes; else `None`. For reads that only advise
    /// (a change's kind), whose answer for an unreadable file is its own,
    /// so that no error is made to be dropped.
    pub fn blob_within(&self, id: ObjectId, limit: u64) -> Option<Vec<u8>> {
        let (kind, size) = match self.memo_header(&self.repo.objects, &id) {
            Some(header) => header,
            None => {
                let header = self.repo.try_find_header(id).ok()??;
                (header.kind(), header.size())
            }
        };
        if kind != gix::object::Kind::Blob || size > limit {
            return None;
        }
        let blob = self.repo.try_find_object(id).ok()??.try_into_blob().ok()?;
        Some(blob.detach().data)
    }

    /// The blob at `path` (from the top) of tree `tree`, when it is a
    /// regular file (not a link) and every tree on the way reads; else
    /// `None`, as [`Session::blob_within`].
    pub fn blob_at(&self, tree: ObjectId, path: &str) -> Option<ObjectId> {
        let tree = self
            .repo
            .try_find_object(tree)
            .ok()??
            .try_into_tree()
            .ok()?;
        let entry = tree.lookup_entry_by_path(path).ok()??;
        entry.mode().is_blob().then(|| entry.object_id())
    }

    /// Whether commit `a` is `b` or one of its ancestors (their merge
    /// base is `a`); `false` when the history between them cannot be read.
    pub fn is_ancestor(&self, a: ObjectId, b: ObjectId) -> bool {
        (self.repo.merge_base(a, b)).is_ok_and(|base| base.is_some_and(|base| base.detach() == a))
    }

    /// The object `spec` names as git's `rev-parse` reads it (a ref, an
    /// id, `v1^{tree}`), `None` when it names none.
    pub fn resolve(&self, spec: &str) -> Option<ObjectId> {
        self.repo.rev_parse_single(spec).ok().map(|id| id.detach())
    }

    /// gix's walk of the history from `tips`, its commits read through
    /// the session's handle.
    pub fn walk(&self, tips: Vec<ObjectId>) -> gix::revision::walk::Platform<'_> {
        self.repo.rev_walk(tips)
    }

    /// The name of `names` nearest to `commit` going back through its
    /// history, and how many commits lie between (git's `describe`, at
    /// most 10 candidates, every parent followed); `None` when no name is
    /// reachable. The error says what could not be read.
    pub fn describe(
        &self,
        commit: ObjectId,
        names: gix::hashtable::HashMap<ObjectId, std::borrow::Cow<'static, gix::bstr::BStr>>,
    ) -> Result<Option<(String, u32)>, String> {
        let cache = (self.repo.commit_graph_if_enabled())
            .map_err(|e| format!("cannot read the commit graph: {e}"))?;
        let mut graph = self.repo.revision_graph(cache.as_ref());
        let outcome = gix::revision::plumbing::describe(
            &commit,
            &mut graph,
            gix::revision::plumbing::describe::Options {
                name_by_oid: names,
                max_candidates: 10,
                fallback_to_oid: false,
                first_parent: false,
            },
        )
        .map_err(|e| format!("cannot look up tags: {e}"))?;
        Ok(outcome.and_then(|o| o.name.map(|n| (n.to_string(), o.depth))))
    }

    /// Whether the store has object `id` (a treeless clone lacks trees).
    pub fn has(&self, id: ObjectId) -> bool {
        self.repo.has_object(id)
    }

    /// The size of object `id` ([`Session::header`]).
    pub fn size(&self, id: ObjectId, what: &str, rev: &str) -> Result<u64, SourceError> {
        self.header(id, what, rev).map(|(_, size)| size)
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

/// The session as gix's object finder, for gix's own traversals (a tree
/// diff, rename tracking): their reads go through the session too.
impl gix::objs::Find for Session {
    fn try_find<'a>(
        &self,
        id: &gix::oid,
        buffer: &'a mut Vec<u8>,
    ) -> Result<Option<gix::objs::Data<'a>>, gix::Error> {
        gix::objs::Find::try_find(&self.repo.objects, id, buffer)
    }
}

impl gix::objs::FindHeader for Session {
    fn try_header(&self, id: &gix::oid) -> Result<Option<gix::objs::Header>, gix::Error> {
        let id = id.to_owned();
        if let Some((kind, size)) = self.memo_header(&self.repo.objects, &id) {
            return Ok(Some(gix::objs::Header { kind, size }));
        }
        gix::objs::FindHeader::try_header(&self.repo.objects, &id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::git::test_git;

    /// A repository with one commit of `a.txt`, and the session over it.
    fn repo() -> (tempfile::TempDir, Session, ObjectId, ObjectId) {
        let dir = tempfile::tempdir().unwrap();
        test_git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        test_git(dir.path(), &["add", "-A"]);
        test_git(dir.path(), &["commit", "-qm", "one"]);
        let session = Session::open(Some(dir.path())).unwrap();
        let commit = session.resolve("HEAD").unwrap();
        let blob = session.resolve("HEAD:a.txt").unwrap();
        (dir, session, commit, blob)
    }

    /// Every reader says the same of an object the store lacks: what
    /// needed it, its id, and which revision to fetch.
    #[test]
    fn a_missing_object_is_one_error_whichever_reader_asks() {
        let (dir, session, _, _) = repo();
        let absent = ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
        let expected = format!(
            "the blob of x at v1 (0123456789012345678901234567890123456789) is missing from \
             the repository; {} may be a partial or shallow clone: fetch the revision in full \
             (`git fetch origin v1`) or run fpcheck in a complete clone",
            dir.path().display()
        );
        let what = "the blob of x at v1";
        let errors = [
            session.object(absent, what, "v1").err(),
            session.blob(absent, what, "v1").err(),
            session.tree(absent, what, "v1").err(),
            session.commit(absent, what, "v1").err(),
            session.header(absent, what, "v1").err(),
            session.size(absent, what, "v1").err(),
        ];
        for error in errors {
            let error = error.expect("a missing object is an error");
            assert!(
                matches!(error, SourceError::MissingObject { .. }),
                "{error}"
            );
            assert_eq!(error.to_string(), expected);
        }
        assert_eq!(session.blob_within(absent, u64::MAX), None);
        assert!(!session.has(absent));
    }

    /// An object of another kind than asked is an error naming it, never
    /// a missing object; the advisory readers answer `None`.
    #[test]
    fn an_object_of_another_kind_is_unreadable_not_missing() {
        let (_dir, session, commit, blob) = repo();
        let error = session.tree(blob, "the tree of y", "v1").unwrap_err();
        assert!(matches!(error, SourceError::Git { .. }), "{error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot read the tree of y ({blob})")),
            "{error}"
        );
        assert_eq!(session.blob_within(commit, u64::MAX), None);
        assert_eq!(session.blob_within(blob, 3), None);
        assert_eq!(session.blob_within(blob, 4), Some(b"one\n".to_vec()));
        let tree = session.commit_tree(commit, "the commit", "HEAD").unwrap();
        assert_eq!(session.blob_at(tree, "a.txt"), Some(blob));
        assert_eq!(session.blob_at(tree, "b.txt"), None);
        assert_eq!(session.size(blob, "a", "HEAD").unwrap(), 4);
    }
}

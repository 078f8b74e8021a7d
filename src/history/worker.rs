//! Reading releases: one worker per thread, each with a resumable hasher;
//! blobs shared across the run while memory allows.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use gix::ObjectId;

use super::tags::Tag;
use super::{HistoryError, ReleaseInfo};
use crate::cache::FingerprintCache;
use crate::config::RuntimeSpec;
use crate::fingerprint::{self, Resumable};
use crate::release;
use crate::select::{select, Rules, SelectedFile, Selection};
use crate::source::git::Session;
use crate::source::{
    Entry, GitSource, MetaFile, Node, Origin, Revision, RootState, Source, SourceError, Target,
};
use crate::warning::Warning;

/// How many bytes of inflated blobs the history keeps for reuse.
const BLOB_MEMORY: usize = 512 << 20;

/// The largest blob kept for reuse: larger ones are streamed each time, so
/// that memory does not grow with the size of a file.
const BLOB_KEPT: usize = 1 << 20;

/// Everything read of one release.
#[derive(Clone)]
pub(super) struct Read {
    pub(super) info: ReleaseInfo,
    pub(super) ids: BTreeMap<String, ObjectId>,
    pub(super) tree: ObjectId,
    pub(super) key: Option<String>,
    pub(super) how: How,
    /// The runtime root it was read with.
    pub(super) root: String,
    /// Why its tree's checkout is more than its blobs, for the witness.
    pub(super) unusual: Option<&'static str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum How {
    Cached,
    Reused,
    Hashed,
    Unavailable,
}

/// Blobs inflated once for the whole run, while memory allows.
#[derive(Default)]
pub(super) struct Blobs {
    map: HashMap<ObjectId, Arc<Vec<u8>>>,
    bytes: usize,
    pub(super) read: usize,
}

impl Blobs {
    /// The bytes of blob `id`, when kept (classification reads them too).
    pub(super) fn get(&self, id: ObjectId) -> Option<Arc<Vec<u8>>> {
        self.map.get(&id).cloned()
    }
}

/// One thread's state: the fingerprints it computed by selection key, and
/// the hasher that resumes after the prefix a release shares with the one
/// this thread hashed before it.
pub(super) struct Worker<'a> {
    repo: &'a Session,
    cache: &'a FingerprintCache,
    blobs: &'a Mutex<Blobs>,
    seen: HashMap<String, String>,
    hasher: Resumable,
}

impl<'a> Worker<'a> {
    pub(super) fn new(
        repo: &'a Session,
        cache: &'a FingerprintCache,
        blobs: &'a Mutex<Blobs>,
    ) -> Self {
        Worker {
            repo,
            cache,
            blobs,
            seen: HashMap::new(),
            hasher: Resumable::new(),
        }
    }

    /// Reads `tag` with the settings `runtime` (that release's own, or the
    /// settings of the release before it for the cross-check).
    pub(super) fn read(&mut self, tag: &Tag, runtime: &RuntimeSpec) -> Result<Read, HistoryError> {
        let what = format!("the commit of {}", tag.name);
        let tree = self.repo.commit_tree(tag.commit, &what, &tag.name)?;
        let rev = Revision {
            spec: tag.name.clone(),
            commit: Some(tag.commit),
            tree,
        };
        let src = GitSource::new(self.repo.clone(), rev, &runtime.root)?;
        let selection = select(&src, &runtime.rules)?;
        let rel = release::read(&src)?;
        let mut pyproject_version = release::pyproject_version(&src)?;
        // A `src/` layout's runtime: its project file is two levels up.
        if let (None, None, Some(parent)) = (
            &rel.version,
            &pyproject_version,
            release::src_layout_parent(&runtime.root),
        ) {
            let above = GitSource::new(self.repo.clone(), src.revision().clone(), parent)?;
            pyproject_version = release::pyproject_version(&above)?;
        }
        let reading = crate::verdict::Reading::of(&rel);
        let key = FingerprintCache::key(&selection);
        let ids: BTreeMap<String, ObjectId> = selection
            .files
            .iter()
            .filter_map(|f| f.content.object_id().map(|id| (f.path.clone(), id)))
            .collect();
        let (fingerprint, reason, how) =
            self.fingerprint(&src, &runtime.rules, selection, key.as_deref())?;
        let unusual = src
            .unusual()
            .unwrap_or(Some("its .gitattributes cannot be looked up"));
        let runtime_files = match fingerprint {
            Some(_) => ids.len(),
            None => 0,
        };
        Ok(Read {
            info: ReleaseInfo {
                tag: tag.name.clone(),
                aliases: tag.aliases.clone(),
                tag_version: tag.version.to_string(),
                prerelease: tag.version.is_prerelease(),
                commit: tag.commit.to_string(),
                version: rel.version,
                pyproject_version,
                force_restart: rel.force_restart,
                // The record's text: `""` when unavailable.
                fingerprint: crate::fingerprint::gate_text(fingerprint.as_deref()).into(),
                unavailable_reason: reason,
                runtime_files,
                reading,
            },
            ids,
            tree,
            key,
            how,
            root: runtime.root.clone(),
            unusual,
        })
    }

    fn fingerprint(
        &mut self,
        src: &GitSource,
        rules: &Rules,
        selection: Selection,
        key: Option<&str>,
    ) -> Result<(Option<String>, Option<String>, How), HistoryError> {
        if let Some(reason) = selection.unavailable_reason(&src.root_display(), rules) {
            return Ok((None, Some(reason), How::Unavailable));
        }
        let key = key.expect("a git selection always has a key");
        if let Some(fp) = self.cache.get(key) {
            return Ok((Some(fp.to_string()), None, How::Cached));
        }
        if let Some(fp) = self.seen.get(key) {
            return Ok((Some(fp.clone()), None, How::Reused));
        }
        let shared = SharedBlobs {
            src,
            session: self.repo,
            blobs: self.blobs,
        };
        // The same function as every other fingerprint: an unreadable blob
        // gives the same unavailable reason here as in `fingerprint`.
        let fp = fingerprint::from_selection_resumed(&shared, rules, selection, &mut self.hasher)?;
        let Some(digest) = fp.digest else {
            return Ok((None, fp.unavailable_reason, How::Unavailable));
        };
        self.seen.insert(key.to_string(), digest.clone());
        Ok((Some(digest), None, How::Hashed))
    }
}

/// A release's tree whose blobs are read through the worker's object
/// database (its pack cache outlives one release) and shared across the
/// whole run while memory allows; large blobs are streamed, never kept.
struct SharedBlobs<'a> {
    src: &'a GitSource,
    session: &'a Session,
    blobs: &'a Mutex<Blobs>,
}

impl Source for SharedBlobs<'_> {
    fn root_display(&self) -> String {
        self.src.root_display()
    }

    fn root(&self) -> Result<RootState, SourceError> {
        self.src.root()
    }

    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
        self.src.read_dir(dir, rel)
    }

    fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError> {
        self.src.resolve(rel, entry)
    }

    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let Some(id) = content.object_id() else {
            return self.src.read(rel, content, sink);
        };
        let known = self
            .blobs
            .lock()
            .expect("no thread panics holding it")
            .map
            .get(&id)
            .cloned();
        if let Some(bytes) = known {
            sink(&bytes);
            return Ok(());
        }
        let mut kept = Some(Vec::new());
        let what = crate::source::display_path(&self.src.root_display(), rel.as_bytes());
        self.src
            .read_blob_through(self.session, id, &what, &mut |b| {
                sink(b);
                if let Some(k) = &mut kept {
                    if k.len() + b.len() <= BLOB_KEPT {
                        k.extend_from_slice(b);
                    } else {
                        kept = None;
                    }
                }
            })?;
        let mut blobs = self.blobs.lock().expect("no thread panics holding it");
        blobs.read += 1;
        // Two threads may read the same blob at once: only the first one
        // kept counts against the budget.
        if let Some(bytes) = kept {
            if blobs.bytes + bytes.len() <= BLOB_MEMORY && !blobs.map.contains_key(&id) {
                blobs.bytes += bytes.len();
                blobs.map.insert(id, Arc::new(bytes));
            }
        }
        Ok(())
    }

    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError> {
        self.src.read_meta(name, in_parent)
    }

    fn origin(&self) -> Origin {
        self.src.origin()
    }

    fn root_depth(&self) -> usize {
        self.src.root_depth()
    }

    fn warnings(&self, files: &[SelectedFile]) -> Result<Vec<Warning>, SourceError> {
        self.src.warnings(files)
    }
}

//! Classification applied to a release: each runtime change gets its
//! [`ChangeKind`], and the release an `avoidable` flag.
//!
//! Only `modified` files are parsed: additions, deletions, renames (a new
//! module path is a different import), mode, type and link-target changes
//! are `code` without reading a byte, and so is a file that is a symbolic
//! link on either side.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gix::ObjectId;

use super::{ChangeKind, Classifier, Parsed};
use crate::changes::{Changes, Status};
use crate::range::Analysis;
use crate::safe_io::{self, Links};
use crate::source::Revision;
use crate::verdict::Reason;

/// The most bytes of a file (working tree or blob) read for classification;
/// a larger "Python file" is `code` (parsing it would take memory many times
/// its size).
const FILE_LIMIT: u64 = 64 << 20;

/// Whether a restart is avoidable: it is required only because of files
/// whose changes are all `layout` or `docstrings` (no `force_restart`, no
/// unavailable fingerprint, nothing added or removed). `None` when the
/// changes are not classified.
pub fn avoidable(
    restart_required: bool,
    reason: Reason,
    force_restart: bool,
    changes: &Changes,
) -> Option<bool> {
    let kinds: Option<Vec<ChangeKind>> = changes.runtime.iter().map(|c| c.change_kind).collect();
    let kinds = kinds?;
    Some(
        restart_required
            && reason == Reason::CodeChanged
            && !force_restart
            && !kinds.is_empty()
            && kinds.iter().all(|k| k.is_cosmetic()),
    )
}

/// The line a report prints for an avoidable restart of `files` files.
pub fn avoidable_sentence(files: usize) -> String {
    let (what, pronoun) = if files == 1 {
        ("1 file".to_string(), "it")
    } else {
        (format!("{files} files"), "them")
    };
    format!(
        "this restart is avoidable: {what} changed only comments or docstrings; hold {pronoun} for the next code release"
    )
}

/// Classifies the runtime changes of a range report and sets `avoidable`.
/// Each side's bytes come from the commit's tree (or the working tree for
/// `--worktree`), by the path from the top of the repository.
pub fn annotate(repo: &gix::Repository, analysis: &mut Analysis) {
    let from = side_tree(
        repo,
        analysis.from.commit.as_deref(),
        &analysis.from.reference,
    );
    let to = if analysis.to.worktree {
        Bytes::Worktree(repo.workdir().map(Path::to_path_buf))
    } else {
        side_tree(repo, analysis.to.commit.as_deref(), &analysis.to.reference)
    };
    let mut classifier: Option<Classifier> = None;
    for change in &mut analysis.changes.runtime {
        let kind = match change.status {
            Status::Modified => {
                match (from.read(repo, &change.path), to.read(repo, &change.path)) {
                    (Some(old), Some(new)) => {
                        let classifier = classifier.get_or_insert_with(Classifier::new);
                        let old = classifier.parse(old, None);
                        let new = classifier.parse(new, Some(&old));
                        super::compare_parsed(&old, &new)
                    }
                    _ => ChangeKind::Code,
                }
            }
            _ => ChangeKind::Code,
        };
        change.change_kind = Some(kind);
    }
    analysis.avoidable = avoidable(
        analysis.restart_required,
        analysis.reason,
        analysis.to.force_restart,
        &analysis.changes,
    );
}

/// How many bytes of parsed files a history keeps (see [`Parsed::weight`]).
const KEPT_BYTES: usize = 256 << 20;

/// Parsed files of a history, by path: a file's version in one release is
/// the `from` side the next time it changes, so each blob is parsed once,
/// and incrementally from the version before it.
#[derive(Default)]
pub struct HistoryStreams {
    classifier: Classifier,
    kept: HashMap<String, (ObjectId, Parsed)>,
    weight: usize,
}

impl HistoryStreams {
    /// Whether every runtime change of one update (paths below `root` →
    /// blob ids at each end, commit trees `trees`) is cosmetic. Anything
    /// but a modification is `code`, so is a link; stops at the first
    /// `code` file, as history only reports the update's flag.
    pub fn all_cosmetic(
        &mut self,
        repo: &gix::Repository,
        trees: (ObjectId, ObjectId),
        root: &str,
        changes: &Changes,
        ids: (&BTreeMap<String, ObjectId>, &BTreeMap<String, ObjectId>),
    ) -> bool {
        if changes.runtime.is_empty()
            || changes.runtime.iter().any(|c| c.status != Status::Modified)
        {
            return false;
        }
        changes.runtime.iter().all(|c| {
            let rel = below(root, &c.path);
            let (Some(a), Some(b)) = (ids.0.get(rel), ids.1.get(rel)) else {
                return false;
            };
            // The selection's blob must be the path's own, not a link's target.
            if blob_at(repo, trees.0, &c.path) != Some(*a)
                || blob_at(repo, trees.1, &c.path) != Some(*b)
            {
                return false;
            }
            self.classify(repo, &c.path, *a, *b)
        })
    }

    fn classify(&mut self, repo: &gix::Repository, path: &str, a: ObjectId, b: ObjectId) -> bool {
        let read = |id: ObjectId| read_blob(repo, id);
        let old = match self.kept.remove(path) {
            Some((id, parsed)) if id == a => {
                self.weight -= parsed.weight();
                parsed
            }
            stale => {
                if let Some((_, p)) = stale {
                    self.weight -= p.weight();
                }
                let Some(bytes) = read(a) else { return false };
                self.classifier.parse(bytes, None)
            }
        };
        let Some(bytes) = read(b) else { return false };
        let new = self.classifier.parse(bytes, Some(&old));
        let cosmetic = super::compare_parsed(&old, &new).is_cosmetic();
        if self.weight + new.weight() > KEPT_BYTES {
            self.kept.clear();
            self.weight = 0;
        }
        self.weight += new.weight();
        self.kept.insert(path.to_string(), (b, new));
        cosmetic
    }
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

/// Where one end's bytes are.
enum Bytes {
    /// A tree (`None`: it could not be resolved, everything is `code`).
    Tree(Option<ObjectId>),
    /// The working tree at this directory.
    Worktree(Option<std::path::PathBuf>),
}

impl Bytes {
    /// The bytes of the regular file at `path` (from the top), `None` for
    /// a link, a missing or unreadable file.
    fn read(&self, repo: &gix::Repository, path: &str) -> Option<Vec<u8>> {
        match self {
            Bytes::Tree(tree) => read_blob(repo, blob_at(repo, (*tree)?, path)?),
            Bytes::Worktree(dir) => {
                safe_io::read_regular(&dir.as_ref()?.join(path), Links::Refuse, FILE_LIMIT).ok()
            }
        }
    }
}

/// The bytes of blob `id`, `None` when it is unreadable or larger than
/// [`FILE_LIMIT`] (its header is checked before anything is loaded).
fn read_blob(repo: &gix::Repository, id: ObjectId) -> Option<Vec<u8>> {
    if repo.find_header(id).ok()?.size() > FILE_LIMIT {
        return None;
    }
    Some(repo.find_blob(id).ok()?.detach().data)
}

/// The blob at `path` of `tree`, when it is a regular file (not a link).
fn blob_at(repo: &gix::Repository, tree: ObjectId, path: &str) -> Option<ObjectId> {
    let tree = repo.find_tree(tree).ok()?;
    let entry = tree.lookup_entry_by_path(path).ok()??;
    entry.mode().is_blob().then(|| entry.object_id())
}

fn side_tree(repo: &gix::Repository, commit: Option<&str>, reference: &str) -> Bytes {
    Bytes::Tree(
        Revision::parse(repo, commit.unwrap_or(reference))
            .ok()
            .map(|r| r.tree),
    )
}

//! Classification applied to a release: each runtime change gets its
//! [`ChangeKind`], and the release an `avoidable` flag.
//!
//! Only `modified` files are parsed: additions, deletions, renames (a new
//! module path is a different import), mode, type and link-target changes
//! are `code` without reading a byte, and so is a file that is a symbolic
//! link on either side, and a file whose name is not Python source's
//! ([`super::is_python_source`]).

use gix::ObjectId;
use serde::Serialize;

use super::{ChangeKind, Classifier, KindCache};
use crate::changes::{ChangeStatus, Changes, RuntimeChange};
use crate::pair::Pair;
use crate::safe_io::{self, Links};
use crate::source::git::Session;
use crate::verdict::Reason;
use crate::warning::{Code, Warning};

/// The most bytes of a file (working tree or blob) read for classification;
/// a larger "Python file" is `code` without being parsed. Parsing takes
/// memory about 15 times a file's size for ordinary code, up to about 60
/// times for the densest (see docs/classify.md), and both sides of a
/// change are held at once: 1 MiB keeps a classification within about
/// 150 MiB, and few Python files are larger.
pub(super) const FILE_LIMIT: u64 = 1 << 20;

/// Whether a restart is avoidable: it is required only because of files
/// whose changes are all `layout` or `docstrings` (no `force_restart`, no
/// unavailable fingerprint, nothing added or removed, the same settings at
/// both ends: see [`settings_changed`]). `None` when the changes are not
/// classified.
pub fn avoidable(
    restart_required: bool,
    reason: Reason,
    force_restart: bool,
    settings_changed: bool,
    changes: &Changes,
) -> Option<bool> {
    let kinds: Option<Vec<ChangeKind>> = changes.runtime.iter().map(|c| c.change_kind).collect();
    let kinds = kinds?;
    Some(
        may_be_avoidable(restart_required, reason, force_restart, settings_changed)
            && !kinds.is_empty()
            && kinds.iter().all(|k| k.is_cosmetic()),
    )
}

/// Why a restart could have waited: its runtime changes are all
/// `layout`, `docstrings` or `version`, and the release passes
/// [`may_be_avoidable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Avoidable {
    /// Only comments, layout or docstrings changed (`avoidable` is true).
    Cosmetic,
    /// A version string changed, and nothing else but comments, layout or
    /// docstrings.
    Version,
}

impl Avoidable {
    /// Why a restart caused by files of these kinds could have waited;
    /// `None` when any is `code` or there are none.
    pub fn of(kinds: &[ChangeKind]) -> Option<Avoidable> {
        if kinds.is_empty() || !kinds.iter().all(|k| k.is_avoidable()) {
            None
        } else if kinds.contains(&ChangeKind::Version) {
            Some(Avoidable::Version)
        } else {
            Some(Avoidable::Cosmetic)
        }
    }
}

/// Why a classified restart could have waited (see [`Avoidable`]); `None`
/// when it could not, or the changes are not classified.
pub fn avoidable_by(
    restart_required: bool,
    reason: Reason,
    force_restart: bool,
    settings_changed: bool,
    changes: &Changes,
) -> Option<Avoidable> {
    let kinds: Option<Vec<ChangeKind>> = changes.runtime.iter().map(|c| c.change_kind).collect();
    if !may_be_avoidable(restart_required, reason, force_restart, settings_changed) {
        return None;
    }
    Avoidable::of(&kinds?)
}

/// What [`avoidable`] asks of a release besides its files' kinds: a
/// restart caused by changed code, no `force_restart`, the same settings
/// at both ends. `history` classifies only the updates that pass it.
pub fn may_be_avoidable(
    restart_required: bool,
    reason: Reason,
    force_restart: bool,
    settings_changed: bool,
) -> bool {
    restart_required && reason == Reason::CodeChanged && !force_restart && !settings_changed
}

/// Whether an update's ends were read with different settings: a settings
/// cross-check ran (`cross_checked`) (it runs whenever the settings differ) or a warning says
/// the settings changed or a runtime was read with borrowed settings. Such
/// an update is never avoidable: the classified files are those the `to`
/// end's settings select, and a selection change (an exclusion that hides a
/// changed file, a moved root) is not among them.
pub fn settings_changed(cross_checked: bool, warnings: &[Warning]) -> bool {
    cross_checked
        || warnings.iter().any(|w| {
            matches!(
                w.code,
                Code::SettingsChanged
                    | Code::SettingsChangedRuntimeChanged
                    | Code::RuntimeNotDeclared
            )
        })
}

/// The line a report prints for an avoidable restart of `files` files.
pub fn avoidable_sentence(files: usize) -> String {
    format!("{AVOIDABLE}: {}", avoidable_detail(files))
}

/// The same line in Markdown, its claim in bold.
pub fn avoidable_markdown(files: usize) -> String {
    let mut claim = AVOIDABLE.to_string();
    claim[..1].make_ascii_uppercase();
    format!("**{claim}:** {}.", avoidable_detail(files))
}

const AVOIDABLE: &str = "this restart is avoidable";

/// What an avoidable restart's files changed, and what to do.
fn avoidable_detail(files: usize) -> String {
    let (what, pronoun) = if files == 1 {
        ("1 file".to_string(), "it")
    } else {
        (format!("{files} files"), "them")
    };
    format!("{what} changed only comments or docstrings; hold {pronoun} for the next code release")
}

/// Sets the [`ChangeKind`] of each change: only a modified Python source
/// file is read (from both ends' bytes), the rest are `code`. Kinds are
/// looked up in `kinds` by the two blob ids (a working-tree file's being
/// the id git would give its bytes) and the new ones put there.
pub(crate) fn classify_changes(
    repo: &Session,
    Pair { from, to }: Pair<&Bytes>,
    changes: &mut [RuntimeChange],
    kinds: &mut KindCache,
) {
    let mut classifier: Option<Classifier> = None;
    for change in changes {
        let kind = match change.status {
            // As `compares_files`.
            ChangeStatus::Modified if super::is_python_source(&change.path) => {
                match (from.read(repo, &change.path), to.read(repo, &change.path)) {
                    (Some((old_id, old)), Some((new_id, new))) => kinds
                        .get(old_id, new_id)
                        .or_else(|| {
                            let (old, new) = (old()?, new()?);
                            let classifier = classifier.get_or_insert_with(Classifier::new);
                            let kind = classifier.classify(old, new);
                            kinds.put(old_id, new_id, kind);
                            Some(kind)
                        })
                        .unwrap_or(ChangeKind::Code),
                    _ => ChangeKind::Code,
                }
            }
            _ => ChangeKind::Code,
        };
        change.change_kind = Some(kind);
    }
}

/// Whether classifying `changes` compares any file's bytes (a modified
/// Python source file): only then is the change-kind cache worth reading,
/// or either end's tree resolved.
pub(crate) fn compares_files(changes: &[RuntimeChange]) -> bool {
    changes
        .iter()
        .any(|c| c.status == ChangeStatus::Modified && super::is_python_source(&c.path))
}

/// Where one end's bytes are.
pub(crate) enum Bytes {
    /// A tree (`None`: it could not be resolved, everything is `code`).
    Tree(Option<ObjectId>),
    /// The working tree at this directory.
    Worktree(Option<std::path::PathBuf>),
}

impl Bytes {
    /// The blob id of the regular file at `path` (from the top) and its
    /// bytes, read only when no remembered kind answers; `None` for a link
    /// or a missing file. A working-tree file is read at once (`None` when
    /// unreadable), its id computed from its bytes.
    fn read<'a>(&self, repo: &'a Session, path: &str) -> Option<(ObjectId, Lazy<'a>)> {
        match self {
            // The bytes a checkout writes (`.gitattributes` applied), named
            // by the id git would give them: the bytes the gate hashes.
            Bytes::Tree(tree) => {
                let tree = (*tree)?;
                let blob = blob_at(repo, tree, path)?;
                match crate::source::git::checkout_of(repo, tree, path, blob, FILE_LIMIT)? {
                    (id, Some(bytes)) => Some((id, Box::new(move || Some(bytes)))),
                    (id, None) => Some((id, Box::new(move || read_blob(repo, id)))),
                }
            }
            Bytes::Worktree(dir) => {
                let bytes =
                    safe_io::read_regular(&dir.as_ref()?.join(path), Links::Refuse, FILE_LIMIT)
                        .ok()?;
                let id = gix::objs::compute_hash(
                    repo.repo().object_hash(),
                    gix::objs::Kind::Blob,
                    &bytes,
                )
                .ok()?;
                Some((id, Box::new(move || Some(bytes))))
            }
        }
    }
}

/// A file's bytes, read when asked (`None`: unreadable, or over
/// [`FILE_LIMIT`]).
type Lazy<'a> = Box<dyn FnOnce() -> Option<Vec<u8>> + 'a>;

/// The bytes of blob `id`, `None` when it is unreadable or larger than
/// [`FILE_LIMIT`] (its header is checked before anything is loaded).
pub(super) fn read_blob(repo: &Session, id: ObjectId) -> Option<Vec<u8>> {
    repo.blob_within(id, FILE_LIMIT)
}

/// The blob at `path` of `tree`, when it is a regular file (not a link).
pub(super) fn blob_at(repo: &Session, tree: ObjectId, path: &str) -> Option<ObjectId> {
    repo.blob_at(tree, path)
}

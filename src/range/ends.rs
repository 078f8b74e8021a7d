//! Reading one end of a range: a revision's tree or the working tree,
//! fingerprinted (through the cache when it can be), with its release
//! metadata and the blob ids that pair its files with the other end's.

use std::collections::BTreeMap;
use std::path::PathBuf;

use gix::ObjectId;

use super::{Digests, RangeError, WORKTREE};
use crate::cache::FingerprintCache;
use crate::config::RuntimeSpec;
use crate::fingerprint::{self, Fingerprint};
use crate::pair::Pair;
use crate::release::{self, Release};
use crate::select::{select, Rules, Selection};
use crate::setting::{Message, Setting, Value};
use crate::side::Side;
use crate::source::git::repo_display;
use crate::source::git::Session;
use crate::source::{GitSource, Node, Revision, RootState, Source, SourceError, WorktreeSource};

/// Everything read of one end.
pub(super) struct Read {
    pub(super) side: Side,
    pub(super) release: Release,
    pub(super) fp: Fingerprint,
    /// Path below the root → blob id, for pairing changes.
    pub(super) ids: BTreeMap<String, ObjectId>,
    pub(super) root_tree: Option<ObjectId>,
}

/// Both ends read and fingerprinted, each with its own settings.
/// `same_settings`: the ends' runtime settings are equal. With the same
/// root tree too (same id, same depth), the `to` end selects what the
/// `from` end selects unless a selected link looks above the root: only
/// then is it walked. A persistent cache remembers such a walk by tree (see
/// [`FingerprintCache::tree_key`]), so the next range over that tree walks
/// nothing.
pub(super) fn read_pair(
    (from_src, from_rt): (&GitSource, &RuntimeSpec),
    (to_src, to_rt): (&GitSource, &RuntimeSpec),
    same_settings: bool,
    cache: &mut FingerprintCache,
    digests: Digests,
) -> Result<Pair<Read>, SourceError> {
    let same_root = same_settings
        && from_src.root_tree().is_some()
        && from_src.root_tree() == to_src.root_tree();
    let tree_key = from_src.root_tree().filter(|_| same_root).map(|t| {
        FingerprintCache::tree_key(&from_rt.root, t.id, (t.depth, t.links), &from_rt.rules)
    });
    if let Some(key) = tree_key.as_deref() {
        if let Some(pair) = remembered(Pair::new(from_src, to_src), key, cache, digests)? {
            return Ok(pair);
        }
        if let Some(pair) = scanned(
            Pair::new(from_src, to_src),
            key,
            &from_rt.rules,
            cache,
            digests,
        )? {
            return Ok(pair);
        }
    }
    let from_sel = select(from_src, &from_rt.rules)?;
    // The same root tree selects the same files, but not the same bytes
    // when `.gitattributes` may convert them: those ends are read apart.
    let plain = !from_src.may_have_attributes()? && !to_src.may_have_attributes()?;
    let to_sel = if same_root && !from_src.links_left_root() && plain {
        to_src.adopt_walk(from_src);
        let worth =
            cache.is_persistent() && from_sel.is_available() && !from_src.saw_gitattributes();
        if let (Some(key), true) = (tree_key, worth) {
            if let Some(selection_key) = FingerprintCache::key(&from_sel) {
                cache.put_tree(key, selection_key, from_sel.files.len());
            }
        }
        None
    } else {
        Some(select(to_src, &to_rt.rules)?)
    };
    let (fps, skipped) = fingerprint_pair(
        (from_src, from_sel, &from_rt.rules),
        (to_src, to_sel, &to_rt.rules),
        cache,
        digests,
    )?;
    let same = skipped || fps.from.selection.files == fps.to.selection.files;
    let files = skipped.then_some(fps.from.selection.files.len());
    Ok(Pair::new(
        read_git(from_src, fps.from, same, files)?,
        read_git(to_src, fps.to, same, files)?,
    ))
}

/// Both ends from a remembered walk of their (shared) root tree, when the
/// cache has one and nothing else needs the walk: no `.gitattributes`
/// above the root at either end (below it, the walk saw none), and a digest
/// only if the cache has it or none is needed.
fn remembered(
    srcs: Pair<&GitSource>,
    tree_key: &str,
    cache: &FingerprintCache,
    digests: Digests,
) -> Result<Option<Pair<Read>>, SourceError> {
    if cache.is_empty() {
        return Ok(None);
    }
    let Some((selection_key, files)) = cache.tree(tree_key) else {
        return Ok(None);
    };
    if srcs.from.may_have_attributes()? || srcs.to.may_have_attributes()? {
        return Ok(None);
    }
    let digest = (selection_key != FingerprintCache::UNWALKED)
        .then(|| cache.get(&selection_key).map(str::to_string))
        .flatten();
    if digest.is_none() && digests == Digests::Always {
        return Ok(None);
    }
    Ok(Some(unwalked(srcs, digest, files)?))
}

/// Both ends from a scan of the `from` end's root tree (see
/// [`crate::select::plain_selection`]) that proves the selection a function of
/// that tree, which both ends share: no path is built, nothing hashed.
/// Only when no digest is wanted and the cache cannot have one (nothing
/// persistent in it: a remembered digest is reported, so a cache that
/// holds any is left to the walk, which records the tree for next time).
/// A persistent cache remembers the scan (without a selection key).
fn scanned(
    srcs: Pair<&GitSource>,
    tree_key: &str,
    rules: &Rules,
    cache: &mut FingerprintCache,
    digests: Digests,
) -> Result<Option<Pair<Read>>, SourceError> {
    if digests == Digests::Always || (cache.is_persistent() && !cache.is_empty()) {
        return Ok(None);
    }
    // Attribute warnings need the list of files: the walk makes it.
    if srcs.from.may_have_attributes()? || srcs.to.may_have_attributes()? {
        return Ok(None);
    }
    let Some(files) = crate::select::plain_selection(srcs.from, rules) else {
        return Ok(None);
    };
    if cache.is_persistent() {
        cache.put_tree(
            tree_key.to_string(),
            FingerprintCache::UNWALKED.into(),
            files,
        );
    }
    Ok(Some(unwalked(srcs, None, files)?))
}

/// Both ends of a shared root tree known to select `files` files, with the
/// digest when known, without a walk.
fn unwalked(
    srcs: Pair<&GitSource>,
    digest: Option<String>,
    files: usize,
) -> Result<Pair<Read>, SourceError> {
    let read = |src: &GitSource| -> Result<Read, SourceError> {
        let fp = Fingerprint {
            digest: digest.clone(),
            selection: Selection::default(),
            unavailable_reason: None,
            warnings: Vec::new(),
        };
        let mut read = read_git(src, fp, true, digest.is_none().then_some(files))?;
        read.side.runtime_files = files;
        Ok(read)
    };
    Ok(Pair::new(read(srcs.from)?, read(srcs.to)?))
}

/// Both fingerprints, each end with its own rules. `to_sel` is `None`
/// when the `to` end is known to select what the `from` end selects (see
/// [`super::analyse_with`]). When the selections (paths and blob ids) are
/// equal the fingerprints are equal: with [`Digests::WhenNeeded`] nothing
/// is hashed (a digest is reported only if the cache holds it) and the
/// second value is `true`; with [`Digests::Always`] the bytes are read and
/// hashed once for both. Skipped, the `to` end's selection is left empty
/// (it is the `from` end's) and [`read_git`] is told how many files it has.
fn fingerprint_pair(
    (from_src, from_sel, from_rules): (&GitSource, Selection, &Rules),
    (to_src, to_sel, to_rules): (&GitSource, Option<Selection>, &Rules),
    cache: &mut FingerprintCache,
    digests: Digests,
) -> Result<(Pair<Fingerprint>, bool), SourceError> {
    // Both lists are sorted by path, each path once: equal lists are equal
    // (path, content) maps. Equal files are not enough, though: a problem
    // (a broken link, a directory named like a module) makes one side
    // unavailable with the same files.
    if let Some(to_sel) = to_sel {
        let same =
            from_sel.is_available() && to_sel.is_available() && from_sel.files == to_sel.files;
        if !same {
            let fps = Pair::new(
                cached_or_hashed(from_src, from_sel, from_rules, cache)?,
                cached_or_hashed(to_src, to_sel, to_rules, cache)?,
            );
            return Ok((fps, false));
        }
    }
    let skip = from_sel.is_available() && digests == Digests::WhenNeeded;
    // The key costs a pass over the list: only worth it when the cache
    // may hold the digest.
    let cached = skip
        && !cache.is_empty()
        && FingerprintCache::key(&from_sel).is_some_and(|k| cache.get(&k).is_some());
    if skip && !cached {
        let from_fp = Fingerprint {
            warnings: from_src.warnings(&from_sel.files)?,
            digest: None,
            selection: from_sel,
            unavailable_reason: None,
        };
        let to_fp = Fingerprint {
            warnings: to_src.warnings(&from_fp.selection.files)?,
            digest: None,
            selection: Selection::default(),
            unavailable_reason: None,
        };
        return Ok((Pair::new(from_fp, to_fp), true));
    }
    let from_fp = cached_or_hashed(from_src, from_sel, from_rules, cache)?;
    let mut to_fp = from_fp.clone();
    to_fp.warnings = to_src.warnings(&to_fp.selection.files)?;
    Ok((Pair::new(from_fp, to_fp), false))
}

pub(super) fn cached_or_hashed(
    src: &GitSource,
    selection: Selection,
    rules: &Rules,
    cache: &mut FingerprintCache,
) -> Result<Fingerprint, SourceError> {
    let key = selection
        .is_available()
        .then(|| FingerprintCache::key(&selection))
        .flatten();
    if let Some(digest) = key.as_deref().and_then(|k| cache.get(k)) {
        let digest = digest.to_string();
        let warnings = src.warnings(&selection.files)?;
        return Ok(Fingerprint {
            digest: Some(digest),
            selection,
            unavailable_reason: None,
            warnings,
        });
    }
    let fp = fingerprint::from_selection(src, rules, selection)?;
    if let (Some(k), Some(d)) = (key, &fp.digest) {
        cache.put(k, d.clone());
    }
    Ok(fp)
}

/// `same`: both ends select the same files, so no change pairs them (the
/// blob ids are not listed). `skipped`: the fingerprint was not computed;
/// the number of files selected.
pub(super) fn read_git(
    src: &GitSource,
    fp: Fingerprint,
    same: bool,
    skipped: Option<usize>,
) -> Result<Read, SourceError> {
    let release = release::read(src)?;
    let rev = src.revision();
    let ids = if same {
        BTreeMap::new()
    } else {
        fp.selection
            .files
            .iter()
            .filter_map(|f| f.content.object_id().map(|id| (f.path.clone(), id)))
            .collect()
    };
    let root_tree = match src.root()? {
        RootState::Dir(Node::Object(id)) => Some(id),
        _ => None,
    };
    let mut side = Side::new(
        rev.spec.clone(),
        rev.commit.map(|c| c.to_string()),
        false,
        &release,
        &fp,
    )
    .with_release_version(release::pyproject_version(src)?, src.tag_version());
    side.tree = Some(rev.tree);
    // What the walk met; a tree that cannot be looked at again is unusual.
    side.unusual = src
        .unusual()
        .unwrap_or(Some("its .gitattributes cannot be looked up"));
    let side = match skipped {
        Some(files) => side.skipped(files),
        None => side,
    };
    Ok(Read {
        side,
        release,
        fp,
        ids,
        root_tree,
    })
}

/// A `src/` layout (`project/src/package` as the root): without a version
/// file, nor a `pyproject.toml` in the root or its parent, the project's
/// own `pyproject.toml` two levels up names the release's version.
pub(crate) fn src_layout_pyproject(
    repo: &Session,
    rev: &crate::source::Revision,
    root: &str,
    side: &mut Side,
) -> Result<(), SourceError> {
    let from_pyproject = side
        .release_version
        .as_ref()
        .is_some_and(|r| r.source != crate::version::VersionSource::Tag);
    if side.version.is_some() || from_pyproject {
        return Ok(());
    }
    let Some(parent) = crate::release::src_layout_parent(root) else {
        return Ok(());
    };
    let src = GitSource::new(repo.clone(), rev.clone(), parent)?;
    if let Some(v) = release::pyproject_version(&src)? {
        side.release_version = Some(crate::version::ReleaseVersion::from_pyproject(&v));
    }
    Ok(())
}

/// The working tree's end: its files read as its commit would hold them
/// (links resolved inside the repository, see [`WorktreeSource`]).
pub(super) fn read_worktree(
    repo: &Session,
    src: &WorktreeSource,
    rules: &Rules,
) -> Result<Read, SourceError> {
    let fp = fingerprint::compute(src, rules)?;
    let release = release::read(src)?;
    // Blob ids of the working tree's runtime files pair them with the tree's.
    let mut ids = BTreeMap::new();
    for f in &fp.selection.files {
        let mut bytes = Vec::new();
        src.read(&f.path, &f.content, &mut |b| bytes.extend_from_slice(b))?;
        let id =
            gix::objs::compute_hash(repo.repo().object_hash(), gix::object::Kind::Blob, &bytes)
                .map_err(|e| {
                    SourceError::Repository(format!("cannot hash {}: {e}", f.path).into())
                })?;
        ids.insert(f.path.clone(), id);
    }
    Ok(Read {
        side: Side::new(WORKTREE.into(), None, true, &release, &fp)
            .with_release_version(release::pyproject_version(src)?, None),
        release,
        fp,
        ids,
        root_tree: None,
    })
}

/// The top of the working tree, for `--worktree`.
pub(super) fn workdir(repo: &Session) -> Result<PathBuf, SourceError> {
    (repo.repo().workdir())
        .map(std::path::Path::to_path_buf)
        .ok_or_else(|| {
            SourceError::Repository(
                Message::new()
                    .text(format!(
                        "{} is a bare repository: it has no working tree for ",
                        repo_display(repo.repo())
                    ))
                    .setting(Setting::Worktree, Value::None),
            )
        })
}

/// A runtime root that exists at neither end is a typo (`--root scr`), not a
/// release whose fingerprint is unavailable: say so and list what exists.
/// A root missing at one end only is a real release (docs/spec.md: the
/// fingerprint is unavailable), so it passes.
pub(super) fn check_roots(
    from: &dyn Source,
    to: &dyn Source,
    from_rt: &RuntimeSpec,
    to_rt: &RuntimeSpec,
    top_dirs: impl FnOnce() -> Vec<String>,
) -> Result<(), RangeError> {
    let missing = |s: &dyn Source| matches!(s.root(), Ok(RootState::Missing));
    if !(missing(from) && missing(to)) {
        return Ok(());
    }
    let shown = |r: &RuntimeSpec| crate::source::show_root(&r.root).to_string();
    let root = if from_rt.root == to_rt.root {
        format!("`{}`", shown(to_rt))
    } else {
        format!("`{}` (from) / `{}` (to)", shown(from_rt), shown(to_rt))
    };
    let dirs = top_dirs();
    let there = if dirs.is_empty() {
        "the repository's top holds no directory".to_string()
    } else {
        let names: Vec<String> = dirs.iter().map(|d| d.to_string()).collect();
        format!("directories at the repository's top: {}", names.join(", "))
    };
    Err(RangeError::NoRoot(
        Message::new()
            .text(format!(
                "the runtime root {root} exists at neither end ({there}): pass "
            ))
            .setting(Setting::Root, Value::Placeholder("DIR"))
            .text(", or set `root` in fpcheck.toml"),
    ))
}

/// The directories (and links, which may lead to one) at the top of
/// `rev`'s tree.
pub(super) fn top_dirs_at(repo: &Session, rev: &Revision) -> Vec<String> {
    use gix::objs::tree::EntryKind;
    let what = format!("the tree of {}", rev.spec);
    let Ok(tree) = repo.tree(rev.tree, &what, &rev.spec) else {
        return Vec::new();
    };
    let mut out: Vec<String> = tree
        .iter()
        .filter_map(Result::ok)
        .filter(|e| matches!(e.mode().kind(), EntryKind::Tree))
        .map(|e| e.filename().to_string())
        .collect();
    out.sort();
    out
}

/// The directories at the top of a working tree, `.git` left out.
pub(super) fn top_dirs_on_disk(top: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(top) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != ".git")
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

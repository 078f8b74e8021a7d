//! Trees and the paths through them: reading a tree (refusing malformed
//! ones), and following a path the way a checkout's file system would,
//! `..` and symbolic links included.

use std::collections::{HashSet, VecDeque};

use gix::objs::tree::EntryKind as GitKind;
use gix::prelude::FindExt;
use gix::ObjectId;

use super::GitSource;
use crate::source::links::{components, MAX_LINK_HOPS};
use crate::source::{SourceError, MAX_TREE_DEPTH};

/// The longest link target read, as Linux's PATH_MAX: a link's blob is read
/// whole, and a hostile one may be gigabytes.
pub(super) const MAX_LINK_TARGET: u64 = 4096;

/// One entry of a tree.
pub(super) type TreeEntry = (Vec<u8>, GitKind, ObjectId);

/// What a path inside a tree leads to, links followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Found {
    Tree(ObjectId),
    Blob(ObjectId),
    Missing,
    Submodule,
    LeavesRepository,
    Absolute(String),
    Loop,
    /// A tree on the way is malformed or too deep; the sentence says why.
    Malformed(String),
}

impl GitSource {
    /// The entries of tree `id` (`what` names it in errors). A tree that no
    /// checkout could hold (see [`malformed`]) is a
    /// [`SourceError::Malformed`]: hashing it would give an answer that
    /// depends on how each reader breaks the tie.
    pub(super) fn tree_entries(
        &self,
        id: ObjectId,
        what: &str,
    ) -> Result<Vec<TreeEntry>, SourceError> {
        if id.is_empty_tree() {
            return Ok(Vec::new());
        }
        let mut buf = Vec::new();
        let tree = self
            .repo
            .objects
            .find_tree_iter(&id, &mut buf)
            .map_err(|e| {
                if e.is_not_found() {
                    self.missing(id, format!("tree of {what}"))
                } else {
                    SourceError::Git {
                        message: format!("cannot read the tree of {what} ({id})"),
                        source: Box::new(e),
                    }
                }
            })?;
        let mut out = Vec::new();
        for entry in tree {
            let Ok(entry) = entry else {
                return Err(malformed_error(
                    what,
                    id,
                    "cannot be parsed (a corrupt entry)",
                ));
            };
            out.push((
                entry.filename.to_vec(),
                entry.mode.kind(),
                entry.oid.to_owned(),
            ));
        }
        if let Some(why) = malformed(&out) {
            return Err(malformed_error(what, id, &why));
        }
        Ok(out)
    }

    /// Follows `path` from the directory at the top of `stack`, the way a
    /// file system would: `..` steps up, links are read and followed.
    pub(super) fn walk(
        &self,
        mut stack: Vec<ObjectId>,
        path: &[u8],
        what: &str,
    ) -> Result<(Found, Vec<ObjectId>), SourceError> {
        let mut pending: VecDeque<Vec<u8>> = components(path).into();
        let mut hops = 0;
        while let Some(name) = pending.pop_front() {
            if name == b"." {
                // The top of the stack is always a directory: `.` stays.
                if pending.is_empty() {
                    let here = *stack.last().expect("the stack always holds the top tree");
                    return Ok((Found::Tree(here), stack));
                }
                continue;
            }
            if name == b".." {
                if stack.len() == 1 {
                    return Ok((Found::LeavesRepository, stack));
                }
                stack.pop();
                continue;
            }
            let dir = *stack.last().expect("the stack always holds the top tree");
            let entries = match self.tree_entries(dir, what) {
                Err(SourceError::Malformed { why, .. }) => {
                    let clause = match why.strip_prefix("is ") {
                        Some(rest) => format!("passes through {rest}"),
                        None => why,
                    };
                    return Ok((Found::Malformed(clause), stack));
                }
                other => other?,
            };
            let entry = entries.into_iter().find(|(n, _, _)| *n == name);
            let last = pending.is_empty();
            match entry {
                None => return Ok((Found::Missing, stack)),
                Some((_, GitKind::Tree, id)) => {
                    if stack.len() > MAX_TREE_DEPTH {
                        return Ok((Found::Malformed(crate::select::too_deep()), stack));
                    }
                    stack.push(id);
                    if last {
                        return Ok((Found::Tree(id), stack));
                    }
                }
                Some((_, GitKind::Blob | GitKind::BlobExecutable, id)) => {
                    // A file in the middle of a path is ENOTDIR: as broken as missing.
                    let found = if last {
                        Found::Blob(id)
                    } else {
                        Found::Missing
                    };
                    return Ok((found, stack));
                }
                // A checkout holds a submodule as a directory (empty until
                // initialised), so `vendor/..` works and `vendor/x` is broken.
                Some((_, GitKind::Commit, _)) if !last => {
                    stack.push(ObjectId::empty_tree(dir.kind()))
                }
                Some((_, GitKind::Commit, _)) => return Ok((Found::Submodule, stack)),
                Some((_, GitKind::Link, id)) => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Ok((Found::Loop, stack));
                    }
                    let target = match self.link_target(id, what)? {
                        Ok(target) => target,
                        Err(why) => return Ok((Found::Malformed(why), stack)),
                    };
                    if target.starts_with(b"/") {
                        return Ok((
                            Found::Absolute(String::from_utf8_lossy(&target).into_owned()),
                            stack,
                        ));
                    }
                    for part in components(&target).into_iter().rev() {
                        pending.push_front(part);
                    }
                }
            }
        }
        let here = *stack.last().expect("the stack always holds the top tree");
        Ok((Found::Tree(here), stack))
    }

    /// Where the link target `target`, read in the directory `dir` (a path
    /// below the runtime root), leads inside this tree: a file's blob id, or
    /// why it leads to no file. The entry point for sources that want a
    /// link resolved as a checkout of this tree would resolve it.
    pub(crate) fn resolve_link(
        &self,
        dir: &[u8],
        target: &[u8],
    ) -> Result<Result<ObjectId, String>, SourceError> {
        let Some(root) = self.root_stack.clone() else {
            return Ok(Err("is outside the runtime root's tree".into()));
        };
        let (_, stack) = self.walk(root, dir, "a runtime directory")?;
        if target.starts_with(b"/") {
            let shown = String::from_utf8_lossy(target).into_owned();
            return Ok(Err(link_failure(&Found::Absolute(shown))));
        }
        let (found, _) = self.walk(stack, target, "a link target")?;
        Ok(match found {
            Found::Blob(id) => Ok(id),
            other => Err(link_failure(&other)),
        })
    }
}

/// Why no checkout could hold these entries, if none could: git's fsck
/// rejects them and `git checkout` refuses them, so their bytes have no
/// agreed reading.
fn malformed(entries: &[TreeEntry]) -> Option<String> {
    let mut names: HashSet<&[u8]> = HashSet::with_capacity(entries.len());
    for (name, _, _) in entries {
        let shown = gix::bstr::BStr::new(name);
        if name.is_empty() {
            return Some("has an entry with an empty name".into());
        }
        if name == b"." || name == b".." {
            return Some(format!("has an entry named {shown:?}"));
        }
        if name.contains(&b'/') || name.contains(&0) {
            return Some(format!(
                "has an entry named {shown:?}, which holds a `/` or a NUL"
            ));
        }
        if name.eq_ignore_ascii_case(b".git") {
            return Some(format!(
                "has an entry named {shown:?}, which git refuses to check out"
            ));
        }
        if !names.insert(name) {
            return Some(format!("has two entries named {shown:?}"));
        }
    }
    None
}

fn malformed_error(what: &str, id: ObjectId, why: &str) -> SourceError {
    SourceError::Malformed {
        path: what.to_string(),
        why: format!(
            "is a malformed tree ({id}) that {why}: git fsck rejects it and a checkout \
             fails, so fpcheck does not hash it"
        ),
    }
}

pub(super) fn link_failure(found: &Found) -> String {
    match found {
        Found::Tree(_) => "points at a directory".into(),
        Found::Blob(_) => "points at a file".into(),
        Found::Missing => "is broken".into(),
        Found::Submodule => "points into a submodule".into(),
        Found::LeavesRepository => "leaves the repository".into(),
        Found::Absolute(_) => "is absolute (a checkout would read outside the repository)".into(),
        Found::Loop => "loops".into(),
        Found::Malformed(clause) => clause.clone(),
    }
}

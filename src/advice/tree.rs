//! Reading the ends' trees for the advice, through the session only.

use gix::ObjectId;

use crate::source::git::Session;

/// The most bytes of a file the advice reads (a larger one is not read).
pub(super) const FILE_LIMIT: u64 = 1 << 20;

/// The most files under a root the advice lists.
const MAX_FILES: usize = 20_000;

/// The id of the tree at `dir` (from the top) of `top`.
pub(super) fn subtree(repo: &Session, top: ObjectId, dir: &str) -> Option<ObjectId> {
    let mut id = top;
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        let tree = repo.tree(id, "a tree the advice reads", "").ok()?;
        let entries = tree.decode().ok()?;
        let entry = entries
            .entries
            .iter()
            .find(|e| e.filename == part.as_bytes() && e.mode.is_tree())?;
        id = entry.oid.to_owned();
    }
    Some(id)
}

/// The regular files directly in tree `id`: (name, blob).
pub(super) fn files_in(repo: &Session, id: ObjectId) -> Vec<(String, ObjectId)> {
    let Ok(tree) = repo.tree(id, "a tree the advice reads", "") else {
        return Vec::new();
    };
    let Ok(entries) = tree.decode() else {
        return Vec::new();
    };
    entries
        .entries
        .iter()
        .filter(|e| e.mode.is_blob())
        .filter_map(|e| {
            Some((
                std::str::from_utf8(e.filename).ok()?.to_string(),
                e.oid.to_owned(),
            ))
        })
        .collect()
}

/// Every regular file below tree `id`: (path below it, blob), sorted.
/// Subtrees equal to `skip`'s at the same path are left out when `skip`
/// is given (so two ends list only what differs). Iterative, and no
/// deeper than [`MAX_DEPTH`]: a hostile tree can be as deep as it likes.
pub(super) fn walk(
    repo: &Session,
    id: ObjectId,
    skip: Option<ObjectId>,
) -> Vec<(String, ObjectId)> {
    let mut out = Vec::new();
    let mut todo = vec![(id, skip, String::new(), 0usize)];
    while let Some((id, skip, prefix, depth)) = todo.pop() {
        if Some(id) == skip || out.len() >= MAX_FILES || depth > MAX_DEPTH {
            continue;
        }
        let entries = entries_of(repo, id);
        let other = skip.map(|s| entries_of(repo, s)).unwrap_or_default();
        for (name, oid, is_tree, is_blob) in entries {
            let path = super::join(&prefix, &name);
            let twin = other
                .iter()
                .find(|(n, ..)| *n == name)
                .map(|(_, id, ..)| *id);
            if is_tree {
                todo.push((oid, twin, path, depth + 1));
            } else if is_blob && twin != Some(oid) {
                out.push((path, oid));
            }
        }
    }
    out.sort();
    out
}

/// The deepest folder the advice looks into.
const MAX_DEPTH: usize = 64;

/// A tree's entries: (name, id, is a tree, is a regular file); none when
/// it does not read.
type Entry = (String, ObjectId, bool, bool);

fn entries_of(repo: &Session, id: ObjectId) -> Vec<Entry> {
    let Ok(tree) = repo.tree(id, "a tree the advice reads", "") else {
        return Vec::new();
    };
    let Ok(decoded) = tree.decode() else {
        return Vec::new();
    };
    decoded
        .entries
        .iter()
        .filter_map(|e| {
            let name = std::str::from_utf8(e.filename).ok()?.to_string();
            Some((name, e.oid.to_owned(), e.mode.is_tree(), e.mode.is_blob()))
        })
        .collect()
}

/// The text of blob `id` (UTF-8, at most [`FILE_LIMIT`] bytes).
pub(super) fn text(repo: &Session, id: ObjectId) -> Option<String> {
    String::from_utf8(repo.blob_within(id, FILE_LIMIT)?).ok()
}

/// The text of the file at `path` (from the top) of `top`.
pub(super) fn text_at(repo: &Session, top: ObjectId, path: &str) -> Option<String> {
    text(repo, repo.blob_at(top, path)?)
}

/// The files that differ between two trees (either may be missing):
/// (path below them, blob at the older end, blob at the newer end).
pub(super) fn changed(
    repo: &Session,
    from: Option<ObjectId>,
    to: Option<ObjectId>,
) -> Vec<(String, Option<ObjectId>, Option<ObjectId>)> {
    if from == to {
        return Vec::new();
    }
    let old: std::collections::BTreeMap<String, ObjectId> = from
        .map(|f| walk(repo, f, to).into_iter().collect())
        .unwrap_or_default();
    let new: std::collections::BTreeMap<String, ObjectId> = to
        .map(|t| walk(repo, t, from).into_iter().collect())
        .unwrap_or_default();
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| (p.clone(), old.get(p).copied(), new.get(p).copied()))
        .filter(|(_, a, b)| a != b)
        .collect()
}

//! Trees and the paths through them: reading a tree (refusing malformed
//! ones), and following a path the way a checkout's file system would,
//! `..` and symbolic links included.

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use gix::objs::tree::EntryKind as GitKind;
use gix::prelude::FindExt;
use gix::ObjectId;

use super::GitSource;
use crate::source::links::{self, Step};
use crate::source::{SourceError, MAX_TREE_DEPTH};

/// The longest link target read, as Linux's PATH_MAX: a link's blob is read
/// whole, and a hostile one may be gigabytes.
pub(super) const MAX_LINK_TARGET: u64 = 4096;

/// One entry of a tree.
pub(super) type TreeEntry = (Vec<u8>, GitKind, ObjectId);

/// A directory on a walk's stack.
#[derive(Clone)]
struct Dir {
    id: ObjectId,
    /// A submodule, seen as the empty directory a checkout holds.
    submodule: bool,
    /// Directories from the top of the repository down to it.
    depth: usize,
    /// Its path from the top of the repository (`""` for the top), when
    /// known: a walk that starts at the top or at the root knows it.
    path: Option<Rc<[u8]>>,
}

/// Why a walk stopped short of an answer.
enum Stop {
    Source(SourceError),
    /// A malformed or too-deep tree, or an oversized link target: the clause
    /// says why (it follows the path it stops).
    Malformed(String),
}

/// What a path inside a tree leads to, links followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Found {
    Tree(ObjectId),
    Blob(ObjectId),
    Missing,
    Submodule,
    LeavesRepository,
    Absolute,
    Loop,
    /// A tree on the way is malformed or too deep; the sentence says why.
    Malformed(String),
}

impl GitSource {
    /// The entries of tree `id` (`what` names it in errors). A tree that no
    /// checkout could hold (see [`malformed`]) is a
    /// [`SourceError::Malformed`]: hashing it would give an answer that
    /// depends on how each reader breaks the tie.
    /// The kind of object `id` when it exists and is not a tree.
    fn non_tree_kind(&self, id: ObjectId) -> Option<gix::object::Kind> {
        gix::odb::Header::try_header(self.repo.objects(), &id)
            .ok()
            .flatten()
            .map(|h| h.kind())
            .filter(|k| *k != gix::object::Kind::Tree)
    }

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
            .objects()
            .find_tree_iter(&id, &mut buf)
            .map_err(|e| {
                if e.is_not_found() {
                    self.missing(id, format!("tree of {what}"))
                } else if let Some(kind) = self.non_tree_kind(id) {
                    // A tree entry of directory mode that names a blob (or a
                    // commit, a tag): git cannot check it out, so the tree is
                    // malformed, which makes the fingerprint unavailable
                    // rather than stop every command.
                    malformed_error(
                        what,
                        id,
                        &format!("names a {kind}, not a tree, under a directory's mode"),
                    )
                } else {
                    SourceError::Git {
                        message: format!("cannot read the tree of {what} ({id})").into(),
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

    /// [`GitSource::tree_entries`] of a tree a path look-up steps through,
    /// kept by the session for the next look-ups: the version file, the
    /// force-restart file and the runtime root are each looked up from the
    /// top, at both ends of a range, through the same few trees (and a
    /// runtime root's tree can hold thousands of entries). A tree id names
    /// its entries, so they are shared by every source of the session.
    pub(super) fn looked_up(
        &self,
        id: ObjectId,
        what: &str,
    ) -> Result<Arc<Vec<TreeEntry>>, SourceError> {
        if let Some(entries) = self.repo.kept_tree(id) {
            return Ok(entries);
        }
        let entries = Arc::new(self.tree_entries(id, what)?);
        self.repo.keep_tree(id, &entries);
        Ok(entries)
    }

    /// Follows `path` from the directory at the top of `stack`, the way a
    /// checkout's file system would (the rules of [`links::walk`], written
    /// once for trees and working trees): `..` steps up, links are read and
    /// followed. A submodule is an empty directory, as in a checkout before
    /// it is initialised, so `vendor/..` works and `vendor/x` is broken.
    /// `watch`: a selected link is being resolved; a look-up in a tree
    /// above the runtime root is then recorded (see
    /// [`GitSource::links_left_root`]).
    pub(super) fn walk(
        &self,
        stack: Vec<ObjectId>,
        path: &[u8],
        what: &str,
        watch: bool,
    ) -> Result<(Found, Vec<ObjectId>), SourceError> {
        self.walk_paths(stack, None, path, (what, watch), &mut 0)
            .map(|(found, stack, _)| (found, stack))
    }

    /// [`GitSource::walk`], also giving the path from the top of each tree
    /// of the stack it returns (`None` where unknown); `paths`, those of
    /// `stack`'s trees when the caller knows them. `hops`: the links this
    /// lookup followed before, to which it adds its own (see
    /// [`links::walk`]).
    #[allow(clippy::type_complexity)]
    pub(super) fn walk_paths(
        &self,
        stack: Vec<ObjectId>,
        given: Option<Vec<Option<Rc<[u8]>>>>,
        path: &[u8],
        (what, watch): (&str, bool),
        hops: &mut usize,
    ) -> Result<(Found, Vec<ObjectId>, Vec<Option<Rc<[u8]>>>), SourceError> {
        let root_depth = self.root_stack.as_ref().map_or(0, |s| s.len() - 1);
        let paths = self.root_paths.borrow();
        let known = self.root_stack.as_ref() == Some(&stack) || stack.len() == 1;
        let start: Vec<Dir> = stack
            .iter()
            .enumerate()
            .map(|(depth, id)| Dir {
                id: *id,
                submodule: false,
                depth,
                path: if let Some(given) = &given {
                    given.get(depth).cloned().flatten()
                } else if depth == 0 {
                    Some(Rc::from(&b""[..]))
                } else if known {
                    paths.get(depth).cloned()
                } else {
                    None
                },
            })
            .collect();
        drop(paths);
        self.walked_file.borrow_mut().clear();
        let found = links::walk(start, path, hops, |dir: &Dir, name: &[u8]| {
            if watch && dir.depth < root_depth {
                self.left_root.set(true);
            }
            self.step(dir, name, what)
        });
        let found = match found {
            Ok(found) => found,
            Err(Stop::Source(e)) => return Err(e),
            Err(Stop::Malformed(clause)) => {
                return Ok((Found::Malformed(clause), stack, Vec::new()))
            }
        };
        Ok(match found {
            links::Found::Dir(dirs) => {
                let top = dirs.last().expect("the stack always holds the top tree");
                if top.submodule {
                    (Found::Submodule, stack, Vec::new())
                } else {
                    let id = top.id;
                    if stack.len() == 1 && self.root_stack.is_none() {
                        *self.root_paths.borrow_mut() = dirs
                            .iter()
                            .map(|d| d.path.clone().unwrap_or_default())
                            .collect();
                    }
                    let paths = dirs.iter().map(|d| d.path.clone()).collect();
                    (
                        Found::Tree(id),
                        dirs.into_iter().map(|d| d.id).collect(),
                        paths,
                    )
                }
            }
            links::Found::File(id) => (Found::Blob(id), stack, Vec::new()),
            links::Found::Missing | links::Found::Other => (Found::Missing, stack, Vec::new()),
            links::Found::LeavesRepository => (Found::LeavesRepository, stack, Vec::new()),
            links::Found::Absolute => (Found::Absolute, stack, Vec::new()),
            links::Found::Loop => (Found::Loop, stack, Vec::new()),
        })
    }

    /// One name looked up in one tree, for [`links::walk`].
    fn step(&self, dir: &Dir, name: &[u8], what: &str) -> Result<Step<Dir, ObjectId>, Stop> {
        let entries = match self.looked_up(dir.id, what) {
            Err(SourceError::Malformed { why, .. }) => {
                return Err(Stop::Malformed(match why.strip_prefix("is ") {
                    Some(rest) => format!("passes through {rest}"),
                    None => why,
                }))
            }
            other => other.map_err(Stop::Source)?,
        };
        let child = |id, submodule| {
            if dir.depth + 1 > MAX_TREE_DEPTH {
                return Err(Stop::Malformed(crate::source::too_deep()));
            }
            Ok(Step::Dir(Dir {
                id,
                submodule,
                depth: dir.depth + 1,
                path: dir.path.as_ref().map(|p| join(p, name)),
            }))
        };
        match entries
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, k, id)| (*k, *id))
        {
            None => Ok(Step::Missing),
            Some((GitKind::Tree, id)) => child(id, false),
            Some((GitKind::Blob | GitKind::BlobExecutable, id)) => {
                let mut walked = self.walked_file.borrow_mut();
                walked.clear();
                if let Some(p) = &dir.path {
                    walked.extend_from_slice(&join(p, name));
                }
                Ok(Step::File(id))
            }
            Some((GitKind::Commit, _)) => child(ObjectId::empty_tree(dir.id.kind()), true),
            Some((GitKind::Link, id)) => match self.link_target(id, what) {
                Ok(Ok(target)) => Ok(Step::Link(target)),
                Ok(Err(why)) => Err(Stop::Malformed(why)),
                Err(e) => Err(Stop::Source(e)),
            },
        }
    }

    /// Where the link target `target`, read in the directory `dir` (a path
    /// below the runtime root), leads inside this tree: a file's blob id, or
    /// why it leads to no file. The entry point for sources that want a
    /// link resolved as a checkout of this tree would resolve it.
    pub(crate) fn resolve_link(
        &self,
        dir: &[u8],
        target: &[u8],
    ) -> Result<Result<(ObjectId, Vec<u8>), String>, SourceError> {
        if target.starts_with(b"/") {
            return Ok(Err(link_failure(&Found::Absolute)));
        }
        let Some(root) = self.root_stack.clone() else {
            return Ok(Err("is outside the runtime root's tree".into()));
        };
        // One lookup of the link's path, as the kernel counts it: the links
        // on the way to the root, the selected link itself, then its
        // target's.
        let mut hops = self.root_links + 1;
        let (stack, paths) =
            match self.walk_paths(root, None, dir, ("a runtime directory", true), &mut hops)? {
                (Found::Tree(_), stack, paths) => (stack, paths),
                (other, _, _) => return Ok(Err(link_failure(&other))),
            };
        let (found, _, _) = self.walk_paths(
            stack,
            Some(paths),
            target,
            ("a link target", true),
            &mut hops,
        )?;
        Ok(match found {
            Found::Blob(id) => {
                // The target's path as the tree names it (UTF-8 or not):
                // its attributes are matched on these bytes.
                let path = self.walked_file.borrow().clone();
                if path.is_empty() {
                    return Ok(Err("could not be placed in its tree".into()));
                }
                self.note_target_path(&path)?;
                Ok((id, path))
            }
            other => Err(link_failure(&other)),
        })
    }
}

/// `name` in the directory at `dir` (from the top).
fn join(dir: &[u8], name: &[u8]) -> Rc<[u8]> {
    if dir.is_empty() {
        Rc::from(name)
    } else {
        let mut p = Vec::with_capacity(dir.len() + 1 + name.len());
        p.extend_from_slice(dir);
        p.push(b'/');
        p.extend_from_slice(name);
        Rc::from(p)
    }
}

/// Why no checkout could hold these entries, if none could: git's fsck
/// rejects them and `git checkout` refuses them, so their bytes have no
/// agreed reading.
fn malformed(entries: &[TreeEntry]) -> Option<String> {
    // Trees as git writes them (sorted, names checked as they come) need
    // no set of names; only the others are looked at closely.
    if super::scan::well_formed(entries.iter().map(|(name, kind, _)| (&name[..], *kind))) {
        return None;
    }
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
        Found::Absolute => "is absolute (a checkout would read outside the repository)".into(),
        Found::Loop => "loops".into(),
        Found::Malformed(clause) => clause.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::source::git::test_git as git;
    use crate::source::git::{GitSource, Revision, Session};
    use std::path::Path;

    fn fingerprint(root: &Path) -> Option<String> {
        let repo = Session::open(Some(root)).unwrap();
        let rev = Revision::parse(&repo, "HEAD").unwrap();
        let src = GitSource::new(repo, rev, "src").unwrap();
        crate::fingerprint::compute(&src, &crate::select::Rules::default())
            .unwrap()
            .digest
    }

    fn rev_parse(root: &Path, spec: &str) -> String {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .args(["rev-parse", spec])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// `git replace` is never read (an installer's clone has no replace
    /// refs): a replacement made after a look-up changes nothing, in a
    /// fresh thread or in the one whose look-ups kept the trees.
    #[test]
    fn a_tree_replaced_after_a_look_up_is_still_read_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), b"a = 1\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "one"]);
        let one = rev_parse(root, "HEAD^{tree}");
        std::fs::write(root.join("src/a.py"), b"a = 2\n").unwrap();
        git(root, &["commit", "-q", "-am", "two"]);
        let two = rev_parse(root, "HEAD^{tree}");

        let before = fingerprint(root);
        git(root, &["replace", &two, &one]);
        let path = root.to_path_buf();
        let fresh = std::thread::spawn(move || fingerprint(&path))
            .join()
            .unwrap();
        assert_eq!(fresh, before, "the replacement is not read");
        assert_eq!(fingerprint(root), before);
    }
}

//! A tree at a revision of a git repository, read through gix: no checkout,
//! no `git` process, and only the objects the answer needs (so partial clones
//! and mirrors without their large assets work).
//!
//! By concern: [`session`] holds one repository for one run, through
//! which every object is read; [`repo`] opens the repository and resolves
//! revisions (tag peeling bounded, `git replace` cycles named); [`tree`]
//! reads trees (malformed ones refused) and follows paths and links
//! through them;
//! [`blob`] reads blobs with memory that does not grow with their size;
//! [`attributes`] warns about `.gitattributes` conversions; [`scan`] proves,
//! cheaply, that a root's selection depends on its tree alone.

use std::cell::{Cell, OnceCell, RefCell};

use gix::objs::tree::EntryKind as GitKind;
use gix::ObjectId;

use super::{Entry, EntryKind, MetaFile, Node, Origin, RootState, Source, SourceError, Target};
use crate::source::{display_path, SelectedFile};
use crate::warning::Warning;

mod attr_text;
mod attributes;
mod blob;
pub(crate) mod memo;
mod repo;
mod scan;
mod session;
mod tree;

pub(crate) use attributes::checkout_of;
pub use repo::{
    open_repo, peel_tag, peel_to_commit, repo_display, tag_refs, Revision, TagRef, TagTarget,
};
pub use scan::{ScanRule, ScanStep};
pub use session::Session;
use tree::{link_failure, Found};

/// A path from the top of the repository, as its trees name it: bytes,
/// UTF-8 or not. `.gitattributes` patterns match these bytes, as git's do
/// (never a lossy UTF-8 reading of them, which would match other paths).
type TopPath = Vec<u8>;

/// A runtime root's tree as the selection depends on it: two ends with
/// equal ones (under the same rules) select the same list unless a
/// selected link looks above the root ([`GitSource::links_left_root`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootTree {
    /// The root's tree id.
    pub id: ObjectId,
    /// Its depth from the top of the repository.
    pub depth: usize,
    /// The links its path followed: they count towards the kernel's limit
    /// on every lookup below the root, a selected link's included.
    pub links: usize,
}

/// The runtime root inside a tree at a revision.
pub struct GitSource {
    /// Every object is read through it.
    repo: Session,
    /// The object database for runtime files, made on first use (see
    /// [`GitSource::runtime_objects`]).
    blobs: OnceCell<gix::OdbHandle>,
    rev: Revision,
    root: String,
    /// The trees from the top of the repository down to the root, links in
    /// the root's path already followed; `None` when the root is no tree.
    root_stack: Option<Vec<ObjectId>>,
    /// The links the root's path followed: a lookup below the root counts
    /// them too (see [`crate::source::links::walk`]).
    root_links: usize,
    root_state: RootState,
    /// The `.gitattributes` files seen below the root (path from the top,
    /// blob id), for the attribute check.
    gitattributes: RefCell<Vec<(TopPath, ObjectId)>>,
    /// A selected link's resolution looked inside a tree above the root
    /// (see [`GitSource::links_left_root`]).
    left_root: Cell<bool>,
    buf: RefCell<Vec<u8>>,
    /// The `.gitattributes` on the way to selected links' targets.
    target_attributes: RefCell<std::collections::BTreeMap<TopPath, ObjectId>>,
    /// The attribute look-up and filters of a checkout, once needed.
    checkout: RefCell<Option<attributes::Checkout>>,
    /// Files whose checkout bytes differ from their blobs', by the id of
    /// the checkout's bytes.
    converted: RefCell<std::collections::HashMap<ObjectId, attributes::Converted>>,
    /// The path (from the top) of the file the last walk ended on.
    walked_file: RefCell<Vec<u8>>,
    /// The path from the top of each tree of `root_stack`.
    root_paths: RefCell<Vec<std::rc::Rc<[u8]>>>,
    /// The `.gitattributes` above the root, once looked up.
    above_root: OnceCell<Vec<(TopPath, ObjectId)>>,
    /// What the walk met that a checkout writes through more than a blob
    /// (see [`GitSource::unusual`]): noted as it reads, never looked for.
    met: Cell<Met>,
}

/// Features of a tree the selection walk met, whose checkout fpcheck
/// emulates rather than copies blob for blob.
#[derive(Clone, Copy, Debug, Default)]
struct Met {
    /// A selected entry is a symbolic link, or the root is reached
    /// through one.
    link: bool,
    /// A submodule in a directory the walk read.
    submodule: bool,
    /// A name that is not UTF-8 in a directory the walk read.
    non_utf8: bool,
}

impl GitSource {
    /// The tree at `rev`, rooted at `root` (a path from the top of the
    /// repository, e.g. `src`; `""` or `.` for the top itself).
    pub fn new(repo: Session, rev: Revision, root: &str) -> Result<Self, SourceError> {
        let root = crate::source::normalise_root(root);
        let mut source = GitSource {
            repo,
            blobs: OnceCell::new(),
            rev,
            root,
            root_stack: None,
            root_links: 0,
            root_state: RootState::Missing,
            gitattributes: RefCell::new(Vec::new()),
            left_root: Cell::new(false),
            buf: RefCell::new(Vec::new()),
            target_attributes: RefCell::default(),
            checkout: RefCell::new(None),
            converted: RefCell::default(),
            walked_file: RefCell::default(),
            root_paths: RefCell::default(),
            above_root: OnceCell::new(),
            met: Cell::new(Met::default()),
        };
        let top = vec![source.rev.tree];
        let mut links = 0;
        let (found, stack, _) = source.walk_paths(
            top,
            None,
            source.root.as_bytes(),
            ("the runtime root", false),
            &mut links,
        )?;
        source.root_links = links;
        source.root_state = match found {
            Found::Tree(id) => {
                source.root_stack = Some(stack);
                // A root reached through a link (or `..`) has another real
                // path than its name.
                let real = source.root_paths.borrow().last().cloned();
                if real.is_some_and(|r| *r != *source.root.as_bytes()) {
                    source.note(|m| m.link = true);
                }
                RootState::Dir(Node::Object(id))
            }
            Found::Blob(_) => RootState::NotADirectory,
            Found::Missing => RootState::Missing,
            Found::Submodule => RootState::Unresolvable("is a submodule".into()),
            Found::Malformed(why) => RootState::Unresolvable(why),
            other => {
                RootState::Unresolvable(format!("is a symbolic link that {}", link_failure(&other)))
            }
        };
        Ok(source)
    }

    /// Whether resolving a selected link so far looked up a name in a tree
    /// above the runtime root. Until one does, the selection is a function
    /// of the root's tree, its depth and the rules alone: two ends with
    /// the same root tree id (at the same depth, under the same rules)
    /// then select the same list of (path, blob id).
    pub fn links_left_root(&self) -> bool {
        self.left_root.get()
    }

    /// Why this tree's checkout is more than its blobs, as far as the walk
    /// so far saw: a `.gitattributes` that can apply, a selected symbolic
    /// link (or a root reached through one), a submodule or a name that is
    /// not UTF-8 where the walk read; `None` for an ordinary tree, whose
    /// checkout writes each blob's bytes as stored. Costs nothing beyond
    /// the look-up of the `.gitattributes` above the root, which the
    /// attribute check makes anyway.
    pub fn unusual(&self) -> Result<Option<&'static str>, SourceError> {
        let met = self.met.get();
        Ok(if self.may_have_attributes()? {
            Some("a .gitattributes can apply to its runtime or version files")
        } else if met.link {
            Some("a symbolic link is in or leads to its selection")
        } else if met.submodule {
            Some("a submodule is under its runtime root")
        } else if met.non_utf8 {
            Some("a name under its runtime root is not UTF-8")
        } else {
            None
        })
    }

    fn note(&self, f: impl FnOnce(&mut Met)) {
        let mut met = self.met.get();
        f(&mut met);
        self.met.set(met);
    }

    /// The runtime root's tree, where it stands, and the links its path
    /// followed, when the root is a tree.
    pub fn root_tree(&self) -> Option<RootTree> {
        match (&self.root_state, &self.root_stack) {
            (RootState::Dir(Node::Object(id)), Some(stack)) => Some(RootTree {
                id: *id,
                depth: stack.len() - 1,
                links: self.root_links,
            }),
            _ => None,
        }
    }

    /// Whether the selection walk saw a `.gitattributes` below the root.
    pub fn saw_gitattributes(&self) -> bool {
        !self.gitattributes.borrow().is_empty() || !self.target_attributes.borrow().is_empty()
    }

    /// Takes what `other`'s selection walk saw below the root (its
    /// `.gitattributes` files), for an end whose selection is known to be
    /// `other`'s (same root path, tree and rules) without walking it again.
    pub fn adopt_walk(&self, other: &GitSource) {
        debug_assert_eq!(self.root, other.root);
        *self.gitattributes.borrow_mut() = other.gitattributes.borrow().clone();
        let theirs = other.met.get();
        self.note(|m| {
            m.link |= theirs.link;
            m.submodule |= theirs.submodule;
            m.non_utf8 |= theirs.non_utf8;
        });
    }

    /// The version a release tag names, when the revision was given as a
    /// tag (`v1.21.0`, `refs/tags/v1.21.0`, a monorepo's `server-v1.21.0`)
    /// that names a version and points
    /// at this revision's commit.
    pub fn tag_version(&self) -> Option<String> {
        let name = self
            .rev
            .spec
            .strip_prefix("refs/tags/")
            .unwrap_or(&self.rev.spec);
        let version = crate::version::parse_tag(name)
            .or_else(|| crate::version::parse_prefixed(name).map(|(_, v)| v))?;
        let mut tag = self
            .repo
            .repo()
            .find_reference(&format!("refs/tags/{name}"))
            .ok()?;
        let commit = tag.peel_to_commit().ok()?.id;
        (Some(commit) == self.rev.commit).then(|| version.to_string())
    }

    /// The revision this source reads.
    pub fn revision(&self) -> &Revision {
        &self.rev
    }

    /// The session's missing-object error, for an object of this revision.
    fn missing(&self, id: ObjectId, what: String) -> SourceError {
        self.repo.missing(id, &what, &self.rev.spec)
    }

    /// A path below the root as a path from the top of the repository,
    /// through the root's real path: a root reached through a link
    /// (`src -> a/b/c`) is where a checkout writes its files, and the
    /// `.gitattributes` of `a/b` apply to them, not those of `src`.
    /// Its bytes as the trees name them: the real path need not be UTF-8.
    fn full_path(&self, rel: &[u8]) -> TopPath {
        let paths = self.root_paths.borrow();
        let real: &[u8] = match paths.last() {
            Some(real) if self.root_stack.is_some() => real,
            _ => self.root.as_bytes(),
        };
        let mut full = real.to_vec();
        if !full.is_empty() && !rel.is_empty() {
            full.push(b'/');
        }
        full.extend_from_slice(rel);
        full
    }

    /// A selected file as a checkout writes it: blob `blob` at `path`
    /// (from the top of the repository).
    fn checkout_target(&self, blob: ObjectId, path: &[u8]) -> Result<Target, SourceError> {
        let bytes = match self.checkout_bytes(blob, path) {
            // A `.gitattributes` too large to read: the checkout's bytes
            // cannot be known.
            Err(SourceError::Unreadable { path, why }) => {
                return Ok(Target::Unavailable(format!(
                    ": its attributes cannot be read ({path} {why})"
                )))
            }
            other => other?,
        };
        Ok(match bytes {
            attributes::CheckoutBytes::Blob => Target::File(Node::Object(blob)),
            attributes::CheckoutBytes::Converted(id) => Target::File(Node::Object(id)),
            attributes::CheckoutBytes::Unavailable(why) => Target::Unavailable(why),
        })
    }

    fn display(&self, rel: &[u8]) -> String {
        display_path(&self.root_display(), rel)
    }

    /// The file `name` in the root (or its parent), as [`Source::read_meta`]
    /// gives it: as a checkout writes it (`checkout`), the gate's reading,
    /// or as stored (the text `patch` edits, which is what is committed).
    fn meta(
        &self,
        name: &str,
        in_parent: bool,
        checkout: bool,
    ) -> Result<Option<MetaFile>, SourceError> {
        let Some(path) = super::meta_path(&self.root, name, in_parent) else {
            return Ok(None);
        };
        let (found, _) = self.walk(vec![self.rev.tree], path.as_bytes(), &path, false)?;
        let id = match found {
            Found::Blob(id) => id,
            // A checkout holds a directory there, which the installed
            // reading (`--dir`, the gate) reports: so do the commit and
            // `--worktree`, in the same words.
            Found::Tree(_) | Found::Submodule => {
                return Ok(Some(MetaFile {
                    display: path,
                    bytes: Vec::new(),
                    problem: Some(crate::safe_io::ReadError::NotRegular("directory").to_string()),
                }))
            }
            // Nothing there, or a malformed tree on the way (which makes
            // the root, on the same path, unresolvable too).
            _ => return Ok(None),
        };
        // Where the walk ended, links followed: a checkout writes the file
        // there, converted by that path's attributes (none: as stored).
        let real = if checkout {
            self.walked_file.borrow().clone()
        } else {
            Vec::new()
        };
        Ok(Some(
            match self.small_blob(id, &path, crate::safe_io::JSON_LIMIT)? {
                Ok(stored) => match self.meta_checkout(id, &real, stored, &path)? {
                    Ok(bytes) => MetaFile {
                        display: path,
                        bytes,
                        problem: None,
                    },
                    Err(problem) => MetaFile {
                        display: path,
                        bytes: Vec::new(),
                        problem: Some(problem),
                    },
                },
                // Too large to read whole: what it says cannot be ruled out.
                Err(size) => MetaFile {
                    display: path,
                    bytes: Vec::new(),
                    problem: Some(format!(
                        "is {size} bytes, more than the {} bytes a version file may have",
                        crate::safe_io::JSON_LIMIT
                    )),
                },
            },
        ))
    }

    /// The file `name` in the root as stored in the tree, links followed:
    /// the committed text, which `patch` edits.
    pub fn stored_meta(&self, name: &str) -> Result<Option<MetaFile>, SourceError> {
        self.meta(name, false, false)
    }
}

impl Source for GitSource {
    fn root_display(&self) -> String {
        crate::source::show_root(&self.root).to_string()
    }

    fn root(&self) -> Result<RootState, SourceError> {
        Ok(self.root_state.clone())
    }

    fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
        let Node::Object(id) = dir else {
            unreachable!("a git source only hands out object ids")
        };
        let what = if rel.is_empty() {
            self.root_display()
        } else {
            self.display(rel)
        };
        let entries = self.tree_entries(*id, &what)?;
        let mut out = Vec::with_capacity(entries.len());
        for (name, kind, oid) in entries {
            if attributes::is_attribute_file(&name, kind) {
                let path = self.full_path(rel);
                self.gitattributes
                    .borrow_mut()
                    .push((attributes::attribute_file_in(&path), oid));
            }
            if kind == GitKind::Commit {
                self.note(|m| m.submodule = true);
            }
            if !name.is_ascii() && std::str::from_utf8(&name).is_err() {
                self.note(|m| m.non_utf8 = true);
            }
            let kind = match kind {
                GitKind::Tree => EntryKind::Dir,
                GitKind::Blob | GitKind::BlobExecutable => EntryKind::File,
                GitKind::Link => EntryKind::Symlink,
                GitKind::Commit => EntryKind::Submodule,
            };
            out.push(Entry {
                name,
                kind,
                node: Node::Object(oid),
            });
        }
        Ok(out)
    }

    fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError> {
        if entry.kind == EntryKind::File {
            let Node::Object(blob) = entry.node else {
                unreachable!("a git source only hands out object ids")
            };
            return self.checkout_target(blob, &self.full_path(rel));
        }
        let Node::Object(link) = entry.node else {
            unreachable!("a git source only hands out object ids")
        };
        self.note(|m| m.link = true);
        let what = self.display(rel);
        let target = match self.link_target(link, &what)? {
            Ok(target) => target,
            Err(why) => return Ok(Target::Unavailable(format!(": symlink whose {why}"))),
        };
        let shown = String::from_utf8_lossy(&target).into_owned();
        let dir = rel
            .iter()
            .rposition(|b| *b == b'/')
            .map_or(&rel[..0], |i| &rel[..i]);
        Ok(match self.resolve_link(dir, &target)? {
            Ok((id, path)) => match self.checkout_target(id, &path)? {
                Target::Unavailable(why) => {
                    Target::Unavailable(format!(": symlink to {shown}, whose target{why}"))
                }
                found => found,
            },
            Err(why) => Target::Unavailable(format!(": symlink to {shown} {why}")),
        })
    }

    fn read(
        &self,
        rel: &str,
        content: &Node,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let Node::Object(id) = content else {
            unreachable!("a git source only hands out object ids")
        };
        let what = self.display(rel.as_bytes());
        self.read_blob(self.runtime_objects(), *id, &what, sink)
    }

    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError> {
        self.meta(name, in_parent, true)
    }

    fn origin(&self) -> Origin {
        Origin::Git {
            repo: repo_display(self.repo.repo()),
            rev: self.rev.spec.clone(),
            commit: self.rev.commit.map(|c| c.to_string()),
            tree: self.rev.tree.to_string(),
        }
    }

    fn root_depth(&self) -> usize {
        self.root_stack.as_ref().map_or(0, |s| s.len() - 1)
    }

    fn warnings(&self, files: &[SelectedFile]) -> Result<Vec<Warning>, SourceError> {
        if files.is_empty() || !self.may_have_attributes()? {
            return Ok(Vec::new());
        }
        self.attribute_warnings(files)
    }
}

/// `git` for unit tests that build a repository: no user or system
/// config, a fixed identity, links as links, no automatic repacking.
#[cfg(test)]
pub(crate) fn test_git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(["-c", "init.defaultBranch=main", "-c", "core.symlinks=true"])
        .args(["-c", "gc.auto=0"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

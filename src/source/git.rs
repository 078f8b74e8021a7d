//! A tree at a revision of a git repository, read through gix: no checkout,
//! no `git` process, and only the objects the answer needs (so partial clones
//! and mirrors without their large assets work).

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use gix::objs::tree::EntryKind as GitKind;
use gix::prelude::FindExt;
use gix::ObjectId;

use super::{Entry, EntryKind, MetaFile, Node, Origin, RootState, Source, SourceError, Target};
use crate::select::{display_path, SelectedFile};

/// How many symbolic links one lookup may follow, as Linux allows.
const MAX_LINK_HOPS: usize = 40;

/// Opens the repository at `path`, or around the current directory.
pub fn open_repo(path: Option<&Path>) -> Result<gix::Repository, SourceError> {
    let start = match path {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().map_err(|e| {
            SourceError::Repository(format!("cannot read the current directory: {e}"))
        })?,
    };
    if path.is_some() && !start.exists() {
        return Err(SourceError::Repository(format!(
            "{} does not exist: pass --repo with the path of a git repository",
            start.display()
        )));
    }
    let mut repo = gix::discover(&start).map_err(|e| {
        SourceError::Repository(format!(
            "{} is not in a git repository ({e}): run fpcheck inside one, or pass --repo PATH",
            start.display()
        ))
    })?;
    // Tags of one project share most blobs through deltas; a pack cache
    // saves re-inflating their bases.
    repo.object_cache_size_if_unset(4 << 20);
    Ok(repo)
}

/// A revision resolved to the tree fpcheck reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    /// The revision as the user gave it.
    pub spec: String,
    /// The commit it names; `None` for a tree spec such as `v1.0^{tree}`.
    pub commit: Option<ObjectId>,
    /// The tree at that revision.
    pub tree: ObjectId,
}

impl Revision {
    /// Resolves `spec` (tag, branch, commit id, `HEAD~3`, `v1^{tree}`...).
    pub fn parse(repo: &gix::Repository, spec: &str) -> Result<Revision, SourceError> {
        let id = repo
            .rev_parse_single(spec)
            .map_err(|e| unknown_revision(repo, spec, &e))?;
        let object = repo
            .find_object(id)
            .map_err(|_| missing_commit(repo, spec, id.detach()))?;
        let (commit, tree) = match object.kind {
            gix::object::Kind::Tree => (None, object.id),
            gix::object::Kind::Blob => {
                return Err(SourceError::Repository(format!(
                    "revision `{spec}` names a file ({}), not a commit or tree: name a tag, branch or commit",
                    object.id
                )))
            }
            _ => {
                let commit = object.peel_to_commit().map_err(|e| {
                    SourceError::Repository(format!(
                        "revision `{spec}` does not lead to a commit: {e}; if this is a shallow \
                         or partial clone, fetch it (`git fetch --depth=1 origin {spec}`)"
                    ))
                })?;
                let tree = commit.tree_id().map_err(|e| {
                    SourceError::Repository(format!("commit {} of `{spec}` has no tree: {e}", commit.id))
                })?;
                (Some(commit.id), tree.detach())
            }
        };
        Ok(Revision {
            spec: spec.to_string(),
            commit,
            tree,
        })
    }
}

fn unknown_revision(repo: &gix::Repository, spec: &str, err: &gix::Error) -> SourceError {
    let unborn = repo.head().map(|h| h.is_unborn()).unwrap_or(false);
    if unborn {
        return SourceError::Repository(format!(
            "{} has no commits yet, so `{spec}` names nothing: commit first, or use --dir PATH for a directory",
            repo_display(repo)
        ));
    }
    let shallow = repo.is_shallow().unwrap_or(false);
    let hint = if shallow {
        format!(
            "this clone is shallow, so it may lack that history: fetch it \
             (`git fetch --depth=1 origin tag {spec}`, or `git fetch --unshallow`)"
        )
    } else {
        "name a tag, branch or commit (`git tag --list` shows the tags)".to_string()
    };
    // gix's own words say which part failed (`HEAD~5`: too few ancestors).
    let detail = err.to_string().replace('\n', " ");
    SourceError::Repository(format!(
        "unknown revision `{spec}` in {}: {hint} ({detail})",
        repo_display(repo)
    ))
}

fn missing_commit(repo: &gix::Repository, spec: &str, id: ObjectId) -> SourceError {
    SourceError::MissingObject {
        what: format!("the object `{spec}` points at"),
        id,
        hint: format!(
            "{} is probably a shallow or partial clone: fetch it, e.g. `git fetch --depth=1 origin tag {spec}`",
            repo_display(repo)
        ),
    }
}

/// The path of the repository as a user would name it.
pub fn repo_display(repo: &gix::Repository) -> String {
    repo.workdir()
        .unwrap_or_else(|| repo.git_dir())
        .display()
        .to_string()
}

/// What a path inside a tree leads to, links followed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Found {
    Tree(ObjectId),
    Blob(ObjectId),
    Missing,
    Submodule,
    LeavesRepository,
    Absolute(String),
    Loop,
}

/// The runtime root inside a tree at a revision.
pub struct GitSource {
    repo: gix::Repository,
    /// The object database for runtime files, made on first use (see
    /// [`GitSource::runtime_objects`]).
    blobs: OnceCell<gix::OdbHandle>,
    rev: Revision,
    root: String,
    /// The trees from the top of the repository down to the root, links in
    /// the root's path already followed; `None` when the root is no tree.
    root_stack: Option<Vec<ObjectId>>,
    root_state: RootState,
    saw_gitattributes: Cell<bool>,
    buf: RefCell<Vec<u8>>,
}

impl GitSource {
    /// The tree at `rev`, rooted at `root` (a path from the top of the
    /// repository, e.g. `src`; `""` or `.` for the top itself).
    pub fn new(repo: gix::Repository, rev: Revision, root: &str) -> Result<Self, SourceError> {
        let root = normalise_root(root);
        let mut source = GitSource {
            repo,
            blobs: OnceCell::new(),
            rev,
            root,
            root_stack: None,
            root_state: RootState::Missing,
            saw_gitattributes: Cell::new(false),
            buf: RefCell::new(Vec::new()),
        };
        let top = vec![source.rev.tree];
        let (found, stack) = source.walk(top, source.root.as_bytes(), "the runtime root")?;
        source.root_state = match found {
            Found::Tree(id) => {
                source.root_stack = Some(stack);
                RootState::Dir(Node::Object(id))
            }
            Found::Blob(_) => RootState::NotADirectory,
            Found::Missing => RootState::Missing,
            Found::Submodule => RootState::Unresolvable("is a submodule".into()),
            other => {
                RootState::Unresolvable(format!("is a symbolic link that {}", link_failure(&other)))
            }
        };
        Ok(source)
    }

    /// The revision this source reads.
    pub fn revision(&self) -> &Revision {
        &self.rev
    }

    fn tree_entries(
        &self,
        id: ObjectId,
        what: &str,
    ) -> Result<Vec<(Vec<u8>, GitKind, ObjectId)>, SourceError> {
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
                    SourceError::Repository(format!("cannot read the tree of {what} ({id}): {e}"))
                }
            })?;
        let mut out = Vec::new();
        for entry in tree {
            let entry = entry.map_err(|e| {
                SourceError::Repository(format!("the tree of {what} ({id}) is corrupt: {e}"))
            })?;
            out.push((
                entry.filename.to_vec(),
                entry.mode.kind(),
                entry.oid.to_owned(),
            ));
        }
        Ok(out)
    }

    fn missing(&self, id: ObjectId, what: String) -> SourceError {
        SourceError::MissingObject {
            what,
            id,
            hint: format!(
                "{} may be a partial or shallow clone: fetch the revision in full \
                 (`git fetch origin {}`) or run fpcheck in a complete clone",
                repo_display(&self.repo),
                self.rev.spec
            ),
        }
    }

    fn blob(&self, id: ObjectId, what: &str) -> Result<Vec<u8>, SourceError> {
        let mut buf = Vec::new();
        self.read_blob(&self.repo.objects, id, what, &mut |bytes| {
            buf.extend_from_slice(bytes)
        })?;
        Ok(buf)
    }

    /// The object database the runtime files are read through: a handle of
    /// its own, without the object cache and the pack cache that trees, links
    /// and version files keep (a tree is read again on each walk from the
    /// top, and its delta chain is long). The runtime files of a tree are
    /// each read once: the object cache would copy every blob into itself
    /// (heap to fault in; a 200 MB blob copied whole and kept), and the pack
    /// cache would keep delta bases that no other file of the tree shares.
    /// Measured in bench/ (300-file fingerprint, one process): 15.9 ms with
    /// both caches, 12.9 ms without the object cache, 11.0 ms without either,
    /// at the newest tag and at the oldest alike. Made on first use, so that
    /// an answer from tree objects alone does not pay for the handle.
    fn runtime_objects(&self) -> &gix::OdbHandle {
        self.blobs.get_or_init(|| {
            let mut odb = self.repo.objects.clone();
            odb.unset_object_cache();
            odb.unset_pack_cache();
            odb
        })
    }

    fn read_blob(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let mut buf = self.buf.borrow_mut();
        let blob = odb.find_blob(&id, &mut buf).map_err(|e| {
            if e.is_not_found() {
                self.missing(id, format!("the blob of {what}"))
            } else {
                SourceError::Repository(format!("cannot read the blob of {what} ({id}): {e}"))
            }
        })?;
        sink(blob.data);
        Ok(())
    }

    /// Follows `path` from the directory at the top of `stack`, the way a
    /// file system would: `..` steps up, links are read and followed.
    fn walk(
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
            let entry = self
                .tree_entries(dir, what)?
                .into_iter()
                .find(|(n, _, _)| *n == name);
            let last = pending.is_empty();
            match entry {
                None => return Ok((Found::Missing, stack)),
                Some((_, GitKind::Tree, id)) => {
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
                    let target = self.blob(id, what)?;
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

    /// The trees from the top down to the directory holding `rel`.
    fn stack_for(&self, rel: &[u8]) -> Result<Vec<ObjectId>, SourceError> {
        let root = self
            .root_stack
            .clone()
            .expect("entries exist only below a root tree");
        let dir = match rel.iter().rposition(|b| *b == b'/') {
            Some(i) => &rel[..i],
            None => return Ok(root),
        };
        let (_, stack) = self.walk(root, dir, "a runtime directory")?;
        Ok(stack)
    }

    fn display(&self, rel: &[u8]) -> String {
        display_path(&self.root_display(), rel)
    }
}

fn normalise_root(root: &str) -> String {
    let parts: Vec<&str> = root
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    parts.join("/")
}

/// The segments of a link target or path. A trailing `/` becomes a final
/// `.`: like `x/.`, it demands that `x` be a directory (a file there is
/// ENOTDIR on disk), so it must not be dropped.
fn components(path: &[u8]) -> Vec<Vec<u8>> {
    let mut parts: Vec<Vec<u8>> = path
        .split(|b| *b == b'/')
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if path.ends_with(b"/") && !parts.is_empty() {
        parts.push(b".".to_vec());
    }
    parts
}

fn link_failure(found: &Found) -> String {
    match found {
        Found::Tree(_) => "points at a directory".into(),
        Found::Blob(_) => "points at a file".into(),
        Found::Missing => "is broken".into(),
        Found::Submodule => "points into a submodule".into(),
        Found::LeavesRepository => "leaves the repository".into(),
        Found::Absolute(_) => "is absolute (a checkout would read outside the repository)".into(),
        Found::Loop => "loops".into(),
    }
}

impl Source for GitSource {
    fn root_display(&self) -> String {
        if self.root.is_empty() {
            ".".into()
        } else {
            self.root.clone()
        }
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
            if name == b".gitattributes" {
                self.saw_gitattributes.set(true);
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
            return Ok(Target::File(entry.node.clone()));
        }
        let Node::Object(link) = entry.node else {
            unreachable!("a git source only hands out object ids")
        };
        let what = self.display(rel);
        let target = self.blob(link, &what)?;
        let shown = String::from_utf8_lossy(&target).into_owned();
        if target.starts_with(b"/") {
            return Ok(Target::Unavailable(format!(
                ": symlink to {shown} {}",
                link_failure(&Found::Absolute(shown.clone()))
            )));
        }
        let (found, _) = self.walk(self.stack_for(rel)?, &target, &what)?;
        Ok(match found {
            Found::Blob(id) => Target::File(Node::Object(id)),
            other => Target::Unavailable(format!(": symlink to {shown} {}", link_failure(&other))),
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
        let odb = self.runtime_objects();
        if self.stream_large(odb, *id, &what, sink)? {
            return Ok(());
        }
        self.read_blob(odb, *id, &what, sink)
    }

    fn read_meta(&self, name: &str, in_parent: bool) -> Result<Option<MetaFile>, SourceError> {
        let dir = if in_parent {
            if self.root.is_empty() {
                return Ok(None); // the parent of the top is outside the repository
            }
            match self.root.rfind('/') {
                Some(i) => self.root[..i].to_string(),
                None => String::new(),
            }
        } else {
            self.root.clone()
        };
        let path = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        let (found, _) = self.walk(vec![self.rev.tree], path.as_bytes(), &path)?;
        match found {
            Found::Blob(id) => Ok(Some(MetaFile {
                display: path.clone(),
                bytes: self.blob(id, &path)?,
                problem: None,
            })),
            _ => Ok(None),
        }
    }

    fn origin(&self) -> Origin {
        Origin::Git {
            repo: repo_display(&self.repo),
            rev: self.rev.spec.clone(),
            commit: self.rev.commit.map(|c| c.to_string()),
            tree: self.rev.tree.to_string(),
        }
    }

    fn warnings(&self, files: &[SelectedFile]) -> Result<Vec<String>, SourceError> {
        if files.is_empty() || !self.may_have_attributes()? {
            return Ok(Vec::new());
        }
        self.attribute_warnings(files)
    }
}

/// Runtime files at least this large are streamed into the hash in pieces
/// when git stores them whole (a loose object, or a pack entry that is not a
/// delta), so that memory stays flat in the size of the largest file; below
/// it, inflating in one piece is faster. A delta needs its base whole, in
/// git as here, and is always inflated whole.
const STREAM_AT: u64 = 8 << 20;

/// The pieces a large file is read and inflated in.
const PIECE: usize = 1 << 20;

impl GitSource {
    /// Streams the blob `id` into `sink` in pieces when it is large and
    /// stored whole; `Ok(false)` (nothing sent) when it is not, or cannot be
    /// found where it should be (an alternate object store): the caller then
    /// inflates it whole. Measured in bench/: a 177 MB runtime file added
    /// 221 MiB to the peak RSS of a fingerprint when inflated whole, and
    /// 2 MiB when streamed; a header lookup per file costs nothing measurable.
    fn stream_large(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<bool, SourceError> {
        // Errors here are left to the whole read, which reports them.
        let Ok(Some(header)) = gix::odb::Header::try_header(odb, &id) else {
            return Ok(false);
        };
        if header.kind() != gix::object::Kind::Blob
            || header.size() < STREAM_AT
            || header.num_deltas().unwrap_or(0) > 0
        {
            return Ok(false);
        }
        let objects = odb.store_ref().path();
        let mut sent = false;
        let mut counting = |bytes: &[u8]| {
            sent = true;
            sink(bytes)
        };
        let streamed = match header.num_deltas() {
            Some(_) => stream_packed(objects, id, header.size(), &mut counting),
            None => stream_loose(objects, id, header.size(), &mut counting),
        };
        match streamed {
            Ok(done) => Ok(done),
            // Nothing reached the hash yet: the whole read may still work.
            Err(_) if !sent => Ok(false),
            Err(e) => Err(SourceError::Repository(format!(
                "cannot read the blob of {what} ({id}): {e}"
            ))),
        }
    }
}

/// Streams a blob stored whole in one of the packs under `objects`.
fn stream_packed(
    objects: &Path,
    id: ObjectId,
    size: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let pack_dir = objects.join("pack");
    for entry in std::fs::read_dir(&pack_dir)? {
        let idx = entry?.path();
        if idx.extension().is_none_or(|e| e != "idx") {
            continue;
        }
        let Ok(index) = gix::odb::pack::index::File::at(&idx, id.kind()) else {
            continue;
        };
        let Some(i) = index.lookup(id) else {
            continue;
        };
        let offset = index.pack_offset_at_index(i);
        let mut pack = std::fs::File::open(idx.with_extension("pack"))?;
        pack.seek(SeekFrom::Start(offset))?;
        let head = gix::odb::pack::data::Entry::from_read(
            &mut std::io::BufReader::with_capacity(64, &mut pack),
            offset,
            id.kind().len_in_bytes(),
        )?;
        if head.header != gix::odb::pack::data::entry::Header::Blob
            || head.decompressed_size != size
        {
            return Ok(false);
        }
        pack.seek(SeekFrom::Start(head.data_offset))?;
        inflate_stream(&mut pack, size, b"", sink)?;
        return Ok(true);
    }
    Ok(false)
}

/// Streams a loose blob: a zlib stream of `blob SIZE NUL bytes`.
fn stream_loose(
    objects: &Path,
    id: ObjectId,
    size: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<bool> {
    let hex = id.to_hex().to_string();
    let Ok(mut file) = std::fs::File::open(objects.join(&hex[..2]).join(&hex[2..])) else {
        return Ok(false);
    };
    let header = format!("blob {size}\0");
    inflate_stream(&mut file, size, header.as_bytes(), sink)?;
    Ok(true)
}

/// Inflates the zlib stream in `input` piece by piece into `sink`, after
/// checking that it starts with `prefix` (a loose object's header, left out),
/// and that `size` bytes follow.
fn inflate_stream(
    input: &mut dyn std::io::Read,
    size: u64,
    prefix: &[u8],
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<()> {
    use gix::zlib::{Decompress, FlushDecompress, Status};
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut z = Decompress::new();
    let (mut inbuf, mut out) = (vec![0u8; PIECE], vec![0u8; PIECE]);
    let (mut start, mut end) = (0, 0);
    let (mut matched, mut sent) = (0, 0u64);
    loop {
        if start == end {
            end = input.read(&mut inbuf)?;
            start = 0;
            if end == 0 {
                return Err(bad("the object ends early"));
            }
        }
        let (read, written) = (z.total_in(), z.total_out());
        let status = z
            .decompress(&inbuf[start..end], &mut out, FlushDecompress::None)
            .map_err(|e| bad(&e.to_string()))?;
        start += usize::try_from(z.total_in() - read).expect("at most a piece");
        let mut produced =
            &out[..usize::try_from(z.total_out() - written).expect("at most a piece")];
        let n = (prefix.len() - matched).min(produced.len());
        if produced[..n] != prefix[matched..matched + n] {
            return Err(bad("the object's header is not the one expected"));
        }
        matched += n;
        produced = &produced[n..];
        if !produced.is_empty() {
            sent += produced.len() as u64;
            if sent > size {
                return Err(bad("the object is longer than its header says"));
            }
            sink(produced);
        }
        match status {
            Status::StreamEnd => break,
            Status::Ok => {}
            Status::BufError if start == end => {} // more input needed
            Status::BufError => return Err(bad("the object is corrupt")),
        }
    }
    if matched != prefix.len() || sent != size {
        return Err(bad("the object is shorter than its header says"));
    }
    Ok(())
}

/// Attributes that make a checkout's bytes differ from the stored blob.
const CONVERTING_ATTRIBUTES: [&str; 5] = ["text", "eol", "crlf", "filter", "working-tree-encoding"];

impl GitSource {
    /// Whether any `.gitattributes` can apply: building the attribute stack
    /// costs an index of the whole tree, so look for the files first.
    fn may_have_attributes(&self) -> Result<bool, SourceError> {
        if self.saw_gitattributes.get() {
            return Ok(true);
        }
        let info = self.repo.common_dir().join("info").join("attributes");
        if info.is_file() {
            return Ok(true);
        }
        let Some(stack) = &self.root_stack else {
            return Ok(false);
        };
        for tree in &stack[..stack.len() - 1] {
            if self
                .tree_entries(*tree, "a directory above the runtime root")?
                .iter()
                .any(|(name, _, _)| name == b".gitattributes")
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn attribute_warnings(&self, files: &[SelectedFile]) -> Result<Vec<String>, SourceError> {
        let fail = |e: gix::Error| {
            SourceError::Repository(format!(
                "cannot read .gitattributes at `{}`: {e}",
                self.rev.spec
            ))
        };
        let index = self.repo.index_from_tree(&self.rev.tree).map_err(fail)?;
        let mut stack = self
            .repo
            .attributes_only(
                &index,
                gix::worktree::stack::state::attributes::Source::IdMapping,
            )
            .map_err(fail)?;
        let mut out = stack.selected_attribute_matches(CONVERTING_ATTRIBUTES);
        // "filter=lfs" -> the runtime files it applies to
        let mut hits: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for file in files {
            let full = if self.root.is_empty() {
                file.path.clone()
            } else {
                format!("{}/{}", self.root, file.path)
            };
            let platform = stack.at_entry(full.as_str(), None).map_err(fail)?;
            platform.matching_attributes(&mut out);
            for m in out.iter_selected() {
                let name = m.assignment.name.as_str();
                let setting = match m.assignment.state {
                    gix::attrs::StateRef::Set => name.to_string(),
                    gix::attrs::StateRef::Value(v) => format!("{name}={}", v.as_bstr()),
                    gix::attrs::StateRef::Unset | gix::attrs::StateRef::Unspecified => continue,
                };
                hits.entry(setting).or_default().push(full.clone());
            }
        }
        Ok(hits
            .into_iter()
            .map(|(setting, paths)| {
                let n = paths.len();
                let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
                let more = if n > 3 {
                    format!(" and {} more", n - 3)
                } else {
                    String::new()
                };
                format!(
                    ".gitattributes at `{}` sets {setting} on {n} runtime file{} ({}{more}): \
                     a checkout may hold other bytes than the stored blobs fpcheck hashes",
                    self.rev.spec,
                    if n == 1 { "" } else { "s" },
                    shown.join(", ")
                )
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(["-c", "init.defaultBranch=main", "-c", "gc.auto=0"])
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

    fn expected(files: &[(&str, &[u8])]) -> String {
        let mut h = Sha256::new();
        for (path, bytes) in files {
            h.update(path.as_bytes());
            h.update([0]);
            h.update(bytes);
            h.update([b'\n']);
        }
        hex::encode(h.finalize())
    }

    fn fingerprint(repo: &Path, rev: &str) -> Option<String> {
        let repo = open_repo(Some(repo)).unwrap();
        let rev = Revision::parse(&repo, rev).unwrap();
        let src = GitSource::new(repo, rev, "src").unwrap();
        crate::fingerprint::compute(&src, &crate::select::Rules::default())
            .unwrap()
            .digest
    }

    /// Whether `rev:src/big.py` is streamed rather than read whole.
    fn streamed(repo: &Path, rev: &str) -> bool {
        let repo = open_repo(Some(repo)).unwrap();
        let id = repo
            .rev_parse_single(format!("{rev}:src/big.py").as_str())
            .unwrap()
            .detach();
        let rev = Revision::parse(&repo, rev).unwrap();
        let src = GitSource::new(repo, rev, "src").unwrap();
        src.stream_large(src.runtime_objects(), id, "big.py", &mut |_| {})
            .unwrap()
    }

    /// Files above STREAM_AT are streamed when stored whole (loose, or a
    /// pack base) and read whole as deltas: the digest is the same.
    #[test]
    fn large_files_stream_from_loose_objects_and_packs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("src")).unwrap();
        let size = usize::try_from(STREAM_AT).unwrap() + 3 * PIECE + 17;
        let mut big: Vec<u8> = (0..size).map(|i| b"abcdefghij\n"[i * 7 % 11]).collect();
        big[size / 2] = b'#';
        std::fs::write(root.join("src/big.py"), &big).unwrap();
        std::fs::write(root.join("src/a.py"), b"a = 1\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "one"]);
        let one = expected(&[("a.py", b"a = 1\n"), ("big.py", &big)]);
        assert_eq!(
            fingerprint(root, "HEAD").as_deref(),
            Some(one.as_str()),
            "loose"
        );
        assert!(streamed(root, "HEAD"), "a large loose blob is streamed");
        let mut big2 = big.clone();
        big2[size - 5] = b'!';
        std::fs::write(root.join("src/big.py"), &big2).unwrap();
        git(root, &["commit", "-q", "-a", "-m", "two"]);
        git(root, &["repack", "-a", "-d", "-q"]);
        let two = expected(&[("a.py", b"a = 1\n"), ("big.py", &big2)]);
        // One version is a pack base (streamed), the other a delta on it.
        assert_eq!(
            fingerprint(root, "HEAD~1").as_deref(),
            Some(one.as_str()),
            "packed, first"
        );
        assert_eq!(
            fingerprint(root, "HEAD").as_deref(),
            Some(two.as_str()),
            "packed, second"
        );
        assert!(
            streamed(root, "HEAD~1") != streamed(root, "HEAD"),
            "the pack base is streamed, the delta read whole"
        );
    }

    #[test]
    fn a_truncated_stream_is_an_error_not_a_short_file() {
        let data: Vec<u8> = (0..3 * PIECE).map(|i| (i % 251) as u8).collect();
        let mut z = Vec::new();
        {
            use std::io::Write;
            let mut w = gix::zlib::stream::deflate::Write::new(
                &mut z,
                gix::zlib::Compression::new(1).unwrap(),
            );
            w.write_all(&data).unwrap();
            w.flush().unwrap();
        }
        let mut got = Vec::new();
        inflate_stream(&mut z.as_slice(), data.len() as u64, b"", &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, data);
        let cut = &z[..z.len() - 10];
        assert!(inflate_stream(&mut &cut[..], data.len() as u64, b"", &mut |_| {}).is_err());
        assert!(
            inflate_stream(&mut z.as_slice(), data.len() as u64 + 1, b"", &mut |_| {}).is_err()
        );
        assert!(
            inflate_stream(&mut z.as_slice(), data.len() as u64 - 3, b"x", &mut |_| {}).is_err()
        );
    }
}

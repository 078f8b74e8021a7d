//! `.gitattributes`: a revision's fingerprint is of the bytes a fresh
//! checkout writes (docs/spec.md section 4), so the conversions git applies
//! on checkout (`ident`, `text`, `eol`, `crlf`, `working-tree-encoding`, and
//! macros that set them) are applied here too, through gix's filter
//! pipeline, with git's defaults on Linux and the attributes of the
//! revision's own tree alone. A filter driver (`filter=lfs`) is never run:
//! a selected file that names one has no known bytes.

use std::collections::{BTreeMap, HashMap};

use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind as GitKind;
use gix::ObjectId;

use super::{attr_text, GitSource, TopPath};
use crate::source::SelectedFile;
use crate::source::SourceError;
use crate::warning::{Code, Warning};

/// The largest `.gitattributes` read: gix reads the file whole.
const MAX_ATTRIBUTES: u64 = crate::safe_io::JSON_LIMIT;

/// The most bytes of `.gitattributes` one checkout reads in all, a file
/// counted at each path it stands at: the same blob at 100,000 paths is
/// matched 100,000 times over, by git too. Real trees hold kilobytes.
const MAX_ATTRIBUTES_TOTAL: u64 = 4 * MAX_ATTRIBUTES;

impl GitSource {
    /// The `.gitattributes` files that can apply to runtime files: in the
    /// directories above the root and in those the selection walked (path
    /// from the top, blob id).
    fn attribute_files(&self) -> Result<Vec<(TopPath, ObjectId)>, SourceError> {
        let mut found = match self.above_root.get() {
            Some(above) => above.clone(),
            None => {
                let above = self.attribute_files_above_root()?;
                self.above_root.get_or_init(|| above).clone()
            }
        };
        found.extend(self.gitattributes.borrow().iter().cloned());
        Ok(found)
    }

    /// The `.gitattributes` files in the directories above the root, each
    /// at the path the walk to the root went through (the root's path may
    /// pass through links and `..`, so its own segments do not name the
    /// trees above it). Never found by a tree's id: two directories with
    /// the same content (a copy beside the real one) have the same id, and
    /// only the walked one's `.gitattributes` applies.
    fn attribute_files_above_root(&self) -> Result<Vec<(TopPath, ObjectId)>, SourceError> {
        let mut found = Vec::new();
        let Some(stack) = &self.root_stack else {
            return Ok(found);
        };
        let paths = self.root_paths.borrow().clone();
        for (depth, tree) in stack[..stack.len() - 1].iter().enumerate() {
            let Some(dir) = paths.get(depth) else {
                // Every tree of the root's stack has its path: the walk
                // to the root starts at the top.
                break;
            };
            let entries = self.tree_entries(*tree, "a directory above the runtime root")?;
            if let Some((_, _, id)) = entries
                .iter()
                .find(|(name, kind, _)| is_attribute_file(name, *kind))
            {
                found.push((attribute_file_in(dir), *id));
            }
        }
        Ok(found)
    }

    /// Whether any `.gitattributes` of this tree is known to apply (above
    /// the root, below it where the walk went, on the way to a selected
    /// link's target). `info/attributes` is not read: an installer's clone
    /// has none.
    pub(crate) fn may_have_attributes(&self) -> Result<bool, SourceError> {
        Ok(!self.known_attribute_files()?.is_empty())
    }

    pub(super) fn attribute_warnings(
        &self,
        files: &[SelectedFile],
    ) -> Result<Vec<Warning>, SourceError> {
        // "eol=crlf" -> the runtime files it applies to
        let mut hits: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for file in files {
            let full = if self.root.is_empty() {
                file.path.clone()
            } else {
                format!("{}/{}", self.root, file.path)
            };
            // Looked up where a checkout writes the file: the root's real
            // path (which may pass through links, and need not be UTF-8).
            let at = self.full_path(file.path.as_bytes());
            let settings = match self.with_checkout(|_, co| co.settings_at(&at)) {
                // The fingerprint is unavailable for the same reason.
                Err(SourceError::Unreadable { .. }) => return Ok(Vec::new()),
                other => other?.unwrap_or_default(),
            };
            for setting in settings {
                hits.entry(setting).or_default().push(full.clone());
            }
        }
        Ok(hits
            .into_iter()
            .map(|(setting, paths)| {
                let n = paths.len();
                Warning::new(
                    Code::GitattributesConversion,
                    format!(
                        ".gitattributes at `{}` sets {setting} on {n} runtime file{} ({}): \
                     the fingerprint is of the bytes a checkout writes, converted as git does",
                        self.rev.spec,
                        if n == 1 { "" } else { "s" },
                        crate::warning::some_paths(&paths)
                    ),
                )
            })
            .collect())
    }
}

/// The attributes a checkout's conversions read (gix's filter pipeline
/// looks at the same list).
const CHECKOUT_ATTRIBUTES: [&str; 6] = [
    "crlf",
    "ident",
    "filter",
    "eol",
    "text",
    "working-tree-encoding",
];

/// The largest runtime file converted: a conversion needs the file whole.
const MAX_CONVERTED: u64 = super::blob::WHOLE_LIMIT;

/// The converted files' bytes kept between the selection and the hash, at
/// most this much in all; beyond it a file is converted again when read.
const KEEP_CONVERTED: usize = 64 << 20;

/// A file whose checkout bytes differ from its blob's.
pub(super) struct Converted {
    /// The stored blob.
    pub(super) blob: ObjectId,
    /// The path its attributes were looked up at (from the top).
    pub(super) path: TopPath,
    /// What fpcheck does itself around gix's pipeline.
    pub(super) steps: Steps,
    /// The checkout's bytes, when kept.
    pub(super) bytes: Option<std::sync::Arc<Vec<u8>>>,
}

/// The attribute look-up and filter pipeline of one tree, rebuilt when
/// more `.gitattributes` files are known.
pub(super) struct Checkout {
    stack: gix::worktree::Stack,
    outcome: gix::attrs::search::Outcome,
    pipeline: gix::filter::plumbing::Pipeline,
    /// Each attribute file as git reads it, by the id given it in the
    /// stack's index: the stack reads these, never the stored blobs.
    views: HashMap<ObjectId, Vec<u8>>,
    /// How many attribute files the stack was built from.
    files: usize,
    kept: usize,
}

impl Checkout {
    /// The attributes of the file at `path` (from the top) in the
    /// checkout's outcome.
    fn match_at(&mut self, path: &[u8]) -> Result<(), SourceError> {
        let views = Views(&self.views);
        let platform = self
            .stack
            .at_entry(path.as_bstr(), Some(gix::index::entry::Mode::FILE), &views)
            .map_err(|e| SourceError::Git {
                message: format!("cannot read .gitattributes for {}", path.as_bstr()).into(),
                source: Box::new(e),
            })?;
        platform.matching_attributes(&mut self.outcome);
        Ok(())
    }

    /// The settings that change a checkout's bytes on the file at `path`
    /// (`eol=crlf`, `ident`), as a note names them; a filter driver is
    /// reported as unavailable instead.
    fn settings_at(&mut self, path: &[u8]) -> Result<Vec<String>, SourceError> {
        self.match_at(path)?;
        Ok(self
            .outcome
            .iter_selected()
            .filter(|m| m.assignment.name.as_str() != "filter")
            .filter_map(|m| {
                let name = m.assignment.name.as_str();
                match m.assignment.state {
                    gix::attrs::StateRef::Set => Some(name.to_string()),
                    gix::attrs::StateRef::Value(v) => Some(format!("{name}={}", v.as_bstr())),
                    gix::attrs::StateRef::Unset | gix::attrs::StateRef::Unspecified => None,
                }
            })
            .collect())
    }
}

/// The objects the attribute stack reads: git's view of each attribute
/// file, by the id the stack's index gives it, and nothing else.
struct Views<'a>(&'a HashMap<ObjectId, Vec<u8>>);

impl gix::objs::Find for Views<'_> {
    fn try_find<'a>(
        &self,
        id: &gix::oid,
        buffer: &'a mut Vec<u8>,
    ) -> gix::Result<Option<gix::objs::Data<'a>>> {
        Ok(self.0.get(id).map(|bytes| {
            buffer.clear();
            buffer.extend_from_slice(bytes);
            gix::objs::Data::new(buffer, gix::objs::Kind::Blob, id.kind())
        }))
    }
}

/// Whether a tree entry is a `.gitattributes` git reads on checkout: a
/// file, or a link, whose stored text (its target) git reads from the
/// index as the attributes, never following it.
pub(super) fn is_attribute_file(name: &[u8], kind: GitKind) -> bool {
    name == b".gitattributes"
        && matches!(
            kind,
            GitKind::Blob | GitKind::BlobExecutable | GitKind::Link
        )
}

/// What a checkout of one file holds.
pub(super) enum CheckoutBytes {
    /// The blob's own bytes.
    Blob,
    /// Other bytes, named by the id git would give them as a blob.
    Converted(ObjectId),
    /// No agreed bytes: a sentence fragment after the path.
    Unavailable(String),
}

impl GitSource {
    /// Every known `.gitattributes` that can apply: above the root, below
    /// it where the walk went, and on the way to selected links' targets.
    fn known_attribute_files(&self) -> Result<Vec<(TopPath, ObjectId)>, SourceError> {
        let mut all = self.attribute_files()?;
        all.extend(
            self.target_attributes
                .borrow()
                .iter()
                .map(|(p, id)| (p.clone(), *id)),
        );
        all.sort();
        all.dedup();
        Ok(all)
    }

    /// Records the `.gitattributes` of each directory from the top down to
    /// the file at `path` (a real path from the top: no links in it; its
    /// bytes as the tree names them, UTF-8 or not).
    pub(super) fn note_target_path(&self, path: &[u8]) -> Result<(), SourceError> {
        let mut tree = self.rev.tree;
        let mut dir: TopPath = Vec::new();
        let parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
        for (i, part) in parts.iter().enumerate() {
            let entries = self.looked_up(tree, "a directory of a link target")?;
            if let Some((_, _, attr)) = entries
                .iter()
                .find(|(name, kind, _)| is_attribute_file(name, *kind))
            {
                self.target_attributes
                    .borrow_mut()
                    .insert(attribute_file_in(&dir), *attr);
            }
            if i + 1 == parts.len() {
                break;
            }
            match entries
                .iter()
                .find(|(name, kind, _)| name == part && *kind == GitKind::Tree)
            {
                Some((_, _, id)) => tree = *id,
                None => break,
            }
            if !dir.is_empty() {
                dir.push(b'/');
            }
            dir.extend_from_slice(part);
        }
        Ok(())
    }

    /// The attribute state of a checkout with the attribute files `files`
    /// (path from the top, blob id), matched as git matches them.
    fn build_checkout(&self, files: Vec<(TopPath, ObjectId)>) -> Result<Checkout, SourceError> {
        let n = files.len();
        let (index, views) = self.attribute_index(files)?;
        let stack = self.attribute_stack(&index)?;
        let mut outcome = gix::attrs::search::Outcome::default();
        outcome.initialize_with_selection(&Default::default(), CHECKOUT_ATTRIBUTES);
        // git's defaults on Linux: no `core.autocrlf`, `core.eol` lf, no
        // filter driver configured (none is ever run).
        let pipeline = gix::filter::plumbing::Pipeline::new(
            Default::default(),
            self.repo.repo().object_hash(),
            Default::default(),
        );
        Ok(Checkout {
            stack,
            outcome,
            pipeline,
            views,
            files: n,
            kept: 0,
        })
    }

    /// An index of the attribute files `files` for the stack to read
    /// them through, each standing for its view (the blob as git reads
    /// it, see [`GitSource::git_view`]), and those views by the ids the
    /// index gives them. Each blob is read once, whatever the paths it
    /// stands at, and all of them within the bounds of [`attribute_bounds`].
    fn attribute_index(
        &self,
        files: Vec<(TopPath, ObjectId)>,
    ) -> Result<(gix::index::State, HashMap<ObjectId, Vec<u8>>), SourceError> {
        let mut index = gix::index::State::new(self.repo.repo().object_hash());
        let mut views = HashMap::new();
        let mut view_of: HashMap<ObjectId, ObjectId> = HashMap::new();
        let mut total: u64 = 0;
        for (at, id) in files {
            let path = at.as_bstr().to_string();
            let size = self.blob_size(self.repo.objects(), id, &path)?;
            total = total.saturating_add(size);
            if let Some(why) = attribute_bounds(size, total) {
                return Err(SourceError::Unreadable { path, why });
            }
            let view_id = match view_of.get(&id) {
                Some(view_id) => *view_id,
                None => {
                    let view = self.git_view(&path, id)?;
                    let view_id = gix::objs::compute_hash(
                        self.repo.repo().object_hash(),
                        gix::object::Kind::Blob,
                        &view,
                    )
                    .map_err(|e| SourceError::Git {
                        message: format!("cannot hash {path}").into(),
                        source: Box::new(e),
                    })?;
                    views.insert(view_id, view);
                    view_of.insert(id, view_id);
                    view_id
                }
            };
            push_attribute_file(&mut index, &at, view_id);
        }
        index.sort_entries();
        Ok((index, views))
    }

    /// The stack that matches a path against the attribute files of
    /// `index`.
    fn attribute_stack(
        &self,
        index: &gix::index::State,
    ) -> Result<gix::worktree::Stack, SourceError> {
        // The tree's own `.gitattributes` only, with git's built-in macro
        // (`binary`): no `info/attributes`, no `core.attributesFile`, which
        // an installer's clone elsewhere does not have.
        let mut collection = gix::attrs::search::MetadataCollection::default();
        let globals = gix::attrs::Search::new_globals(
            std::iter::empty::<std::path::PathBuf>(),
            &mut Vec::new(),
            &mut collection,
        )
        .map_err(|e| SourceError::Git {
            message: "cannot set up git's attribute macros".into(),
            source: Box::new(e),
        })?;
        let state = gix::worktree::stack::State::AttributesStack(
            gix::worktree::stack::state::Attributes::new(
                globals,
                None,
                gix::worktree::stack::state::attributes::Source::IdMapping,
                collection,
            ),
        );
        let case = gix::glob::pattern::Case::Sensitive;
        let mappings = state.id_mappings_from_index(index, index.path_backing(), case);
        Ok(gix::worktree::Stack::new(
            self.repo.repo().git_dir(),
            state,
            case,
            Vec::with_capacity(512),
            mappings,
        ))
    }

    /// The `.gitattributes` blob `id` at `path` as git reads it on
    /// checkout; unreadable when it has a pattern fpcheck will not match.
    fn git_view(&self, path: &str, id: ObjectId) -> Result<Vec<u8>, SourceError> {
        let mut raw = Vec::new();
        self.inflate_whole(self.repo.objects(), id, path, &mut |b| {
            raw.extend_from_slice(b)
        })?;
        let view = attr_text::as_git_reads(&raw);
        match attr_text::costly_pattern(&view) {
            None => Ok(view),
            Some(c) => Err(SourceError::Unreadable {
                path: path.to_string(),
                why: format!(
                    "has the pattern `{}` with {} runs of `*`, {} of them `**` (fpcheck matches \
                     at most {} and {}): matching it can take exponential time, in git too, so \
                     the bytes a checkout writes cannot be known",
                    c.pattern,
                    c.wildcards,
                    c.double_stars,
                    attr_text::MAX_WILDCARDS,
                    attr_text::MAX_DOUBLE_STARS
                ),
            }),
        }
    }

    /// The checkout's attribute state, up to date with every known
    /// `.gitattributes`; `None` when there is none (bytes are the blobs').
    fn with_checkout<T>(
        &self,
        f: impl FnOnce(&GitSource, &mut Checkout) -> Result<T, SourceError>,
    ) -> Result<Option<T>, SourceError> {
        let files = self.known_attribute_files()?;
        if files.is_empty() {
            return Ok(None);
        }
        let mut slot = self.checkout.borrow_mut();
        if slot.as_ref().is_none_or(|c| c.files != files.len()) {
            let kept = slot.as_ref().map_or(0, |c| c.kept);
            let mut fresh = self.build_checkout(files)?;
            fresh.kept = kept;
            *slot = Some(fresh);
        }
        f(self, slot.as_mut().expect("just made")).map(Some)
    }

    /// What a checkout writes for blob `blob` at `path` (from the top).
    pub(super) fn checkout_bytes(
        &self,
        blob: ObjectId,
        path: &[u8],
    ) -> Result<CheckoutBytes, SourceError> {
        let out = self.with_checkout(|src, co| {
            co.match_at(path)?;
            match checkout_steps(co) {
                Ok(Some(steps)) => src.converted_checkout(co, blob, path, steps),
                Ok(None) => Ok(CheckoutBytes::Blob),
                Err(why) => Ok(CheckoutBytes::Unavailable(why)),
            }
        })?;
        Ok(out.unwrap_or(CheckoutBytes::Blob))
    }

    /// The bytes a checkout writes for `blob` at `path`, whose attributes
    /// (matched in `co`) convert it: converted here, within
    /// [`MAX_CONVERTED`], and remembered under the id git would give them
    /// as a blob, so that the fingerprint can read them back by that id.
    fn converted_checkout(
        &self,
        co: &mut Checkout,
        blob: ObjectId,
        path: &[u8],
        steps: Steps,
    ) -> Result<CheckoutBytes, SourceError> {
        let what = format!("{} (as a checkout writes it)", path.as_bstr());
        let size = self.blob_size(self.runtime_objects(), blob, &what)?;
        if size > MAX_CONVERTED {
            return Ok(CheckoutBytes::Unavailable(format!(
                ": its attributes convert it on checkout, and fpcheck converts at most \
                 {MAX_CONVERTED} bytes (it is {size})"
            )));
        }
        let mut data = Vec::with_capacity(size as usize);
        self.inflate_whole(self.runtime_objects(), blob, &what, &mut |b| {
            data.extend_from_slice(b)
        })?;
        let converted = match convert(co, self, &data, path, steps) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(CheckoutBytes::Blob),
            Err(why) => return Ok(CheckoutBytes::Unavailable(why)),
        };
        let id = gix::objs::compute_hash(
            self.repo.repo().object_hash(),
            gix::object::Kind::Blob,
            &converted,
        )
        .map_err(|e| SourceError::Git {
            message: format!("cannot hash {what}").into(),
            source: Box::new(e),
        })?;
        // Past the memory budget only the recipe is kept: the bytes are
        // converted again when read.
        let bytes = (co.kept + converted.len() <= KEEP_CONVERTED).then(|| {
            co.kept += converted.len();
            std::sync::Arc::new(converted)
        });
        self.converted.borrow_mut().insert(
            id,
            Converted {
                blob,
                path: path.to_vec(),
                steps,
                bytes,
            },
        );
        Ok(CheckoutBytes::Converted(id))
    }

    /// The stored blob behind `id`, an id [`GitSource::checkout_bytes`]
    /// gave (itself, when the checkout writes the blob's own bytes).
    pub fn stored_blob(&self, id: ObjectId) -> ObjectId {
        self.converted.borrow().get(&id).map_or(id, |c| c.blob)
    }

    /// The checkout's bytes of a file [`GitSource::checkout_bytes`] found
    /// converted, when `id` names one.
    pub(super) fn converted_bytes(
        &self,
        id: ObjectId,
        what: &str,
    ) -> Result<Option<std::sync::Arc<Vec<u8>>>, SourceError> {
        let (blob, path, steps) = match self.converted.borrow().get(&id) {
            None => return Ok(None),
            Some(Converted { bytes: Some(b), .. }) => return Ok(Some(b.clone())),
            Some(c) => (c.blob, c.path.clone(), c.steps),
        };
        let mut data = Vec::new();
        self.inflate_whole(self.runtime_objects(), blob, what, &mut |b| {
            data.extend_from_slice(b)
        })?;
        let out = self.with_checkout(|src, co| match convert(co, src, &data, &path, steps) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Ok(data.clone()),
            Err(why) => Err(SourceError::Unreadable {
                path: what.to_string(),
                why: why.trim_start_matches(": ").to_string(),
            }),
        })?;
        Ok(out.map(std::sync::Arc::new))
    }
}

impl GitSource {
    /// The bytes a checkout writes for a file the gate reads besides the
    /// runtime (`version.json`, `package.json`): blob `blob`, whose bytes
    /// are `stored`, at `real` (its path from the top, links followed;
    /// `""` when unknown), converted by the attributes of that path as
    /// runtime files are. `Err`: why they cannot be known (a filter driver,
    /// an encoding fpcheck does not write, attributes it cannot read, or
    /// converted bytes past `JSON_LIMIT`), which the caller reports as an
    /// unreadable version file: a restart. Read in a source of its own, so
    /// that the runtime's attribute state is not changed by it.
    pub(super) fn meta_checkout(
        &self,
        blob: ObjectId,
        real: &[u8],
        stored: Vec<u8>,
        what: &str,
    ) -> Result<Result<Vec<u8>, String>, SourceError> {
        if real.is_empty() {
            return Ok(Ok(stored));
        }
        let src = GitSource::new(self.repo.clone(), self.rev.clone(), "")?;
        src.note_target_path(real)?;
        let unknown = |why: &str| format!("cannot be read as a checkout writes it{why}");
        let id = match src.checkout_bytes(blob, real) {
            Ok(CheckoutBytes::Blob) => return Ok(Ok(stored)),
            Ok(CheckoutBytes::Converted(id)) => id,
            Ok(CheckoutBytes::Unavailable(why)) => return Ok(Err(unknown(&why))),
            Err(SourceError::Unreadable { path, why }) => {
                return Ok(Err(unknown(&format!(
                    ": its attributes cannot be read ({path} {why})"
                ))))
            }
            Err(e) => return Err(e),
        };
        let bytes = match src.converted_bytes(id, what) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Ok(stored)),
            Err(SourceError::Unreadable { why, .. }) => {
                return Ok(Err(unknown(&format!(": {why}"))))
            }
            Err(e) => return Err(e),
        };
        let limit = crate::safe_io::JSON_LIMIT;
        if bytes.len() as u64 > limit {
            return Ok(Err(format!(
                "is {} bytes as a checkout writes it, more than the {limit} bytes a version \
                 file may have",
                bytes.len()
            )));
        }
        Ok(Ok(bytes.as_ref().clone()))
    }
}

/// The checkout's bytes of the regular file at `path` (from the top) of
/// `tree`, whose blob is `blob`: the id git would give them, and the bytes
/// when they are not the blob's own (`None`: read the blob); `None` when
/// no checkout's bytes can be known (a filter driver, an encoding fpcheck
/// cannot reproduce), the tree cannot be read or the bytes exceed `limit`.
pub(crate) fn checkout_of(
    repo: &super::Session,
    tree: ObjectId,
    path: &str,
    blob: ObjectId,
    limit: u64,
) -> Option<(ObjectId, Option<Vec<u8>>)> {
    let rev = super::Revision {
        spec: tree.to_string(),
        commit: None,
        tree,
    };
    let src = GitSource::new(repo.clone(), rev, "").ok()?;
    src.note_target_path(path.as_bytes()).ok()?;
    let id = match src.checkout_bytes(blob, path.as_bytes()).ok()? {
        CheckoutBytes::Blob => return Some((blob, None)),
        CheckoutBytes::Converted(id) => id,
        CheckoutBytes::Unavailable(_) => return None,
    };
    let bytes = src.converted_bytes(id, path).ok()??;
    (bytes.len() as u64 <= limit).then(|| (id, Some(bytes.as_ref().clone())))
}

/// Why an attribute file of `size` bytes, bringing those read so far to
/// `total`, is more than fpcheck reads: attribute files are held in memory
/// and matched at every selected path, so they are bounded one by one and
/// in all.
fn attribute_bounds(size: u64, total: u64) -> Option<String> {
    if size > MAX_ATTRIBUTES {
        Some(format!(
            "is {size} bytes, more than the {MAX_ATTRIBUTES} fpcheck reads of a \
             .gitattributes, so the bytes a checkout writes cannot be known"
        ))
    } else if total > MAX_ATTRIBUTES_TOTAL {
        Some(format!(
            "brings the .gitattributes files on the way to the selected files past \
             {MAX_ATTRIBUTES_TOTAL} bytes in all, more than fpcheck matches, so the \
             bytes a checkout writes cannot be known"
        ))
    } else {
        None
    }
}

/// What the attributes matched in `co` ask a checkout to do to a blob's
/// bytes: `Ok(None)` when nothing (the blob is written as stored), the
/// steps fpcheck does itself otherwise, or why the bytes cannot be known
/// (a filter driver, an encoding fpcheck does not write or without a
/// name). The first attribute that makes them unknowable decides.
fn checkout_steps(co: &Checkout) -> Result<Option<Steps>, String> {
    let mut any = false;
    let mut steps = Steps {
        ident: false,
        utf16: None,
    };
    for m in co.outcome.iter_selected() {
        let (name, state) = (m.assignment.name.as_str(), m.assignment.state);
        if name == "ident" && state == gix::attrs::StateRef::Set {
            steps.ident = true;
        }
        if let ("working-tree-encoding", gix::attrs::StateRef::Value(v)) = (name, state) {
            steps.utf16 = utf16_form(&v.as_bstr().to_string())?;
        }
        if let Some(why) = refused(name, state) {
            return Err(why);
        }
        any |= converts(name, state);
    }
    Ok(any.then_some(steps))
}

/// Why an attribute makes the checkout's bytes unknowable, if it does.
fn refused(name: &str, state: gix::attrs::StateRef<'_>) -> Option<String> {
    use gix::attrs::StateRef;
    match (name, state) {
        // git refuses to check out a file whose encoding is set without a
        // name ("true/false are no valid encodings").
        ("working-tree-encoding", StateRef::Set) => Some(
            ": its attributes set working-tree-encoding without a name, which git \
             refuses to check out"
                .into(),
        ),
        ("filter", StateRef::Value(v)) => Some(format!(
            ": its attributes name the filter driver `filter={}`, a program \
             fpcheck never runs, so the bytes a checkout writes cannot be known",
            v.as_bstr()
        )),
        ("filter", StateRef::Set) => Some(
            ": its attributes set `filter` without a driver's name, which git \
             does not define"
                .into(),
        ),
        _ => None,
    }
}

/// Whether an attribute (not [`refused`]) changes the bytes a checkout
/// writes.
fn converts(name: &str, state: gix::attrs::StateRef<'_>) -> bool {
    use gix::attrs::StateRef;
    match state {
        StateRef::Unspecified => false,
        // On Linux with git's defaults a checkout changes line endings
        // only to write CRLF: `text`, `text=auto`, `eol=lf`, `crlf` alone
        // leave the blob as stored.
        StateRef::Value(v) if name == "eol" => v.as_bstr() == "crlf",
        _ if matches!(name, "text" | "crlf" | "eol") => false,
        _ => true,
    }
}

/// `data` as a checkout writes it at `path`: `None` when unchanged, or why
/// it cannot be known (a sentence fragment after the path).
fn convert(
    co: &mut Checkout,
    src: &GitSource,
    data: &[u8],
    path: &[u8],
    Steps { ident, utf16 }: Steps,
) -> Result<Option<Vec<u8>>, String> {
    use gix::filter::plumbing::pipeline::convert::{to_worktree, ToWorktreeOutcome};
    // gix writes `$Id: <id>$` where git writes `$Id: <id> $`: the `ident`
    // step is git's, done here, before gix's pipeline (which runs `ident`
    // first too, and then finds no `$Id$` left to expand).
    let expanded = if ident {
        expand_ident(src, data)?
    } else {
        None
    };
    let original = data;
    let data: &[u8] = expanded.as_deref().unwrap_or(data);
    let views = Views(&co.views);
    let stack = &mut co.stack;
    let mut lookup = |p: &gix::bstr::BStr, out: &mut gix::attrs::search::Outcome| {
        if let Ok(platform) = stack.at_entry(p, Some(gix::index::entry::Mode::FILE), &views) {
            platform.matching_attributes(out);
        }
    };
    let result = co.pipeline.convert_to_worktree(
        data,
        path.as_bstr(),
        &mut lookup,
        to_worktree::Options {
            can_delay: gix::filter::plumbing::driver::apply::Delay::Forbid,
            unknown_encoding: to_worktree::UnknownEncoding::Fail,
        },
    );
    match result {
        Ok(ToWorktreeOutcome::Unchanged(b)) | Ok(ToWorktreeOutcome::Buffer(b)) => {
            let out = encode(utf16, b)?;
            Ok((out != original).then_some(out))
        }
        Ok(ToWorktreeOutcome::Process(_)) => {
            Err(": its attributes name a filter driver, which fpcheck never runs".into())
        }
        Err(e) => Err(format!(
            ": its attributes convert it on checkout in a way fpcheck cannot reproduce ({e})"
        )),
    }
}

/// `data` with each `$Id$` expanded as git's `ident` writes it (`None`:
/// there is none), or why fpcheck does not write it.
fn expand_ident(src: &GitSource, data: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let id = gix::objs::compute_hash(src.repo.repo().object_hash(), gix::object::Kind::Blob, data)
        .map_err(|e| format!(": cannot hash it for `ident` ({e})"))?;
    let expanded = ident_to_worktree(data, &id.to_string(), MAX_CONVERTED as usize);
    // Each `$Id$` grows by the id's length: a file of them is bounded as
    // the converted bytes are, before the pipeline copies it again.
    if expanded
        .as_ref()
        .is_some_and(|e| e.len() as u64 > MAX_CONVERTED)
    {
        return Err(format!(
            ": its `ident` expansion is larger than {MAX_CONVERTED} bytes, so fpcheck does not hold it"
        ));
    }
    if expanded
        .as_ref()
        .is_some_and(|e| e.windows(4).any(|w| w == b"$Id$"))
    {
        return Err(
            ": its `ident` expansion leaves a `$Id$` that gix would expand again, \
                    so fpcheck cannot reproduce what git writes"
                .into(),
        );
    }
    Ok(expanded)
}

/// The pipeline's output `b` in the working-tree encoding `utf16` asks
/// for (as it is without one).
fn encode(utf16: Option<Utf16>, b: &[u8]) -> Result<Vec<u8>, String> {
    Ok(match utf16 {
        // gix encodes UTF-16 as UTF-8 (the WHATWG output encoding of
        // `encoding_rs`): the pipeline left the text as it was.
        // git re-encodes nothing of an empty file.
        Some(_) if b.is_empty() => Vec::new(),
        Some(form) => match std::str::from_utf8(b) {
            Ok(text) => form.encode(text),
            Err(_) => {
                return Err(": its attributes ask for working-tree-encoding UTF-16, \
                     and it is not UTF-8, which git refuses to convert"
                    .into())
            }
        },
        None => b.to_vec(),
    })
}

/// The steps of a checkout fpcheck does itself, where gix's differ from
/// git's.
#[derive(Clone, Copy)]
pub(super) struct Steps {
    /// `ident`: gix writes `$Id: <id>$`, git `$Id: <id> $`.
    ident: bool,
    /// A UTF-16 `working-tree-encoding`.
    utf16: Option<Utf16>,
}

/// The UTF-16 forms git writes on Linux (through glibc's iconv).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Utf16 {
    /// `UTF-16`: a byte-order mark, then little-endian (the machine's order
    /// on every Linux that git is built for here).
    WithBom,
    /// `UTF-16LE`.
    Le,
    /// `UTF-16BE`.
    Be,
}

impl Utf16 {
    fn encode(self, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() * 2 + 2);
        if self == Utf16::WithBom {
            out.extend_from_slice(&[0xff, 0xfe]);
        }
        for unit in text.encode_utf16() {
            match self {
                Utf16::Be => out.extend_from_slice(&unit.to_be_bytes()),
                _ => out.extend_from_slice(&unit.to_le_bytes()),
            }
        }
        out
    }
}

/// The UTF-16 form a `working-tree-encoding` names, `None` for UTF-8 (git
/// converts nothing then); `Err` (a fragment after the path) for any other
/// name. git converts with the system's iconv, whose names and tables are
/// not gix's (`encoding_rs` reads `ISO-8859-1` as windows-1252 and
/// `UTF-16-LE` as UTF-16LE, where iconv knows no such name and git writes
/// the UTF-8 bytes unchanged), so only the forms both read alike are
/// reproduced.
fn utf16_form(label: &str) -> Result<Option<Utf16>, String> {
    match label.to_ascii_lowercase().as_str() {
        "utf-16" | "utf16" => Ok(Some(Utf16::WithBom)),
        "utf-16le" | "utf16le" => Ok(Some(Utf16::Le)),
        "utf-16be" | "utf16be" => Ok(Some(Utf16::Be)),
        "utf-8" | "utf8" => Ok(None),
        _ => Err(format!(
            ": its attributes set working-tree-encoding={label}, which fpcheck does not \
             reproduce, so the bytes a checkout writes cannot be known"
        )),
    }
}

/// git's `ident` on checkout (convert.c, `ident_to_worktree`): each
/// `$Id$`, and each `$Id:...$` on one line without a space before its last
/// character, becomes `$Id: <blob id> $`. `None` when there is none. Stops
/// once the output passes `limit` bytes (the caller refuses it then).
fn ident_to_worktree(src: &[u8], id: &str, limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(src.len() + id.len() + 8);
    let mut rest = src;
    let mut changed = false;
    while let Some(d) = rest.iter().position(|b| *b == b'$') {
        if out.len() > limit {
            return Some(out);
        }
        out.extend_from_slice(&rest[..=d]);
        rest = &rest[d + 1..];
        if rest.len() < 3 || &rest[..2] != b"Id" {
            continue;
        }
        if rest[2] == b'$' {
            rest = &rest[3..];
        } else if rest[2] == b':' {
            let Some(end) = rest[3..].iter().position(|b| *b == b'$').map(|i| i + 3) else {
                break;
            };
            if rest[3..end].contains(&b'\n') {
                continue;
            }
            // A space before the last character: a foreign ident, kept.
            if end > 4 {
                if let Some(sp) = rest[4..end].iter().position(|b| *b == b' ') {
                    if 4 + sp < end - 1 {
                        continue;
                    }
                }
            }
            rest = &rest[end + 1..];
        } else {
            continue;
        }
        out.extend_from_slice(b"Id: ");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b" $");
        changed = true;
    }
    out.extend_from_slice(rest);
    changed.then_some(out)
}

/// Adds the `.gitattributes` blob `id` at `path` to `index`, the form in
/// which gix's attribute stack reads a tree's attribute files.
fn push_attribute_file(index: &mut gix::index::State, path: &[u8], id: ObjectId) {
    index.dangerously_push_entry(
        Default::default(),
        id,
        gix::index::entry::Flags::empty(),
        gix::index::entry::Mode::FILE,
        path.as_bstr(),
    );
}

/// The `.gitattributes` of the directory at `dir` (from the top, `""` for
/// the top).
pub(super) fn attribute_file_in(dir: &[u8]) -> TopPath {
    let mut path = dir.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(b".gitattributes");
    path
}

#[cfg(test)]
mod tests {
    use crate::source::git::test_git as git;
    use crate::source::git::{GitSource, Revision, Session};

    /// A root that is a link deeper than its own path: the trees above it
    /// outnumber its segments (this sliced past them and panicked).
    #[test]
    fn attributes_above_a_linked_root_are_named_by_their_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        git(top, &["init", "-q"]);
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        std::fs::write(top.join("a/b/c/x.py"), b"x = 1\n").unwrap();
        std::fs::write(top.join("a/b/.gitattributes"), b"*.py text\n").unwrap();
        std::os::unix::fs::symlink("a/b/c", top.join("src")).unwrap();
        git(top, &["add", "-A"]);
        git(top, &["commit", "-qm", "linked root"]);
        let repo = Session::open(Some(top)).unwrap();
        let rev = Revision::parse(&repo, "HEAD").unwrap();
        let src = GitSource::new(repo, rev, "src").unwrap();
        let found = src.attribute_files().unwrap();
        let paths: Vec<&[u8]> = found.iter().map(|(p, _)| p.as_slice()).collect();
        assert_eq!(paths, [b"a/b/.gitattributes"]);
    }

    /// An `ident` expansion stops once past its limit, so a file of
    /// `$Id$`s never grows beyond what the caller refuses.
    #[test]
    fn an_ident_expansion_stops_past_its_limit() {
        let id = "a".repeat(40);
        let src = "$Id$".repeat(1000);
        let out = super::ident_to_worktree(src.as_bytes(), &id, 100).unwrap();
        assert!(out.len() > 100 && out.len() < 200, "{}", out.len());
        let whole = super::ident_to_worktree(src.as_bytes(), &id, usize::MAX).unwrap();
        assert_eq!(whole.len(), 1000 * format!("$Id: {id} $").len());
    }
}

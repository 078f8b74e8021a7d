//! `A..B`: will updating from release A to release B force running clients
//! to restart, and why. Reads both ends from git objects (or the working
//! tree for B), decides with [`crate::verdict`], and explains with
//! [`crate::changes`].

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::Serialize;

use crate::cache::FingerprintCache;
use crate::changes::{self, Changes, Status, Why};
use crate::config::Runtime;
use crate::fingerprint::{self, Fingerprint};
use crate::release::{self, Release};
use crate::select::{select, Rules, Selection};
use crate::side::Side;
use crate::source::git::repo_display;
use crate::source::{DirSource, GitSource, Node, Revision, RootState, Source, SourceError};
use crate::verdict::{self, Decision, Reason};
use crate::version;
use crate::warning::Warning;

/// The JSON schema version of [`Analysis`]; bumped on breaking changes.
pub const SCHEMA_VERSION: u32 = 1;

/// The name the working tree goes by in reports.
pub const WORKTREE: &str = "WORKTREE";

/// Errors that prevent an answer. None of them may read as "no restart".
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// The repository or an object cannot be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The range is not of a form fpcheck reads.
    #[error("{0}")]
    BadRange(String),
    /// No tag to start from.
    #[error("{0}")]
    NoTag(String),
    /// The tree diff failed.
    #[error("cannot compare the trees of {from} and {to}: {message}")]
    Diff {
        /// One end.
        from: String,
        /// The other.
        to: String,
        /// gix's message.
        message: String,
    },
}

/// The two ends the user asked for, before resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSpec {
    /// `None`: the latest tag reachable from HEAD.
    pub from: Option<String>,
    /// `None`: HEAD (or the working tree with `worktree`).
    pub to: Option<String>,
}

impl RangeSpec {
    /// Parses `A..B`, `A..`, `..B` or nothing.
    pub fn parse(text: Option<&str>) -> Result<RangeSpec, RangeError> {
        let Some(text) = text else {
            return Ok(RangeSpec {
                from: None,
                to: None,
            });
        };
        if text.contains("...") {
            return Err(RangeError::BadRange(format!(
                "`{text}`: symmetric ranges (A...B) compare against a merge base; write FROM..TO with two releases"
            )));
        }
        let Some((from, to)) = text.split_once("..") else {
            return Err(RangeError::BadRange(format!(
                "`{text}` is not a range: write FROM..TO (e.g. v7.10.0..v7.11.0), FROM.. for FROM..HEAD, or nothing for the latest tag..HEAD"
            )));
        };
        let part = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Ok(RangeSpec {
            from: part(from),
            to: part(to),
        })
    }
}

/// The report context: everything a renderer or a tool needs. `--format
/// json` prints exactly this; templates receive it as their context.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Running clients are made to restart by the update, by either path.
    pub restart_required: bool,
    /// One reason code.
    pub reason: Reason,
    /// One sentence for humans.
    pub summary: String,
    /// The row of the spec's behaviour matrix this release corresponds to.
    pub matrix_row: Option<MatrixRow>,
    /// `from.version != to.version`.
    pub version_changed: bool,
    /// The fingerprints differ or either is unavailable.
    pub code_changed: bool,
    /// The updater's path: marker or not, and its reason.
    pub updater: verdict::UpdaterOutcome,
    /// The running process's own check.
    pub process_check: verdict::ProcessCheck,
    /// The older end.
    pub from: Side,
    /// The newer end.
    pub to: Side,
    /// The settings that produced the fingerprints.
    pub settings: Settings,
    /// What changed, sorted into what counts and what does not.
    pub changes: Changes,
    /// The restart is required only because of comment, whitespace or
    /// docstring changes (see [`crate::classify`]); `null` with `--no-classify`.
    pub avoidable: Option<bool>,
    /// Things the releaser must see.
    pub warnings: Vec<Warning>,
    /// How the range was chosen, when fpcheck chose it.
    pub notes: Vec<String>,
}

/// A row of the behaviour matrix (docs/spec.md section 8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatrixRow {
    /// 1 to 8, in the spec's order.
    pub number: u8,
    /// The row's "release touches" column.
    pub touches: &'static str,
}

/// The settings in a report.
#[derive(Clone, Debug, Serialize)]
pub struct Settings {
    /// The runtime's name in a multi-runtime config.
    pub runtime: Option<String>,
    /// The runtime root from the top of the repository.
    pub root: String,
    /// Runtime extensions.
    pub extensions: Vec<String>,
    /// Excluded names.
    pub exclude: Vec<String>,
}

impl Settings {
    /// The settings of `runtime`, the top of the repository shown as `.`.
    pub fn of(runtime: &Runtime) -> Self {
        Settings {
            runtime: runtime.name.clone(),
            root: if runtime.root.is_empty() {
                ".".into()
            } else {
                runtime.root.clone()
            },
            extensions: runtime.rules.extensions.clone(),
            exclude: runtime.rules.exclude.clone(),
        }
    }
}

/// The rows of section 8, in order.
pub const MATRIX: [&str; 8] = [
    "a real fix in a runtime file",
    "a new runtime module",
    "README / blog / docs only",
    "CHANGELOG only",
    "a new file under scripts/",
    "a migration in migrations/",
    "\"force_restart\": true",
    "fingerprint cannot be computed",
];

/// Where the `to` end is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToSide {
    /// A revision (default HEAD).
    Rev(String),
    /// The repository's working tree.
    Worktree,
}

/// Resolves a [`RangeSpec`] (defaults included) and analyses it.
pub fn analyse_spec(
    repo: &gix::Repository,
    spec: &RangeSpec,
    worktree: bool,
    runtime: &Runtime,
) -> Result<Analysis, RangeError> {
    analyse_spec_cached(repo, spec, worktree, runtime, true)
}

/// [`analyse_spec`]; `persistent_cache: false` neither reads nor writes the
/// fingerprint cache in the git directory.
pub fn analyse_spec_cached(
    repo: &gix::Repository,
    spec: &RangeSpec,
    worktree: bool,
    runtime: &Runtime,
    persistent_cache: bool,
) -> Result<Analysis, RangeError> {
    if worktree && spec.to.is_some() {
        return Err(RangeError::BadRange(
            "--worktree makes the working tree the `to` end: give only FROM.. (or nothing)".into(),
        ));
    }
    let mut notes = Vec::new();
    let (from, to_rev) = match (&spec.from, &spec.to) {
        (Some(f), t) => (f.clone(), t.clone().unwrap_or_else(|| "HEAD".into())),
        (None, t) => {
            let to = t.clone().unwrap_or_else(|| "HEAD".into());
            let (tag, note) = latest_tag(repo, &to, worktree)?;
            notes.push(note);
            (tag, to)
        }
    };
    let to = if worktree {
        ToSide::Worktree
    } else {
        ToSide::Rev(to_rev)
    };
    let mut cache = if persistent_cache {
        FingerprintCache::open(repo)
    } else {
        FingerprintCache::in_memory()
    };
    let mut analysis = analyse_with(repo, &from, &to, runtime, &mut cache)?;
    let _ = cache.save();
    analysis.notes = notes;
    Ok(analysis)
}

/// The latest tag reachable from `to`; when `to` is itself tagged (and the
/// working tree is not the `to` end), the tag before it, so that "what did
/// this release do" has an answer.
fn latest_tag(
    repo: &gix::Repository,
    to: &str,
    worktree: bool,
) -> Result<(String, String), RangeError> {
    let start = Revision::parse(repo, to)?.commit.ok_or_else(|| {
        RangeError::BadRange(format!(
            "`{to}` is a tree, not a commit: name FROM explicitly"
        ))
    })?;
    let describe = |id: ObjectId| -> Result<Option<(String, u32)>, RangeError> {
        let commit = repo.find_commit(id).map_err(|e| {
            RangeError::Source(SourceError::Repository(format!(
                "cannot read commit {id}: {e}"
            )))
        })?;
        let found = commit
            .describe()
            .names(gix::commit::describe::SelectRef::AllTags)
            .try_resolve()
            .map_err(|e| {
                RangeError::Source(SourceError::Repository(format!("cannot look up tags: {e}")))
            })?;
        Ok(found.and_then(|r| r.outcome.name.map(|n| (n.to_string(), r.outcome.depth))))
    };
    let no_tag = || {
        RangeError::NoTag(format!(
            "no tag is reachable from `{to}` in {}, so there is no previous release to compare with: \
             name the range (e.g. `fpcheck <commit>..{to}`), or tag the last release",
            repo_display(repo)
        ))
    };
    let (tag, depth) = describe(start)?.ok_or_else(no_tag)?;
    if depth > 0 || worktree {
        let target = if worktree { "the working tree" } else { to };
        return Ok((tag.clone(), format!("no range given: comparing {tag}, the latest tag reachable from {to}, with {target}")));
    }
    let parent = repo
        .find_commit(start)
        .ok()
        .and_then(|c| c.parent_ids().next().map(|p| p.detach()));
    let Some(parent) = parent else {
        return Err(RangeError::NoTag(format!(
            "`{to}` is tagged {tag} and has no parent, so there is no previous release: name the range"
        )));
    };
    let (previous, _) = describe(parent)?.ok_or_else(|| {
        RangeError::NoTag(format!(
            "`{to}` is tagged {tag} and no tag comes before it: name the range (e.g. `fpcheck <commit>..{to}`)"
        ))
    })?;
    Ok((
        previous.clone(),
        format!("no range given: {to} is tagged {tag}, so comparing the release before it, {previous}, with {to}"),
    ))
}

/// Everything read of one end.
struct Read {
    side: Side,
    release: Release,
    fp: Fingerprint,
    /// Path below the root → blob id, for pairing changes.
    ids: BTreeMap<String, ObjectId>,
    root_tree: Option<ObjectId>,
}

/// Analyses `from..to` in `repo`.
pub fn analyse(
    repo: &gix::Repository,
    from: &str,
    to: &ToSide,
    runtime: &Runtime,
) -> Result<Analysis, RangeError> {
    let mut cache = FingerprintCache::open(repo);
    let analysis = analyse_with(repo, from, to, runtime, &mut cache)?;
    // A cache that cannot be written costs the next run time, nothing else.
    let _ = cache.save();
    Ok(analysis)
}

/// [`analyse`] with a cache of the caller's (e.g. an in-memory one for
/// `--no-cache`).
pub fn analyse_with(
    repo: &gix::Repository,
    from: &str,
    to: &ToSide,
    runtime: &Runtime,
    cache: &mut FingerprintCache,
) -> Result<Analysis, RangeError> {
    let rules = &runtime.rules;
    let from_rev = Revision::parse(repo, from)?;
    let from_src = GitSource::new(repo.clone(), from_rev.clone(), &runtime.root)?;
    let from_sel = select(&from_src, rules)?;

    let (from_read, to_read, changes) = match to {
        ToSide::Rev(spec) => {
            let to_rev = Revision::parse(repo, spec)?;
            let to_src = GitSource::new(repo.clone(), to_rev.clone(), &runtime.root)?;
            let to_sel = select(&to_src, rules)?;
            let (from_fp, to_fp) =
                fingerprint_pair(&from_src, from_sel, &to_src, to_sel, rules, cache)?;
            let from_read = read_git(&from_src, from_fp)?;
            let to_read = read_git(&to_src, to_fp)?;
            let mut changes = changes::between_trees(
                repo,
                from_rev.tree,
                to_rev.tree,
                (from_read.root_tree, to_read.root_tree),
                &runtime.root,
                rules,
            )
            .map_err(|e| RangeError::Diff {
                from: from.to_string(),
                to: spec.clone(),
                message: e.to_string(),
            })?;
            changes::add_target_changes(&mut changes, &from_read.ids, &to_read.ids, &runtime.root);
            (from_read, to_read, changes)
        }
        ToSide::Worktree => {
            let from_fp = cached_or_hashed(&from_src, from_sel, rules, cache)?;
            let from_read = read_git(&from_src, from_fp)?;
            let to_read = read_worktree(repo, runtime)?;
            let changes = changes::between_selections(&from_read.ids, &to_read.ids, &runtime.root);
            (from_read, to_read, changes)
        }
    };
    Ok(conclude(from_read, to_read, changes, runtime))
}

/// Both fingerprints; when the selections (paths and blob ids) are equal the
/// bytes are equal, so they are read and hashed once for both ends.
/// A cached fingerprint (tree objects only) lets an unchanged selection be
/// answered without reading a single blob.
fn fingerprint_pair(
    from_src: &GitSource,
    from_sel: Selection,
    to_src: &GitSource,
    to_sel: Selection,
    rules: &Rules,
    cache: &mut FingerprintCache,
) -> Result<(Fingerprint, Fingerprint), SourceError> {
    // Equal files are not enough: a problem (a broken link, a directory
    // named like a module) makes one side unavailable with the same files.
    if from_sel.is_available() && to_sel.is_available() && from_sel.identity() == to_sel.identity()
    {
        let from_fp = cached_or_hashed(from_src, from_sel, rules, cache)?;
        let mut to_fp = from_fp.clone();
        to_fp.warnings = to_src.warnings(&to_fp.selection.files)?;
        return Ok((from_fp, to_fp));
    }
    Ok((
        cached_or_hashed(from_src, from_sel, rules, cache)?,
        cached_or_hashed(to_src, to_sel, rules, cache)?,
    ))
}

fn cached_or_hashed(
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

fn read_git(src: &GitSource, fp: Fingerprint) -> Result<Read, SourceError> {
    let release = release::read(src)?;
    let rev = src.revision();
    let ids = fp
        .selection
        .files
        .iter()
        .filter_map(|f| f.content.object_id().map(|id| (f.path.clone(), id)))
        .collect();
    let root_tree = match src.root()? {
        RootState::Dir(Node::Object(id)) => Some(id),
        _ => None,
    };
    Ok(Read {
        side: Side::new(
            rev.spec.clone(),
            rev.commit.map(|c| c.to_string()),
            false,
            &release,
            &fp,
        ),
        release,
        fp,
        ids,
        root_tree,
    })
}

fn read_worktree(repo: &gix::Repository, runtime: &Runtime) -> Result<Read, SourceError> {
    let workdir = repo.workdir().ok_or_else(|| {
        SourceError::Repository(format!(
            "{} is a bare repository: it has no working tree for --worktree",
            repo_display(repo)
        ))
    })?;
    let display = if runtime.root.is_empty() {
        "."
    } else {
        runtime.root.as_str()
    };
    let mut src = DirSource::with_display(workdir.join(&runtime.root), display);
    if runtime.root.is_empty() {
        // As for a tree: the parent of the top is outside the repository.
        src = src.without_parent_lookup();
    }
    let fp = fingerprint::compute(&src, &runtime.rules)?;
    let release = release::read(&src)?;
    // Blob ids of the working tree's runtime files pair them with the tree's.
    let mut ids = BTreeMap::new();
    for f in &fp.selection.files {
        let mut bytes = Vec::new();
        src.read(&f.path, &f.content, &mut |b| bytes.extend_from_slice(b))?;
        let id = gix::objs::compute_hash(repo.object_hash(), gix::object::Kind::Blob, &bytes)
            .map_err(|e| SourceError::Repository(format!("cannot hash {}: {e}", f.path)))?;
        ids.insert(f.path.clone(), id);
    }
    Ok(Read {
        side: Side::new(WORKTREE.into(), None, true, &release, &fp),
        release,
        fp,
        ids,
        root_tree: None,
    })
}

fn conclude(from: Read, to: Read, changes: Changes, runtime: &Runtime) -> Analysis {
    let decision = verdict::decide(&from.side.facts(), &to.side.facts());
    let warnings = warnings(&from, &to, &decision);
    let matrix_row = matrix_row(&decision, &changes, &to.side);
    let summary = summary(&from.side, &to.side, &decision, &changes);
    Analysis {
        schema_version: SCHEMA_VERSION,
        restart_required: decision.restart_required,
        reason: decision.reason,
        summary,
        matrix_row,
        version_changed: decision.version_changed,
        code_changed: decision.code_changed,
        updater: decision.updater,
        process_check: decision.process_check,
        from: from.side,
        to: to.side,
        settings: Settings::of(runtime),
        changes,
        avoidable: None,
        warnings,
        notes: Vec::new(),
    }
}

fn warnings(from: &Read, to: &Read, d: &Decision) -> Vec<Warning> {
    let mut out: Vec<Warning> = Vec::new();
    for (read, end) in [(from, "from"), (to, "to")] {
        out.extend(read.release.warnings.iter().cloned());
        if let Some(why) = &read.fp.unavailable_reason {
            out.push(Warning::new(
                "fingerprint_unavailable",
                format!(
                    "the fingerprint of {} ({end}) is unavailable: {why}; the gate treats the code as changed",
                    read.side.reference
                ),
            ));
        }
        if end == "to" || to.fp.warnings != read.fp.warnings {
            out.extend(
                read.fp
                    .warnings
                    .iter()
                    .map(|w| Warning::new("gitattributes_conversion", w.clone())),
            );
        }
    }
    let (f, t) = (&from.side, &to.side);
    if f.force_restart && t.force_restart {
        out.push(Warning::new(
            "force_restart_carried_over",
            format!(
                "force_restart was already on in {} and is still on in {}: every update to this release restarts clients; turn it off unless this release needs it",
                f.reference, t.reference
            ),
        ));
    }
    if t.force_restart && !d.version_changed {
        out.push(Warning::new(
            "forced_without_version_change",
            format!("force_restart is on in {} but the version did not change: the updater writes no marker", t.reference),
        ));
    }
    if d.reason == Reason::CodeChanged && !d.version_changed {
        out.push(Warning::new(
            "code_changed_version_unchanged",
            format!(
                "runtime code changed but the version did not ({}): the updater writes no marker; running clients only notice at their next fingerprint check",
                t.version.as_deref().unwrap_or("no version")
            ),
        ));
    }
    if d.reason == Reason::UnavailableVersionUnchanged {
        out.push(Warning::new(
            "restart_undetectable",
            "a fingerprint is unavailable and the version did not change: neither the updater nor the running process can notice this update; bump the version",
        ));
    }
    if let (Some(a), Some(b)) = (&f.version, &t.version) {
        if version::compare(b, a) == Some(std::cmp::Ordering::Less) {
            out.push(Warning::new(
                "version_went_backwards",
                format!("the version went backwards: {a} → {b}"),
            ));
        }
    }
    out.dedup();
    out
}

fn matrix_row(d: &Decision, changes: &Changes, to: &Side) -> Option<MatrixRow> {
    let row = |n: u8| {
        Some(MatrixRow {
            number: n,
            touches: MATRIX[usize::from(n) - 1],
        })
    };
    if !d.version_changed {
        return None;
    }
    match d.reason {
        Reason::CodeChanged => {
            let all_added = changes.runtime.iter().all(|c| c.status == Status::Added);
            row(if all_added && !changes.runtime.is_empty() {
                2
            } else {
                1
            })
        }
        Reason::FingerprintUnavailable => row(8),
        Reason::Forced => row(7),
        Reason::UnavailableVersionUnchanged => None,
        Reason::NoRuntimeChange if to.force_restart => row(7),
        Reason::NoRuntimeChange => {
            let excluded = |name: &str| {
                changes
                    .ignored
                    .iter()
                    .any(|c| c.why == Why::Excluded && c.excluded_name.as_deref() == Some(name))
            };
            if excluded("migrations") {
                return row(6);
            }
            if excluded("scripts") {
                return row(5);
            }
            let notable: Vec<_> = changes
                .ignored
                .iter()
                .filter(|c| {
                    let name = c.path.rsplit('/').next().unwrap_or(&c.path);
                    !release::VERSION_FILES.contains(&name)
                })
                .collect();
            let changelog = |p: &str| {
                p.rsplit('/')
                    .next()
                    .unwrap_or(p)
                    .to_ascii_uppercase()
                    .starts_with("CHANGELOG")
            };
            if !notable.is_empty() && notable.iter().all(|c| changelog(&c.path)) {
                row(4)
            } else {
                row(3)
            }
        }
    }
}

fn summary(from: &Side, to: &Side, d: &Decision, changes: &Changes) -> String {
    let head = format!("Updating from {} to {}", from.reference, to.reference);
    let n = changes.runtime.len();
    let files = |n: usize| {
        if n == 1 {
            "1 runtime file".to_string()
        } else {
            format!("{n} runtime files")
        }
    };
    let others = changes.ignored.len();
    match d.reason {
        Reason::CodeChanged => format!("{head} forces running clients to restart: {} changed.", files(n)),
        Reason::Forced => format!("{head} forces running clients to restart: force_restart is on (no runtime file changed)."),
        Reason::FingerprintUnavailable => format!(
            "{head} forces running clients to restart: a fingerprint is unavailable, so the code counts as changed."
        ),
        Reason::UnavailableVersionUnchanged => format!(
            "{head} does not restart running clients, but only because nothing can tell: a fingerprint is unavailable and the version did not change."
        ),
        Reason::NoRuntimeChange => {
            let tail = match others {
                0 => String::new(),
                1 => " (1 other change does not count)".into(),
                k => format!(" ({k} other changes do not count)"),
            };
            format!("{head} does not restart running clients: no runtime file changed{tail}.")
        }
    }
}

//! `A..B`: will updating from release A to release B force running clients
//! to restart, and why. Reads both ends from git objects (or the working
//! tree for B), decides with [`crate::verdict`], and explains with
//! [`crate::changes`].

//!
//! Split by concern: [`spec`] parses what the user typed, [`tags`] finds
//! the default `from`, [`ends`] reads and fingerprints each end (cache
//! policy and the working tree included), [`wording`] says what it means.

use serde::Serialize;

use crate::cache::FingerprintCache;
use crate::changes::{self, Changes};
use crate::config::{self, RuntimeSpec, SpecWithOrigin};
use crate::pair::Pair;
use crate::select::select;
use crate::setting::{Message, Setting, Value};
use crate::side::Side;
use crate::source::git::Session;
use crate::source::{GitSource, Revision, SourceError};
use crate::verdict::{self, Reason};
use crate::warning::Warning;

mod cross;
mod ends;
mod multi;
mod prime;
mod resolved;
mod spec;
mod tags;
mod wording;

mod annotate;
mod witnessed;
pub use crate::side::Skipped;
pub use annotate::annotate;
pub(crate) use cross::needed as settings_differ;
pub use cross::SettingsCheck;
use ends::Read;
pub use multi::{analyse_runtimes, NamedAnalysis, RangeOutcome, RuntimesAnalysis};
pub use resolved::{resolve, ResolvedEnd, ResolvedEnds};
pub use spec::{check_revision, RangeSpec};
pub use tags::TagFilter;
pub(crate) use wording::{pyproject_backwards, settings_warnings};

/// The JSON schema version of [`Analysis`]; bumped on breaking changes.
pub(crate) const SCHEMA_VERSION: u32 = 1;

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
    BadRange(crate::setting::Message),
    /// No tag to start from.
    #[error("{0}")]
    NoTag(String),
    /// The runtime root exists at neither end: a typo, not a release.
    #[error("{0}")]
    NoRoot(crate::setting::Message),
    /// An end's settings cannot be read or resolved.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
}

impl crate::error::Classified for RangeError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            RangeError::BadRange(_) | RangeError::NoRoot(_) => crate::error::Kind::Usage,
            RangeError::Config(e) => crate::error::Classified::kind(e),
            RangeError::NoTag(_) => crate::error::Kind::Input,
            RangeError::Source(e) => crate::error::Classified::kind(e),
        }
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
    /// The settings that produced the `to` fingerprint (each end is
    /// fingerprinted with its own committed settings, flags applied), and
    /// where they came from; `version_file` is for `patch`, not shown.
    #[serde(serialize_with = "config::shown::with_origin")]
    pub settings: SpecWithOrigin,
    /// The settings that produced the `from` fingerprint.
    #[serde(serialize_with = "config::shown::with_origin")]
    pub from_settings: SpecWithOrigin,
    /// When the settings differ between the ends: the `to` end fingerprinted
    /// with the `from` end's settings; `null` when the settings are equal.
    /// A change there requires a restart even when the `to` end's own
    /// settings show none (`settings_changed_runtime_changed`).
    pub settings_check: Option<SettingsCheck>,
    /// What changed, sorted into what counts and what does not.
    pub changes: Changes,
    /// The restart is required only because of comment, whitespace or
    /// docstring changes (see [`crate::classify`]); `null` with `--no-classify`.
    pub avoidable: Option<bool>,
    /// Advice beside the verdict (see [`crate::advice`]): possible missed
    /// restarts, a restart caused only by a version string, the MCP
    /// surface's changes; left out when there is none or the changes are
    /// not classified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<crate::advice::Item>,
    /// Things the releaser must see.
    pub warnings: Vec<Warning>,
    /// How the range was chosen, when fpcheck chose it.
    pub notes: Vec<String>,
    /// git's own checkout of the ends, confirming a "no restart" (see
    /// [`crate::witness`]).
    pub witness: crate::witness::Witness,
}

/// A row of the behaviour matrix (docs/spec.md section 8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatrixRow {
    /// 1 to 8, in the spec's order.
    pub number: u8,
    /// The row's "release touches" column.
    pub touches: &'static str,
}

/// The rows of section 8, in order.
pub(crate) const MATRIX: [&str; 8] = [
    "a real fix in a runtime file",
    "a new runtime module",
    "README / blog / docs only",
    "CHANGELOG only",
    "a new file under scripts/",
    "a migration in migrations/",
    "\"force_restart\": true",
    "fingerprint cannot be computed",
];

/// What to analyse, and how.
#[derive(Clone, Debug)]
pub struct RangeOptions {
    /// The ends as given (defaults resolved by [`analyse`]).
    pub range: RangeSpec,
    /// The working tree is the `to` end.
    pub worktree: bool,
    /// Where each end's settings come from, and the flags over them.
    pub settings: config::SettingsRequest,
    /// Read and write the fingerprint cache in the git directory.
    pub persistent_cache: bool,
    /// Whether both digests must be computed when the verdict needs none.
    pub digests: Digests,
    /// When git's own checkout confirms a "no restart" (`--witness`).
    pub witness: crate::witness::Mode,
}

impl RangeOptions {
    /// `range` read with `settings`, as every front end starts: the
    /// fingerprint cache read and written, and an unchanged selection not
    /// hashed ([`Digests::WhenNeeded`]). A caller changes a field after.
    pub fn new(range: RangeSpec, worktree: bool, settings: config::SettingsRequest) -> Self {
        RangeOptions {
            range,
            worktree,
            settings,
            persistent_cache: true,
            digests: Digests::WhenNeeded,
            witness: crate::witness::Mode::Auto,
        }
    }
}

/// Whether a report carries both ends' digests when the verdict does not
/// need them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Digests {
    /// Both ends select the same list of (path, blob id): the fingerprints
    /// are equal and the verdict needs no more. A digest is then reported
    /// only when the cache holds it; otherwise no blob is hashed and each
    /// side's `fingerprint` is `null` with `fingerprint_skipped`.
    #[default]
    WhenNeeded,
    /// Always hash (or take from the cache) both ends: for callers that
    /// record the digest (`patch`) or hand it on (the Python API).
    Always,
}

/// Where the `to` end is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ToSide {
    /// A revision (default HEAD).
    Rev(String),
    /// The repository's working tree.
    Worktree,
}

/// Resolves the range (defaults included) and analyses it: each end is
/// fingerprinted with the settings committed at that end.
pub fn analyse(repo: &Session, options: &RangeOptions) -> Result<Analysis, RangeError> {
    with_memo(repo, options, |repo| analyse_in(repo, options))
}

/// Runs `f` on `repo` with the object memo in front of its object store
/// when the persistent cache is on (see [`crate::source::git::memo`]: a
/// warm range then opens no pack), saving the memo afterwards.
fn with_memo<T>(repo: &Session, options: &RangeOptions, f: impl FnOnce(&Session) -> T) -> T {
    if options.persistent_cache {
        let (repo, installed) = repo.with_memo();
        let out = f(&repo);
        drop(installed);
        return out;
    }
    f(repo)
}

/// [`analyse`], the memo installed or not wanted.
fn analyse_in(repo: &Session, options: &RangeOptions) -> Result<Analysis, RangeError> {
    let (from, to, notes) = resolve_ends(repo, options)?;
    let settings = with_fallback(repo, &options.settings, &from, &to)?;
    let mut cache = open_cache(repo, options);
    let mut analysis = analyse_with(
        repo,
        &from,
        &to,
        &settings,
        Absent::default(),
        &mut cache,
        options.digests,
    )?;
    witnessed::confirm(repo, options.witness, &mut analysis, false);
    // A cache that cannot be written costs the next run time, nothing else.
    let _ = cache.save();
    analysis.notes = notes;
    Ok(analysis)
}

/// `settings` with the file that an end committing no `fpcheck.toml`
/// reads (its [`config::FallbackRule`]): a config committed today reaches
/// the releases made before it.
fn with_fallback(
    repo: &Session,
    settings: &config::SettingsRequest,
    from: &str,
    to: &ToSide,
) -> Result<config::SettingsRequest, RangeError> {
    if !matches!(settings.origin, config::SettingsOrigin::Committed) || settings.fallback.is_some()
    {
        return Ok(settings.clone());
    }
    let from_rev = Revision::parse_commit(repo, from)?;
    let (to_rev, top) = match to {
        ToSide::Rev(spec) => (Some(Revision::parse_commit(repo, spec)?), None),
        ToSide::Worktree => (None, Some(ends::workdir(repo)?)),
    };
    Ok(settings.clone().with_range_fallback(
        repo,
        (from_rev.tree, from),
        to_rev.as_ref().map(|r| (r.tree, r.spec.as_str())),
        top.as_deref(),
    )?)
}

/// The ends of the range, defaults resolved, and how they were chosen.
fn resolve_ends(
    repo: &Session,
    options: &RangeOptions,
) -> Result<(String, ToSide, Vec<String>), RangeError> {
    let spec = &options.range;
    if options.worktree && spec.to.is_some() {
        return Err(RangeError::BadRange(
            Message::new()
                .setting(Setting::Worktree, Value::None)
                .text(" makes the working tree the `to` end: give only FROM.. (or nothing)"),
        ));
    }
    let mut notes = Vec::new();
    let (from, to_rev) = match (&spec.from, &spec.to) {
        (Some(f), t) => (f.clone(), t.clone().unwrap_or_else(|| "HEAD".into())),
        (None, t) => {
            let to = t.clone().unwrap_or_else(|| "HEAD".into());
            let mut filter = options.range.tags.clone();
            let mut unread = None;
            if filter.include.is_empty() && filter.pattern.is_none() {
                filter.pattern = match &options.settings.overrides.tag_pattern {
                    Some(flag) => Some(flag.clone()),
                    None => {
                        let (file, note) = to_config(repo, options, &to)?;
                        unread = note;
                        options.settings.tag_pattern(file.as_ref())
                    }
                };
            }
            let (tag, note) = tags::latest_tag(repo, &to, options.worktree, &filter)?;
            notes.push(note);
            notes.extend(unread);
            (tag, to)
        }
    };
    let to = if options.worktree {
        ToSide::Worktree
    } else {
        ToSide::Rev(to_rev)
    };
    Ok((from, to, notes))
}

/// The `fpcheck.toml` of the `to` end (`to`, or the working tree's with
/// `--worktree`): the new release's file names its runtimes' tags, which
/// is where a missing FROM is looked for; `--tag-pattern-at REV` names
/// another revision's. `None` with `--config` (its own file applies) or
/// no file. A revision whose tree is not in the repository (a treeless
/// clone, where `--resolve-only` must still find FROM) has no file to
/// read: `None`, and the note that says so.
fn to_config(
    repo: &Session,
    options: &RangeOptions,
    to: &str,
) -> Result<(Option<config::ConfigFile>, Option<String>), RangeError> {
    if !matches!(options.settings.origin, config::SettingsOrigin::Committed) {
        return Ok((None, None));
    }
    if options.worktree && options.range.tags.pattern_at.is_none() {
        let top = ends::workdir(repo)?;
        return Ok((config::ConfigFile::find_in(&top)?.map(|(_, f)| f), None));
    }
    let at = options.range.tags.pattern_at.as_deref().unwrap_or(to);
    check_revision(at)?;
    let rev = Revision::parse_commit(repo, at)?;
    if !repo.has(rev.tree) {
        return Ok((None, Some(format!(
            "the tree of {at} is not in this repository (a treeless clone?), so its {} was not read: every tag counted, no runtime's tag_pattern; fetch that tree, or pass --tag-pattern GLOB",
            config::FILE_NAME
        ))));
    }
    Ok((config::at_revision(repo, rev.tree, at)?, None))
}

/// The tag pattern of each runtime `chosen` (every one the `to` end
/// declares when none is), for a range without FROM: `None` when the
/// range names FROM, `--tag-match` chose the releases, or fewer than two
/// runtimes are in play (the single analysis looks its own up).
fn runtime_patterns(
    repo: &Session,
    options: &RangeOptions,
    chosen: &[String],
) -> Result<Option<std::collections::BTreeMap<String, Option<String>>>, RangeError> {
    let tags = &options.range.tags;
    if options.range.from.is_some() || !tags.include.is_empty() || tags.pattern.is_some() {
        return Ok(None);
    }
    let to = options.range.to.clone().unwrap_or_else(|| "HEAD".into());
    let (file, _) = to_config(repo, options, &to)?;
    let declared = match (&options.settings.origin, &file) {
        (config::SettingsOrigin::File { file, .. }, _) | (_, Some(file)) => {
            file.runtimes.keys().cloned().collect()
        }
        _ => Vec::new(),
    };
    let names = if chosen.is_empty() {
        declared
    } else {
        chosen.to_vec()
    };
    if names.is_empty() || (chosen.is_empty() && names.len() < 2) {
        return Ok(None);
    }
    let of = |name: &String| {
        let request = options.settings.for_runtime(Some(name));
        request.tag_pattern(file.as_ref())
    };
    Ok(Some(names.iter().map(|n| (n.clone(), of(n))).collect()))
}

/// The one tag pattern every runtime of `patterns` has (`Ok(None)`: none
/// has one), or the runtimes and patterns that differ.
fn common_pattern(
    patterns: &std::collections::BTreeMap<String, Option<String>>,
) -> Result<Option<String>, String> {
    let distinct: std::collections::BTreeSet<&Option<String>> = patterns.values().collect();
    match distinct.into_iter().collect::<Vec<_>>().as_slice() {
        [] => Ok(None),
        [one] => Ok((*one).clone()),
        _ => Err(patterns
            .iter()
            .map(|(n, p)| match p {
                Some(p) => format!("{n} `{p}`"),
                None => format!("{n} every version tag"),
            })
            .collect::<Vec<_>>()
            .join(", ")),
    }
}

fn open_cache(repo: &Session, options: &RangeOptions) -> FingerprintCache {
    if options.persistent_cache {
        FingerprintCache::open(repo.repo())
    } else {
        FingerprintCache::in_memory()
    }
}

/// An end whose settings do not declare the runtime (a monorepo runtime
/// added or removed by the release): it is read with the other end's
/// settings and compared as usual (why, in the string, for the warning).
/// Should a fingerprint still be unavailable, the update restarts
/// ([`verdict::Policy::undeclared`]).
#[derive(Clone, Debug, Default)]
struct Absent {
    /// Why, and the settings to read the `from` end with.
    from: Option<(String, SpecWithOrigin)>,
    /// Why, and the settings to read the `to` end with.
    to: Option<(String, SpecWithOrigin)>,
    /// A `from` end that declares no named runtime (its `[runtime]`, or no
    /// file): its own settings, what its gate fingerprinted with. The `to`
    /// end is cross-checked with them, so that declaring runtimes over a
    /// copy of the old code cannot hide a change of the code that runs.
    from_own: Option<SpecWithOrigin>,
}

/// The `from` end of an analysis, which either kind of `to` end is
/// compared with.
struct FromEnd<'a> {
    rev: Revision,
    end: SpecWithOrigin,
    src: GitSource,
    absent: &'a Absent,
}

/// Both ends read and compared, before the decision.
struct Compared {
    from: Read,
    to: Read,
    changes: Changes,
    to_end: SpecWithOrigin,
    check: Option<SettingsCheck>,
    /// The `from` end's digest under its own settings (`None` inside when
    /// unavailable), when the cross-check used them (see
    /// [`Absent::from_own`]).
    own_digest: Option<Option<String>>,
}

fn analyse_with(
    repo: &Session,
    from: &str,
    to: &ToSide,
    request: &config::SettingsRequest,
    absent: Absent,
    cache: &mut FingerprintCache,
    digests: Digests,
) -> Result<Analysis, RangeError> {
    let rev = Revision::parse_commit(repo, from)?;
    let end = match &absent.from {
        Some((_, end)) => end.clone(),
        None => request.at_revision(repo, rev.tree, from)?,
    };
    let src = GitSource::new(repo.clone(), rev.clone(), &end.spec.root)?;
    let from_end = FromEnd {
        rev,
        end,
        src,
        absent: &absent,
    };
    let mut compared = match to {
        ToSide::Rev(spec) => against_revision(repo, &from_end, (spec, request), cache, digests)?,
        ToSide::Worktree => against_worktree(repo, &from_end, request, cache)?,
    };
    // A `src/` layout's runtime (`project/src/package`): its project file
    // is two levels up.
    ends::src_layout_pyproject(
        repo,
        &from_end.rev,
        &from_end.end.spec.root,
        &mut compared.from.side,
    )?;
    if let ToSide::Rev(spec) = to {
        let to_rev = Revision::parse_commit(repo, spec)?;
        ends::src_layout_pyproject(
            repo,
            &to_rev,
            &compared.to_end.spec.root,
            &mut compared.to.side,
        )?;
    }
    // An end that does not declare the runtime was read with the other
    // end's settings and is compared as usual: a code change under those
    // settings is a restart whichever end adds or drops the declaration.
    let undeclared = absent.from.is_some() || absent.to.is_some();
    Ok(conclude(
        compared.from,
        compared.to,
        compared.changes,
        Pair::new(&from_end.end, &compared.to_end),
        (compared.check, compared.own_digest),
        undeclared,
    ))
}

/// The `from` end compared with the revision `spec`.
fn against_revision(
    repo: &Session,
    from: &FromEnd<'_>,
    (spec, request): (&str, &config::SettingsRequest),
    cache: &mut FingerprintCache,
    digests: Digests,
) -> Result<Compared, RangeError> {
    let (from_rt, absent) = (&from.end.spec, from.absent);
    let to_rev = Revision::parse_commit(repo, spec)?;
    let to_end = match &absent.to {
        Some((_, end)) => end.clone(),
        None => request.at_revision(repo, to_rev.tree, spec)?,
    };
    let to_rt = &to_end.spec;
    let to_src = GitSource::new(repo.clone(), to_rev.clone(), &to_rt.root)?;
    ends::check_roots(&from.src, &to_src, from_rt, to_rt, || {
        ends::top_dirs_at(repo, &to_rev)
    })?;
    // Same settings: see `ends::read_pair` for what a shared root tree
    // saves. The cross-check compares with the `from` digest, and a runtime
    // undeclared at one end reports both digests: both need real digests.
    let same_settings = absent.from.is_none() && !cross::needed(&from.end, &to_end);
    let digests = if same_settings {
        digests
    } else {
        Digests::Always
    };
    let Pair {
        from: from_read,
        to: mut to_read,
    } = ends::read_pair(
        (&from.src, from_rt),
        (&to_src, to_rt),
        same_settings && absent.to.is_none(),
        cache,
        digests,
    )?;
    let mut changes = tree_changes(
        repo,
        Pair::new(&from.rev, &to_rev),
        Pair::new(&from_read, &to_read),
        Pair::new(from_rt, to_rt),
    );
    attributes_changes(
        &mut changes,
        (&from.src, &from_read),
        (&to_src, &mut to_read),
        &to_rt.root,
    );
    let mut own_digest = None;
    let check = cross_check(
        (repo, &from.rev, cache),
        (absent.from_own.as_ref(), &from.end, &from_read.fp, &to_end),
        &mut own_digest,
        |end, fp, cache| cross::at_revision(repo, &to_rev, end, fp, cache),
    )?;
    Ok(Compared {
        from: from_read,
        to: to_read,
        changes,
        to_end,
        check,
        own_digest,
    })
}

/// What changed between the ends' commits: the diff of their trees, with
/// the links whose targets changed. Changes are sorted by the `to` end's
/// settings: what the new release's gate counts.
fn tree_changes(
    repo: &Session,
    revs: Pair<&Revision>,
    reads: Pair<&Read>,
    runtimes: Pair<&RuntimeSpec>,
) -> Changes {
    let roots = runtimes.map(|rt| rt.root.as_str());
    let diff = changes::between_trees(
        repo,
        revs,
        reads.map(|r| r.root_tree),
        roots,
        &runtimes.to.rules,
    );
    match diff {
        Ok(mut changes) => {
            changes::add_target_changes(&mut changes, &reads.from.ids, &reads.to.ids, roots.to);
            changes
        }
        // The verdict comes from the fingerprints; the diff only explains
        // it. A tree the diff cannot parse (a name with a NUL under an
        // excluded folder, a tree too deep) must not turn a decided verdict
        // into an error: the selections still tell what changed in the
        // runtime, and the list of ignored changes is marked incomplete.
        Err(_) => changes::between_selections(&reads.from.ids, &reads.to.ids, roots),
    }
}

/// The `from` end compared with the working tree.
fn against_worktree(
    repo: &Session,
    from: &FromEnd<'_>,
    request: &config::SettingsRequest,
    cache: &mut FingerprintCache,
) -> Result<Compared, RangeError> {
    let (from_rt, absent) = (&from.end.spec, from.absent);
    let top = ends::workdir(repo)?;
    let to_end = match &absent.to {
        Some((_, end)) => end.clone(),
        None => request.at_worktree(&top)?,
    };
    let to_rt = &to_end.spec;
    let to_src = crate::source::WorktreeSource::new(&top, &to_rt.root);
    ends::check_roots(&from.src, &to_src, from_rt, to_rt, || {
        ends::top_dirs_on_disk(&top)
    })?;
    let from_sel = select(&from.src, &from_rt.rules)?;
    let from_fp = ends::cached_or_hashed(&from.src, from_sel, &from_rt.rules, cache)?;
    let from_read = ends::read_git(&from.src, from_fp, false, None)?;
    let to_read = ends::read_worktree(repo, &to_src, &to_rt.rules)?;
    let changes = changes::between_selections(
        &from_read.ids,
        &to_read.ids,
        Pair::new(&from_rt.root, &to_rt.root),
    );
    let mut own_digest = None;
    let check = cross_check(
        (repo, &from.rev, cache),
        (absent.from_own.as_ref(), &from.end, &from_read.fp, &to_end),
        &mut own_digest,
        |end, fp, _| cross::at_worktree(&top, end, fp),
    )?;
    Ok(Compared {
        from: from_read,
        to: to_read,
        changes,
        to_end,
        check,
        own_digest,
    })
}

/// The `from` end fingerprinted with its own settings (see
/// [`Absent::from_own`]).
/// The settings cross-check of the `to` end (`at` fingerprints it with
/// the given settings): with the `from` end's own settings when `from`
/// declares no named runtime and those differ from the `to` end's
/// (`own_digest` then records the `from` end's own digest), else with the
/// settings the `from` end was read with, when they differ.
fn cross_check(
    (repo, from_rev, cache): (&Session, &Revision, &mut FingerprintCache),
    (from_own, from_end, from_fp, to_end): (
        Option<&SpecWithOrigin>,
        &SpecWithOrigin,
        &crate::fingerprint::Fingerprint,
        &SpecWithOrigin,
    ),
    own_digest: &mut Option<Option<String>>,
    at: impl FnOnce(
        &SpecWithOrigin,
        &crate::fingerprint::Fingerprint,
        &mut FingerprintCache,
    ) -> Result<SettingsCheck, RangeError>,
) -> Result<Option<SettingsCheck>, RangeError> {
    match from_own.filter(|own| cross::needed(own, to_end)) {
        Some(own) => {
            let fp = own_fingerprint(repo, from_rev, own, cache)?;
            *own_digest = Some(fp.digest.clone());
            Ok(Some(at(own, &fp, cache)?))
        }
        None if cross::needed(from_end, to_end) => Ok(Some(at(from_end, from_fp, cache)?)),
        None => Ok(None),
    }
}

fn own_fingerprint(
    repo: &Session,
    from_rev: &Revision,
    own: &SpecWithOrigin,
    cache: &mut FingerprintCache,
) -> Result<crate::fingerprint::Fingerprint, RangeError> {
    let rt = &own.spec;
    let src = GitSource::new(repo.clone(), from_rev.clone(), &rt.root)?;
    let selection = select(&src, &rt.rules)?;
    Ok(ends::cached_or_hashed(&src, selection, &rt.rules, cache)?)
}

fn conclude(
    from: Read,
    to: Read,
    changes: Changes,
    ends: Pair<&SpecWithOrigin>,
    (check, own_digest): (Option<SettingsCheck>, Option<Option<String>>),
    undeclared: bool,
) -> Analysis {
    let decided = verdict::decide_update(
        &from.side.facts(),
        &to.side.facts(),
        verdict::Policy {
            undeclared,
            settings_check: check.as_ref(),
            release_changed: crate::version::releases_differ_without_version_file(
                from.side.release_version.as_ref(),
                to.side.release_version.as_ref(),
            ),
        },
    );
    let decision = decided.decision.clone();
    let mut warnings = wording::warnings(&from, &to, &decided);
    let own_short = own_digest.as_ref().map(|d| {
        d.as_deref()
            .and_then(crate::fingerprint::short)
            .unwrap_or("unavailable")
    });
    warnings.extend(wording::settings_warnings(
        Pair::new(&from.side.reference, &to.side.reference),
        ends,
        own_short.unwrap_or(from.side.short_fingerprint()),
        (check.as_ref(), &decided),
    ));
    let matrix_row = wording::matrix_row(&decision, &changes, &to.side);
    let summary = wording::summary(&from.side, &to.side, &decision, &changes);
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
        settings: ends.to.clone(),
        from_settings: ends.from.clone(),
        settings_check: check,
        changes,
        avoidable: None,
        advice: Vec::new(),
        warnings,
        notes: Vec::new(),
        witness: crate::witness::Witness::default(),
    }
}

/// Marks the runtime files whose stored blob is the same at both ends but
/// whose checkout bytes differ (`.gitattributes` changed what a checkout
/// writes), and says so in a note on the `to` end.
fn attributes_changes(
    changes: &mut changes::Changes,
    (from_src, from_read): (&GitSource, &ends::Read),
    (to_src, to_read): (&GitSource, &mut ends::Read),
    root: &str,
) {
    let mut paths = Vec::new();
    for change in &mut changes.runtime {
        if !matches!(
            change.status,
            changes::ChangeStatus::TargetChanged | changes::ChangeStatus::Modified
        ) {
            continue;
        }
        let below = if root.is_empty() {
            change.path.as_str()
        } else {
            match change
                .path
                .strip_prefix(root)
                .and_then(|p| p.strip_prefix('/'))
            {
                Some(p) => p,
                None => continue,
            }
        };
        let (Some(old), Some(new)) = (from_read.ids.get(below), to_read.ids.get(below)) else {
            continue;
        };
        if old != new && from_src.stored_blob(*old) == to_src.stored_blob(*new) {
            change.status = changes::ChangeStatus::AttributesChanged;
            paths.push(change.path.clone());
        }
    }
    if paths.is_empty() {
        return;
    }
    let n = paths.len();
    to_read.fp.warnings.push(crate::warning::Warning::new(
        crate::warning::Code::GitattributesConversion,
        format!(
            "the bytes a checkout writes changed through .gitattributes alone for {n} runtime \
             file{} ({}): the stored blobs are the same, the installed bytes are not",
            if n == 1 { "" } else { "s" },
            crate::warning::some_paths(&paths)
        ),
    ));
}

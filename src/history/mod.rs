//! `fpcheck history`: every release's restart verdict, from the tags.
//!
//! Hundreds of tags mean hundreds of fingerprints, so the work is shared:
//! a release whose selection (paths and blob ids) was seen before reuses
//! that fingerprint (also across runs, through [`FingerprintCache`]); a blob
//! is inflated once for the whole history while memory allows; the SHA-256
//! state after the first k files is reused by the next release that starts
//! with the same k files; and releases are spread over the cores.

use std::sync::Mutex;

use serde::Serialize;

use crate::cache::FingerprintCache;
use crate::changes;
use crate::config::{self, RuntimeSpec};
use crate::pair::Pair;
use crate::range::SettingsCheck;
use crate::source::git::repo_display;
use crate::source::SourceError;
use crate::verdict::{self, Reason, SideFacts};
use crate::warning::{Code, Warning};

mod runtimes;
mod settings;
mod tags;
mod update;
mod witnessed;
mod worker;

pub use runtimes::{run_runtimes, runtimes_summary, HistoryOutcome, NamedRecord, RuntimesHistory};

use crate::source::git::Session;
use settings::Plan;
pub use tags::tag_version;
use tags::{order_equal_versions, release_tags, restrict, Tag};
use update::*;
use worker::{Blobs, How, Read, Worker};

/// The JSON schema version of [`History`].
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// What to analyse.
#[derive(Clone, Debug, Default)]
pub struct HistoryOptions {
    /// Only releases between these two tags (inclusive, by precedence).
    pub span: Option<Pair<String>>,
    /// Only tags matching this glob (`v7.*`).
    pub tags: Option<String>,
    /// Leave pre-releases out.
    pub skip_prereleases: bool,
    /// Read and write the persistent cache in the git directory.
    pub persistent_cache: bool,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Tell restarts caused only by comments or docstrings ([`crate::classify`]).
    pub classify: bool,
    /// When git's own checkout confirms a free release (`--witness`).
    pub witness: crate::witness::Mode,
}

/// Errors that prevent a history.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The repository cannot be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Bad options (a span that runs backwards, ...).
    #[error("{0}")]
    Usage(String),
    /// A span end that is not a release tag of the repository: like an
    /// unknown revision in a range, the input cannot be read.
    #[error("{0}")]
    UnknownTag(String),
    /// A release's settings cannot be read or resolved.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// A worker thread panicked: a bug, never a verdict.
    #[error("a worker thread failed (a bug in fpcheck): {0}")]
    Internal(String),
}

impl crate::error::Classified for HistoryError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            HistoryError::Usage(_) => crate::error::Kind::Usage,
            HistoryError::UnknownTag(_) => crate::error::Kind::Input,
            HistoryError::Internal(_) => crate::error::Kind::Internal,
            HistoryError::Config(e) => crate::error::Classified::kind(e),
            HistoryError::Source(e) => crate::error::Classified::kind(e),
        }
    }
}

/// One release (a version tag).
#[derive(Clone, Debug, Serialize)]
pub struct ReleaseInfo {
    /// The tag.
    pub tag: String,
    /// Other tags on the same commit, folded into this release.
    pub aliases: Vec<String>,
    /// The version the tag names.
    pub tag_version: String,
    /// Whether it is a pre-release (`1.0.0-rc.1`).
    pub prerelease: bool,
    /// The commit.
    pub commit: String,
    /// The version the gate reads from the tree (`null` when none).
    pub version: Option<String>,
    /// The `[project] version` of the runtime's own `pyproject.toml`
    /// (absent when none): the release's version when `version` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pyproject_version: Option<String>,
    /// `force_restart` as the gate reads it.
    pub force_restart: bool,
    /// The runtime fingerprint, `""` when unavailable.
    pub fingerprint: String,
    /// Why it is unavailable.
    pub unavailable_reason: Option<String>,
    /// How many runtime files it hashes.
    pub runtime_files: usize,
    /// What section 6 reads of the version beside the fingerprint (a
    /// version file over 16 MiB in git is unreadable).
    #[serde(skip)]
    pub reading: crate::verdict::Reading,
}

pub use crate::version::{ReleaseVersion, VersionSource};

/// One update, from a release to the next.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// The older tag.
    pub from: String,
    /// The newer tag.
    pub to: String,
    /// Versions as the gate reads them.
    pub from_version: Option<String>,
    /// Versions as the gate reads them.
    pub to_version: Option<String>,
    /// The older release's version for reporting: its version file's, or
    /// its tag's when it has none (the updater still reads `from_version`).
    pub from_release: ReleaseVersion,
    /// The newer release's version for reporting.
    pub to_release: ReleaseVersion,
    /// The reported version changed (what `restarts_saved` counts; the
    /// updater's own test is `version_changed`).
    pub release_version_changed: bool,
    /// Fingerprints (`""` when unavailable).
    pub from_fingerprint: String,
    /// Fingerprints (`""` when unavailable).
    pub to_fingerprint: String,
    /// Running clients restart.
    pub restart_required: bool,
    /// The reason code, as for a range.
    pub reason: Reason,
    /// The updater writes a marker, with this reason.
    pub marker_reason: Option<&'static str>,
    /// The version changed.
    pub version_changed: bool,
    /// Runtime files added, deleted, modified or renamed.
    pub runtime_files_changed: usize,
    /// Whether the release changed anything at all (its tree differs).
    pub changed_anything: bool,
    /// The restart was required only because of comment, whitespace or
    /// docstring changes; `null` when not classified.
    pub avoidable: Option<bool>,
    /// Why the restart could have waited (`version` too), for the advice.
    #[serde(skip)]
    pub avoidable_by: Option<crate::classify::Avoidable>,
    /// Advice beside the verdict (see [`crate::advice`]; the MCP surface
    /// is a range report's): left out when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<crate::advice::Item>,
    /// When the two releases' settings differ: the newer release
    /// fingerprinted with the older one's settings (see
    /// [`SettingsCheck`]); left out when the settings are equal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_check: Option<SettingsCheck>,
    /// Things to know about this update (`settings_changed`,
    /// `settings_changed_runtime_changed`, `runtime_not_declared`); left
    /// out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// git's own checkout of both releases, confirming a free release on
    /// trees whose checkout fpcheck emulates (see [`crate::witness`]); left
    /// out when it did not run.
    #[serde(skip_serializing_if = "crate::witness::Witness::not_run_here")]
    pub witness: crate::witness::Witness,
}

/// The record at a glance.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// Release tags analysed.
    pub releases: usize,
    /// Updates between consecutive releases.
    pub updates: usize,
    /// Updates that forced running clients to restart.
    pub restarts_forced: usize,
    /// Updates that did not.
    pub free_releases: usize,
    /// Restarts forced only by `force_restart`.
    pub forced_only_by_force_restart: usize,
    /// Releases whose fingerprint is unavailable.
    pub unavailable_fingerprints: usize,
    /// Restarts the fingerprint saved compared with restarting on every
    /// version bump (of the reported versions: a release without a version
    /// file counts its tag's); an update counts only when both of its
    /// releases have a fingerprint.
    pub restarts_saved: usize,
    /// Releases without a version file, whose version is their tag's.
    pub versions_from_tags: usize,
    /// Restarts forced only by comment, whitespace or docstring changes;
    /// `null` when not classified.
    pub avoidable_restarts: Option<usize>,
    /// Restarts forced only by version strings (and perhaps comments or
    /// docstrings); `null` when not classified.
    pub avoidable_version_restarts: Option<usize>,
    /// Free releases that changed the runtime's dependencies or a data
    /// file a module reads (see [`crate::advice`]); `null` when not
    /// classified.
    pub possible_missed_restarts: Option<usize>,
}

pub use crate::tags::SkippedTag;

/// The whole report of one runtime; `--format json` prints exactly this.
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The repository.
    pub repo: String,
    /// The repository's name, fit to publish: its `origin` remote without
    /// credentials (`github.com/acme/server`), else its folder's name.
    pub name: String,
    /// The runtime's record.
    #[serde(flatten)]
    pub record: Record,
}

/// One runtime's history: in [`History`] for one runtime, in
/// [`RuntimesHistory`] (with its name) for several.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The settings of the newest release (each release is fingerprinted
    /// with the settings committed at it; see the updates' warnings).
    #[serde(serialize_with = "config::shown::without_origin")]
    pub settings: RuntimeSpec,
    /// Every update (one release to the next), oldest first. Named
    /// `releases` in the JSON, a stable schema.
    #[serde(rename = "releases")]
    pub updates: Vec<Step>,
    /// Every release tag, oldest first.
    pub tags: Vec<ReleaseInfo>,
    /// The record at a glance.
    pub summary: Summary,
    /// Tags left out.
    pub skipped: Vec<SkippedTag>,
    /// Things to know about the order of the releases, with stable codes.
    pub warnings: Vec<Warning>,
    /// How the work went: fingerprints reused, blobs read (for the whole
    /// run, shared by every runtime).
    pub stats: Stats,
}

impl Record {
    /// Any update forced a restart.
    pub fn restart_required(&self) -> bool {
        self.updates.iter().any(|s| s.restart_required)
    }

    /// It has releases, and not one of them has a fingerprint: its
    /// verdicts are all "unavailable" (the root is likely wrong).
    pub fn no_fingerprint(&self) -> bool {
        !self.tags.is_empty()
            && self
                .tags
                .iter()
                .all(|t| crate::fingerprint::available(&t.fingerprint).is_none())
    }
}

/// What the run did, for the curious and for benchmarks.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Fingerprints taken from the persistent cache.
    pub cached: usize,
    /// Fingerprints reused from an identical selection in this run.
    pub reused: usize,
    /// Fingerprints hashed.
    pub hashed: usize,
    /// Blobs inflated.
    pub blobs_read: usize,
    /// File versions parsed to classify changes.
    pub classify_parsed: usize,
    /// Changes whose kind came from the persistent cache.
    pub classify_cached: usize,
}

/// Runs the history of `repo` for one runtime: the one `request` names, or
/// the only one declared. Each release is fingerprinted with the settings
/// committed at it (flags over all). `progress(done, total)` is called as
/// releases are read.
pub fn run(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<History, HistoryError> {
    one(repo, request, opts, &listed(repo, request, opts)?, progress)
}

/// [`run`] for releases already listed.
fn one(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    listed: &Listed,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<History, HistoryError> {
    let name = request.overrides.runtime.clone();
    let mut records = records(repo, request, opts, &[name], listed, progress)?;
    let (_, record) = records.pop().expect("one runtime asked, one record");
    Ok(History {
        schema_version: SCHEMA_VERSION,
        repo: repo_display(repo.repo()),
        name: repo_name(repo),
        record,
    })
}

/// The releases of a run: the tags in order with each one's committed
/// config, the tags left out, and the warnings about their order.
struct Listed {
    tags: Vec<Tag>,
    committed: Vec<settings::Committed>,
    skipped: Vec<SkippedTag>,
    warnings: Vec<Warning>,
}

fn listed(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
) -> Result<Listed, HistoryError> {
    let (tags, skipped) = release_tags(repo, opts)?;
    let mut warnings = Vec::new();
    let mut tags = order_equal_versions(repo, tags, &mut warnings);
    if let Some(span) = &opts.span {
        tags = restrict(tags, span)?;
    }
    let committed = settings::committed(repo, request, &tags)?;
    Ok(Listed {
        tags,
        committed,
        skipped,
        warnings,
    })
}

/// One release read for one runtime, and the cross-check of the update
/// that ends at it.
struct Slot {
    release: usize,
    plan: Plan,
    own: usize,
    cross: Option<usize>,
    /// With `cross`: the older release read with its own settings, when
    /// they are not its plan's (see [`settings::Borrowed::own`]).
    cross_base: Option<usize>,
}

/// The records of the runtimes `names`, from one pass of the workers over
/// every (release, settings) pair: blobs shared by several runtimes are
/// inflated once, and each runtime's releases are consecutive jobs so that
/// a worker resumes its hasher after their shared prefix.
fn records(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    names: &[Option<String>],
    listed: &Listed,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<(Option<String>, Record)>, HistoryError> {
    let mut plans = Vec::with_capacity(names.len());
    for name in names {
        plans.push(settings::plans(
            request,
            name.as_deref(),
            &listed.committed,
        )?);
    }
    // Every release with its own settings first (the usual case, reused
    // prefixes and all), then the cross-checks, which are rare.
    let (mut jobs, mut slots) = own_jobs(&listed.tags, &plans);
    for (runtime_slots, runtime_plans) in slots.iter_mut().zip(&plans) {
        cross_jobs(&listed.tags, runtime_plans, runtime_slots, &mut jobs);
    }
    let (reads, blobs) = read_remembered(repo, &jobs, opts, progress)?;
    let mut kinds = if opts.persistent_cache && opts.classify {
        crate::classify::KindCache::open(repo.repo())
    } else {
        crate::classify::KindCache::none()
    };
    let mut out = Vec::with_capacity(names.len());
    for (name, runtime_slots) in names.iter().zip(slots) {
        let record = record(
            repo,
            opts,
            (name.as_deref(), &runtime_slots),
            &reads,
            listed,
            (&blobs, &mut kinds),
        );
        out.push((name.clone(), record));
    }
    let _ = kinds.save();
    Ok(out)
}

/// The jobs that read each planned release of each runtime with its own
/// settings, and each runtime's slots naming them; a runtime's releases
/// are consecutive jobs, so that a worker resumes its hasher after their
/// shared prefix.
fn own_jobs<'t>(
    tags: &'t [Tag],
    plans: &'t [Vec<Option<Plan>>],
) -> (Vec<(&'t Tag, &'t RuntimeSpec)>, Vec<Vec<Slot>>) {
    let mut jobs: Vec<(&Tag, &RuntimeSpec)> = Vec::new();
    let mut slots: Vec<Vec<Slot>> = Vec::with_capacity(plans.len());
    for runtime_plans in plans {
        let mut mine = Vec::new();
        for (i, plan) in runtime_plans.iter().enumerate() {
            if let Some(plan) = plan {
                mine.push(Slot {
                    release: i,
                    plan: plan.clone(),
                    own: jobs.len(),
                    cross: None,
                    cross_base: None,
                });
                jobs.push((&tags[i], &plan.end.spec));
            }
        }
        slots.push(mine);
    }
    (jobs, slots)
}

/// Adds the jobs of one runtime's settings cross-checks to `jobs`, and
/// names them in the slot of the update each checks.
fn cross_jobs<'t>(
    tags: &'t [Tag],
    runtime_plans: &'t [Option<Plan>],
    runtime_slots: &mut [Slot],
    jobs: &mut Vec<(&'t Tag, &'t RuntimeSpec)>,
) {
    for k in 1..runtime_slots.len() {
        let (before, after) = runtime_slots.split_at_mut(k);
        let (from, to) = (&before[k - 1], &mut after[0]);
        // Every update whose settings differ is cross-checked, one that
        // declares the runtime again included: its older release was
        // read with borrowed settings, which may not be the new ones.
        let from_plan = runtime_plans[from.release]
            .as_ref()
            .expect("a planned release");
        let own = from_plan.borrowed.as_ref().and_then(|b| b.own.as_ref());
        if let Some(own) = own.filter(|own| crate::range::settings_differ(own, &to.plan.end)) {
            // Cross-checked with the older release's own settings.
            to.cross_base = Some(jobs.len());
            jobs.push((&tags[from.release], &own.spec));
            to.cross = Some(jobs.len());
            jobs.push((&tags[to.release], &own.spec));
        } else if crate::range::settings_differ(&from.plan.end, &to.plan.end) {
            to.cross = Some(jobs.len());
            jobs.push((&tags[to.release], &from_plan.end.spec));
        }
    }
}

/// Every job read ([`read_all`]) through the fingerprint cache, and the
/// new fingerprints remembered in it.
fn read_remembered(
    repo: &Session,
    jobs: &[(&Tag, &RuntimeSpec)],
    opts: &HistoryOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<Read>, Blobs), HistoryError> {
    let mut cache = if opts.persistent_cache {
        FingerprintCache::open(repo.repo())
    } else {
        FingerprintCache::in_memory()
    };
    let (reads, blobs) = read_all(repo, jobs, &cache, opts, progress)?;
    for r in &reads {
        // Only new fingerprints: putting a cached one back would parse the
        // whole cache file for nothing (a reused one's key was hashed here).
        if let (Some(key), How::Hashed) = (&r.key, r.how) {
            cache.put(key.clone(), r.info.fingerprint.clone());
        }
    }
    // A cache that cannot be written only costs the next run some time.
    let _ = cache.save();
    Ok((reads, blobs))
}

/// One runtime's record from its reads.
fn record(
    repo: &Session,
    opts: &HistoryOptions,
    (name, slots): (Option<&str>, &[Slot]),
    reads: &[Read],
    listed: &Listed,
    (blobs, kinds): (&Blobs, &mut crate::classify::KindCache),
) -> Record {
    let mut stats = job_stats(slots, reads, blobs.read);
    // A release before the first declaration was read with the first
    // declaring release's settings and keeps that fingerprint.
    let own: Vec<Read> = slots.iter().map(|slot| reads[slot.own].clone()).collect();
    let mut steps = decide_updates(slots, &own, reads);
    witnessed::confirm(repo, opts.witness, (slots, &own), &mut steps);
    if opts.classify {
        classify_steps(
            repo,
            &own,
            &mut steps,
            opts.threads,
            (blobs, kinds, &mut stats),
        );
    }
    let mut warnings = listed.warnings.clone();
    if let Some(name) = name {
        warnings.extend(declared_late(name, slots, &listed.tags));
    }
    let summary = summarise(&own, &steps);
    let newest = slots
        .last()
        .map(|s| s.plan.end.spec.clone())
        .unwrap_or_default();
    if let Some(w) = mostly_unavailable(&summary, &newest.root) {
        warnings.insert(0, w);
    }
    Record {
        settings: newest,
        updates: steps,
        tags: own.into_iter().map(|r| r.info).collect(),
        summary,
        skipped: listed.skipped.clone(),
        warnings,
        stats,
    }
}

/// How the jobs of a runtime's releases were read (cached, reused,
/// hashed), cross-checks included.
fn job_stats(slots: &[Slot], reads: &[Read], blobs_read: usize) -> Stats {
    let mut stats = Stats {
        blobs_read,
        ..Stats::default()
    };
    for slot in slots {
        for job in std::iter::once(slot.own)
            .chain(slot.cross)
            .chain(slot.cross_base)
        {
            match reads[job].how {
                How::Cached => stats.cached += 1,
                How::Reused => stats.reused += 1,
                How::Hashed => stats.hashed += 1,
                How::Unavailable => {}
            }
        }
    }
    stats
}

/// Each update between consecutive releases (`own`, each read with its
/// plan's settings), decided with its cross-check's reads.
fn decide_updates(slots: &[Slot], own: &[Read], reads: &[Read]) -> Vec<Step> {
    slots
        .windows(2)
        .zip(own.windows(2))
        .map(|(s, r)| {
            step(
                Pair::new(&r[0], &r[1]),
                Pair::new(&s[0].plan, &s[1].plan),
                s[1].cross
                    .map(|c| (&reads[c], s[1].cross_base.map(|b| &reads[b]))),
            )
        })
        .collect()
}

/// The warning that runtime `name` is declared only from a later release
/// on, so that the releases before are left out of its history.
fn declared_late(name: &str, slots: &[Slot], tags: &[Tag]) -> Option<Warning> {
    let first = slots.first().filter(|first| first.release > 0)?;
    Some(Warning::new(
        Code::RuntimeNotDeclared,
        format!(
            "runtime `{}` is not declared before {}: its history starts at {}, and {} earlier release{} left out",
            name,
            tags[first.release + usize::from(first.plan.borrowed.is_some())].name,
            tags[first.release].name,
            first.release,
            if first.release == 1 { " is" } else { "s are" }
        ),
    ))
}

fn read_all(
    repo: &Session,
    jobs: &[(&Tag, &RuntimeSpec)],
    cache: &FingerprintCache,
    opts: &HistoryOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<Read>, Blobs), HistoryError> {
    let threads = crate::threads::worker_threads(opts.threads, jobs.len());
    let blobs = Mutex::new(Blobs::default());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let chunk = jobs.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<Read>, HistoryError>> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(chunk)
            .map(|part| {
                let (blobs, done) = (&blobs, &done);
                let repo = repo.for_thread();
                s.spawn(move || {
                    let mut worker = Worker::new(&repo, cache, blobs);
                    let mut out = Vec::with_capacity(part.len());
                    for (tag, runtime) in part {
                        out.push(worker.read(tag, runtime)?);
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        progress(n, jobs.len());
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(HistoryError::Internal(what))
                })
            })
            .collect()
    });
    let mut all = Vec::with_capacity(jobs.len());
    for r in results {
        all.extend(r?);
    }
    // Kept for classification, which reads many of the same blobs.
    let blobs = blobs.into_inner().unwrap_or_default();
    Ok((all, blobs))
}

/// A name for `repo` that can be published (a report made in CI shows no
/// runner's folders): `host/path` of its `origin` remote, with no user,
/// password or port and no `.git`; for an origin on the local disk, or no
/// origin, the folder's name.
pub(crate) fn repo_name(repo: &Session) -> String {
    let origin = repo
        .repo()
        .config_snapshot()
        .string("remote.origin.url")
        .and_then(|u| gix::url::parse(&u).ok());
    let trim = |p: &str| -> String {
        let p = p.trim_matches('/');
        p.strip_suffix(".git").unwrap_or(p).to_string()
    };
    if let Some(url) = &origin {
        let path = trim(&url.path.to_string());
        match url.host() {
            Some(host) if !path.is_empty() => return format!("{host}/{path}"),
            Some(host) => return host.to_string(),
            None => {
                if let Some(last) = path.rsplit('/').next().filter(|l| !l.is_empty()) {
                    return last.to_string();
                }
            }
        }
    }
    let repo = repo.repo();
    let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name()
        .map(|n| trim(&n.to_string_lossy()))
        .unwrap_or_else(|| "repository".to_string())
}

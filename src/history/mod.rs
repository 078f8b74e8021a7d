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
use crate::config::Runtime;
use crate::range::Settings;
use crate::source::git::repo_display;
use crate::source::SourceError;
use crate::verdict::{self, Reason, SideFacts};
use crate::warning::Warning;

mod tags;
mod worker;

pub use tags::tag_version;
use tags::{order_equal_versions, release_tags, restrict, Tag};
use worker::{Blobs, How, Read, Worker};

/// The JSON schema version of [`History`].
pub const SCHEMA_VERSION: u32 = 1;

/// The warning code for tags of equal version precedence on different
/// commits.
pub const EQUAL_VERSION_TAGS: &str = "equal_version_tags";

/// What to analyse.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only releases between these two tags (inclusive, by precedence).
    pub span: Option<(String, String)>,
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
    /// A worker thread panicked: a bug, never a verdict.
    #[error("a worker thread failed (a bug in fpcheck): {0}")]
    Internal(String),
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
    /// `force_restart` as the gate reads it.
    pub force_restart: bool,
    /// The runtime fingerprint, `""` when unavailable.
    pub fingerprint: String,
    /// Why it is unavailable.
    pub unavailable_reason: Option<String>,
    /// How many runtime files it hashes.
    pub runtime_files: usize,
    /// The updater's own reading of the version (section 6).
    #[serde(skip)]
    pub updater_version: crate::release::UpdaterVersion,
    /// The version as compared (`Release::version_key`).
    #[serde(skip)]
    pub version_key: String,
    /// A version file is there but cannot be read (over 16 MiB in git).
    #[serde(skip)]
    pub version_unreadable: bool,
}

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
    /// version bump.
    pub restarts_saved: usize,
    /// Restarts forced only by comment, whitespace or docstring changes;
    /// `null` when not classified.
    pub avoidable_restarts: Option<usize>,
}

/// A tag left out, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Skipped {
    /// The tag.
    pub tag: String,
    /// Why.
    pub why: String,
}

/// The whole report; `--format json` prints exactly this.
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The repository.
    pub repo: String,
    /// The repository's name, fit to publish: its `origin` remote without
    /// credentials (`github.com/acme/server`), else its folder's name.
    pub name: String,
    /// The settings that produced the fingerprints.
    pub settings: Settings,
    /// Every update, oldest first.
    pub releases: Vec<Step>,
    /// Every release tag, oldest first.
    pub tags: Vec<ReleaseInfo>,
    /// The record at a glance.
    pub summary: Summary,
    /// Tags left out.
    pub skipped: Vec<Skipped>,
    /// Things to know about the order of the releases, with stable codes.
    pub warnings: Vec<Warning>,
    /// How the work went: fingerprints reused, blobs read.
    pub stats: Stats,
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
}

/// Runs the history of `repo`. `progress(done, total)` is called as
/// releases are read.
pub fn run(
    repo: &gix::Repository,
    runtime: &Runtime,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<History, HistoryError> {
    let (tags, skipped) = release_tags(repo, opts)?;
    let mut warnings = Vec::new();
    let mut tags = order_equal_versions(repo, tags, &mut warnings);
    if let Some(span) = &opts.span {
        tags = restrict(tags, span)?;
    }
    let mut cache = if opts.persistent_cache {
        FingerprintCache::open(repo)
    } else {
        FingerprintCache::in_memory()
    };
    let (reads, blobs_read) = read_all(repo, runtime, &tags, &cache, opts, progress)?;
    let mut stats = Stats {
        blobs_read,
        ..Stats::default()
    };
    for r in &reads {
        match r.how {
            How::Cached => stats.cached += 1,
            How::Reused => stats.reused += 1,
            How::Hashed => stats.hashed += 1,
            How::Unavailable => {}
        }
        // Only new fingerprints: putting a cached one back would parse the
        // whole cache file for nothing (a reused one's key was hashed here).
        if let (Some(key), How::Hashed) = (&r.key, r.how) {
            cache.put(key.clone(), r.info.fingerprint.clone());
        }
    }
    // A cache that cannot be written only costs the next run some time.
    let _ = cache.save();
    let mut steps: Vec<Step> = reads
        .windows(2)
        .map(|w| step(&w[0], &w[1], &runtime.root))
        .collect();
    if opts.classify {
        classify_steps(repo, &reads, &mut steps, &runtime.root, opts.threads);
    }
    let summary = summarise(&reads, &steps);
    Ok(History {
        schema_version: SCHEMA_VERSION,
        repo: repo_display(repo),
        name: repo_name(repo),
        settings: Settings::of(runtime),
        releases: steps,
        tags: reads.into_iter().map(|r| r.info).collect(),
        summary,
        skipped,
        warnings,
        stats,
    })
}

fn read_all(
    repo: &gix::Repository,
    runtime: &Runtime,
    tags: &[Tag],
    cache: &FingerprintCache,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(Vec<Read>, usize), HistoryError> {
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, tags.len().max(1));
    let sync = repo.clone().into_sync();
    let blobs = Mutex::new(Blobs::default());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let chunk = tags.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<Read>, HistoryError>> = std::thread::scope(|s| {
        let handles: Vec<_> = tags
            .chunks(chunk)
            .map(|part| {
                let (sync, blobs, done) = (&sync, &blobs, &done);
                s.spawn(move || {
                    let mut repo = sync.to_thread_local();
                    repo.objects.set_pack_cache(|| {
                        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                            32 << 20,
                        ))
                    });
                    let mut worker = Worker::new(&repo, runtime, cache, blobs);
                    let mut out = Vec::with_capacity(part.len());
                    for tag in part {
                        out.push(worker.read(tag)?);
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        progress(n, tags.len());
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
    let mut all = Vec::with_capacity(tags.len());
    for r in results {
        all.extend(r?);
    }
    let blobs_read = blobs.lock().map_or(0, |b| b.read);
    Ok((all, blobs_read))
}

/// A name for `repo` that can be published (a report made in CI shows no
/// runner's folders): `host/path` of its `origin` remote, with no user,
/// password or port and no `.git`; for an origin on the local disk, or no
/// origin, the folder's name.
pub fn repo_name(repo: &gix::Repository) -> String {
    let origin = repo
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
    let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name()
        .map(|n| trim(&n.to_string_lossy()))
        .unwrap_or_else(|| "repository".to_string())
}

fn facts(info: &ReleaseInfo) -> SideFacts {
    SideFacts {
        version: info.version_key.clone(),
        fingerprint: info.fingerprint.clone(),
        force_restart: info.force_restart,
        updater_version: info.updater_version.clone(),
        version_unreadable: info.version_unreadable,
    }
}

fn step(from: &Read, to: &Read, root: &str) -> Step {
    let d = verdict::decide(&facts(&from.info), &facts(&to.info));
    Step {
        from: from.info.tag.clone(),
        to: to.info.tag.clone(),
        from_version: from.info.version.clone(),
        to_version: to.info.version.clone(),
        from_fingerprint: from.info.fingerprint.clone(),
        to_fingerprint: to.info.fingerprint.clone(),
        restart_required: d.restart_required,
        reason: d.reason,
        marker_reason: d.updater.marker_reason.map(|r| r.as_str()),
        version_changed: d.version_changed,
        runtime_files_changed: changes::between_selections(&from.ids, &to.ids, root)
            .runtime
            .len(),
        changed_anything: from.tree != to.tree,
        avoidable: None,
    }
}

/// Marks the avoidable restarts ([`crate::classify::avoidable_updates`]
/// decides which updates are looked at, and how the work is shared).
fn classify_steps(
    repo: &gix::Repository,
    reads: &[Read],
    steps: &mut [Step],
    root: &str,
    threads: usize,
) {
    let updates: Vec<crate::classify::Update<'_>> = steps
        .iter()
        .zip(reads.windows(2))
        .map(|(step, w)| crate::classify::Update {
            candidate: step.restart_required
                && step.reason == Reason::CodeChanged
                && !w[1].info.force_restart,
            trees: (w[0].tree, w[1].tree),
            ids: (&w[0].ids, &w[1].ids),
        })
        .collect();
    let avoidable = crate::classify::avoidable_updates(repo, root, &updates, threads);
    for (step, a) in steps.iter_mut().zip(avoidable) {
        step.avoidable = Some(a);
    }
}

fn summarise(reads: &[Read], steps: &[Step]) -> Summary {
    let restarts = steps.iter().filter(|s| s.restart_required).count();
    Summary {
        releases: reads.len(),
        updates: steps.len(),
        restarts_forced: restarts,
        free_releases: steps.len() - restarts,
        forced_only_by_force_restart: steps.iter().filter(|s| s.reason == Reason::Forced).count(),
        unavailable_fingerprints: reads
            .iter()
            .filter(|r| r.info.fingerprint.is_empty())
            .count(),
        restarts_saved: steps
            .iter()
            .filter(|s| s.version_changed && !s.restart_required)
            .count(),
        avoidable_restarts: steps
            .iter()
            .map(|s| s.avoidable)
            .try_fold(0, |n, a| a.map(|a| n + usize::from(a))),
    }
}

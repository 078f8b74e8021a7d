//! `fpcheck history`: every release's restart verdict, from the tags.
//!
//! Hundreds of tags mean hundreds of fingerprints, so the work is shared:
//! a release whose selection (paths and blob ids) was seen before reuses
//! that fingerprint (also across runs, through [`FingerprintCache`]); a blob
//! is inflated once for the whole history while memory allows; the SHA-256
//! state after the first k files is reused by the next release that starts
//! with the same k files; and releases are spread over the cores.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use gix::prelude::FindExt;
use gix::ObjectId;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::cache::FingerprintCache;
use crate::changes;
use crate::config::Runtime;
use crate::range::Settings;
use crate::release;
use crate::select::{select, Selection};
use crate::source::git::repo_display;
use crate::source::{GitSource, Revision, SourceError};
use crate::verdict::{self, Reason, SideFacts};

/// The JSON schema version of [`History`].
pub const SCHEMA_VERSION: u32 = 1;

/// How many bytes of inflated blobs the history keeps for reuse.
const BLOB_MEMORY: usize = 512 << 20;

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
    /// Bad options (a span end that is not a release tag, ...).
    #[error("{0}")]
    Usage(String),
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

/// A candidate release tag, before it is read.
#[derive(Clone, Debug)]
struct Tag {
    name: String,
    aliases: Vec<String>,
    version: semver::Version,
    commit: ObjectId,
}

/// Parses a tag name as a version: semver with an optional `v`, or one to
/// three dotted numbers (`v7.10` is 7.10.0).
pub fn tag_version(name: &str) -> Option<semver::Version> {
    let text = name.strip_prefix('v').unwrap_or(name);
    if let Ok(v) = semver::Version::parse(text) {
        return Some(v);
    }
    let parts: Vec<u64> = text
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [a] => Some(semver::Version::new(*a, 0, 0)),
        [a, b] => Some(semver::Version::new(*a, *b, 0)),
        _ => None,
    }
}

/// Lists the release tags in precedence order, folding tags on one commit.
fn release_tags(
    repo: &gix::Repository,
    opts: &Options,
) -> Result<(Vec<Tag>, Vec<Skipped>), HistoryError> {
    let fail =
        |e: &dyn std::fmt::Display| SourceError::Repository(format!("cannot list the tags: {e}"));
    let mut skipped = Vec::new();
    let mut found: Vec<Tag> = Vec::new();
    let refs = repo.references().map_err(|e| fail(&e))?;
    for r in refs.tags().map_err(|e| fail(&e))? {
        let mut r = r.map_err(|e| fail(&e))?;
        let name = r.name().shorten().to_string();
        if let Some(glob) = &opts.tags {
            if !gix::glob::wildmatch(
                glob.as_str().into(),
                name.as_str().into(),
                gix::glob::wildmatch::Mode::empty(),
            ) {
                continue;
            }
        }
        let Some(version) = tag_version(&name) else {
            skipped.push(Skipped {
                tag: name,
                why: "not a version".into(),
            });
            continue;
        };
        if opts.skip_prereleases && !version.pre.is_empty() {
            skipped.push(Skipped {
                tag: name,
                why: "pre-release".into(),
            });
            continue;
        }
        match r.peel_to_commit() {
            Ok(c) => found.push(Tag {
                name,
                aliases: Vec::new(),
                version,
                commit: c.id,
            }),
            Err(_) => skipped.push(Skipped {
                tag: name,
                why: "does not point at a commit in this repository (a shallow clone?)".into(),
            }),
        }
    }
    found.sort_by(|a, b| {
        a.version
            .cmp_precedence(&b.version)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok((fold_aliases(found), skipped))
}

/// Tags on one commit are one release: the highest precedence names it.
fn fold_aliases(sorted: Vec<Tag>) -> Vec<Tag> {
    let mut by_commit: HashMap<ObjectId, usize> = HashMap::new();
    let mut out: Vec<Tag> = Vec::new();
    for tag in sorted {
        match by_commit.get(&tag.commit) {
            Some(&i) => {
                let older = std::mem::replace(&mut out[i], tag);
                let keep = &mut out[i];
                keep.aliases.extend(older.aliases);
                keep.aliases.push(older.name);
            }
            None => {
                by_commit.insert(tag.commit, out.len());
                out.push(tag);
            }
        }
    }
    // A folded release moves to its newest tag's place in the order.
    out.sort_by(|a, b| {
        a.version
            .cmp_precedence(&b.version)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

fn restrict(tags: Vec<Tag>, span: &(String, String)) -> Result<Vec<Tag>, HistoryError> {
    let find = |name: &str| {
        tags.iter()
            .find(|t| t.name == name || t.aliases.iter().any(|a| a == name))
            .map(|t| t.version.clone())
            .ok_or_else(|| {
                HistoryError::Usage(format!(
                    "`{name}` is not a release tag of this repository (see `git tag --list`)"
                ))
            })
    };
    let (lo, hi) = (find(&span.0)?, find(&span.1)?);
    if lo.cmp_precedence(&hi).is_gt() {
        return Err(HistoryError::Usage(format!(
            "`{}..{}` runs backwards ({lo} comes after {hi}): write the older release first",
            span.0, span.1
        )));
    }
    Ok(tags
        .into_iter()
        .filter(|t| t.version.cmp_precedence(&lo).is_ge() && t.version.cmp_precedence(&hi).is_le())
        .collect())
}

/// Everything read of one release.
struct Read {
    info: ReleaseInfo,
    ids: BTreeMap<String, ObjectId>,
    tree: ObjectId,
    key: Option<String>,
    how: How,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Cached,
    Reused,
    Hashed,
    Unavailable,
}

/// Blobs inflated once for the whole run, while memory allows.
#[derive(Default)]
struct Blobs {
    map: HashMap<ObjectId, Arc<Vec<u8>>>,
    bytes: usize,
    read: usize,
}

/// Runs the history of `repo`. `progress(done, total)` is called as
/// releases are read.
pub fn run(
    repo: &gix::Repository,
    runtime: &Runtime,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<History, HistoryError> {
    let (mut tags, skipped) = release_tags(repo, opts)?;
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
        if let (Some(key), false) = (&r.key, r.info.fingerprint.is_empty()) {
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
                h.join()
                    .unwrap_or_else(|_| Err(HistoryError::Usage("a worker thread failed".into())))
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

/// One thread's state: the SHA-256 states after each file of the release
/// it hashed last, to resume from the longest common prefix.
struct Worker<'a> {
    repo: &'a gix::Repository,
    runtime: &'a Runtime,
    cache: &'a FingerprintCache,
    blobs: &'a Mutex<Blobs>,
    seen: HashMap<String, String>,
    prev: Vec<(String, ObjectId)>,
    states: Vec<Sha256>,
}

impl<'a> Worker<'a> {
    fn new(
        repo: &'a gix::Repository,
        runtime: &'a Runtime,
        cache: &'a FingerprintCache,
        blobs: &'a Mutex<Blobs>,
    ) -> Self {
        Worker {
            repo,
            runtime,
            cache,
            blobs,
            seen: HashMap::new(),
            prev: Vec::new(),
            states: vec![Sha256::new()],
        }
    }

    fn read(&mut self, tag: &Tag) -> Result<Read, HistoryError> {
        let commit = self.repo.find_commit(tag.commit).map_err(|e| {
            SourceError::Repository(format!("cannot read the commit of {}: {e}", tag.name))
        })?;
        let tree = commit
            .tree_id()
            .map_err(|e| {
                SourceError::Repository(format!("cannot read the tree of {}: {e}", tag.name))
            })?
            .detach();
        let rev = Revision {
            spec: tag.name.clone(),
            commit: Some(tag.commit),
            tree,
        };
        let src = GitSource::new(self.repo.clone(), rev, &self.runtime.root)?;
        let selection = select(&src, &self.runtime.rules)?;
        let rel = release::read(&src)?;
        let version_key = rel.version_key();
        let key = FingerprintCache::key(&selection);
        let ids: BTreeMap<String, ObjectId> = selection
            .files
            .iter()
            .filter_map(|f| f.content.object_id().map(|id| (f.path.clone(), id)))
            .collect();
        let (fingerprint, reason, how) = self.fingerprint(&src, &selection, key.as_deref())?;
        let runtime_files = if fingerprint.is_empty() {
            0
        } else {
            selection.files.len()
        };
        Ok(Read {
            info: ReleaseInfo {
                tag: tag.name.clone(),
                aliases: tag.aliases.clone(),
                tag_version: tag.version.to_string(),
                prerelease: !tag.version.pre.is_empty(),
                commit: tag.commit.to_string(),
                version: rel.version,
                force_restart: rel.force_restart,
                fingerprint,
                unavailable_reason: reason,
                runtime_files,
                version_key,
                updater_version: rel.updater_version,
            },
            ids,
            tree,
            key,
            how,
        })
    }

    fn fingerprint(
        &mut self,
        src: &GitSource,
        selection: &Selection,
        key: Option<&str>,
    ) -> Result<(String, Option<String>, How), HistoryError> {
        if let Some(reason) = selection.unavailable_reason(&src_root(src), &self.runtime.rules) {
            return Ok((String::new(), Some(reason), How::Unavailable));
        }
        let key = key.expect("a git selection always has a key");
        if let Some(fp) = self.cache.get(key) {
            return Ok((fp.to_string(), None, How::Cached));
        }
        if let Some(fp) = self.seen.get(key) {
            return Ok((fp.clone(), None, How::Reused));
        }
        let files: Vec<(String, ObjectId)> = selection
            .files
            .iter()
            .map(|f| {
                (
                    f.path.clone(),
                    f.content.object_id().expect("git contents are blobs"),
                )
            })
            .collect();
        let fp = self.hash(&files)?;
        self.seen.insert(key.to_string(), fp.clone());
        Ok((fp, None, How::Hashed))
    }

    /// Section 2's stream hash, resumed after the prefix this release
    /// shares with the previous one this thread hashed.
    fn hash(&mut self, files: &[(String, ObjectId)]) -> Result<String, HistoryError> {
        let common = files
            .iter()
            .zip(&self.prev)
            .take_while(|(a, b)| a == b)
            .count();
        self.states.truncate(common + 1);
        let mut hasher = self.states[common].clone();
        for (path, id) in &files[common..] {
            let bytes = self.blob(*id, path)?;
            hasher.update(path.as_bytes());
            hasher.update([0]);
            hasher.update(bytes.as_slice());
            hasher.update([b'\n']);
            self.states.push(hasher.clone());
        }
        self.prev = files.to_vec();
        Ok(hex::encode(hasher.finalize()))
    }

    fn blob(&self, id: ObjectId, path: &str) -> Result<Arc<Vec<u8>>, HistoryError> {
        if let Some(b) = self
            .blobs
            .lock()
            .expect("no thread panics holding it")
            .map
            .get(&id)
        {
            return Ok(b.clone());
        }
        let mut buf = Vec::new();
        let data =
            self.repo
                .objects
                .find_blob(&id, &mut buf)
                .map_err(|e| SourceError::MissingObject {
                    what: format!("the blob of {}/{path}", self.runtime.root),
                    id,
                    hint: format!(
                        "cannot read it ({e}); fetch the tags in full or run in a complete clone"
                    ),
                })?;
        let bytes = Arc::new(data.data.to_vec());
        let mut blobs = self.blobs.lock().expect("no thread panics holding it");
        blobs.read += 1;
        if blobs.bytes + bytes.len() <= BLOB_MEMORY {
            blobs.bytes += bytes.len();
            blobs.map.insert(id, bytes.clone());
        }
        Ok(bytes)
    }
}

fn src_root(src: &GitSource) -> String {
    use crate::source::Source;
    src.root_display()
}

fn facts(info: &ReleaseInfo) -> SideFacts {
    SideFacts {
        version: info.version_key.clone(),
        fingerprint: info.fingerprint.clone(),
        force_restart: info.force_restart,
        updater_version: info.updater_version.clone(),
        // Blobs are always readable: git mode has no unreadable files.
        version_unreadable: false,
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

/// Marks the avoidable restarts. Only restarts caused by changed code are
/// looked at, and each stops at its first `code` file. Updates are spread
/// over the threads in runs of consecutive ones, so that each thread parses
/// a file's next version incrementally from the one before.
fn classify_steps(
    repo: &gix::Repository,
    reads: &[Read],
    steps: &mut [Step],
    root: &str,
    threads: usize,
) {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, steps.len().max(1));
    let chunk = steps.len().div_ceil(threads).max(1);
    let sync = repo.clone().into_sync();
    std::thread::scope(|s| {
        for (n, part) in steps.chunks_mut(chunk).enumerate() {
            let sync = &sync;
            s.spawn(move || {
                let mut repo = sync.to_thread_local();
                repo.objects.set_pack_cache(|| {
                    Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                        32 << 20,
                    ))
                });
                let mut streams = crate::classify::HistoryStreams::default();
                for (i, step) in part.iter_mut().enumerate() {
                    let (from, to) = (&reads[n * chunk + i], &reads[n * chunk + i + 1]);
                    let candidate = step.restart_required
                        && step.reason == Reason::CodeChanged
                        && !to.info.force_restart;
                    step.avoidable = Some(
                        candidate
                            && streams.all_cosmetic(
                                &repo,
                                (from.tree, to.tree),
                                root,
                                &changes::between_selections(&from.ids, &to.ids, root),
                                (&from.ids, &to.ids),
                            ),
                    );
                }
            });
        }
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_versions() {
        assert_eq!(tag_version("v7.10.0"), Some(semver::Version::new(7, 10, 0)));
        assert_eq!(tag_version("7.10"), Some(semver::Version::new(7, 10, 0)));
        assert_eq!(
            tag_version("v2.0.0-rc.1").map(|v| v.pre.to_string()),
            Some("rc.1".to_string())
        );
        assert_eq!(tag_version("release-1"), None);
        assert_eq!(tag_version("1.2.3.4"), None);
    }
}

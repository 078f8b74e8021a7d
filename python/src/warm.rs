//! `fpcheck.status`: the library's `gate::status` answer, with the warm
//! path of [`crate::watch`] in front of it.
//!
//! A cold or doubtful call is the library's own `status` (the CLI's code,
//! with the file cache when a path is given). A warm call is the same
//! library answer (the release's version and the marker read now): only
//! the installed fingerprint comes from the watcher, handed to the
//! library's `gate::status::status_with`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use fpcheck::gate::status::{self, CacheUse, StatusReport};
use fpcheck::select::{select, Rules};
use fpcheck::source::DirSource;
use fpcheck::warning::Warning;

use crate::errors::Error;
use crate::watch::{self, Watched};

/// How `status` may reuse earlier work.
#[derive(Clone, Debug)]
pub enum Cache {
    /// Every call is a full check.
    None,
    /// The in-process watcher only.
    Memory,
    /// The watcher, and the CLI's cache file when the watcher cannot vouch.
    File(PathBuf),
}

/// The question, as owned data (it crosses into a GIL-free closure).
pub struct Question {
    pub root: PathBuf,
    pub marker: PathBuf,
    pub rules: Rules,
    pub process_fingerprint: String,
    pub process_version: String,
    pub client: Option<String>,
    pub cache: Cache,
    /// The watched fingerprint is re-verified by a full one when its last
    /// verification is older than this (see [`DEFAULT_VERIFY_INTERVAL`]).
    pub verify_interval: Duration,
}

/// How long a watched fingerprint is trusted without a full check.
///
/// inotify reports every change a server's install makes (writes, renames,
/// deletions, attribute changes), but not a write through a memory mapping
/// (`mmap`), by any process. Such a change is bounded in time instead: it
/// is seen by every call that starts at least this long after it. Two
/// seconds keeps that bound below the time an update itself takes, and
/// costs one full fingerprint (a few milliseconds on 300 files) at most
/// every two seconds, on the caller's own call (no thread): under a steady
/// stream of calls, well under 1% of the warm answers' time.
pub const DEFAULT_VERIFY_INTERVAL: Duration = Duration::from_secs(2);

type Slot = Arc<Mutex<State>>;

/// A runtime's watcher, or when to try making one again.
#[derive(Default)]
struct State {
    watched: Option<Watched>,
    /// After a watcher could not be set up (more directories than
    /// `fs.inotify.max_user_watches`, a link among the files...), calls
    /// before this instant are full checks without trying again: setting
    /// up and tearing down the watches on every call would cost more than
    /// the check itself, on the path every tool call takes.
    retry_at: Option<Instant>,
    /// The wait before the next try, doubled on each failure.
    backoff: Duration,
}

/// The first wait after a failed setup, and the longest.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// The absolute root, the extensions and the excluded names.
type Key = (PathBuf, Vec<String>, Vec<String>);

/// One watcher per (absolute root, rules), shared by every thread of one
/// process.
struct Registry {
    /// The [`FORKS`] count it was made for.
    generation: u64,
    slots: Mutex<HashMap<Key, Slot>>,
}

/// How many `fork`s this process descends from (counted in the child).
static FORKS: AtomicU64 = AtomicU64::new(0);
/// The current registry; replaced, never freed, in a forked child.
static REGISTRY: AtomicPtr<Registry> = AtomicPtr::new(std::ptr::null_mut());

extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::SeqCst);
}

/// Counts forks in the child (`pthread_atfork`, so every fork counts:
/// `os.fork`, `multiprocessing`, a C library's). Called at import.
pub fn install_fork_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        #[cfg(unix)]
        // SAFETY: registers a handler that only increments an atomic.
        unsafe {
            libc::pthread_atfork(None, None, Some(forked_child));
        }
    });
}

/// This process's registry. A forked child gets a fresh one: it inherits
/// only the thread that called `fork`, and the parent's locks as they
/// were, possibly held by a thread in the middle of a rescan that will
/// never run here (waiting on one would block for ever). The inherited
/// registry is leaked, not dropped: its maps may be mid-update.
fn registry() -> &'static Registry {
    loop {
        let generation = FORKS.load(Ordering::SeqCst);
        let current = REGISTRY.load(Ordering::Acquire);
        // SAFETY: a registry, once published, is never freed.
        if let Some(r) = unsafe { current.as_ref() } {
            if r.generation == generation {
                return r;
            }
        }
        let fresh = Box::into_raw(Box::new(Registry {
            generation,
            slots: Mutex::default(),
        }));
        match REGISTRY.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: just published, never freed.
            Ok(_) => return unsafe { &*fresh },
            // Another thread published one first: use it.
            // SAFETY: `fresh` was never shared.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

/// Answers the process's question.
pub fn status(q: &Question) -> Result<StatusReport, Error> {
    if matches!(q.cache, Cache::None) {
        return full(q);
    }
    let key = (
        std::path::absolute(&q.root).unwrap_or_else(|_| q.root.clone()),
        q.rules.extensions.clone(),
        q.rules.exclude.clone(),
    );
    let slot = registry()
        .slots
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key)
        .or_default()
        .clone();
    // One caller per runtime at a time: a second thread waits for the
    // first's rescan instead of starting its own.
    let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(w) = held.watched.as_mut() {
        if w.still_valid() {
            if w.verified_at.elapsed() < q.verify_interval {
                return warm(q, w);
            }
            // Due for a full verification (what no event reports: a write
            // through a memory mapping). The queue was drained first: a
            // change during this check is seen next time.
            let started = Instant::now();
            let report = verify(q)?;
            if report.status.installed() == Some(w.fingerprint.as_str()) {
                w.verified_at = started;
            } else {
                // A change the watcher missed: set up again next call.
                held.watched = None;
            }
            return Ok(report);
        }
    }
    held.watched = None;
    if held.retry_at.is_some_and(|at| Instant::now() < at) {
        return full(q);
    }
    let pending = watch::start(&q.root, &q.rules);
    let (pending, warnings) = match pending {
        Some(p) => watch_selection(p, &q.root, &q.rules),
        None => (None, Vec::new()),
    };
    let started = Instant::now();
    // A failed check backs off too: an unreadable version file must not
    // make every call set up (and drop) a whole watcher again.
    let report = full(q);
    let fp = report.as_ref().ok().and_then(|r| r.status.installed());
    match (pending, fp) {
        (Some(p), Some(fp)) => {
            held.watched = Some(p.finish(fp.to_string(), warnings, started));
            held.retry_at = None;
            held.backoff = Duration::ZERO;
        }
        _ => {
            held.backoff = (held.backoff * 2).clamp(BACKOFF_FIRST, BACKOFF_MAX);
            held.retry_at = Some(Instant::now() + held.backoff);
        }
    }
    report
}

/// Watches the selected files; `None` when the watcher cannot vouch.
fn watch_selection(
    mut pending: watch::Pending,
    root: &Path,
    rules: &Rules,
) -> (Option<watch::Pending>, Vec<Warning>) {
    let Ok(selection) = select(&DirSource::new(root), rules) else {
        return (None, Vec::new());
    };
    if !selection.is_available() {
        return (None, Vec::new());
    }
    let files: Vec<&str> = selection.files.iter().map(|f| f.path.as_str()).collect();
    match pending.watch_files(&files) {
        Some(()) => (Some(pending), selection.skipped_warnings()),
        None => (None, Vec::new()),
    }
}

/// The library's request for this question.
fn request<'a>(q: &'a Question, cache: Option<&'a Path>) -> status::StatusRequest<'a> {
    status::StatusRequest {
        dir: &q.root,
        rules: &q.rules,
        marker: &q.marker,
        process_fingerprint: &q.process_fingerprint,
        process_version: &q.process_version,
        client: q.client.as_deref(),
        cache,
    }
}

/// The library's full check (the CLI's `status`).
fn full(q: &Question) -> Result<StatusReport, Error> {
    match &q.cache {
        Cache::File(path) => Ok(status::status(&request(q, Some(path.as_path())))?),
        Cache::None => Ok(status::status(&request(q, None))?),
        Cache::Memory => verify(q),
    }
}

/// A full fingerprint reported as the in-memory cache's miss: the first
/// check of a watcher, and its periodic verification (never through the
/// cache file, whose sizes and time stamps do not see a write through a
/// mapping either).
fn verify(q: &Question) -> Result<StatusReport, Error> {
    let mut report = status::status(&request(q, None))?;
    report.cache = Some(match report.status.installed() {
        None => CacheUse::Skipped,
        Some(_) => CacheUse::Miss,
    });
    Ok(report)
}

/// The answer with the watched fingerprint: the library's own answer
/// (`gate::status::status_with`), the version and the marker read now, as
/// on every call.
fn warm(q: &Question, w: &Watched) -> Result<StatusReport, Error> {
    let report = status::status_with(
        &request(q, None),
        status::StatusInstalled {
            fingerprint: Some(w.fingerprint.clone()),
            unavailable: None,
            cache: Some(CacheUse::Hit),
            warnings: w.warnings.clone(),
        },
    )?;
    Ok(report)
}

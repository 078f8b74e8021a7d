//! `fpcheck status`: reads what section 7 needs (the marker, the installed
//! version and fingerprint, through the cache when asked) and applies it.

use std::path::Path;

use serde::Serialize;

use super::cache::{self, Lookup};
use crate::fingerprint::from_selection;
use crate::release;
use crate::select::{select, Rules};
use crate::source::{DirSource, SourceError};
use crate::verdict::marker;
use crate::verdict::process::{self, CheckStatus};
use crate::warning::{self, Code, Warning};

/// What the running process asks about.
#[derive(Clone, Copy, Debug)]
pub struct StatusRequest<'a> {
    /// The installed runtime root.
    pub dir: &'a Path,
    /// Which files count.
    pub rules: &'a Rules,
    /// The marker file.
    pub marker: &'a Path,
    /// The fingerprint the process started with (`unknown`, `""` allowed).
    pub process_fingerprint: &'a str,
    /// The version it started with (`""`: same as installed).
    pub process_version: &'a str,
    /// The asking client, as given (normalised here; an unknown name
    /// counts as no client, with a warning).
    pub client: Option<&'a str>,
    /// The cache file, if any.
    pub cache: Option<&'a Path>,
}

/// How the cache served this call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheUse {
    /// Every file provably unchanged: no file was read.
    Hit,
    /// Hashed; the cache was (re)written.
    Miss,
    /// The cache file was corrupt or foreign: ignored and rewritten.
    Corrupt,
    /// The fingerprint is unavailable: nothing to cache.
    Skipped,
}

/// The answer, plus what fpcheck adds for people.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    /// The reference's fields.
    #[serde(flatten)]
    pub status: CheckStatus,
    /// Why the installed fingerprint is unavailable.
    pub installed_unavailable_reason: Option<String>,
    /// Why the marker is corrupt.
    pub marker_problem: Option<String>,
    /// Why the answer goes beyond section 7, when it does: a version file
    /// that cannot be read while the fingerprints cannot prove the process
    /// current.
    pub conservative: Option<String>,
    /// How the cache served (absent without `--cache`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
    /// Things to know (unparsable version files, a cache not written, the
    /// installed fingerprint unavailable): the JSON keeps their messages in
    /// `warnings` (schema 1: strings) and their codes, in the same order,
    /// in `warning_codes`.
    #[serde(flatten, serialize_with = "warning::split::serialize")]
    pub warnings: Vec<Warning>,
}

/// Answers the process's question.
pub fn status(req: &StatusRequest) -> Result<StatusReport, SourceError> {
    let source = DirSource::new(req.dir);
    let installed = installed(&source, req)?;
    answer(req, &source, installed)
}

/// What is known of the installed runtime before the version files and the
/// marker are read.
#[derive(Clone, Debug, Default)]
pub struct StatusInstalled {
    /// The installed fingerprint (`None` when unavailable).
    pub fingerprint: Option<String>,
    /// Why it is unavailable.
    pub unavailable: Option<String>,
    /// How a cache served it.
    pub cache: Option<CacheUse>,
    /// Warnings from computing it.
    pub warnings: Vec<Warning>,
}

/// Answers the process's question when the caller already vouches for the
/// installed fingerprint (a long-running process whose file watcher saw no
/// change): the version files and the marker are still read on every call,
/// and the answer is the same function of them as [`status`]'s.
pub fn status_with(
    req: &StatusRequest,
    installed: StatusInstalled,
) -> Result<StatusReport, SourceError> {
    answer(req, &DirSource::new(req.dir), installed)
}

fn answer(
    req: &StatusRequest,
    source: &DirSource,
    inst: StatusInstalled,
) -> Result<StatusReport, SourceError> {
    let rel = release::read(source)?;
    let mut warnings = rel.warnings.clone();
    let client = req.client.and_then(crate::verdict::client::normalise);
    if let Some(name) = req.client.filter(|_| client.is_none()) {
        warnings.extend(super::run::unknown_client_warnings(&[name.to_string()]));
    }
    warnings.extend(inst.warnings);
    let marker = marker::read(req.marker);
    let mut status = process::check(&process::CheckInputs {
        marker: &marker,
        installed_version: rel.version.as_deref().unwrap_or(""),
        installed_fingerprint: inst.fingerprint.as_deref(),
        process_version: req.process_version,
        process_fingerprint: Some(req.process_fingerprint),
        client,
    });
    if let Some(why) = &inst.unavailable {
        warnings.push(installed_unavailable(why, &rel));
    }
    let mut conservative = None;
    // Section 7 falls back to the versions when the fingerprints cannot
    // prove the process current; an unreadable version file could hide the
    // installed version and with it a mismatch. Err toward restart.
    if !status.restart_required && !status.fingerprint_match && !rel.unreadable.is_empty() {
        status.restart_required = true;
        status.reason = Some(process::CheckReason::VersionMismatch);
        conservative = Some(format!(
            "version files cannot be read ({}) and the fingerprints cannot prove the process current",
            rel.unreadable.join(", ")
        ));
    }
    Ok(StatusReport {
        conservative,
        status,
        installed_unavailable_reason: inst.unavailable,
        marker_problem: match marker {
            marker::MarkerState::Corrupt(why) => Some(format!("{} {why}", req.marker.display())),
            _ => None,
        },
        cache: inst.cache,
        warnings,
    })
}

/// The warning that the installed fingerprint is unavailable (`why`):
/// section 7 then leaves the answer to the marker and the versions, which
/// may well be "no restart" (an installed runtime gone, a process that
/// started with its version), so it is said rather than left to
/// `installed_unavailable_reason` alone.
pub(crate) fn installed_unavailable(why: &str, release: &release::Release) -> Warning {
    let version = release
        .version
        .as_deref()
        .map(crate::verdict::client::py_strip);
    let rest = if !release.unreadable.is_empty() {
        "a version file cannot be read either, so the answer errs toward restart"
    } else if version.is_some_and(|v| !v.is_empty()) {
        "the marker and the versions decide"
    } else {
        "no installed version is readable either, so only the marker can ask for a restart"
    };
    Warning::new(
        Code::InstalledUnavailable,
        format!(
            "the installed runtime's fingerprint is unavailable ({why}), so it cannot prove \
             the process current or stale; {rest} (docs/spec.md section 7)"
        ),
    )
}

/// The installed fingerprint, why it is unavailable, how the cache served,
/// and the warnings of computing it.
fn installed(source: &DirSource, req: &StatusRequest) -> Result<StatusInstalled, SourceError> {
    let mut warnings = Vec::new();
    let done = |fingerprint, unavailable, cache, warnings| StatusInstalled {
        fingerprint,
        unavailable,
        cache,
        warnings,
    };
    let selection = select(source, req.rules)?;
    let Some(cache_path) = req.cache.filter(|_| selection.is_available()) else {
        let fp = from_selection(source, req.rules, selection)?;
        warnings.extend(fp.warnings.iter().cloned());
        let used = req.cache.map(|_| CacheUse::Skipped);
        return Ok(done(fp.digest, fp.unavailable_reason, used, warnings));
    };
    // The stamp precedes the stats, and the stats precede the reads, so a
    // write after any of them shows in a later call's stats (see cache.rs).
    let stamp = cache::now_ns();
    let stats = cache::stat_all(&selection.files);
    let mut used = CacheUse::Miss;
    if let Some(stats) = &stats {
        match cache::lookup(cache_path, req.dir, req.rules, &selection.files, stats) {
            Lookup::Hit(fp) => {
                warnings.extend(selection.skipped_warnings());
                return Ok(done(Some(fp), None, Some(CacheUse::Hit), warnings));
            }
            Lookup::Miss => {}
            Lookup::Corrupt => used = CacheUse::Corrupt,
        }
    }
    let fp = from_selection(source, req.rules, selection)?;
    warnings.extend(fp.warnings.iter().cloned());
    let Some(digest) = &fp.digest else {
        let why = fp.unavailable_reason;
        return Ok(done(None, why, Some(CacheUse::Skipped), warnings));
    };
    if let Some(stats) = &stats {
        let files = &fp.selection.files;
        let stored = cache::store(cache_path, req.dir, req.rules, files, stats, stamp, digest);
        if let Err(e) = stored {
            warnings.push(Warning::new(
                Code::CacheNotWritten,
                format!(
                    "cannot write the cache {}: {}",
                    cache_path.display(),
                    super::io_reason(&e)
                ),
            ));
        }
    }
    Ok(done(Some(digest.clone()), None, Some(used), warnings))
}

//! `fpcheck gate`: after an update, compare the runtime with its snapshot,
//! decide (section 6), and write the marker under the lock.
//!
//! The gate never fails open. When it cannot decide (an unreadable or
//! foreign snapshot, settings that differ from the snapshot's, a marker
//! directory it cannot use) the answer is "restart required": it still
//! writes the marker if it can, with what it knows, and reports the error so
//! the command exits non-zero.

use std::io;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::snapshot::{self, FileChange, Recorded, Snapshot, SnapshotSettings};
use super::{clock, lock, Cause, ErrorKind, GateError};
use crate::atomic;
use crate::error::Classified;
use crate::pair::Pair;
use crate::verdict::client::{self, Client};
use crate::verdict::marker::{Marker, SCHEMA_VERSION};
use crate::verdict::updater::{self, MarkerReason};
use crate::warning::{self, Code, Warning};

/// What the gate is asked to do.
pub struct GateRequest<'a> {
    /// The runtime root, now holding the new release.
    pub dir: &'a Path,
    /// The snapshot taken before the update.
    pub before: &'a Path,
    /// The marker file.
    pub marker: &'a Path,
    /// Clients that must restart, as given: normalised here (section 6);
    /// unknown names count as none, with a warning. None known: the
    /// reference's default, `claude_code`.
    pub clients: &'a [String],
    /// Settings given on the command line; `None` uses the snapshot's.
    pub settings: Option<SnapshotSettings>,
    /// How long to wait for another gate holding the lock.
    pub lock_timeout: Duration,
    /// Called between the marker's temporary write and its rename (fault
    /// injection in tests; a no-op otherwise).
    pub before_rename: &'a dyn Fn(&Path) -> io::Result<()>,
}

/// The recorded `runtime_fingerprint` against the installed bytes.
#[derive(Clone, Debug, Serialize)]
pub struct RecordedCheck {
    /// The file it came from.
    pub file: String,
    /// The recorded value.
    pub value: Value,
    /// Whether the installed fingerprint equals it.
    pub matches: bool,
}

/// The gate's decision and what it did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GateReport {
    /// The conservative answer on any failure.
    pub restart_required: bool,
    /// The marker's reason when one is required.
    pub reason: Option<MarkerReason>,
    /// Whether the marker file now holds this decision.
    pub marker_written: bool,
    /// The marker path.
    pub marker: String,
    /// Section 6's terms (`null` when the snapshot could not be read).
    pub version_changed: Option<bool>,
    /// The code changed, or could not be compared.
    pub code_changed: Option<bool>,
    /// The new release's `force_restart`.
    pub force_restart: bool,
    /// The version before (section 5; `null`: none found, or no snapshot).
    pub from_version: Option<String>,
    /// The version after (section 5).
    pub to_version: Option<String>,
    /// The updater's raw reading before (section 6), as JSON text.
    pub updater_from_version: Option<String>,
    /// The updater's raw reading after, as JSON text.
    pub updater_to_version: Option<String>,
    /// The fingerprint before (`""` when unavailable or unknown).
    pub from_fingerprint: String,
    /// The fingerprint after.
    pub to_fingerprint: String,
    /// Why the fingerprint before is unavailable.
    pub from_unavailable_reason: Option<String>,
    /// Why the fingerprint after is unavailable.
    pub to_unavailable_reason: Option<String>,
    /// The release's recorded `runtime_fingerprint`, checked.
    pub recorded_fingerprint: Option<RecordedCheck>,
    /// Runtime files added, removed or modified (`null` when either side's
    /// file list is unknown).
    pub changed_files: Option<Vec<FileChange>>,
    /// Why the answer goes beyond section 6, when it does.
    pub conservative: Option<String>,
    /// The marker's clients, when written.
    pub clients: Option<Map<String, Value>>,
    /// Whether the marker's directory was created (a fresh install).
    pub marker_dir_created: bool,
    /// What went wrong, when something did.
    pub error: Option<String>,
    /// The class of that error, for the exit code.
    #[serde(skip)]
    pub error_kind: Option<ErrorKind>,
    /// Its cause, for callers that map failures to their own types.
    #[serde(skip)]
    pub error_cause: Option<Cause>,
    /// Things to know; the JSON keeps their messages only.
    #[serde(serialize_with = "warning::messages")]
    pub warnings: Vec<Warning>,
}

impl GateReport {
    /// Either side's fingerprint is unavailable.
    pub fn unavailable(&self) -> bool {
        let available = crate::fingerprint::available;
        available(&self.from_fingerprint).is_none() || available(&self.to_fingerprint).is_none()
    }

    fn fail(&mut self, e: GateError) {
        self.restart_required = true;
        if self.error.is_none() {
            self.error_kind = Some(e.kind());
            self.error_cause = Some(e.cause());
            self.error = Some(e.to_string());
        }
    }
}

/// Runs the gate. Never returns an error: failures are in the report, with
/// the conservative answer.
pub fn gate(req: &GateRequest) -> GateReport {
    let mut report = GateReport {
        marker: req.marker.display().to_string(),
        warnings: unknown_client_warnings(req.clients),
        ..GateReport::default()
    };
    let snapshots = read_both(req, &mut report);
    match (&snapshots.from, &snapshots.to, report.error.is_none()) {
        (Some(b), Some(a), true) => decide(&mut report, b, a),
        _ => fail_closed(&mut report),
    }
    write_under_lock(req, &mut report);
    if report.error.is_some() {
        fail_closed(&mut report);
    }
    report
}

/// Reads the snapshot and takes the runtime's state now, with the
/// snapshot's settings (or the flags', which must agree with them).
fn read_both(req: &GateRequest, report: &mut GateReport) -> Pair<Option<Snapshot>> {
    let before = snapshot::load(req.before);
    let settings = match (&before, &req.settings) {
        (Ok(b), Some(given)) if *given != b.settings => {
            report.fail(GateError::SettingsMismatch {
                snapshot: describe(&b.settings),
                given: describe(given),
            });
            given.clone()
        }
        (Ok(b), _) => b.settings.clone(),
        (Err(_), Some(given)) => given.clone(),
        (Err(_), None) => default_settings(),
    };
    let before = before.map_err(|e| report.fail(e)).ok();
    let after = snapshot::take(req.dir, &settings)
        .map_err(|e| report.fail(e.into()))
        .ok();
    if let Some(b) = &before {
        report.updater_from_version = Some(b.updater_version.clone());
        report.from_version = b.version.clone();
        report.from_fingerprint = b.fingerprint.clone();
        report.from_unavailable_reason = b.unavailable_reason.clone();
    }
    if let Some(a) = &after {
        report.updater_to_version = Some(a.updater_version.clone());
        report.to_version = a.version.clone();
        report.to_fingerprint = a.fingerprint.clone();
        report.to_unavailable_reason = a.unavailable_reason.clone();
        report.force_restart = a.force_restart;
        report.warnings.extend(a.warnings.iter().cloned());
        report.recorded_fingerprint = a
            .recorded_fingerprint
            .as_ref()
            .map(|r| check_recorded(r, a));
        if let Some(r) = report.recorded_fingerprint.as_ref().filter(|r| !r.matches) {
            report.warnings.push(Warning::new(
                Code::RecordedFingerprintMismatch,
                format!(
                    "THE INSTALLED RUNTIME DOES NOT MATCH ITS RELEASE: {} records runtime_fingerprint {}, \
                     the installed files hash to {}: treating the code as changed",
                    r.file,
                    r.value,
                    a.digest().unwrap_or("nothing (unavailable)"),
                ),
            ));
        }
    }
    Pair::new(before, after)
}

/// Writes the marker under the lock when the report asks for one.
///
/// With nothing to write, the lock is not taken: such a gate reads and
/// replaces nothing (neither the marker nor its temporary files), so it
/// has nothing to serialise with other gates or `ack`, and waiting for
/// them (up to `--lock-timeout`) would only delay a "no restart". The lock
/// file is still opened, so that a marker directory a later gate could not
/// use fails closed now instead of passing silently.
fn write_under_lock(req: &GateRequest, report: &mut GateReport) {
    // A fresh install has no marker directory yet: the reference creates
    // it, and so does the gate when a marker is to be written. With nothing
    // to write, a missing directory holds no marker and needs no lock.
    if let Some(dir) = req.marker.parent().filter(|d| !d.as_os_str().is_empty()) {
        if report.reason.is_none() && std::fs::symlink_metadata(dir).is_err() {
            return;
        }
        if report.reason.is_some() && !dir.exists() {
            match std::fs::create_dir_all(dir) {
                Ok(()) => report.marker_dir_created = true,
                Err(e) => {
                    return report.fail(GateError::Write {
                        path: dir.display().to_string(),
                        why: super::io_reason(&e),
                    })
                }
            }
        }
    }
    let Some(reason) = report.reason else {
        if let Err(e) = lock::probe(req.marker) {
            report.fail(e);
        }
        return;
    };
    let _held = match lock::acquire(req.marker, req.lock_timeout) {
        Ok(held) => held,
        Err(e) => return report.fail(e),
    };
    match write_marker(req, report, reason) {
        Ok(clients) => {
            report.marker_written = true;
            report.clients = Some(clients);
        }
        Err(e) => report.fail(e),
    }
}

/// The answer when the gate cannot decide: restart, for the usual reason.
fn fail_closed(report: &mut GateReport) {
    report.restart_required = true;
    report.reason.get_or_insert(MarkerReason::BrainUpdate);
    report
        .conservative
        .get_or_insert_with(|| "the gate could not decide, so it asks for a restart".into());
}

/// Section 6 plus fpcheck's never-fail-open rule, on two good snapshots.
fn decide(report: &mut GateReport, before: &Snapshot, after: &Snapshot) {
    let recorded_mismatch = report
        .recorded_fingerprint
        .as_ref()
        .is_some_and(|r| !r.matches);
    let unreadable: Vec<&str> = before
        .unreadable_version_files
        .iter()
        .chain(&after.unreadable_version_files)
        .map(String::as_str)
        .collect();
    let inputs = updater::MarkerInputs {
        old_version: before.version_str(),
        new_version: after.version_str(),
        updater_version_changed: before.updater().differs(&after.updater()),
        old_fingerprint: crate::fingerprint::available(&before.fingerprint),
        new_fingerprint: crate::fingerprint::available(&after.fingerprint),
        force_restart: after.force_restart,
        recorded_mismatch,
        version_unreadable: !unreadable.is_empty(),
        no_version_file: unreadable.is_empty()
            && !before.has_version_file()
            && !after.has_version_file(),
    };
    let decided = updater::decide_gate(&inputs);
    let reason = decided.marker;
    report.version_changed = Some(decided.section_6.version_changed);
    report.code_changed = Some(decided.section_6.code_changed);
    report.changed_files = snapshot::changed_files(before, after);
    match decided.asked_by {
        updater::AskedBy::Section6 => {}
        updater::AskedBy::UnavailableFingerprint => {
            report.conservative = Some(
                "a fingerprint is unavailable: the marker is written although the version did not change"
                    .into(),
            )
        }
        updater::AskedBy::NoVersionFile => {
            report.conservative = Some(
                "neither side has a version file (version.json, package.json): the versions cannot tell a release from none, so the code change writes the marker"
                    .into(),
            )
        }
        updater::AskedBy::UnreadableVersion => {
            report.conservative = Some(format!(
                "version files cannot be read ({}): a version change or force_restart cannot be ruled out",
                unreadable.join(", ")
            ))
        }
    }
    report.reason = reason;
    report.restart_required = reason.is_some();
}

fn check_recorded(r: &Recorded, after: &Snapshot) -> RecordedCheck {
    RecordedCheck {
        file: r.file.clone(),
        value: r.value.clone(),
        matches: r.matches(after.digest()),
    }
}

/// Writes the marker; the caller holds the lock, so the read of the
/// previous marker (for its clients) and the replacement are one step.
fn write_marker(
    req: &GateRequest,
    report: &GateReport,
    reason: MarkerReason,
) -> Result<Map<String, Value>, GateError> {
    // Temporary files of gates killed mid-write: only writers holding this
    // lock make them, so none is live. Failing to sweep them is harmless.
    let _ = atomic::remove_leftovers(req.marker);
    let clients = client::for_marker(&known_clients(req.clients));
    // The marker's versions are the updater's raw values, as
    // `str(value or "").strip()`; unknown (no snapshot) is "".
    let text = |json: &Option<String>| {
        json.as_deref()
            .and_then(crate::release::UpdaterVersion::from_json)
            .map(|v| v.marker_text())
            .unwrap_or_default()
    };
    let m = Marker {
        schema_version: SCHEMA_VERSION,
        required: true,
        from_version: text(&report.updater_from_version),
        to_version: text(&report.updater_to_version),
        from_fingerprint: report.from_fingerprint.clone(),
        to_fingerprint: report.to_fingerprint.clone(),
        reason,
        updated_at: clock::now_utc(),
        clients: clients.clone(),
    };
    atomic::replace_own_with(req.marker, &m.to_bytes(), req.before_rename).map_err(|e| {
        GateError::Write {
            path: req.marker.display().to_string(),
            why: super::io_reason(&e),
        }
    })?;
    Ok(clients)
}

/// The known clients among `names`, normalised (section 6).
pub(crate) fn known_clients(names: &[String]) -> Vec<Client> {
    names.iter().filter_map(|n| client::normalise(n)).collect()
}

/// Warnings for names that are not known clients.
pub(crate) fn unknown_client_warnings(names: &[String]) -> Vec<Warning> {
    names
        .iter()
        .filter(|n| client::normalise(n).is_none())
        .map(|n| {
            Warning::new(
                Code::UnknownClient,
                format!(
                    "{n:?} is not a known client (claude_code, claude_desktop, codex, or an alias): \
                     it counts as no client, as in the reference gate"
                ),
            )
        })
        .collect()
}

fn default_settings() -> SnapshotSettings {
    crate::config::RuntimeSpec::default().into()
}

fn describe(s: &SnapshotSettings) -> String {
    format!(
        "extensions {}, exclude {}",
        s.extensions.join(","),
        if s.exclude.is_empty() {
            "none".into()
        } else {
            s.exclude.join(",")
        }
    )
}

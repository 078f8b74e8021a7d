//! The verdict: two sides of a release in, the gate's decision out.
//!
//! Pure functions over docs/spec.md sections 6 (the updater's marker) and
//! 7 (the running process's own check), so they can be tested as tables.

use serde::Serialize;

/// What the decision needs to know about one side of a release.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideFacts {
    /// The version string (`""` when none was found, as the gate reads it).
    pub version: String,
    /// The fingerprint (`""` when unavailable).
    pub fingerprint: String,
    /// Whether `force_restart` is on (Python truthiness).
    pub force_restart: bool,
}

/// One reason code per verdict; documented in the README.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The runtime fingerprint changed: running code is different.
    CodeChanged,
    /// A fingerprint is unavailable, so the code counts as changed.
    FingerprintUnavailable,
    /// `force_restart` is on and the version changed; the code did not.
    Forced,
    /// Nothing the running process executes changed.
    NoRuntimeChange,
    /// A fingerprint is unavailable but the version did not change: neither
    /// path of the gate can notice, so running clients keep the old code.
    UnavailableVersionUnchanged,
    /// The ends' settings differ, and the `to` end fingerprinted with the
    /// `from` end's settings (what the running release's gate computes)
    /// differs from the `from` end's fingerprint or is unavailable, though
    /// the `to` end's own settings show no change. Set by
    /// [`crate::range`], never by [`decide`].
    SettingsChangedRuntimeChanged,
}

impl Reason {
    /// The code as printed in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::CodeChanged => "code_changed",
            Reason::FingerprintUnavailable => "fingerprint_unavailable",
            Reason::Forced => "forced",
            Reason::NoRuntimeChange => "no_runtime_change",
            Reason::UnavailableVersionUnchanged => "unavailable_version_unchanged",
            Reason::SettingsChangedRuntimeChanged => "settings_changed_runtime_changed",
        }
    }
}

/// The updater's side (section 6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpdaterOutcome {
    /// Whether the updater writes the restart marker.
    pub writes_marker: bool,
    /// `brain_update` or `brain_update_force`, when it does.
    pub marker_reason: Option<&'static str>,
}

/// The running process's own check right after the update (section 7),
/// before any marker is considered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessCheck {
    /// Whether the check alone makes the process restart.
    pub fires: bool,
    /// `fingerprint_mismatch` or `version_mismatch`, when it does.
    pub reason: Option<&'static str>,
}

/// The decision for an update from one side to the other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Running clients are made to restart, by either path.
    pub restart_required: bool,
    /// Why, as one code.
    pub reason: Reason,
    /// `old_version != new_version`.
    pub version_changed: bool,
    /// Fingerprints differ, or either is unavailable.
    pub code_changed: bool,
    /// The updater's path.
    pub updater: UpdaterOutcome,
    /// The process's path.
    pub process_check: ProcessCheck,
}

/// Decides an update from `from` to `to` exactly as the reference gate.
pub fn decide(from: &SideFacts, to: &SideFacts) -> Decision {
    let unavailable = from.fingerprint.is_empty() || to.fingerprint.is_empty();
    let version_changed = from.version != to.version;
    let code_changed = from.fingerprint != to.fingerprint || unavailable;
    // The updater reads force_restart from the release it just installed.
    let force = to.force_restart;
    let writes_marker = version_changed && (code_changed || force);
    let marker_reason = writes_marker.then_some(if force && !code_changed {
        "brain_update_force"
    } else {
        "brain_update"
    });
    let process_check = process_check(from, to);
    let restart_required = writes_marker || process_check.fires;
    let reason = match (restart_required, unavailable, code_changed) {
        (true, true, _) => Reason::FingerprintUnavailable,
        (true, false, true) => Reason::CodeChanged,
        (true, false, false) => Reason::Forced,
        (false, true, _) => Reason::UnavailableVersionUnchanged,
        (false, false, _) => Reason::NoRuntimeChange,
    };
    Decision {
        restart_required,
        reason,
        version_changed,
        code_changed,
        updater: UpdaterOutcome {
            writes_marker,
            marker_reason,
        },
        process_check,
    }
}

/// Section 7 for a process started on `from` once `to` is installed, with
/// no marker: a fingerprint mismatch, or the version fallback.
fn process_check(from: &SideFacts, to: &SideFacts) -> ProcessCheck {
    let installed = &to.fingerprint;
    let process = &from.fingerprint;
    let usable = !installed.is_empty() && !process.is_empty() && process != "unknown";
    let reason = if usable && installed != process {
        Some("fingerprint_mismatch")
    } else if !usable
        && !from.version.is_empty()
        && !to.version.is_empty()
        && from.version != to.version
    {
        Some("version_mismatch")
    } else {
        None
    };
    ProcessCheck {
        fires: reason.is_some(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(version: &str, fp: &str, force: bool) -> SideFacts {
        SideFacts {
            version: version.into(),
            fingerprint: fp.into(),
            force_restart: force,
        }
    }

    /// The behaviour matrix of section 8, plus the corners around it.
    #[test]
    fn the_behaviour_matrix() {
        #[rustfmt::skip]
        let rows = [
            // from, to, restart, reason, marker reason, process reason
            (side("1", "a", false), side("2", "b", false), true, Reason::CodeChanged, Some("brain_update"), Some("fingerprint_mismatch")),
            (side("1", "a", false), side("2", "a", false), false, Reason::NoRuntimeChange, None, None),
            (side("1", "a", false), side("2", "a", true), true, Reason::Forced, Some("brain_update_force"), None),
            (side("1", "a", false), side("2", "", false), true, Reason::FingerprintUnavailable, Some("brain_update"), Some("version_mismatch")),
            (side("1", "", false), side("2", "a", false), true, Reason::FingerprintUnavailable, Some("brain_update"), Some("version_mismatch")),
            // Code changed, version did not: only the process check notices.
            (side("1", "a", false), side("1", "b", false), true, Reason::CodeChanged, None, Some("fingerprint_mismatch")),
            // Forced without a version bump: the updater writes nothing.
            (side("1", "a", false), side("1", "a", true), false, Reason::NoRuntimeChange, None, None),
            // Unavailable and no version bump: nobody can notice.
            (side("1", "a", false), side("1", "", false), false, Reason::UnavailableVersionUnchanged, None, None),
            // Forced while the code changed too: an ordinary update marker.
            (side("1", "a", false), side("2", "b", true), true, Reason::CodeChanged, Some("brain_update"), Some("fingerprint_mismatch")),
            // A missing version on one side still counts as a change of version.
            (side("", "a", false), side("2", "a", true), true, Reason::Forced, Some("brain_update_force"), None),
        ];
        for (i, (from, to, restart, reason, marker, process)) in rows.into_iter().enumerate() {
            let d = decide(&from, &to);
            assert_eq!(
                (
                    d.restart_required,
                    d.reason,
                    d.updater.marker_reason,
                    d.process_check.reason
                ),
                (restart, reason, marker, process),
                "row {i}"
            );
            assert_eq!(d.updater.writes_marker, marker.is_some(), "row {i}");
        }
    }
}

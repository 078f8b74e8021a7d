//! The verdict: two sides of a release in, the gate's decision out.
//!
//! Sections 6 (the updater's marker) and 7 (the running process's own
//! check) of docs/spec.md are implemented once, in [`updater`] and
//! [`process`]; this module combines them into the verdict of an update.

use serde::Serialize;

pub mod client;
pub mod marker;
pub mod process;
pub mod updater;

use crate::release::UpdaterVersion;
use marker::MarkerState;
use process::{self as check, CheckReason};
use updater::{self as decision, MarkerReason};

/// What section 6 reads of a release besides its fingerprint and
/// `force_restart` (which reports show): kept beside each side of a range
/// and each release of a history, so that both build [`SideFacts`] the
/// same way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// The version as compared (`Release::version_key`).
    pub version_key: String,
    /// The updater's own reading of the version (section 6).
    pub updater_version: UpdaterVersion,
    /// A version file is there but cannot be read.
    pub version_unreadable: bool,
}

impl Reading {
    /// What `release` says to the decision.
    pub fn of(release: &crate::release::Release) -> Self {
        Reading {
            version_key: release.version_key(),
            updater_version: release.updater_version.clone(),
            version_unreadable: !release.unreadable.is_empty(),
        }
    }

    /// The decision's view of this side, with its `force_restart` and the
    /// fingerprint it is compared by.
    pub fn facts(&self, force_restart: bool, fingerprint: Option<String>) -> SideFacts {
        SideFacts {
            version: self.version_key.clone(),
            fingerprint,
            force_restart,
            updater_version: self.updater_version.clone(),
            version_unreadable: self.version_unreadable,
        }
    }
}

/// What the decision needs to know about one side of a release.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideFacts {
    /// The version as compared: `""` when none was found, else its exact
    /// text (`Release::version_key`).
    pub version: String,
    /// The fingerprint (`None` when unavailable).
    pub fingerprint: Option<String>,
    /// Whether `force_restart` is on (Python truthiness).
    pub force_restart: bool,
    /// The updater's own reading of the version (section 6).
    pub updater_version: UpdaterVersion,
    /// A version file is there but cannot be read: its version and
    /// `force_restart` cannot be ruled out (section 5: err toward restart).
    pub version_unreadable: bool,
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
    /// [`decide_update`] under a settings cross-check, never by [`decide`].
    SettingsChangedRuntimeChanged,
    /// fpcheck's reading says no restart, but git's own checkout of the
    /// ends (the witness, [`crate::witness`]) gives another verdict or
    /// other fingerprints: fpcheck's emulation of the checkout is wrong
    /// there, and the update restarts. Set by the witness, never by
    /// [`decide`].
    WitnessDisagrees,
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
            Reason::WitnessDisagrees => "witness_disagrees",
        }
    }
}

/// The updater's side (section 6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpdaterOutcome {
    /// Whether the updater writes the restart marker.
    pub writes_marker: bool,
    /// `brain_update` or `brain_update_force`, when it does.
    pub marker_reason: Option<MarkerReason>,
}

/// The running process's own check right after the update (section 7),
/// before any marker is considered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessCheck {
    /// Whether the check alone makes the process restart.
    pub fires: bool,
    /// `fingerprint_mismatch` or `version_mismatch`, when it does.
    pub reason: Option<CheckReason>,
}

/// The decision for an update from one side to the other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Running clients are made to restart, by either path.
    pub restart_required: bool,
    /// Why, as one code.
    pub reason: Reason,
    /// Either reading of the version changed (section 6).
    pub version_changed: bool,
    /// Fingerprints differ, or either is unavailable.
    pub code_changed: bool,
    /// The updater's path.
    pub updater: UpdaterOutcome,
    /// The process's path.
    pub process_check: ProcessCheck,
}

/// Decides an update from `from` to `to` exactly as the reference gate:
/// section 6 ([`decision::decide`]) for the updater, section 7
/// ([`check::check`], with no marker) for the process started on `from`.
pub fn decide(from: &SideFacts, to: &SideFacts) -> Decision {
    let unavailable = from.fingerprint.is_none() || to.fingerprint.is_none();
    let d = decision::decide(&decision::MarkerInputs {
        old_version: &from.version,
        new_version: &to.version,
        updater_version_changed: from.updater_version.differs(&to.updater_version),
        old_fingerprint: from.fingerprint.as_deref(),
        new_fingerprint: to.fingerprint.as_deref(),
        // The updater reads force_restart from the release it just installed.
        force_restart: to.force_restart,
        recorded_mismatch: false,
        version_unreadable: from.version_unreadable || to.version_unreadable,
        // The gate's own rule, beyond the reference's updater.
        no_version_file: false,
    });
    let process_check = process_check(from, to);
    let restart_required = d.marker.is_some() || process_check.fires;
    let reason = match (restart_required, unavailable, d.code_changed) {
        (true, true, _) => Reason::FingerprintUnavailable,
        (true, false, true) => Reason::CodeChanged,
        (true, false, false) => Reason::Forced,
        (false, true, _) => Reason::UnavailableVersionUnchanged,
        (false, false, _) => Reason::NoRuntimeChange,
    };
    Decision {
        restart_required,
        reason,
        version_changed: d.version_changed,
        code_changed: d.code_changed,
        updater: UpdaterOutcome {
            writes_marker: d.marker.is_some(),
            marker_reason: d.marker,
        },
        process_check,
    }
}

/// What fpcheck adds, for one update, to the reference's two paths: the
/// facts beyond the two ends that may only ever turn the verdict into a
/// restart.
#[derive(Clone, Copy, Debug, Default)]
pub struct Policy<'a> {
    /// The runtime is declared at one end only (a monorepo runtime added,
    /// removed or declared again by the release): the end that does not
    /// declare it is read with the other end's settings and compared as
    /// usual. Should a fingerprint still be unavailable, the version cannot
    /// be trusted to tell (that end's release had no gate for the runtime):
    /// the update restarts, `fingerprint_unavailable`, rather than
    /// `unavailable_version_unchanged`.
    pub undeclared: bool,
    /// The ends' settings differ: the `to` end read with the `from` end's
    /// settings. A runtime change under the running release's settings is a
    /// restart (`settings_changed_runtime_changed`) even when the new
    /// settings hide it.
    pub settings_check: Option<&'a SettingsCheck>,
    /// Neither end has a version file the gate reads, and the releases'
    /// own versions differ (`version::releases_differ_without_version_file`:
    /// a `pyproject.toml`'s, else the tags'): that is a version change, so
    /// an unavailable fingerprint restarts (`fingerprint_unavailable`, not
    /// `unavailable_version_unchanged`) and `force_restart` is honoured
    /// (`forced`). The `updater` and `version_changed` fields still say
    /// what the reference's gate, which reads version files only, does.
    pub release_changed: bool,
}

/// An update decided under a [`Policy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decided {
    /// The decision, every rule applied.
    pub decision: Decision,
    /// When the settings cross-check turned the verdict into a restart, the
    /// reason it replaced (a report explains both).
    pub hidden_by_settings: Option<Reason>,
}

/// The one decision of an update, for the range, `history` and the Python
/// package: sections 6 and 7 ([`decide`]), then fpcheck's fail-closed rules
/// of `policy`, which only ever add a restart.
pub fn decide_update(from: &SideFacts, to: &SideFacts, policy: Policy<'_>) -> Decided {
    let mut decision = decide(from, to);
    if (policy.undeclared || policy.release_changed)
        && !decision.restart_required
        && decision.reason == Reason::UnavailableVersionUnchanged
    {
        decision.restart_required = true;
        decision.reason = Reason::FingerprintUnavailable;
    }
    if policy.release_changed
        && to.force_restart
        && !decision.restart_required
        && decision.reason == Reason::NoRuntimeChange
    {
        decision.restart_required = true;
        decision.reason = Reason::Forced;
    }
    let mut hidden_by_settings = None;
    if let Some(check) = policy.settings_check {
        if check.runtime_changed && !decision.restart_required {
            hidden_by_settings = Some(decision.reason);
            decision.restart_required = true;
            decision.reason = Reason::SettingsChangedRuntimeChanged;
        }
    }
    Decided {
        decision,
        hidden_by_settings,
    }
}

/// The `to` end fingerprinted with the `from` end's settings. Present in a
/// report only when the settings differ between the ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SettingsCheck {
    /// Whose settings were applied to the `to` end: always `from`.
    pub settings: &'static str,
    /// The `to` end's fingerprint under those settings; `null` when
    /// unavailable.
    pub fingerprint: Option<String>,
    /// Why that fingerprint is unavailable.
    pub unavailable_reason: Option<String>,
    /// The cross-checked fingerprint differs from the `from` end's, or
    /// either is unavailable: the running code changed under the settings
    /// it runs with (fail-closed).
    pub runtime_changed: bool,
}

impl SettingsCheck {
    /// The check from the `to` end's fingerprint under the `from` end's
    /// settings (`cross`, `None` when unavailable, with `why`) and the
    /// `from` end's own (`None` when unavailable). Shared by the range and
    /// `history`, so that both decide the cross-check alike.
    pub fn new(cross: Option<String>, why: Option<String>, from: Option<&str>) -> Self {
        let runtime_changed = match (&cross, from) {
            (Some(c), Some(f)) => c != f,
            _ => true,
        };
        SettingsCheck {
            settings: "from",
            fingerprint: cross,
            unavailable_reason: why,
            runtime_changed,
        }
    }
}

/// Section 7 for a process started on `from` once `to` is installed, with
/// no marker: a fingerprint mismatch, or the version fallback.
fn process_check(from: &SideFacts, to: &SideFacts) -> ProcessCheck {
    let status = check::check(&check::CheckInputs {
        marker: &MarkerState::Absent,
        installed_version: &to.version,
        installed_fingerprint: to.fingerprint.as_deref(),
        process_version: &from.version,
        process_fingerprint: from.fingerprint.as_deref(),
        client: None,
    });
    ProcessCheck {
        fires: status.restart_required,
        reason: status.reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(version: &str, fp: &str, force: bool) -> SideFacts {
        SideFacts {
            version: version.into(),
            fingerprint: crate::fingerprint::available(fp).map(String::from),
            force_restart: force,
            updater_version: UpdaterVersion::from_text(version),
            version_unreadable: false,
        }
    }

    /// A runtime undeclared at one end: only "unavailable, version
    /// unchanged" turns into a restart; every other verdict stands.
    #[test]
    fn undeclared_runtimes_never_trust_an_unchanged_version() {
        let undeclared = Policy {
            undeclared: true,
            ..Policy::default()
        };
        let d = decide_update(&side("1", "a", false), &side("1", "", false), undeclared);
        assert_eq!(
            decide(&side("1", "a", false), &side("1", "", false)).reason,
            Reason::UnavailableVersionUnchanged
        );
        assert!(d.decision.restart_required);
        assert_eq!(d.decision.reason, Reason::FingerprintUnavailable);
        for (from, to) in [
            (side("1", "a", false), side("1", "a", false)),
            (side("1", "a", false), side("1", "b", false)),
            (side("1", "", false), side("2", "a", false)),
        ] {
            assert_eq!(
                decide_update(&from, &to, undeclared).decision,
                decide(&from, &to)
            );
        }
    }

    /// Two different releases without a version file: an unavailable
    /// fingerprint, or `force_restart`, restarts; every other verdict stands.
    #[test]
    fn a_release_without_a_version_file_is_a_version_change() {
        let released = Policy {
            release_changed: true,
            ..Policy::default()
        };
        let d = decide_update(&side("", "a", false), &side("", "", false), released);
        assert_eq!(
            (d.decision.restart_required, d.decision.reason),
            (true, Reason::FingerprintUnavailable)
        );
        let d = decide_update(&side("", "a", false), &side("", "a", true), released);
        assert_eq!(
            (d.decision.restart_required, d.decision.reason),
            (true, Reason::Forced)
        );
        for (from, to) in [
            (side("", "a", false), side("", "a", false)),
            (side("", "a", false), side("", "b", false)),
        ] {
            assert_eq!(
                decide_update(&from, &to, released).decision,
                decide(&from, &to)
            );
        }
        assert_eq!(
            decide_update(
                &side("", "a", false),
                &side("", "", false),
                Policy::default()
            )
            .decision
            .reason,
            Reason::UnavailableVersionUnchanged
        );
    }

    /// The settings cross-check turns only a verdict without a restart
    /// into one, and says which reason it replaced.
    #[test]
    fn a_change_under_the_running_settings_is_a_restart() {
        let changed = SettingsCheck::new(Some("c".into()), None, Some("a"));
        let same = SettingsCheck::new(Some("a".into()), None, Some("a"));
        let policy = |check| Policy {
            settings_check: Some(check),
            ..Policy::default()
        };
        let quiet = (side("1", "a", false), side("2", "a", false));
        let d = decide_update(&quiet.0, &quiet.1, policy(&changed));
        assert_eq!(
            (
                d.decision.restart_required,
                d.decision.reason,
                d.hidden_by_settings
            ),
            (
                true,
                Reason::SettingsChangedRuntimeChanged,
                Some(Reason::NoRuntimeChange)
            )
        );
        let d = decide_update(&quiet.0, &quiet.1, policy(&same));
        assert_eq!(
            (d.decision, d.hidden_by_settings),
            (decide(&quiet.0, &quiet.1), None)
        );
        let code = (side("1", "a", false), side("2", "b", false));
        let d = decide_update(&code.0, &code.1, policy(&changed));
        assert_eq!(
            (d.decision, d.hidden_by_settings),
            (decide(&code.0, &code.1), None)
        );
    }

    /// The behaviour matrix of section 8, plus the corners around it.
    #[test]
    fn the_behaviour_matrix() {
        #[rustfmt::skip]
        let rows = [
            // from, to, restart, reason, marker reason, process reason
            (side("1", "a", false), side("2", "b", false), true, Reason::CodeChanged, Some(MarkerReason::BrainUpdate), Some(CheckReason::FingerprintMismatch)),
            (side("1", "a", false), side("2", "a", false), false, Reason::NoRuntimeChange, None, None),
            (side("1", "a", false), side("2", "a", true), true, Reason::Forced, Some(MarkerReason::BrainUpdateForce), None),
            (side("1", "a", false), side("2", "", false), true, Reason::FingerprintUnavailable, Some(MarkerReason::BrainUpdate), Some(CheckReason::VersionMismatch)),
            (side("1", "", false), side("2", "a", false), true, Reason::FingerprintUnavailable, Some(MarkerReason::BrainUpdate), Some(CheckReason::VersionMismatch)),
            // Code changed, version did not: only the process check notices.
            (side("1", "a", false), side("1", "b", false), true, Reason::CodeChanged, None, Some(CheckReason::FingerprintMismatch)),
            // Forced without a version bump: the updater writes nothing.
            (side("1", "a", false), side("1", "a", true), false, Reason::NoRuntimeChange, None, None),
            // Unavailable and no version bump: nobody can notice.
            (side("1", "a", false), side("1", "", false), false, Reason::UnavailableVersionUnchanged, None, None),
            // Forced while the code changed too: an ordinary update marker.
            (side("1", "a", false), side("2", "b", true), true, Reason::CodeChanged, Some(MarkerReason::BrainUpdate), Some(CheckReason::FingerprintMismatch)),
            // A missing version on one side still counts as a change of version.
            (side("", "a", false), side("2", "a", true), true, Reason::Forced, Some(MarkerReason::BrainUpdateForce), None),
            // A version file that cannot be read: a change and force_restart
            // cannot be ruled out.
            (side("1", "a", false), SideFacts { version_unreadable: true, ..side("1", "a", false) }, true, Reason::Forced, Some(MarkerReason::BrainUpdateForce), None),
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

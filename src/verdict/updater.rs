//! The gate's decision (docs/spec.md section 6): the one implementation,
//! used by `fpcheck gate`, by the range's `updater` field and by `history`.
//!
//! ```text
//! version_changed  = section-5 versions differ  or  the updater's raw values differ
//! code_changed     = old_fp != new_fp  or  old_fp == ""  or  new_fp == ""
//! marker written  <=> version_changed and (code_changed or force_restart)
//! marker reason    = "brain_update_force" if force_restart and not code_changed
//!                    else "brain_update"
//! ```
//!
//! Kept free of I/O so that every row can be checked from a table.

use serde::Serialize;

/// Why a marker is written: the reference's two codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerReason {
    /// The runtime code changed (or could not be compared).
    BrainUpdate,
    /// Only the release's `force_restart` asks for the restart.
    BrainUpdateForce,
}

impl MarkerReason {
    /// The code as written in the marker.
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerReason::BrainUpdate => "brain_update",
            MarkerReason::BrainUpdateForce => "brain_update_force",
        }
    }
}

impl std::fmt::Display for MarkerReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the gate knows about both sides of an update. Versions and
/// fingerprints are `None` when unavailable, versions the gate's text
/// (`""` when absent).
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkerInputs<'a> {
    /// The version before the update (section 5).
    pub old_version: &'a str,
    /// The version after it (section 5).
    pub new_version: &'a str,
    /// The updater's own reading of the versions differs (its raw values,
    /// compared with Python's `!=`; see `release::UpdaterVersion`).
    pub updater_version_changed: bool,
    /// The fingerprint before the update (`None`: unavailable).
    pub old_fingerprint: Option<&'a str>,
    /// The fingerprint after it (`None`: unavailable).
    pub new_fingerprint: Option<&'a str>,
    /// The new release's `force_restart` (Python truthiness, section 5).
    pub force_restart: bool,
    /// The installed bytes do not match the `runtime_fingerprint` the
    /// release recorded in its `version.json`: the code counts as changed.
    /// Not part of section 6; `false` gives section 6 exactly.
    pub recorded_mismatch: bool,
    /// A version file at either end is there but cannot be read: what it
    /// says (a version change, `force_restart`) cannot be ruled out, so
    /// both are assumed (section 5: never toward "no restart"). With the
    /// code unchanged, the marker then says `brain_update_force`: the
    /// restart comes only from what the release may ask. Not part of
    /// section 6; `false` gives section 6 exactly.
    pub version_unreadable: bool,
    /// Neither side has a version file (no `version.json` or
    /// `package.json` in the root or the install's home): the versions
    /// cannot tell a release from none, so a code change writes the
    /// marker. Not part of section 6; `false` gives section 6 exactly.
    pub no_version_file: bool,
}

/// The outcome of section 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerDecision {
    /// Either reading of the versions changed.
    pub version_changed: bool,
    /// The code changed, or one side could not be fingerprinted.
    pub code_changed: bool,
    /// The marker's reason when it is written; `None` when it is not.
    pub marker: Option<MarkerReason>,
}

/// Section 6, exactly (plus `recorded_mismatch` and `version_unreadable`,
/// which only ever add reasons to restart).
pub fn decide(i: &MarkerInputs) -> MarkerDecision {
    let version_changed =
        i.old_version != i.new_version || i.updater_version_changed || i.version_unreadable;
    let force_restart = i.force_restart || i.version_unreadable;
    let code_changed = i.old_fingerprint != i.new_fingerprint
        || i.old_fingerprint.is_none()
        || i.new_fingerprint.is_none()
        || i.recorded_mismatch;
    let reason = if force_restart && !code_changed {
        MarkerReason::BrainUpdateForce
    } else {
        MarkerReason::BrainUpdate
    };
    let marker = (version_changed && (code_changed || force_restart)).then_some(reason);
    MarkerDecision {
        version_changed,
        code_changed,
        marker,
    }
}

/// fpcheck's rules beyond section 6, both towards "restart". An
/// unavailable fingerprint on either side writes the marker even when the
/// version did not change: section 3 says an unavailable fingerprint
/// "forces a restart"; section 6 alone would let a broken install with an
/// unchanged version pass silently, and the running processes' own check
/// (section 7) falls back to the version then, so nothing else would catch
/// it. And without a version file on either side, a code change writes
/// the marker: the versions (both empty) cannot say that a release
/// happened, and a process that has no fingerprint of its own would not
/// notice. Returns the marker reason to use instead of `decision.marker`,
/// and the rule that changed the answer.
fn never_fail_open(
    i: &MarkerInputs,
    decision: &MarkerDecision,
) -> (Option<MarkerReason>, Option<AskedBy>) {
    let unavailable = i.old_fingerprint.is_none() || i.new_fingerprint.is_none();
    match decision.marker {
        None if unavailable => (
            Some(MarkerReason::BrainUpdate),
            Some(AskedBy::UnavailableFingerprint),
        ),
        None if i.no_version_file && decision.code_changed => (
            Some(MarkerReason::BrainUpdate),
            Some(AskedBy::NoVersionFile),
        ),
        other => (other, None),
    }
}

/// Which rule asked the gate for its marker, when section 6 on readable
/// files alone would not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskedBy {
    /// Section 6 itself (or no marker at all).
    Section6,
    /// [`never_fail_open`]: a fingerprint is unavailable and the version
    /// did not change.
    UnavailableFingerprint,
    /// An unreadable version file ([`MarkerInputs::version_unreadable`]).
    UnreadableVersion,
    /// [`never_fail_open`]: no version file on either side, and the code
    /// changed.
    NoVersionFile,
}

/// The gate's decision: section 6, then [`never_fail_open`], and which of
/// the rules beyond section 6 wrote the marker (a report says why).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateDecision {
    /// Section 6's outcome.
    pub section_6: MarkerDecision,
    /// The marker's reason when the gate writes one.
    pub marker: Option<MarkerReason>,
    /// The rule that asked for it.
    pub asked_by: AskedBy,
}

/// The gate's one decision on two snapshots' facts.
pub fn decide_gate(i: &MarkerInputs) -> GateDecision {
    let section_6 = decide(i);
    let (marker, _) = never_fail_open(i, &section_6);
    // The same inputs with the version files taken as read: a marker that
    // only the unreadable files ask for is theirs.
    let readable = MarkerInputs {
        version_unreadable: false,
        ..*i
    };
    let (readable_marker, readable_by) = never_fail_open(&readable, &decide(&readable));
    let asked_by = if marker.is_some() && readable_marker.is_none() {
        AskedBy::UnreadableVersion
    } else {
        readable_by.unwrap_or(AskedBy::Section6)
    };
    GateDecision {
        section_6,
        marker,
        asked_by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MarkerReason::*;

    const A: &str = "aaaa";
    const B: &str = "bbbb";

    #[test]
    fn section_6_table() {
        // (old_v, new_v, old_fp, new_fp, force, version_changed, code_changed, marker)
        type Row = (
            &'static str,
            &'static str,
            &'static str,
            &'static str,
            bool,
            bool,
            bool,
            Option<MarkerReason>,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // The behaviour matrix of section 8.
            ("1.0", "1.1", A, B, false, true, true, Some(BrainUpdate)),       // real fix
            ("1.0", "1.1", A, A, false, true, false, None),                   // docs only
            ("1.0", "1.1", A, A, true, true, false, Some(BrainUpdateForce)),  // force_restart
            ("1.0", "1.1", A, "", false, true, true, Some(BrainUpdate)),      // new fp unavailable
            ("1.0", "1.1", "", A, false, true, true, Some(BrainUpdate)),      // old fp unavailable
            ("1.0", "1.1", "", "", false, true, true, Some(BrainUpdate)),     // both unavailable
            // force_restart with changed code keeps the plain reason.
            ("1.0", "1.1", A, B, true, true, true, Some(BrainUpdate)),
            ("1.0", "1.1", A, "", true, true, true, Some(BrainUpdate)),
            // No version change: never a marker, whatever else holds.
            ("1.0", "1.0", A, B, false, false, true, None),
            ("1.0", "1.0", A, A, true, false, false, None),
            ("1.0", "1.0", A, "", true, false, true, None),
            ("", "", A, B, false, false, true, None),
            // A version appearing or disappearing is a change.
            ("", "1.0", A, B, false, true, true, Some(BrainUpdate)),
            ("1.0", "", A, A, true, true, false, Some(BrainUpdateForce)),
            // Versions compare as strings: no semver normalisation.
            ("1.0", "1.0.0", A, A, true, true, false, Some(BrainUpdateForce)),
            ("v1.0", "1.0", A, B, false, true, true, Some(BrainUpdate)),
        ];
        for (n, &(ov, nv, of, nf, force, vc, cc, marker)) in rows.iter().enumerate() {
            let got = decide(&MarkerInputs {
                old_version: ov,
                new_version: nv,
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                force_restart: force,
                ..MarkerInputs::default()
            });
            assert_eq!(
                got,
                MarkerDecision {
                    version_changed: vc,
                    code_changed: cc,
                    marker
                },
                "row {n}"
            );
        }
    }

    /// Section 6: a version change seen by either reading counts.
    #[test]
    fn the_updaters_own_reading_counts_too() {
        #[rustfmt::skip]
        type Row = (&'static str, &'static str, bool, &'static str, &'static str, bool, Option<MarkerReason>);
        let rows: &[Row] = &[
            // Same section-5 text, raw values differ (7 -> 8 in the home,
            // or " 1.0 " -> "1.0"): a change.
            ("1.0", "1.0", true, A, B, false, Some(BrainUpdate)),
            ("1.0", "1.0", true, A, A, true, Some(BrainUpdateForce)),
            ("1.0", "1.0", true, A, A, false, None),
            // Section 5 sees a change the updater does not: still a change.
            ("1.0", "1.1", false, A, B, false, Some(BrainUpdate)),
            // Neither: no marker, whatever else.
            ("1.0", "1.0", false, A, B, true, None),
        ];
        for (n, &(ov, nv, raw, of, nf, force, want)) in rows.iter().enumerate() {
            let d = decide(&MarkerInputs {
                old_version: ov,
                new_version: nv,
                updater_version_changed: raw,
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                force_restart: force,
                ..MarkerInputs::default()
            });
            assert_eq!(d.marker, want, "row {n}");
            assert_eq!(d.version_changed, ov != nv || raw, "row {n}");
        }
    }

    #[test]
    fn a_recorded_mismatch_counts_as_changed_code() {
        let i = MarkerInputs {
            old_version: "1.0",
            new_version: "1.1",
            old_fingerprint: Some(A),
            new_fingerprint: Some(A),
            force_restart: true,
            recorded_mismatch: true,
            ..MarkerInputs::default()
        };
        let d = decide(&i);
        assert!(d.code_changed);
        assert_eq!(d.marker, Some(BrainUpdate));
    }

    /// An unreadable version file may hold a version change and
    /// `force_restart`: both are assumed, whatever the readable values say.
    #[test]
    fn an_unreadable_version_file_assumes_a_change_and_force_restart() {
        for (of, nf, want) in [
            (A, A, BrainUpdateForce),
            (A, B, BrainUpdate),
            (A, "", BrainUpdate),
        ] {
            let d = decide(&MarkerInputs {
                old_version: "1.0",
                new_version: "1.0",
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                version_unreadable: true,
                ..MarkerInputs::default()
            });
            assert!(d.version_changed, "{nf}");
            assert_eq!(d.marker, Some(want), "{nf}");
        }
    }

    #[test]
    fn never_fail_open_only_adds_markers_for_unavailable_fingerprints() {
        type Row = (
            &'static str,
            &'static str,
            &'static str,
            &'static str,
            (Option<MarkerReason>, bool),
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("1.0", "1.0", A, "", (Some(BrainUpdate), true)),
            ("1.0", "1.0", "", A, (Some(BrainUpdate), true)),
            ("1.0", "1.0", A, B, (None, false)),
            ("1.0", "1.0", A, A, (None, false)),
            ("1.0", "1.1", A, "", (Some(BrainUpdate), false)),
            ("1.0", "1.1", A, A, (None, false)),
        ];
        for (n, &(ov, nv, of, nf, want)) in rows.iter().enumerate() {
            let i = MarkerInputs {
                old_version: ov,
                new_version: nv,
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                ..MarkerInputs::default()
            };
            let (marker, by) = never_fail_open(&i, &decide(&i));
            assert_eq!((marker, by.is_some()), want, "row {n}");
        }
    }

    /// No version file on either side: a code change writes the marker;
    /// an unchanged code does not, and any version file keeps section 6.
    #[test]
    fn without_a_version_file_a_code_change_writes_the_marker() {
        use AskedBy::*;
        #[rustfmt::skip]
        type Row<'a> = (&'a str, &'a str, &'a str, &'a str, bool, Option<MarkerReason>, AskedBy);
        let rows: &[Row] = &[
            ("", "", A, B, true, Some(BrainUpdate), NoVersionFile),
            ("", "", A, A, true, None, Section6),
            (
                "",
                "",
                A,
                "",
                true,
                Some(BrainUpdate),
                UnavailableFingerprint,
            ),
            // A version file there: the reference's rule alone.
            ("", "", A, B, false, None, Section6),
            ("1.0", "1.0", A, B, false, None, Section6),
        ];
        for (n, &(ov, nv, of, nf, none, marker, by)) in rows.iter().enumerate() {
            let d = decide_gate(&MarkerInputs {
                old_version: ov,
                new_version: nv,
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                no_version_file: none,
                ..MarkerInputs::default()
            });
            assert_eq!((d.marker, d.asked_by), (marker, by), "row {n}");
        }
    }

    #[test]
    fn the_gate_says_which_rule_asked_for_its_marker() {
        use AskedBy::*;
        // (old_v, new_v, old_fp, new_fp, force, version unreadable, marker, asked by)
        type Row = (
            &'static str,
            &'static str,
            &'static str,
            &'static str,
            bool,
            bool,
            Option<MarkerReason>,
            AskedBy,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("1.0", "1.1", A, B, false, false, Some(BrainUpdate), Section6),
            ("1.0", "1.1", A, A, false, false, None, Section6),
            ("1.0", "1.0", A, A, false, false, None, Section6),
            // Unchanged version, a fingerprint unavailable: never fail open.
            ("1.0", "1.0", A, "", false, false, Some(BrainUpdate), UnavailableFingerprint),
            // Changed version: section 6 writes it whatever the fingerprints.
            ("1.0", "1.1", A, "", false, false, Some(BrainUpdate), Section6),
            // Only the unreadable version file asks.
            ("1.0", "1.0", A, A, false, true, Some(BrainUpdateForce), UnreadableVersion),
            ("1.0", "1.0", A, B, false, true, Some(BrainUpdate), UnreadableVersion),
            // A marker the readable files ask for anyway is theirs.
            ("1.0", "1.1", A, B, false, true, Some(BrainUpdate), Section6),
            ("1.0", "1.0", A, "", false, true, Some(BrainUpdate), UnavailableFingerprint),
            ("1.0", "1.1", A, A, true, true, Some(BrainUpdateForce), Section6),
        ];
        for (n, &(ov, nv, of, nf, force, unreadable, marker, by)) in rows.iter().enumerate() {
            let d = decide_gate(&MarkerInputs {
                old_version: ov,
                new_version: nv,
                old_fingerprint: crate::fingerprint::available(of),
                new_fingerprint: crate::fingerprint::available(nf),
                force_restart: force,
                version_unreadable: unreadable,
                ..MarkerInputs::default()
            });
            assert_eq!((d.marker, d.asked_by), (marker, by), "row {n}");
        }
    }
}

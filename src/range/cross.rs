//! The settings cross-check (issue 11): when the ends' settings differ, the
//! `to` end is also fingerprinted with the `from` end's settings — what the
//! installed, running release's gate computes once the update lands. Each
//! end's own settings cannot then hide a runtime change: a pull request
//! that excludes the file it changes, or moves the root to a copy of the
//! old code, changes the running code under the settings it started from.

use serde::Serialize;

use super::ends;
use super::RangeError;
use crate::cache::FingerprintCache;
use crate::config::{self, EndSettings};
use crate::fingerprint::{self, Fingerprint};
use crate::select::select;
use crate::source::git::Session;
use crate::source::{GitSource, Revision, WorktreeSource};
use crate::verdict::{Decision, Reason};

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
    fn of(cross: Fingerprint, from: &Fingerprint) -> Self {
        Self::new(
            cross.digest,
            cross.unavailable_reason,
            from.digest.as_deref(),
        )
    }

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

    /// Applies the check to `decision`, fail-closed: a runtime change under
    /// the running release's settings is a restart even when the new
    /// settings hide it. Returns whether the verdict was turned into a
    /// restart (`settings_changed_runtime_changed`), which needs a warning.
    pub fn enforce(&self, decision: &mut Decision) -> bool {
        if !self.runtime_changed || decision.restart_required {
            return false;
        }
        decision.restart_required = true;
        decision.reason = Reason::SettingsChangedRuntimeChanged;
        true
    }
}

/// Whether the ends were fingerprinted with different settings (flags and
/// `--config` apply to both ends alike, so they never differ then).
pub(crate) fn needed(from_end: &EndSettings, to_end: &EndSettings) -> bool {
    !config::differences(&from_end.runtime, &to_end.runtime).is_empty()
}

/// The cross-check for a `to` revision.
pub(super) fn at_revision(
    repo: &Session,
    to_rev: &Revision,
    from_end: &EndSettings,
    from_fp: &Fingerprint,
    cache: &mut FingerprintCache,
) -> Result<SettingsCheck, RangeError> {
    let rt = &from_end.runtime;
    let src = GitSource::new(repo.clone(), to_rev.clone(), &rt.root)?;
    let selection = select(&src, &rt.rules)?;
    let cross = ends::cached_or_hashed(&src, selection, &rt.rules, cache)?;
    Ok(SettingsCheck::of(cross, from_fp))
}

/// The cross-check for the working tree whose top is `top`.
pub(super) fn at_worktree(
    top: &std::path::Path,
    from_end: &EndSettings,
    from_fp: &Fingerprint,
) -> Result<SettingsCheck, RangeError> {
    let rt = &from_end.runtime;
    let src = WorktreeSource::new(top, &rt.root);
    let cross = fingerprint::compute(&src, &rt.rules)?;
    Ok(SettingsCheck::of(cross, from_fp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(digest: Option<&str>) -> Fingerprint {
        Fingerprint {
            digest: digest.map(str::to_string),
            selection: Default::default(),
            unavailable_reason: digest.is_none().then(|| "src is missing".to_string()),
            warnings: Vec::new(),
        }
    }

    /// Equal digests are the only "no change"; an unavailable fingerprint
    /// at either end counts as a change (fail-closed).
    #[test]
    fn only_equal_available_fingerprints_are_unchanged() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let cases = [
            (Some(a.as_str()), Some(a.as_str()), false),
            (Some(b.as_str()), Some(a.as_str()), true),
            (None, Some(a.as_str()), true),
            (Some(a.as_str()), None, true),
            (None, None, true),
        ];
        for (cross, from, changed) in cases {
            let check = SettingsCheck::of(fp(cross), &fp(from));
            assert_eq!(check.runtime_changed, changed, "{cross:?} vs {from:?}");
            assert_eq!(check.fingerprint.as_deref(), cross);
            assert_eq!(check.settings, "from");
            assert_eq!(
                check.unavailable_reason.as_deref(),
                cross.is_none().then_some("src is missing")
            );
        }
    }
}

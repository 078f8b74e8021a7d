//! The settings cross-check: when the ends' settings differ, the
//! `to` end is also fingerprinted with the `from` end's settings — what the
//! installed, running release's gate computes once the update lands. Each
//! end's own settings cannot then hide a runtime change: a pull request
//! that excludes the file it changes, or moves the root to a copy of the
//! old code, changes the running code under the settings it started from.

use super::ends;
use super::RangeError;
use crate::cache::FingerprintCache;
use crate::config::{self, SpecWithOrigin};
use crate::fingerprint::{self, Fingerprint};
use crate::select::select;
use crate::source::git::Session;
use crate::source::{GitSource, Revision, WorktreeSource};
pub use crate::verdict::SettingsCheck;

/// The cross-check of the `to` end's fingerprint `cross` under the `from`
/// end's settings against the `from` end's own.
fn check_of(cross: Fingerprint, from: &Fingerprint) -> SettingsCheck {
    SettingsCheck::new(
        cross.digest,
        cross.unavailable_reason,
        from.digest.as_deref(),
    )
}

/// Whether the ends were fingerprinted with different settings (flags and
/// `--config` apply to both ends alike, so they never differ then).
pub(crate) fn needed(from_end: &SpecWithOrigin, to_end: &SpecWithOrigin) -> bool {
    !config::differences(&from_end.spec, &to_end.spec).is_empty()
}

/// The cross-check for a `to` revision.
pub(super) fn at_revision(
    repo: &Session,
    to_rev: &Revision,
    from_end: &SpecWithOrigin,
    from_fp: &Fingerprint,
    cache: &mut FingerprintCache,
) -> Result<SettingsCheck, RangeError> {
    let rt = &from_end.spec;
    let src = GitSource::new(repo.clone(), to_rev.clone(), &rt.root)?;
    let selection = select(&src, &rt.rules)?;
    let cross = ends::cached_or_hashed(&src, selection, &rt.rules, cache)?;
    Ok(check_of(cross, from_fp))
}

/// The cross-check for the working tree whose top is `top`.
pub(super) fn at_worktree(
    top: &std::path::Path,
    from_end: &SpecWithOrigin,
    from_fp: &Fingerprint,
) -> Result<SettingsCheck, RangeError> {
    let rt = &from_end.spec;
    let src = WorktreeSource::new(top, &rt.root);
    let cross = fingerprint::compute(&src, &rt.rules)?;
    Ok(check_of(cross, from_fp))
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
            let check = check_of(fp(cross), &fp(from));
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

//! What a report says: warnings with their codes, the behaviour-matrix
//! row, and the one-sentence summary.

use super::ends::Read;
use super::{MatrixRow, MATRIX};
use crate::changes::{ChangeStatus, Changes, Why};
use crate::config::{self, SpecWithOrigin};
use crate::pair::Pair;
use crate::release;
use crate::side::Side;
use crate::verdict::{Decided, Decision, Reason};
use crate::version;
use crate::warning::{Code, Warning};

pub(super) fn warnings(from: &Read, to: &Read, decided: &Decided) -> Vec<Warning> {
    let d = &decided.decision;
    let mut out: Vec<Warning> = Vec::new();
    for (read, end) in [(from, "from"), (to, "to")] {
        out.extend(read.release.warnings.iter().cloned());
        if let Some(why) = &read.fp.unavailable_reason {
            out.push(Warning::new(
                Code::FingerprintUnavailable,
                format!(
                    "the fingerprint of {} ({end}) is unavailable: {why}; the gate treats the code as changed",
                    read.side.reference
                ),
            ));
        }
        if end == "to" || to.fp.warnings != read.fp.warnings {
            out.extend(read.fp.warnings.iter().cloned());
        }
    }
    let (f, t) = (&from.side, &to.side);
    if f.force_restart && t.force_restart {
        out.push(Warning::new(
            Code::ForceRestartCarriedOver,
            format!(
                "force_restart was already on in {} and is still on in {}: every update to this release restarts clients; turn it off unless this release needs it",
                f.reference, t.reference
            ),
        ));
    }
    if t.force_restart && !d.version_changed {
        out.push(Warning::new(
            Code::ForcedWithoutVersionChange,
            format!("force_restart is on in {} but the version did not change: the updater writes no marker", t.reference),
        ));
    }
    if d.reason == Reason::CodeChanged && !d.version_changed {
        out.push(Warning::new(
            Code::CodeChangedVersionUnchanged,
            format!(
                "runtime code changed but the version did not ({}): the updater writes no marker; running clients only notice at their next fingerprint check",
                t.version.as_deref().unwrap_or("no version")
            ),
        ));
    }
    // Said of the reference's paths, whatever the cross-check adds.
    let reason = decided.hidden_by_settings.unwrap_or(d.reason);
    if reason == Reason::UnavailableVersionUnchanged {
        out.push(Warning::new(
            Code::RestartUndetectable,
            "a fingerprint is unavailable and the version did not change: neither the updater nor the running process can notice this update; bump the version",
        ));
    }
    if let (Some(a), Some(b)) = (&f.version, &t.version) {
        if version::compare(b, a) == Some(std::cmp::Ordering::Less) {
            out.push(Warning::new(
                Code::VersionWentBackwards,
                format!("the version went backwards: {a} → {b}"),
            ));
        }
    }
    out.extend(pyproject_backwards(
        f.release_version.as_ref(),
        t.release_version.as_ref(),
    ));
    out.dedup();
    out
}

/// A runtime's own `pyproject.toml` version that goes backwards (a
/// monorepo runtime released out of order, or a typo): shared by the range
/// and `history`.
pub(crate) fn pyproject_backwards(
    from: Option<&version::ReleaseVersion>,
    to: Option<&version::ReleaseVersion>,
) -> Option<Warning> {
    let (a, b) = (from?, to?);
    let pyproject = version::VersionSource::Pyproject;
    (a.source == pyproject
        && b.source == pyproject
        && version::ReleaseVersion::went_backwards(a, b))
    .then(|| {
        Warning::new(
            Code::VersionWentBackwards,
            format!(
                "the version in pyproject.toml went backwards: {} → {}",
                a.version, b.version
            ),
        )
    })
}

/// The row of the behaviour matrix (docs/spec.md section 8) an update
/// stands for, if any: only a release (its version changed) has one.
pub(super) fn matrix_row(d: &Decision, changes: &Changes, to: &Side) -> Option<MatrixRow> {
    if !d.version_changed {
        return None;
    }
    match d.reason {
        Reason::CodeChanged => {
            let all_added = changes
                .runtime
                .iter()
                .all(|c| c.status == ChangeStatus::Added);
            Some(row(if all_added && !changes.runtime.is_empty() {
                2
            } else {
                1
            }))
        }
        Reason::FingerprintUnavailable => Some(row(8)),
        Reason::Forced => Some(row(7)),
        Reason::UnavailableVersionUnchanged
        | Reason::SettingsChangedRuntimeChanged
        | Reason::WitnessDisagrees => None,
        Reason::NoRuntimeChange if to.force_restart => Some(row(7)),
        Reason::NoRuntimeChange => Some(outside_runtime_row(changes)),
    }
}

/// Row `n` as the matrix words it.
fn row(n: u8) -> MatrixRow {
    MatrixRow {
        number: n,
        touches: MATRIX[usize::from(n) - 1],
    }
}

/// The row of a release that changed no runtime file, by what it changed
/// instead: migrations, scripts, only changelogs, or anything else.
fn outside_runtime_row(changes: &Changes) -> MatrixRow {
    let migrations = excluded_under(changes, "migrations");
    if !migrations.is_empty() {
        return labelled(
            6,
            &migrations,
            (MATRIX[5], "new migrations in migrations/"),
            "a change in migrations/",
        );
    }
    let scripts = excluded_under(changes, "scripts");
    if !scripts.is_empty() {
        return labelled(
            5,
            &scripts,
            (MATRIX[4], "new files under scripts/"),
            "a change under scripts/",
        );
    }
    row(if only_changelogs(changes) { 4 } else { 3 })
}

/// How each ignored change under an excluded directory `name` changed.
fn excluded_under(changes: &Changes, name: &str) -> Vec<ChangeStatus> {
    changes
        .ignored
        .iter()
        .filter(|c| c.why == Why::Excluded && c.excluded_name.as_deref() == Some(name))
        .map(|c| c.status)
        .collect()
}

/// Row `n`, its label saying what happened: "new" (one file, or many)
/// only when every change there is an added file, else `other`.
fn labelled(
    n: u8,
    statuses: &[ChangeStatus],
    (one_new, many_new): (&'static str, &'static str),
    other: &'static str,
) -> MatrixRow {
    let touches = match statuses {
        [ChangeStatus::Added] => one_new,
        s if s.iter().all(|s| *s == ChangeStatus::Added) => many_new,
        _ => other,
    };
    MatrixRow { number: n, touches }
}

/// The release changed some file besides its version files, and those
/// are all changelogs.
fn only_changelogs(changes: &Changes) -> bool {
    let notable: Vec<_> = changes
        .ignored
        .iter()
        .filter(|c| {
            let name = c.path.rsplit('/').next().unwrap_or(&c.path);
            !release::VERSION_FILES.contains(&name)
        })
        .collect();
    let changelog = |p: &str| {
        p.rsplit('/')
            .next()
            .unwrap_or(p)
            .to_ascii_uppercase()
            .starts_with("CHANGELOG")
    };
    !notable.is_empty() && notable.iter().all(|c| changelog(&c.path))
}

pub(super) fn summary(from: &Side, to: &Side, d: &Decision, changes: &Changes) -> String {
    let head = format!("Updating from {} to {}", from.reference, to.reference);
    let n = changes.runtime.len();
    let files = |n: usize| {
        if n == 1 {
            "1 runtime file".to_string()
        } else {
            format!("{n} runtime files")
        }
    };
    let others = changes.ignored.len();
    match d.reason {
        Reason::CodeChanged => format!("{head} forces running clients to restart: {} changed.", files(n)),
        Reason::Forced => format!("{head} forces running clients to restart: force_restart is on (no runtime file changed)."),
        Reason::FingerprintUnavailable => format!(
            "{head} forces running clients to restart: a fingerprint is unavailable, so the code counts as changed."
        ),
        Reason::SettingsChangedRuntimeChanged => format!(
            "{head} forces running clients to restart: the fingerprint settings changed, and under {}'s settings (what the running release's gate computes) the runtime code changed; {}'s own settings hide it.",
            from.reference, to.reference
        ),
        Reason::WitnessDisagrees => format!(
            "{head} forces running clients to restart: fpcheck's reading said no restart, but git's own checkout of the two ends disagrees (see the warnings)."
        ),
        Reason::UnavailableVersionUnchanged => format!(
            "{head} does not restart running clients, but only because nothing can tell: a fingerprint is unavailable and the version did not change."
        ),
        Reason::NoRuntimeChange => {
            let tail = match others {
                0 => String::new(),
                1 => " (1 other change does not count)".into(),
                k => format!(" ({k} other changes do not count)"),
            };
            format!("{head} does not restart running clients: no runtime file changed{tail}.")
        }
    }
}

/// The warnings of an update whose ends' settings differ: that they
/// differ, and, when the cross-check turned the verdict into a restart,
/// what the new settings hide. `from_short` is the `from` end's short
/// fingerprint under its own settings. The range and `history` both say
/// them so.
pub(crate) fn settings_warnings(
    refs: Pair<&str>,
    ends: Pair<&SpecWithOrigin>,
    from_short: &str,
    (check, decided): (Option<&super::SettingsCheck>, &Decided),
) -> Vec<Warning> {
    let mut out: Vec<Warning> = settings_changed(refs, ends).into_iter().collect();
    if let Some(check) = check.filter(|_| decided.hidden_by_settings.is_some()) {
        out.push(hidden_by_settings(refs, from_short, check));
    }
    out
}

/// `settings_changed`: the ends were fingerprinted with different settings
/// (each its own committed `fpcheck.toml`). The verdict already compares
/// what each release's gate computes; the releaser must still see that the
/// settings moved, and a reviewer that a pull request moved them.
fn settings_changed(Pair { from, to }: Pair<&str>, ends: Pair<&SpecWithOrigin>) -> Option<Warning> {
    let what = config::differences(&ends.from.spec, &ends.to.spec);
    if what.is_empty() {
        return None;
    }
    Some(Warning::new(
        Code::SettingsChanged,
        format!(
            "the fingerprint settings differ between {from} and {to} ({}): each end is fingerprinted with its own settings, as its gate computes it",
            what.join("; ")
        ),
    ))
}

/// `settings_changed_runtime_changed`: the `to` end's own settings show no
/// runtime change, but under the `from` end's settings its code differs.
/// `from_short` is the `from` end's short fingerprint.
fn hidden_by_settings(
    Pair { from, to }: Pair<&str>,
    from_short: &str,
    check: &super::SettingsCheck,
) -> Warning {
    let under = match (&check.fingerprint, &check.unavailable_reason) {
        (Some(fp), _) => format!(
            "is {}, not {from_short}",
            crate::fingerprint::short(fp).unwrap_or(fp)
        ),
        (None, why) => format!(
            "is unavailable ({})",
            why.as_deref().unwrap_or("no reason given")
        ),
    };
    Warning::new(
        Code::SettingsChangedRuntimeChanged,
        format!(
            "under the settings of {from} (what the running release's gate computes), the runtime fingerprint of {to} {under}: the running code changed, and only {to}'s own settings hide it; restart required"
        ),
    )
}

//! A history's free releases confirmed by git's own checkout of both
//! releases ([`crate::witness`]), as the range confirms its "no restart":
//! only updates that restart nobody, and under `auto` only on trees whose
//! checkout fpcheck emulates. A release checked out for one update is
//! reused by the next.

use super::worker::Read;
use super::{Slot, Step};
use crate::pair::Pair;
use crate::source::git::Session;
use crate::witness::{self, Claim, ClaimedEnd, Mode, Witnesser};

/// Runs the witness on every update of `steps` (between consecutive
/// releases of `slots`, read as `own`) and applies what it says.
pub(super) fn confirm(
    repo: &Session,
    mode: Mode,
    (slots, own): (&[Slot], &[Read]),
    steps: &mut [Step],
) {
    if mode == Mode::Never {
        return;
    }
    let mut witnesser = Witnesser::new(repo, mode);
    for (k, step) in steps.iter_mut().enumerate() {
        if step.restart_required {
            continue;
        }
        let (from, to) = (&slots[k].plan, &slots[k + 1].plan);
        let update = Claim {
            ends: Pair::new(end(&own[k], &from.end.spec), end(&own[k + 1], &to.end.spec)),
            cross: step.settings_check.as_ref().map(|_| &from.end.spec),
            undeclared: from.borrowed.is_some() || to.borrowed.is_some(),
            release_changed: crate::version::releases_differ_without_version_file(
                Some(&step.from_release),
                Some(&step.to_release),
            ),
        };
        let found = witnesser.judge(false, &update);
        apply(step, found);
    }
}

fn end<'a>(read: &'a Read, spec: &'a crate::config::RuntimeSpec) -> ClaimedEnd<'a> {
    ClaimedEnd {
        name: &read.info.tag,
        tree: Some(read.tree),
        spec,
        fingerprint: Some(&read.info.fingerprint),
        facts: super::update::facts(&read.info),
        unusual: read.unusual,
    }
}

/// The witness's answer written into the update: its field, its warning,
/// and, when git disagrees, a restart.
fn apply(step: &mut Step, found: witness::Witness) {
    let names = Pair::new(step.from.as_str(), step.to.as_str());
    let ours = Pair::new(
        Some(step.from_fingerprint.as_str()),
        Some(step.to_fingerprint.as_str()),
    );
    if let Some(w) = witness::warning(&found, names, ours) {
        step.warnings.push(w);
    }
    if found.disagreed() {
        step.restart_required = true;
        step.reason = crate::verdict::Reason::WitnessDisagrees;
    }
    step.witness = found;
}

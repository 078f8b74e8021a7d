//! A range's "no restart" confirmed by git's own checkout of its ends
//! ([`crate::witness`]): agreed, the report says so; contradicted, the
//! verdict becomes a restart (`witness_disagrees`).

use super::Analysis;
use crate::pair::Pair;
use crate::side::Side;
use crate::source::git::Session;
use crate::witness::{self, Claim, ClaimedEnd, Mode, Witnesser};

/// Runs the witness on `analysis` under `mode` (`undeclared`: the runtime
/// is declared at one end only) and applies what it says.
pub(super) fn confirm(repo: &Session, mode: Mode, analysis: &mut Analysis, undeclared: bool) {
    let cross = analysis
        .settings_check
        .as_ref()
        .map(|_| &analysis.from_settings.spec);
    let update = Claim {
        ends: Pair::new(
            end(&analysis.from, &analysis.from_settings.spec),
            end(&analysis.to, &analysis.settings.spec),
        ),
        cross,
        undeclared,
        release_changed: crate::version::releases_differ_without_version_file(
            analysis.from.release_version.as_ref(),
            analysis.to.release_version.as_ref(),
        ),
    };
    let found = Witnesser::new(repo, mode).judge(analysis.restart_required, &update);
    apply(analysis, found);
}

/// One end as the witness takes it: git checks out a revision's tree;
/// the working tree (no tree) keeps fpcheck's own facts.
fn end<'a>(side: &'a Side, spec: &'a crate::config::RuntimeSpec) -> ClaimedEnd<'a> {
    ClaimedEnd {
        name: &side.reference,
        tree: side.tree,
        spec,
        fingerprint: side.fingerprint.as_deref(),
        facts: side.facts(),
        unusual: side.unusual,
    }
}

/// The witness's answer written into the report: its field, its warning,
/// and, when git disagrees, a restart.
fn apply(analysis: &mut Analysis, found: witness::Witness) {
    let names = Pair::new(
        analysis.from.reference.as_str(),
        analysis.to.reference.as_str(),
    );
    let ours = Pair::new(
        analysis.from.fingerprint.as_deref(),
        analysis.to.fingerprint.as_deref(),
    );
    if let Some(w) = witness::warning(&found, names, ours) {
        analysis.warnings.push(w);
    }
    if found.disagreed() {
        analysis.restart_required = true;
        analysis.reason = crate::verdict::Reason::WitnessDisagrees;
        analysis.matrix_row = None;
        let decision = crate::verdict::Decision {
            restart_required: true,
            reason: analysis.reason,
            version_changed: analysis.version_changed,
            code_changed: analysis.code_changed,
            updater: analysis.updater.clone(),
            process_check: analysis.process_check.clone(),
        };
        analysis.summary =
            super::wording::summary(&analysis.from, &analysis.to, &decision, &analysis.changes);
    }
    analysis.witness = found;
}

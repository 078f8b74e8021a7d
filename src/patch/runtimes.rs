//! The patch of a monorepo release: one `runtime_fingerprint` per runtime,
//! with that runtime's spec, under a top-level `runtimes` object of one
//! version file (`--version-file`, else the `version.json` at the top of
//! the repository, as the gate's lookup from the top finds it):
//!
//! ```json
//! {"runtimes": {"server": {"runtime_fingerprint": "…", "runtime_fingerprint_spec": {…}}}}
//! ```
//!
//! Runtimes the file records but this run did not analyse (`--runtime`
//! narrowed the set) are kept as they are. `force_restart` is one key for
//! every runtime, so it is left alone unless `--force-restart` sets it.

use serde_json::{Map, Value};

use super::{
    finish, locate, missing, scan, Chosen, Explanation, Facts, PatchError, PatchOptions, Place,
    Plan, KEYS,
};
use crate::range::RuntimesAnalysis;
use crate::setting::{Message, Setting, Value as Said};
use crate::source::git::Session;
use crate::warning::Code;

/// The top-level key holding each runtime's record.
pub const RUNTIMES_KEY: &str = "runtimes";

/// Locates the version file and computes the patch recording every
/// runtime of `many`.
pub fn prepare_runtimes(
    repo: &Session,
    many: &RuntimesAnalysis,
    options: &PatchOptions,
) -> Result<Plan, PatchError> {
    let first = &many
        .runtimes
        .first()
        .ok_or_else(|| PatchError::Internal("no runtime to patch".into()))?
        .analysis;
    let explicit = match &options.version_file {
        Some(p) => Some((locate::repo_relative(repo, p)?, Chosen::Flag)),
        None => None,
    };
    let place = Place::to_side(repo, first, options.worktree)?;
    let files = locate::locate(&place, "", explicit)?;
    let base: &[u8] = files.bytes.as_deref().unwrap_or(b"{}\n");
    let doc = scan::Document::parse(base, &files.target)?;
    let mut explanations = Vec::new();
    let mut desired: Vec<(&str, Value)> = Vec::new();
    if files.bytes.is_none() {
        explanations.extend(missing(&files, &mut desired));
    }
    let mut records = match doc.value.get(RUNTIMES_KEY) {
        Some(Value::Object(map)) => map.clone(),
        Some(_) => {
            explanations.push(Explanation {
                code: Code::RuntimesReplaced,
                message: format!(
                    "\"{RUNTIMES_KEY}\" in {} is not an object: it is replaced by one",
                    files.target
                ),
            });
            Map::new()
        }
        None => Map::new(),
    };
    for named in &many.runtimes {
        let facts = Facts::of(&named.analysis);
        if let Some(why) = &facts.unavailable_reason {
            explanations.push(Explanation {
                code: Code::FingerprintUnavailable,
                message: format!(
                    "the fingerprint of runtime {} at {} is unavailable ({why}): its runtime_fingerprint is recorded as \"\", which the gate treats as changed code",
                    named.name,
                    facts.to
                ),
            });
        }
        let mut record = Map::new();
        record.insert(KEYS[1].into(), Value::from(facts.fingerprint.as_str()));
        record.insert(KEYS[2].into(), facts.spec());
        records.insert(named.name.clone(), Value::Object(record));
    }
    desired.push((RUNTIMES_KEY, Value::Object(records)));
    if options.force_restart {
        desired.push((KEYS[3], Value::Bool(true)));
    } else {
        explanations.push(Explanation {
            code: Code::ForceRestartUntouched,
            message: Message::new()
                .text(format!(
                    "force_restart in {} is shared by every runtime: left as it is (",
                    files.target
                ))
                .setting(Setting::ForceRestart, Said::None)
                .text(" sets it)")
                .to_string(),
        });
    }
    finish(&doc, &files, desired, explanations)
}

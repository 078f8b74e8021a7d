//! The `version.json` patch: what a release records about its runtime, so
//! that the updater can decide and verify without guessing.
//!
//! The patch sets `runtime_fingerprint` (the `to` side's fingerprint),
//! `runtime_fingerprint_spec` (what produced it) and normalises
//! `force_restart` (see [`force`]); nothing else in the file changes. It is
//! printed as an RFC 7396 merge patch or as RFC 6902 operations, and
//! applied by editing the file's text in place ([`edit`]), so key order,
//! indentation and the final newline stay as they are.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::fingerprint::{available, gate_text};
use crate::range::Analysis;
use crate::setting::{Message, Setting, Value as Said};
use crate::source::git::Session;
use crate::warning::Code;

pub mod edit;
mod error;
pub mod force;
pub mod locate;
mod runtimes;
pub mod scan;

pub use error::PatchError;
pub use locate::{check_checkout, Chosen, Place, VersionFiles, Worktree};
pub use runtimes::{prepare_runtimes, RUNTIMES_KEY};

/// The id of the fingerprint algorithm (docs/spec.md sections 1-4:
/// `path NUL bytes LF` per selected file in code-point order, SHA-256).
pub(crate) const ALGORITHM: &str = "fpcheck-runtime-v1";

/// The keys the patch may set, in the order new ones are appended.
pub(crate) const KEYS: [&str; 4] = [
    "version",
    "runtime_fingerprint",
    "runtime_fingerprint_spec",
    "force_restart",
];

/// The printed form of a patch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatchFormat {
    /// RFC 7396 JSON Merge Patch: an object; `{}` is the empty patch.
    #[default]
    Merge,
    /// RFC 6902 JSON Patch: an array of operations; `[]` is the empty patch.
    JsonPatch,
}

/// One decision of the patch, in a sentence, with a stable code (listed in
/// docs/patch.md): the same shape as a warning of the range.
pub(crate) type Explanation = crate::warning::Warning;

/// What the patch needs to know about the release, taken from an
/// [`Analysis`] (a plain struct so that the rules can be tested alone).
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// The `from` side's name.
    pub from: String,
    /// The `to` side's name.
    pub to: String,
    /// The `from` fingerprint (`""` when unavailable).
    pub from_fingerprint: String,
    /// The `to` fingerprint (`""` when unavailable).
    pub fingerprint: String,
    /// Why the `to` fingerprint is unavailable.
    pub unavailable_reason: Option<String>,
    /// The gate's `code_changed`.
    pub code_changed: bool,
    /// The gate's `version_changed`.
    pub version_changed: bool,
    /// Whether the gate read `force_restart` as on in the `from` release.
    pub previous_force: bool,
    /// The raw value it read there.
    pub previous_raw: Option<Value>,
    /// The runtime root, from the top of the repository (`.` for the top).
    pub root: String,
    /// Runtime extensions.
    pub extensions: Vec<String>,
    /// Excluded names.
    pub exclude: Vec<String>,
}

impl Facts {
    /// The facts of an analysed range.
    pub fn of(a: &Analysis) -> Facts {
        Facts {
            from: a.from.reference.clone(),
            to: a.to.reference.clone(),
            // `patch` analyses with `Digests::Always`: both are computed
            // (`""` when unavailable).
            from_fingerprint: gate_text(a.from.fingerprint.as_deref()).into(),
            fingerprint: gate_text(a.to.fingerprint.as_deref()).into(),
            unavailable_reason: a.to.unavailable_reason.clone(),
            code_changed: a.code_changed,
            version_changed: a.version_changed,
            previous_force: a.from.force_restart,
            previous_raw: a.from.force_restart_raw.clone(),
            root: crate::source::show_root(&a.settings.spec.root).to_string(),
            extensions: a.settings.spec.rules.extensions.clone(),
            exclude: a.settings.spec.rules.exclude.clone(),
        }
    }

    /// `runtime_fingerprint_spec`: enough to reproduce the fingerprint, in
    /// the spirit of Dirhash's recorded options.
    pub fn spec(&self) -> Value {
        json!({
            "algorithm": ALGORITHM,
            "hash": "sha256",
            "root": self.root,
            "extensions": self.extensions,
            "exclude": self.exclude,
        })
    }

    /// Why the gate counts the code as changed, as a clause.
    fn code_change(&self) -> String {
        let short = |fp: &str| {
            crate::fingerprint::short(fp)
                .unwrap_or("unavailable")
                .to_string()
        };
        match (
            available(&self.from_fingerprint),
            available(&self.fingerprint),
        ) {
            (_, None) => format!("the fingerprint of {} is unavailable", self.to),
            (None, _) => format!("the fingerprint of {} is unavailable", self.from),
            (Some(from), Some(to)) => format!(
                "the runtime code changed (fingerprint {} → {})",
                short(from),
                short(to)
            ),
        }
    }
}

/// A computed patch and the file it produces.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The file, from the top of the repository.
    pub version_file: String,
    /// How the file was chosen.
    pub chosen: Chosen,
    /// Whether it exists where it was read.
    pub exists: bool,
    /// Its value before (`{}` when it does not exist).
    pub before: Value,
    /// Its value after.
    pub after: Value,
    /// The top-level keys whose value changes, with their new value, in
    /// the order they are written.
    pub set: Vec<(String, Value)>,
    /// Every decision worth knowing, in order.
    pub explanations: Vec<Explanation>,
    /// The file's bytes as read (empty when it does not exist).
    pub original: Vec<u8>,
    /// The file's text after the patch.
    pub text: String,
}

impl Plan {
    /// True when the file already says everything the patch would.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// The patch in `format`.
    pub fn patch(&self, format: PatchFormat) -> Value {
        match format {
            PatchFormat::Merge => self.merge_patch(),
            PatchFormat::JsonPatch => self.json_patch(),
        }
    }

    /// RFC 7396: applied to [`Plan::before`], gives [`Plan::after`].
    pub fn merge_patch(&self) -> Value {
        merge_diff(&self.before, &self.after)
    }

    /// RFC 6902: `add` for new keys, `replace` for changed ones.
    pub fn json_patch(&self) -> Value {
        let ops = self.set.iter().map(|(key, value)| {
            let op = if self.before.get(key).is_some() {
                "replace"
            } else {
                "add"
            };
            json!({"op": op, "path": format!("/{}", scan::pointer_token(key)), "value": value})
        });
        Value::Array(ops.collect())
    }
}

/// The merge patch from `before` to `after`: changed members, recursing
/// into objects on both sides, and `null` for members that disappear (a
/// merge patch merges objects, so a stale nested key must be deleted).
fn merge_diff(before: &Value, after: &Value) -> Value {
    let (Value::Object(b), Value::Object(a)) = (before, after) else {
        return after.clone();
    };
    let mut out = Map::new();
    for (key, new) in a {
        match b.get(key) {
            Some(old) if old == new => {}
            Some(old @ Value::Object(_)) if new.is_object() => {
                out.insert(key.clone(), merge_diff(old, new));
            }
            _ => {
                out.insert(key.clone(), new.clone());
            }
        }
    }
    for key in b.keys().filter(|k| !a.contains_key(*k)) {
        out.insert(key.clone(), Value::Null);
    }
    Value::Object(out)
}

/// What `fpcheck patch` is asked to do.
#[derive(Clone, Debug, Default)]
pub struct PatchOptions {
    /// `--version-file`, as given.
    pub version_file: Option<String>,
    /// `--force-restart`.
    pub force_restart: bool,
    /// `--force-on-advice`: set `force_restart` when the analysis's advice
    /// holds a possible missed restart.
    pub force_on_advice: bool,
    /// Read the version files from the working tree (`--worktree`, and
    /// `--write`, which edits it).
    pub worktree: bool,
}

/// Locates the version file for `analysis` and computes its patch, with
/// the `to` end's own settings: its root, and its `version_file`.
pub(crate) fn prepare(
    repo: &Session,
    analysis: &Analysis,
    options: &PatchOptions,
) -> Result<Plan, PatchError> {
    let runtime = &analysis.settings.spec;
    let explicit = match (&options.version_file, &runtime.version_file) {
        (Some(p), _) => Some((locate::repo_relative(repo, p)?, Chosen::Flag)),
        (None, Some(p)) => Some((locate::repo_relative(repo, p)?, Chosen::Config)),
        (None, None) => None,
    };
    let place = Place::to_side(repo, analysis, options.worktree)?;
    let files = locate::locate(&place, &runtime.root, explicit)?;
    let advised = (options.force_on_advice && !options.force_restart)
        .then(|| analysis.advice.iter().find(|i| i.is_missed_restart()))
        .flatten();
    let requested = options.force_restart || advised.is_some();
    let mut plan = plan(&Facts::of(analysis), &files, requested)?;
    if let Some(item) = advised {
        on_advice(&mut plan.explanations, item);
    }
    plan.explanations.extend(hidden_by_settings(analysis));
    Ok(plan)
}

/// Says that `force_restart` is on because of the advice `item`, not a
/// flag given for it: the explanation that names `--force-restart` names
/// `--force-on-advice` and the advice instead.
fn on_advice(explanations: &mut [Explanation], item: &crate::advice::Item) {
    for e in explanations
        .iter_mut()
        .filter(|e| e.code == Code::ForceRestartRequested)
    {
        e.code = Code::ForceRestartOnAdvice;
        let file = e.message.split(": ").next().unwrap_or_default();
        let done = if e.message.contains("kept on") {
            "kept on"
        } else {
            "set to true"
        };
        e.message = format!(
            "{file}: force_restart {done}, as --force-on-advice asks: {} (at {})",
            item.message,
            item.evidence.join(", ")
        );
    }
}

/// The settings cross-check found a runtime change that the `to` end's own
/// settings hide: the fingerprint recorded here is computed with those
/// settings, so it does not show the change. Say so; the verdict is already
/// a restart (`settings_changed_runtime_changed`).
fn hidden_by_settings(a: &Analysis) -> Option<Explanation> {
    let check = a.settings_check.as_ref()?;
    (check.runtime_changed && !a.code_changed).then(|| Explanation {
        code: Code::SettingsChangedRuntimeChanged,
        // The patch is the command line's alone: the flag's spelling.
        message: Message::new()
            .text(format!(
                "under the settings of {} the runtime code changed, but {}'s own settings hide it: the runtime_fingerprint recorded here does not show the change; revert the settings change, or bump the version and pass ",
                a.from.reference, a.to.reference
            ))
            .setting(Setting::ForceRestart, Said::None)
            .text(" so that the updater restarts clients")
            .to_string(),
    })
}

/// Computes the patch of `files.target` for a release with `facts`;
/// `force_restart` is `--force-restart`.
pub(crate) fn plan(
    facts: &Facts,
    files: &VersionFiles,
    force_restart: bool,
) -> Result<Plan, PatchError> {
    // A missing file is patched as an empty object, which --write creates.
    let base: &[u8] = files.bytes.as_deref().unwrap_or(b"{}\n");
    let doc = scan::Document::parse(base, &files.target)?;
    let mut explanations = Vec::new();
    let mut desired: Vec<(&str, Value)> = Vec::new();
    if files.bytes.is_none() {
        explanations.extend(missing(files, &mut desired));
    }
    if let Some(how) = outside_lookup(files) {
        explanations.push(how);
    }
    desired.push((KEYS[1], Value::from(facts.fingerprint.as_str())));
    if let Some(why) = &facts.unavailable_reason {
        explanations.push(Explanation {
            code: Code::FingerprintUnavailable,
            message: format!(
                "the fingerprint of {} is unavailable ({why}): runtime_fingerprint is recorded as \"\", which the gate treats as changed code",
                facts.to
            ),
        });
    }
    desired.push((KEYS[2], facts.spec()));
    let current = doc.value.get(KEYS[3]);
    let force = force::decide(facts, &files.target, current, force_restart);
    explanations.extend(force.explanations);
    let final_on = force
        .value
        .unwrap_or_else(|| current.is_some_and(crate::release::python_truthy));
    if let Some(on) = force.value {
        desired.push((KEYS[3], Value::Bool(on)));
    }
    if !final_on {
        explanations.extend(force::elsewhere(&files.target, &files.others));
    }
    finish(&doc, files, desired, explanations)
}

/// The plan that sets the `desired` keys that differ in `doc`, its new text
/// checked to parse back to the intended value.
fn finish(
    doc: &scan::Document,
    files: &VersionFiles,
    desired: Vec<(&str, Value)>,
    explanations: Vec<Explanation>,
) -> Result<Plan, PatchError> {
    let set: Vec<(String, Value)> = desired
        .into_iter()
        .filter(|(key, value)| doc.value.get(*key) != Some(value))
        .map(|(key, value)| (key.to_string(), value))
        .collect();
    let text = edit::apply(doc, &set);
    let after = with(&doc.value, &set);
    verify(&text, &after, &files.target)?;
    Ok(Plan {
        version_file: files.target.clone(),
        chosen: files.chosen,
        exists: files.bytes.is_some(),
        before: doc.value.clone(),
        after,
        set,
        explanations,
        original: files.bytes.clone().unwrap_or_default(),
        text,
    })
}

/// There is no version file: say so, and give the new one a `version`
/// from wherever the gate finds it now (usually package.json).
fn missing(files: &VersionFiles, desired: &mut Vec<(&str, Value)>) -> Vec<Explanation> {
    let mut out = vec![Explanation {
        code: Code::VersionFileMissing,
        message: Message::new()
            .text(format!(
                "{} has no {} (the gate looks for {}): the patch applies to an empty object, and ",
                files.place,
                files.target,
                files.lookup.join(", ")
            ))
            .setting(Setting::Write, Said::None)
            .text(" creates the file")
            .to_string(),
    }];
    match gate_version(&files.others) {
        Some((version, from)) => {
            out.push(Explanation {
                code: Code::VersionCopied,
                message: format!(
                    "version {version} is copied from {from} into the new {}: the gate takes the version from the first file of its lookup that has one, so keep both in step from now on",
                    files.target
                ),
            });
            desired.push((KEYS[0], Value::from(version)));
        }
        None => out.push(Explanation {
            code: Code::VersionMissing,
            message: format!(
                "no version file at {} has a \"version\": the new {} has none either, and without one the updater never writes a marker",
                files.place, files.target
            ),
        }),
    }
    out
}

/// The version the gate reads from `files` (in its lookup order): the
/// first object whose `"version"` gives non-empty text as Python's
/// `str(value).strip()`, parsed as `json.loads` does, as in
/// [`crate::release::read`].
fn gate_version(files: &[(String, Vec<u8>)]) -> Option<(String, String)> {
    files.iter().find_map(|(path, bytes)| {
        let doc = crate::pyjson::loads(bytes).ok()?;
        let version = crate::release::version_text(doc.get("version")?)?;
        Some((version.display(), path.clone()))
    })
}

/// A target the gate never reads (chosen by flag or config) still gets the
/// patch, but the releaser must know the gate will not see it.
fn outside_lookup(files: &VersionFiles) -> Option<Explanation> {
    if files.lookup.contains(&files.target) {
        return None;
    }
    Some(Explanation {
        code: Code::VersionFileNotReadByGate,
        message: format!(
            "{} is not where the gate looks ({}): it will not read these keys there",
            files.target,
            files.lookup.join(", ")
        ),
    })
}

/// `value` with the members of `set` replaced or appended.
fn with(value: &Value, set: &[(String, Value)]) -> Value {
    let mut out = value.clone();
    if let Value::Object(map) = &mut out {
        for (key, v) in set {
            map.insert(key.clone(), v.clone());
        }
    }
    out
}

/// The edited text must parse, without duplicates, to exactly the value
/// the patch describes; otherwise nothing may be written.
fn verify(text: &str, after: &Value, path: &str) -> Result<(), PatchError> {
    let doc = scan::Document::parse(text.as_bytes(), path)
        .map_err(|e| PatchError::Internal(format!("the edited text does not parse: {e}")))?;
    if doc.value != *after {
        return Err(PatchError::Internal(format!(
            "the edited text of {path} does not match the patch"
        )));
    }
    Ok(())
}

/// Writes the patched file into the working tree of `repo`, atomically;
/// `false` (and not a byte touched) when it already says it all.
pub fn write(repo: &Session, plan: &Plan) -> Result<bool, PatchError> {
    let tree = locate::Worktree::of(repo)?;
    // The real path: every link resolved, inside the working tree and
    // outside the git directory, or refused.
    let path: PathBuf = tree.real_path(&plan.version_file)?.ok_or_else(|| {
        PatchError::BadVersionFile(
            format!(
                "the directory of {} does not exist: create it first",
                plan.version_file
            )
            .into(),
        )
    })?;
    // The plan was made from what was read; refuse if the file moved on.
    let now = tree.read(&plan.version_file)?;
    let read = plan.exists.then_some(&plan.original);
    if now.as_ref() != read {
        return Err(PatchError::Raced(plan.version_file.clone()));
    }
    if plan.is_empty() {
        return Ok(false);
    }
    tree.write(&path, plan.text.as_bytes())
        .map_err(|source| PatchError::Write {
            path: plan.version_file.clone(),
            source,
        })?;
    Ok(true)
}

#[cfg(test)]
mod tests;

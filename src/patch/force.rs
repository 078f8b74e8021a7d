//! What the patch does with `force_restart`, and why, in words.
//!
//! The escape hatch is dangerous when forgotten: left on, it is carried into
//! every later release and restarts clients for documentation changes. So
//! the patch turns it off unless something asks for it now, and normalises
//! it to a JSON boolean, because the gate reads it with Python's truthiness
//! (the string `"false"` is on).

use serde_json::Value;

use super::{Explanation, Facts};
use crate::release::python_truthy;
use crate::setting::{Message, Setting, Value as Said};
use crate::warning::Code;

/// The value the patch gives `force_restart` in the target file.
#[derive(Clone, Debug, PartialEq)]
pub struct ForceOutcome {
    /// `None`: leave the key as it is (absent stays absent).
    pub value: Option<bool>,
    /// One sentence per decision worth knowing.
    pub explanations: Vec<Explanation>,
}

impl ForceOutcome {
    fn leave() -> Self {
        ForceOutcome {
            value: None,
            explanations: Vec::new(),
        }
    }

    fn explain(&mut self, code: Code, message: String) {
        self.explanations.push(Explanation { code, message });
    }
}

/// What a value was meant to say. Strings that spell a boolean mean that
/// boolean (nobody writes `"false"` to ask for a restart); anything else
/// means what the gate reads.
pub fn intent(value: &Value) -> bool {
    if let Value::String(s) = value {
        match s.trim().to_ascii_lowercase().as_str() {
            "false" | "0" | "no" | "off" | "" => return false,
            "true" | "1" | "yes" | "on" => return true,
            _ => {}
        }
    }
    python_truthy(value)
}

/// Decides `force_restart` for `file`, whose current value is `current`;
/// `requested` is `--force-restart`.
pub fn decide(facts: &Facts, file: &str, current: Option<&Value>, requested: bool) -> ForceOutcome {
    if facts.code_changed {
        return redundant(facts, file, current, requested);
    }
    if requested {
        return requested_on(facts, file, current);
    }
    let Some(value) = current else {
        return ForceOutcome::leave();
    };
    if intent(value) && carried_over(facts, value) {
        let mut out = ForceOutcome {
            value: Some(false),
            explanations: Vec::new(),
        };
        out.explain(
            Code::ForceRestartCarriedOver,
            Message::new()
                .text(format!(
                    "{file}: force_restart {value} turned off: it was carried over unchanged from {}, and nothing asks for it now (no runtime file changed; pass ",
                    facts.from
                ))
                .setting(Setting::ForceRestart, Said::None)
                .text(" to keep it on)")
                .to_string(),
        );
        return out;
    }
    normalised(file, value, intent(value))
}

/// On in the previous release with the very same value: nobody touched it.
fn carried_over(facts: &Facts, value: &Value) -> bool {
    facts.previous_force && facts.previous_raw.as_ref() == Some(value)
}

/// The code changed, so clients restart anyway: a force is redundant now
/// and would only be carried into the next release.
fn redundant(facts: &Facts, file: &str, current: Option<&Value>, requested: bool) -> ForceOutcome {
    let why = facts.code_change();
    let mut out = ForceOutcome {
        value: current.map(|_| false),
        explanations: Vec::new(),
    };
    match current {
        Some(v) if intent(v) => out.explain(
            Code::ForceRestartRedundant,
            format!(
                "{file}: force_restart {v} turned off as redundant: {why}, so running clients restart anyway; left on, it would be carried over into the next release"
            ),
        ),
        Some(v) if !v.is_boolean() => out.explanations.push(not_boolean(file, v, false)),
        _ => {}
    }
    if requested {
        out.explain(
            Code::ForceRestartRedundant,
            Message::new()
                .setting(Setting::ForceRestart, Said::None)
                .text(format!(
                    " is redundant: {why}, so running clients restart anyway; {file} keeps force_restart off so that it is not carried over into the next release"
                ))
                .to_string(),
        );
    }
    out
}

fn requested_on(facts: &Facts, file: &str, current: Option<&Value>) -> ForceOutcome {
    let mut out = ForceOutcome {
        value: Some(true),
        explanations: Vec::new(),
    };
    // The patch is the command line's alone: its sentences name the flag.
    let asks = |before: String, after: String| {
        Message::new()
            .text(before)
            .setting(Setting::ForceRestart, Said::None)
            .text(after)
            .to_string()
    };
    let message = match current {
        Some(Value::Bool(true)) if facts.previous_force => asks(
            format!("{file}: force_restart kept on, as "),
            format!(
                " asks (it was already on in {}; without the flag it would be turned off as carried over)",
                facts.from
            ),
        ),
        Some(Value::Bool(true)) => asks(
            format!("{file}: force_restart kept on, as "),
            " asks".into(),
        ),
        other => asks(
            format!("{file}: force_restart set to true (was {}), as ", show(other)),
            " asks: no runtime file changed, so this is what makes running clients restart".into(),
        ),
    };
    out.explain(Code::ForceRestartRequested, message);
    if !facts.version_changed {
        out.explain(
            Code::ForceRestartWithoutVersionChange,
            format!(
                "force_restart is on but the version did not change from {} to {}: the updater writes no marker unless the version changes, so bump it",
                facts.from, facts.to
            ),
        );
    }
    out
}

/// A value left as meant, written as a JSON boolean.
fn normalised(file: &str, value: &Value, on: bool) -> ForceOutcome {
    if value.is_boolean() {
        return ForceOutcome::leave();
    }
    ForceOutcome {
        value: Some(on),
        explanations: vec![not_boolean(file, value, on)],
    }
}

fn not_boolean(file: &str, value: &Value, to: bool) -> Explanation {
    let gate = python_truthy(value);
    let reading = if gate == to {
        format!("the gate reads it as {} too", word(gate))
    } else {
        format!(
            "careful: the gate reads it as {} (Python truthiness), so until this patch it {} running clients to restart",
            word(gate),
            if gate { "forced" } else { "did not force" }
        )
    };
    Explanation {
        code: Code::ForceRestartNotBoolean,
        message: format!(
            "{file}: force_restart {value} is not a JSON boolean: normalised to {to}; {reading}"
        ),
    }
}

/// Other version files that keep the gate's `force_restart` on: the gate
/// reads every candidate, so the target alone cannot turn it off.
pub fn elsewhere(target: &str, others: &[(String, Vec<u8>)]) -> Vec<Explanation> {
    others
        .iter()
        .filter_map(|(path, bytes)| {
            let doc: Value = serde_json::from_slice(bytes).ok()?;
            let value = doc.get("force_restart").filter(|v| python_truthy(v))?;
            Some(Explanation {
                code: Code::ForceRestartElsewhere,
                message: format!(
                    "{path} sets force_restart to {value}, which the gate reads as on whatever {target} says: remove it there (fpcheck patch edits one file)"
                ),
            })
        })
        .collect()
}

fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "absent".into(), Value::to_string)
}

fn word(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts() -> Facts {
        Facts {
            from: "v1".into(),
            to: "v2".into(),
            from_fingerprint: "a".repeat(64),
            fingerprint: "a".repeat(64),
            unavailable_reason: None,
            code_changed: false,
            version_changed: true,
            previous_force: false,
            previous_raw: None,
            root: "src".into(),
            extensions: vec![".py".into()],
            exclude: vec![],
        }
    }

    #[test]
    fn intent_reads_spelled_booleans() {
        for (v, on) in [
            (json!("false"), false),
            (json!(" No "), false),
            (json!("0"), false),
            (json!("yes"), true),
            (json!("please"), true),
            (json!(0), false),
            (json!([1]), true),
            (json!(null), false),
        ] {
            assert_eq!(intent(&v), on, "{v}");
        }
    }

    /// Turned on in this release and asked for: the sentence names the
    /// flag (the other sentences are pinned in tests/it/patch.rs).
    #[test]
    fn kept_on_as_asked_names_the_flag() {
        let out = decide(&facts(), "v.json", Some(&json!(true)), true);
        assert_eq!(out.value, Some(true));
        assert_eq!(
            out.explanations[0].message,
            "v.json: force_restart kept on, as --force-restart asks"
        );
    }

    #[test]
    fn every_case() {
        let f = facts();
        // Absent and nothing asks: left absent, silently.
        assert_eq!(decide(&f, "v.json", None, false), ForceOutcome::leave());
        // Set in this release (not on before): kept, and not even mentioned.
        assert_eq!(
            decide(&f, "v.json", Some(&json!(true)), false),
            ForceOutcome::leave()
        );
        // Carried over unchanged: off.
        let carried = Facts {
            previous_force: true,
            previous_raw: Some(json!(true)),
            ..facts()
        };
        let out = decide(&carried, "v.json", Some(&json!(true)), false);
        assert_eq!(out.value, Some(false));
        assert_eq!(out.explanations[0].code, "force_restart_carried_over");
        // ...unless asked for.
        let out = decide(&carried, "v.json", Some(&json!(true)), true);
        assert_eq!(out.value, Some(true));
        assert_eq!(out.explanations[0].code, "force_restart_requested");
        // Changed by hand since (true → 1): deliberate, so normalised to true.
        let out = decide(&carried, "v.json", Some(&json!(1)), false);
        assert_eq!(out.value, Some(true));
        assert_eq!(
            out.explanations[0].message,
            "v.json: force_restart 1 is not a JSON boolean: normalised to true; the gate reads it as on too"
        );
        // "false" means false, which is not what the gate did.
        let out = decide(&f, "v.json", Some(&json!("false")), false);
        assert_eq!(out.value, Some(false));
        assert_eq!(
            out.explanations[0].message,
            "v.json: force_restart \"false\" is not a JSON boolean: normalised to false; careful: the gate reads it as on (Python truthiness), so until this patch it forced running clients to restart"
        );
        // Code changed: redundant, off, and the flag is overruled out loud.
        let changed = Facts {
            code_changed: true,
            fingerprint: "b".repeat(64),
            ..facts()
        };
        let out = decide(&changed, "v.json", Some(&json!(true)), true);
        assert_eq!(out.value, Some(false));
        assert_eq!(
            out.explanations.iter().map(|e| e.code).collect::<Vec<_>>(),
            ["force_restart_redundant", "force_restart_redundant"]
        );
        assert_eq!(
            decide(&changed, "v.json", None, false),
            ForceOutcome::leave()
        );
    }
}

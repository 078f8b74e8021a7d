//! The release's version and its escape hatch (FINGERPRINT.md section 5).
//!
//! The gate reads the version from the first of `version.json` then
//! `package.json` that parses and has a non-empty `"version"` string, each
//! looked up in the runtime root and then in its parent; `force_restart` is
//! on when any of those files has a truthy value under Python's rules.

use serde::Serialize;
use serde_json::Value;

use crate::source::{MetaFile, Source, SourceError};
use crate::warning::Warning;

/// The files the gate reads, in the order it reads them.
pub const VERSION_FILES: [&str; 2] = ["version.json", "package.json"];

/// What one side of a release says about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Release {
    /// The version string, when a file provides one.
    pub version: Option<String>,
    /// The file the version came from.
    pub version_file: Option<String>,
    /// Whether the gate considers `force_restart` on.
    pub force_restart: bool,
    /// The raw JSON value that decided `force_restart` (`null` when absent).
    pub force_restart_raw: Option<Value>,
    /// The file it came from.
    pub force_restart_file: Option<String>,
    /// Things the releaser should know (unparsable files, non-boolean values).
    pub warnings: Vec<Warning>,
}

/// Python's truthiness of a JSON value, as `bool(json.load(...)[key])`.
pub fn python_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The candidate files in the gate's order: each name in the root, then in
/// its parent.
fn candidates(source: &dyn Source) -> Result<Vec<MetaFile>, SourceError> {
    let mut out = Vec::new();
    for name in VERSION_FILES {
        for in_parent in [false, true] {
            if let Some(file) = source.read_meta(name, in_parent)? {
                out.push(file);
            }
        }
    }
    Ok(out)
}

/// Reads the version and `force_restart` as the gate does.
pub fn read(source: &dyn Source) -> Result<Release, SourceError> {
    let mut release = Release::default();
    for file in candidates(source)? {
        let doc: Value = match serde_json::from_slice(&file.bytes) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(_) => {
                release.warnings.push(Warning::new(
                    "version_file_invalid",
                    format!("{} is not a JSON object: the gate ignores it", file.display),
                ));
                continue;
            }
            Err(e) => {
                release.warnings.push(Warning::new(
                    "version_file_invalid",
                    format!(
                        "{} is not valid JSON ({e}): the gate ignores it",
                        file.display
                    ),
                ));
                continue;
            }
        };
        note_version(&mut release, &file.display, doc.get("version"));
        note_force_restart(&mut release, &file.display, doc.get("force_restart"));
    }
    Ok(release)
}

fn note_version(release: &mut Release, file: &str, value: Option<&Value>) {
    if release.version.is_some() {
        return;
    }
    match value {
        Some(Value::String(s)) if !s.is_empty() => {
            release.version = Some(s.clone());
            release.version_file = Some(file.to_string());
        }
        Some(Value::String(_)) | None => {}
        Some(other) => release.warnings.push(Warning::new(
            "version_not_string",
            format!(
                "{file}: \"version\" is {other}, not a string: the gate skips this file's version"
            ),
        )),
    }
}

fn note_force_restart(release: &mut Release, file: &str, value: Option<&Value>) {
    let Some(value) = value else { return };
    if !matches!(value, Value::Bool(_)) {
        let gate = if python_truthy(value) { "on" } else { "off" };
        release.warnings.push(Warning::new(
            "force_restart_not_boolean",
            format!("{file}: \"force_restart\" is {value}, not a JSON boolean: the gate reads it as {gate}"),
        ));
    }
    // The first truthy value decides; otherwise the first value seen is shown.
    if release.force_restart {
        return;
    }
    if python_truthy(value) || release.force_restart_raw.is_none() {
        release.force_restart = python_truthy(value);
        release.force_restart_raw = Some(value.clone());
        release.force_restart_file = Some(file.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn truthiness_follows_python() {
        for (v, t) in [
            (json!(true), true),
            (json!(false), false),
            (json!("false"), true),
            (json!(""), false),
            (json!(0), false),
            (json!(0.0), false),
            (json!(1), true),
            (json!([]), false),
            (json!([0]), true),
            (json!({}), false),
            (json!(null), false),
        ] {
            assert_eq!(python_truthy(&v), t, "{v}");
        }
    }

    #[test]
    fn non_boolean_force_restart_is_warned_about() {
        let mut r = Release::default();
        note_force_restart(&mut r, "src/version.json", Some(&json!("false")));
        assert!(r.force_restart);
        assert_eq!(r.warnings[0].code, "force_restart_not_boolean");
        assert_eq!(
            r.warnings[0].message,
            "src/version.json: \"force_restart\" is \"false\", not a JSON boolean: the gate reads it as on"
        );
    }
}

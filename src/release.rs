//! The release's version and its escape hatch (docs/spec.md section 5).
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
    /// The updater's own reading of the version (section 6).
    #[serde(skip)]
    pub updater_version: UpdaterVersion,
    /// Version files that exist but cannot be read (permissions, a FIFO,
    /// a directory, too large): the gate cannot rule out what they say.
    #[serde(skip)]
    pub unreadable: Vec<String>,
    /// Things the releaser should know (unparsable files, non-boolean values).
    pub warnings: Vec<Warning>,
}

/// The version as the reference's updater reads it (section 6): from the
/// install's home only (the runtime root's parent), the raw `"version"`
/// value of `version.json` if that file parses as an object (`"unknown"`
/// when the key is missing; `package.json` is then not looked at), else of
/// `package.json`, else `"unknown"`. Compared with Python's `!=` on the raw
/// values: no strip, `1` equals `1.0` and `true`, `NaN` differs from itself.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdaterVersion(Value);

impl Default for UpdaterVersion {
    fn default() -> Self {
        UpdaterVersion(Value::String("unknown".into()))
    }
}

impl UpdaterVersion {
    /// A version that is this text.
    pub fn from_text(text: &str) -> Self {
        UpdaterVersion(Value::String(text.into()))
    }

    /// Python's `self != other` on the raw values.
    pub fn differs(&self, other: &UpdaterVersion) -> bool {
        !py_eq(&self.0, &other.0)
    }

    /// The text the marker records: `str(value or "").strip()`.
    pub fn marker_text(&self) -> String {
        if !python_truthy(&self.0) {
            return String::new();
        }
        crate::gate::client::py_strip(&py_str(&self.0)).to_string()
    }

    /// The value as JSON text (stored in snapshots).
    pub fn to_json(&self) -> String {
        self.0.to_string()
    }

    /// Reads [`UpdaterVersion::to_json`]'s text back.
    pub fn from_json(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok().map(UpdaterVersion)
    }
}

/// Python's `==` on two JSON values.
fn py_eq(a: &Value, b: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => num(a) == num(b),
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::Bool(_), Value::Number(_)) | (Value::Number(_), Value::Bool(_)) => num(a) == num(b),
        _ => a == b,
    }
}

/// Python's `str(value)` of a JSON value, for the marker's texts.
fn py_str(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
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

/// The candidate files in the gate's order: `version.json` then
/// `package.json` in the root, then the same in its parent (the install's
/// home).
fn candidates(source: &dyn Source) -> Result<Vec<(MetaFile, bool)>, SourceError> {
    let mut out = Vec::new();
    for in_parent in [false, true] {
        for name in VERSION_FILES {
            if let Some(file) = source.read_meta(name, in_parent)? {
                out.push((file, in_parent));
            }
        }
    }
    Ok(out)
}

/// Reads the version and `force_restart` as the gate does (section 5), and
/// the version as the updater reads it (section 6).
pub fn read(source: &dyn Source) -> Result<Release, SourceError> {
    let mut release = Release::default();
    let mut updater: Option<UpdaterVersion> = None;
    for (file, in_parent) in candidates(source)? {
        if let Some(why) = &file.problem {
            release.warnings.push(Warning::new(
                "version_file_unreadable",
                format!(
                    "{} {why}: fpcheck cannot rule out a version change or force_restart in it, \
                     so the gate asks for a restart",
                    file.display
                ),
            ));
            release.unreadable.push(file.display.clone());
            continue;
        }
        let Some(doc) = parse_like_python(&file, &mut release.warnings) else {
            continue;
        };
        if in_parent && updater.is_none() {
            let raw = doc.get("version").cloned();
            updater = Some(raw.map_or_else(UpdaterVersion::default, UpdaterVersion));
        }
        note_version(&mut release, &file.display, doc.get("version"));
        note_force_restart(&mut release, &file.display, doc.get("force_restart"));
    }
    release.updater_version = updater.unwrap_or_default();
    Ok(release)
}

/// Parses a version file as the gate's `json.loads` would: strict JSON,
/// plus Python's extensions (`NaN`, `Infinity`, numbers beyond a double,
/// lone surrogates), which strict parsers reject. A file Python would read
/// must not be skipped here: its `force_restart` could be on.
fn parse_like_python(file: &MetaFile, warnings: &mut Vec<Warning>) -> Option<Value> {
    let strict = serde_json::from_slice::<Value>(&file.bytes);
    let parsed = match strict {
        Ok(v) => Ok(v),
        Err(e) => match std::str::from_utf8(&file.bytes)
            .ok()
            .and_then(python_extensions_to_json)
        {
            Some(text) => match serde_json::from_str::<Value>(&text) {
                Ok(v) => {
                    warnings.push(Warning::new(
                        "version_file_python_json",
                        format!(
                            "{} uses Python's JSON extensions (NaN, Infinity, out-of-range numbers or lone surrogates): \
                             the gate reads it, and so does fpcheck, but other tools will not",
                            file.display
                        ),
                    ));
                    Ok(v)
                }
                Err(_) => Err(e),
            },
            None => Err(e),
        },
    };
    match parsed {
        Ok(Value::Object(map)) => Some(Value::Object(map)),
        Ok(_) => {
            warnings.push(Warning::new(
                "version_file_invalid",
                format!("{} is not a JSON object: the gate ignores it", file.display),
            ));
            None
        }
        Err(e) => {
            warnings.push(Warning::new(
                "version_file_invalid",
                format!(
                    "{} is not valid JSON ({e}): the gate ignores a file its json.loads rejects",
                    file.display
                ),
            ));
            None
        }
    }
}

/// Rewrites Python-only JSON into strict JSON with the same truthiness:
/// `NaN` and `±Infinity` (truthy floats) become `±1e308`, a number beyond
/// a double becomes `±1e308` (Python reads it as ±inf, or a big int, both
/// truthy), and a lone surrogate escape becomes U+FFFD. `None` when there
/// is nothing to rewrite.
fn python_extensions_to_json(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let end = string_end(rest);
            let (s, changed_s) = fix_surrogates(&rest[..end]);
            changed |= changed_s;
            out.push_str(&s);
            rest = &rest[end..];
        } else if let Some(tail) = rest
            .strip_prefix("NaN")
            .or_else(|| rest.strip_prefix("Infinity"))
        {
            out.push_str("1e308");
            changed = true;
            rest = tail;
        } else if let Some(tail) = rest.strip_prefix("-Infinity") {
            out.push_str("-1e308");
            changed = true;
            rest = tail;
        } else if c == '-' || c.is_ascii_digit() {
            let len = rest
                .find(|ch: char| !(ch.is_ascii_digit() || "+-.eE".contains(ch)))
                .unwrap_or(rest.len());
            let number = &rest[..len];
            match number.parse::<f64>() {
                Ok(f) if f.is_infinite() => {
                    out.push_str(if f < 0.0 { "-1e308" } else { "1e308" });
                    changed = true;
                }
                _ => out.push_str(number),
            }
            rest = &rest[len..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    changed.then_some(out)
}

/// The byte length of the string literal at the start of `text` (quotes
/// included), or all of it when unterminated.
fn string_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Replaces `\uD8xx` escapes that do not form a pair with `\uFFFD`.
fn fix_surrogates(literal: &str) -> (String, bool) {
    let unit = |s: &str, at: usize| -> Option<u16> {
        let hex = s.get(at + 2..at + 6)?;
        (s.get(at..at + 2)? == "\\u")
            .then(|| u16::from_str_radix(hex, 16).ok())
            .flatten()
    };
    let mut out = String::with_capacity(literal.len());
    let mut changed = false;
    let mut i = 0;
    while i < literal.len() {
        if literal[i..].starts_with("\\\\") {
            out.push_str("\\\\");
            i += 2;
            continue;
        }
        match unit(literal, i) {
            Some(0xD800..=0xDBFF) if matches!(unit(literal, i + 6), Some(0xDC00..=0xDFFF)) => {
                out.push_str(&literal[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.push_str("\\uFFFD");
                changed = true;
                i += 6;
            }
            _ => {
                let c = literal[i..]
                    .chars()
                    .next()
                    .expect("i is on a char boundary");
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    (out, changed)
}

/// Section 5: the first file whose `"version"` gives non-empty text as
/// Python's `str(value).strip()` (so `7` gives `"7"`, `null` `"None"`).
fn note_version(release: &mut Release, file: &str, value: Option<&Value>) {
    if release.version.is_some() {
        return;
    }
    let Some(value) = value else { return };
    let text = crate::gate::client::py_strip(&py_str(value)).to_string();
    if text.is_empty() {
        return;
    }
    if !value.is_string() {
        release.warnings.push(Warning::new(
            "version_not_string",
            format!("{file}: \"version\" is {value}, not a string: the gate reads it as {text:?}"),
        ));
    }
    release.version = Some(text);
    release.version_file = Some(file.to_string());
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
    fn python_json_extensions_keep_their_truthiness() {
        let fixed = python_extensions_to_json(
            r#"{"version": "2.0\ud800", "force_restart": NaN, "a": -Infinity, "b": 1e400, "c": "NaN 1e400", "d": "\ud83d\ude00"}"#,
        )
        .unwrap();
        let v: Value = serde_json::from_str(&fixed).unwrap();
        assert!(python_truthy(&v["force_restart"]));
        assert!(python_truthy(&v["a"]) && python_truthy(&v["b"]));
        assert_eq!(v["version"], "2.0\u{fffd}");
        assert_eq!(v["c"], "NaN 1e400");
        assert_eq!(v["d"], "\u{1f600}");
        assert_eq!(python_extensions_to_json(r#"{"version": "1.0"}"#), None);
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

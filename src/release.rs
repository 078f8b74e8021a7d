//! The release's version and its escape hatch (docs/spec.md section 5),
//! and the version as the reference's updater reads it (section 6).
//!
//! Values follow Python, because the gate is Python: files parse as
//! `json.loads` does ([`crate::pyjson`]), a version is `str(value).strip()`,
//! `force_restart` is Python's truthiness. The gate reads the version from
//! the first of `version.json` then `package.json`, in the runtime root
//! and then in its parent, whose `"version"` gives non-empty text;
//! `force_restart` is on when any of those files has a truthy value.

use serde::Serialize;
use serde_json::Value;

use crate::pyjson::{self, PyStr, PyValue};
use crate::source::{MetaFile, Source, SourceError};
use crate::warning::{Code, Warning};

/// The files the gate reads, in the order it reads them.
pub(crate) const VERSION_FILES: [&str; 2] = ["version.json", "package.json"];

/// What one side of a release says about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Release {
    /// The version text, when a file provides one (for people: a lone
    /// surrogate shows as U+FFFD; compare [`Release::version_key`]).
    pub version: Option<String>,
    /// The file the version came from.
    pub version_file: Option<String>,
    /// Whether the gate considers `force_restart` on.
    pub force_restart: bool,
    /// The raw JSON value that decided `force_restart` (`null` when
    /// absent; `NaN`, infinities and integers beyond 64 bits as text).
    pub force_restart_raw: Option<Value>,
    /// The file it came from.
    pub force_restart_file: Option<String>,
    /// The version exactly, as Python holds it.
    #[serde(skip)]
    pub version_exact: Option<PyStr>,
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

impl Release {
    /// The version as the gate compares it: `""` when none, else its exact
    /// JSON text (`json.dumps`, ASCII), so two versions compare equal
    /// exactly when Python's strings are equal (`"\ud800"` and `"\udc00"`
    /// differ, though both display as U+FFFD).
    pub fn version_key(&self) -> String {
        version_key(self.version_exact.as_ref())
    }
}

/// See [`Release::version_key`].
pub(crate) fn version_key(version: Option<&PyStr>) -> String {
    match version {
        Some(v) if !v.is_empty() => v.to_json(),
        _ => String::new(),
    }
}

/// The version as the reference's updater reads it (section 6): from the
/// install's home only (the runtime root's parent), the raw `"version"`
/// value of `version.json` if that file parses as an object (`"unknown"`
/// when the key is missing; `package.json` is then not looked at), else of
/// `package.json`, else `"unknown"`. Compared with Python's `!=` on the raw
/// values: no strip, `1` equals `1.0` and `true`, `NaN` differs from itself.
#[derive(Clone, Debug)]
pub struct UpdaterVersion(PyValue);

impl PartialEq for UpdaterVersion {
    fn eq(&self, other: &Self) -> bool {
        self.0.py_eq(&other.0)
    }
}

impl Default for UpdaterVersion {
    fn default() -> Self {
        UpdaterVersion(PyValue::Str(PyStr::from_str("unknown")))
    }
}

impl UpdaterVersion {
    /// A version that is this text.
    pub fn from_text(text: &str) -> Self {
        UpdaterVersion(PyValue::Str(PyStr::from_str(text)))
    }

    /// Python's `self != other` on the raw values.
    pub fn differs(&self, other: &UpdaterVersion) -> bool {
        !self.0.py_eq(&other.0)
    }

    /// The text the marker records: `str(value or "").strip()`.
    pub fn marker_text(&self) -> String {
        if !self.0.truthy() {
            return String::new();
        }
        self.0.py_str().strip().display()
    }

    /// The value as JSON text that [`crate::pyjson::loads`] reads back to
    /// an equal value (stored in snapshots; may hold `NaN`).
    pub fn to_json(&self) -> String {
        dumps(&self.0)
    }

    /// Reads [`UpdaterVersion::to_json`]'s text back.
    pub fn from_json(text: &str) -> Option<Self> {
        pyjson::loads(text.as_bytes()).ok().map(UpdaterVersion)
    }
}

/// `json.dumps(value)` (ASCII, Python's `NaN`/`Infinity`): text that
/// `json.loads` reads back to an equal value.
pub fn dumps(v: &PyValue) -> String {
    match v {
        PyValue::None => "null".into(),
        PyValue::Bool(b) => b.to_string(),
        PyValue::Int(i) => i.to_string(),
        PyValue::Float(f) if f.is_nan() => "NaN".into(),
        PyValue::Float(f) if f.is_infinite() => {
            if *f > 0.0 { "Infinity" } else { "-Infinity" }.into()
        }
        PyValue::Float(f) => pyjson::float_repr(*f),
        PyValue::Str(s) => s.to_json(),
        PyValue::List(items) => {
            let parts: Vec<String> = items.iter().map(dumps).collect();
            format!("[{}]", parts.join(", "))
        }
        PyValue::Dict(d) => {
            let parts: Vec<String> = d
                .iter()
                .map(|(k, v)| format!("{}: {}", k.to_json(), dumps(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// A Python value as plain JSON, for reports: exact where JSON can say it;
/// `NaN`, infinities and integers beyond 64 bits become their Python text,
/// lone surrogates U+FFFD.
pub(crate) fn to_report_json(v: &PyValue) -> Value {
    match v {
        PyValue::None => Value::Null,
        PyValue::Bool(b) => Value::Bool(*b),
        PyValue::Int(i) => match i.to_i64() {
            Some(n) => Value::from(n),
            None => Value::String(i.to_string()),
        },
        PyValue::Float(f) => {
            serde_json::Number::from_f64(*f).map_or_else(|| Value::String(v.repr()), Value::Number)
        }
        PyValue::Str(s) => Value::String(s.display()),
        PyValue::List(items) => Value::Array(items.iter().map(to_report_json).collect()),
        PyValue::Dict(d) => Value::Object(
            d.iter()
                .map(|(k, v)| (k.display(), to_report_json(v)))
                .collect(),
        ),
    }
}

/// Python's truthiness of a plain JSON value, as `bool(json.load(...)[key])`.
pub(crate) fn python_truthy(v: &Value) -> bool {
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
                Code::VersionFileUnreadable,
                format!(
                    "{} {why}: fpcheck cannot rule out a version change or force_restart in it, \
                     so the gate asks for a restart",
                    file.display
                ),
            ));
            release.unreadable.push(file.display.clone());
            continue;
        }
        let Some(doc) = parse_like_python(&file, &mut release) else {
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

/// Parses a version file exactly as the gate's `json.loads` would; `None`
/// (with a warning) when Python would not read it as an object.
fn parse_like_python(file: &MetaFile, release: &mut Release) -> Option<PyValue> {
    let warnings = &mut release.warnings;
    match pyjson::loads(&file.bytes) {
        Ok(doc @ PyValue::Dict(_)) => {
            if serde_json::from_slice::<serde::de::IgnoredAny>(&file.bytes).is_err() {
                warnings.push(Warning::new(
                    Code::VersionFilePythonJson,
                    format!(
                        "{} is JSON only for Python (NaN, Infinity, lone surrogates, nesting \
                         deeper than 128, or numbers strict parsers refuse): the gate reads it, \
                         and so does fpcheck, but other tools may not",
                        file.display
                    ),
                ));
            }
            Some(doc)
        }
        Ok(_) => {
            warnings.push(Warning::new(
                Code::VersionFileInvalid,
                format!("{} is not a JSON object: the gate ignores it", file.display),
            ));
            None
        }
        // Another Python (3.12+ nesting, older integer limits) would have
        // read it: what it says cannot be ruled out.
        Err(e) if e.python_dependent() => {
            warnings.push(Warning::new(
                Code::VersionFileUnreadable,
                format!(
                    "{}: {e}, but another Python version reads it: fpcheck cannot rule out \
                     a version change or force_restart in it, so the gate asks for a restart",
                    file.display
                ),
            ));
            release.unreadable.push(file.display.clone());
            None
        }
        Err(e) => {
            warnings.push(Warning::new(
                Code::VersionFileInvalid,
                format!(
                    "{} is not valid JSON for Python ({e}): the gate ignores a file its json.loads rejects",
                    file.display
                ),
            ));
            None
        }
    }
}

/// Section 5's text of a `"version"` value: Python's `str(value).strip()`;
/// `None` when that is empty, and the gate reads on to the next file.
pub(crate) fn version_text(value: &PyValue) -> Option<PyStr> {
    let text = value.py_str().strip();
    (!text.is_empty()).then_some(text)
}

/// Section 5: the first file whose `"version"` gives non-empty text as
/// Python's `str(value).strip()` (so `7` gives `"7"`, `null` `"None"`).
fn note_version(release: &mut Release, file: &str, value: Option<&PyValue>) {
    if release.version_exact.is_some() {
        return;
    }
    let Some((value, text)) = value.and_then(|v| Some((v, version_text(v)?))) else {
        return;
    };
    if !matches!(value, PyValue::Str(_)) {
        release.warnings.push(Warning::new(
            Code::VersionNotString,
            format!(
                "{file}: \"version\" is {}, not a string: the gate reads it as {}",
                value.repr(),
                text.to_json()
            ),
        ));
    }
    release.version = Some(text.display());
    release.version_exact = Some(text);
    release.version_file = Some(file.to_string());
}

fn note_force_restart(release: &mut Release, file: &str, value: Option<&PyValue>) {
    let Some(value) = value else { return };
    let on = value.truthy();
    if !matches!(value, PyValue::Bool(_)) {
        let gate = if on { "on" } else { "off" };
        release.warnings.push(Warning::new(
            Code::ForceRestartNotBoolean,
            format!(
                "{file}: \"force_restart\" is {}, not a JSON boolean: the gate reads it as {gate}",
                dumps(value)
            ),
        ));
    }
    // The first truthy value decides; otherwise the first value seen is shown.
    if release.force_restart {
        return;
    }
    if on || release.force_restart_raw.is_none() {
        release.force_restart = on;
        release.force_restart_raw = Some(to_report_json(value));
        release.force_restart_file = Some(file.to_string());
    }
}

/// The `[project] version` of the runtime's own `pyproject.toml`, in the
/// runtime root and then its parent (a monorepo's runtime carries its own):
/// the release's version when the gate reads no version file (section 6's
/// rule for a release without one). The gate never reads it. `None` when
/// there is no such file, it cannot be read or parsed, or its version is
/// dynamic (the tag then tells the release).
pub fn pyproject_version(source: &dyn Source) -> Result<Option<String>, SourceError> {
    for in_parent in [false, true] {
        let Some(file) = source.read_meta("pyproject.toml", in_parent)? else {
            continue;
        };
        if file.problem.is_some() {
            return Ok(None);
        }
        return Ok(project_version(&file.bytes));
    }
    Ok(None)
}

/// The directory holding a `src/` layout's package root (`project/src`
/// for `project/src/package`), whose parent is the project: `None` for
/// any other root.
pub fn src_layout_parent(root: &str) -> Option<&str> {
    let (parent, _) = root.rsplit_once('/')?;
    (parent == "src" || parent.ends_with("/src")).then_some(parent)
}

/// `[project] version` of a `pyproject.toml`'s bytes, stripped and non-empty.
fn project_version(bytes: &[u8]) -> Option<String> {
    let doc = toml::from_str::<toml::Table>(std::str::from_utf8(bytes).ok()?).ok()?;
    let version = doc.get("project")?.get("version")?.as_str()?.trim();
    (!version.is_empty()).then(|| version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn py(text: &str) -> PyValue {
        pyjson::loads(text.as_bytes()).unwrap()
    }

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
        note_force_restart(&mut r, "src/version.json", Some(&py("\"false\"")));
        assert!(r.force_restart);
        assert_eq!(r.warnings[0].code, "force_restart_not_boolean");
        assert_eq!(
            r.warnings[0].message,
            "src/version.json: \"force_restart\" is \"false\", not a JSON boolean: the gate reads it as on"
        );
        let mut r = Release::default();
        note_force_restart(&mut r, "v.json", Some(&py("NaN")));
        assert!(r.force_restart);
        assert_eq!(r.force_restart_raw, Some(json!("nan")));
    }

    /// Section 5's text, written from the spec: `str(value).strip()`.
    #[test]
    fn versions_are_python_text() {
        for (value, want) in [
            ("\"7.38.7\"", Some("7.38.7")),
            ("\" 7.38.7 \"", Some("7.38.7")),
            ("7", Some("7")),
            ("1.0", Some("1.0")),
            ("1e16", Some("1e+16")),
            ("null", Some("None")),
            ("true", Some("True")),
            ("[1, 2]", Some("[1, 2]")),
            ("\"\"", None),
            ("\"  \"", None),
        ] {
            let mut r = Release::default();
            note_version(&mut r, "v.json", Some(&py(value)));
            assert_eq!(r.version.as_deref(), want, "{value}");
        }
        let key = |text: &str| {
            let mut r = Release::default();
            note_version(&mut r, "v.json", Some(&py(text)));
            r.version_key()
        };
        assert_ne!(key("\"\\ud800\""), key("\"\\udc00\""));
        assert_eq!(key("\" 1 \""), key("1"));
    }

    #[test]
    fn a_pyproject_names_its_project_version() {
        let v = |t: &str| project_version(t.as_bytes());
        assert_eq!(
            v("[project]\nname = \"x\"\nversion = \" 1.2.0 \"\n").as_deref(),
            Some("1.2.0")
        );
        assert_eq!(
            v("[project]\nname = \"x\"\ndynamic = [\"version\"]\n"),
            None
        );
        assert_eq!(v("[tool.poetry]\nversion = \"1.0\"\n"), None);
        assert_eq!(v("[project\n"), None);
    }

    /// The updater's raw reading (section 6): Python's `!=`, no strip.
    #[test]
    fn updater_versions_compare_as_python_values() {
        let v = |t: &str| UpdaterVersion(py(t));
        for (a, b, differ) in [
            ("\"1.0.0\"", "\"1.0.0\"", false),
            ("\" 1.0.0 \"", "\"1.0.0\"", true),
            ("7", "8", true),
            ("7", "7.0", false),
            ("1", "true", false),
            ("NaN", "NaN", true),
            ("[NaN]", "[NaN]", false),
            ("\"\\ud800\"", "\"\\udc00\"", true),
            ("null", "null", false),
            ("{\"a\": 1, \"b\": 2}", "{\"b\": 2, \"a\": 1}", false),
        ] {
            assert_eq!(v(a).differs(&v(b)), differ, "{a} != {b}");
            let back = UpdaterVersion::from_json(&v(a).to_json()).unwrap();
            assert_eq!(dumps(&back.0), dumps(&v(a).0), "{a}");
        }
        assert_eq!(v("null").marker_text(), "");
        assert_eq!(v("0").marker_text(), "");
        assert_eq!(v("\" 1.2 \"").marker_text(), "1.2");
        assert_eq!(v("7").marker_text(), "7");
        assert_eq!(UpdaterVersion::default().marker_text(), "unknown");
    }
}

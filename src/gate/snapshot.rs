//! The state of an installed runtime, as the gate compares it: the release
//! (section 5), the fingerprint, and each selected file's own SHA-256, so a
//! later gate can name the files that changed without git.
//!
//! `fpcheck snapshot` writes one before an update; `fpcheck gate` takes
//! another after it, in memory, and compares the two.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock;
use super::GateError;
use crate::fingerprint::compute_detailed;
use crate::release::{self, UpdaterVersion};
use crate::safe_io::{self, Links, ReadError};
use crate::select::Rules;
use crate::source::{DirSource, Source, SourceError};
use crate::warning::{self, Warning};

/// Names the file kind, so a foreign JSON file is never read as a snapshot.
pub(crate) const KIND: &str = "fpcheck-snapshot";

/// The snapshot schema this fpcheck writes and reads.
pub(crate) const SCHEMA_VERSION: u32 = 2;

/// The settings a snapshot was taken with, as the snapshot file holds them
/// (its schema, read back by the gate, which must use the same): the part
/// of a [`crate::config::RuntimeSpec`] that selects files under a runtime
/// root given as a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotSettings {
    /// The runtime's name in a multi-runtime config, if any.
    pub runtime: Option<String>,
    /// Runtime file extensions.
    pub extensions: Vec<String>,
    /// Excluded names.
    pub exclude: Vec<String>,
}

impl From<crate::config::RuntimeSpec> for SnapshotSettings {
    fn from(rt: crate::config::RuntimeSpec) -> Self {
        SnapshotSettings {
            runtime: rt.name,
            extensions: rt.rules.extensions,
            exclude: rt.rules.exclude,
        }
    }
}

impl SnapshotSettings {
    /// The selection rules.
    pub fn rules(&self) -> Rules {
        Rules {
            extensions: self.extensions.clone(),
            exclude: self.exclude.clone(),
        }
    }
}

/// The `runtime_fingerprint` a release recorded in its `version.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The file it was read from.
    pub file: String,
    /// The value as written (normally a 64-hex string).
    pub value: Value,
}

impl Recorded {
    /// Do the installed bytes match it? (`fingerprint`: theirs, `None`
    /// when unavailable, which matches nothing.)
    pub fn matches(&self, fingerprint: Option<&str>) -> bool {
        fingerprint.is_some_and(|fp| self.value.as_str() == Some(fp))
    }
}

/// One runtime's state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Always [`KIND`].
    pub kind: String,
    /// Always [`SCHEMA_VERSION`] when written by this fpcheck.
    pub schema_version: u32,
    /// The fpcheck that took it.
    pub fpcheck_version: String,
    /// When, UTC.
    pub taken_at: String,
    /// The runtime root directory, as given.
    pub dir: String,
    /// The release's version (section 5), `null` when none is found.
    pub version: Option<String>,
    /// The file it came from.
    pub version_file: Option<String>,
    /// The version exactly, as JSON text (`json.dumps`: a lone surrogate
    /// stays itself); `""` when none. This is what the gate compares.
    pub version_key: String,
    /// The updater's own reading of the version (section 6), as JSON text
    /// (Python's: it may hold `NaN` or a lone surrogate).
    pub updater_version: String,
    /// Version files that are there but cannot be read.
    pub unreadable_version_files: Vec<String>,
    /// `force_restart` under Python's truthiness.
    pub force_restart: bool,
    /// The raw JSON value that decided it (`null` when absent).
    pub force_restart_raw: Option<Value>,
    /// The file it came from.
    pub force_restart_file: Option<String>,
    /// The release's recorded `runtime_fingerprint`, if any.
    pub recorded_fingerprint: Option<Recorded>,
    /// The runtime fingerprint, `""` when unavailable.
    pub fingerprint: String,
    /// Why it is unavailable.
    pub unavailable_reason: Option<String>,
    /// The settings used.
    pub settings: SnapshotSettings,
    /// Each selected file's own SHA-256, by path (empty when unavailable).
    pub files: BTreeMap<String, String>,
    /// Things to know about the version files or the bytes: `warnings`
    /// (the messages) and `warning_codes` in the file.
    #[serde(flatten, with = "warning::split")]
    pub warnings: Vec<Warning>,
}

impl Snapshot {
    /// The fingerprint as the library holds it: `None` when unavailable
    /// (the file's `""`).
    pub fn digest(&self) -> Option<&str> {
        crate::fingerprint::available(&self.fingerprint)
    }

    /// The version as the gate compares it (`""` when none).
    pub fn version_str(&self) -> &str {
        &self.version_key
    }

    /// Whether it saw a version file: a version, a `force_restart`, or
    /// the updater's reading of one. A file that says neither (a
    /// `version.json` without those keys) is not told from none, which
    /// only ever adds a restart.
    pub fn has_version_file(&self) -> bool {
        self.version_file.is_some()
            || self.force_restart_file.is_some()
            || !self.unreadable_version_files.is_empty()
            || self.updater().differs(&UpdaterVersion::default())
    }

    /// The updater's reading (validated when the snapshot was loaded).
    pub fn updater(&self) -> UpdaterVersion {
        UpdaterVersion::from_json(&self.updater_version).unwrap_or_default()
    }

    /// Pretty JSON with a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::pretty::json_bytes(self)
    }
}

/// Reads the runtime at `dir` with `settings`. Each runtime file is read
/// once, for both the fingerprint and its own digest.
pub fn take(dir: &Path, settings: &SnapshotSettings) -> Result<Snapshot, SourceError> {
    let source = DirSource::new(dir);
    let rules = settings.rules();
    let rel = release::read(&source)?;
    let detailed = compute_detailed(&source, &rules)?;
    let fp = &detailed.fingerprint;
    let files = fp
        .selection
        .files
        .iter()
        .zip(&detailed.file_digests)
        .map(|(f, d)| (f.path.clone(), d.clone()))
        .collect();
    let mut warnings = rel.warnings.clone();
    warnings.extend(fp.warnings.iter().cloned());
    let version_key = rel.version_key();
    Ok(Snapshot {
        kind: KIND.into(),
        schema_version: SCHEMA_VERSION,
        fpcheck_version: env!("CARGO_PKG_VERSION").into(),
        taken_at: clock::now_utc(),
        dir: dir.display().to_string(),
        version_key,
        version: rel.version,
        version_file: rel.version_file,
        updater_version: rel.updater_version.to_json(),
        unreadable_version_files: rel.unreadable,
        force_restart: rel.force_restart,
        force_restart_raw: rel.force_restart_raw,
        force_restart_file: rel.force_restart_file,
        recorded_fingerprint: recorded(&source)?,
        fingerprint: fp.as_gate_str().to_string(),
        unavailable_reason: fp.unavailable_reason.clone(),
        settings: settings.clone(),
        files,
        warnings,
    })
}

/// Why the runtime root itself cannot be read (missing, not a directory,
/// unreadable), as a sentence fragment; `None` when it is a directory.
/// Section 3 makes the fingerprint unavailable then; `snapshot` also says
/// so in its exit status.
pub(crate) fn root_problem(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => match std::fs::read_dir(dir) {
            Ok(_) => None,
            Err(e) => Some(format!(
                "{} cannot be read: {}",
                dir.display(),
                super::io_reason(&e)
            )),
        },
        Ok(_) => Some(format!("{} is not a directory", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Some(format!("{} does not exist", dir.display()))
        }
        Err(e) => Some(format!(
            "{} cannot be read: {}",
            dir.display(),
            super::io_reason(&e)
        )),
    }
}

/// The first `version.json` (the runtime root's, then its parent's) that
/// is a JSON object carrying `runtime_fingerprint` (`fpcheck patch` puts it
/// there). Unparsable files are already warned about by the release lookup.
fn recorded(source: &dyn Source) -> Result<Option<Recorded>, SourceError> {
    for in_parent in [false, true] {
        let Some(file) = source.read_meta("version.json", in_parent)? else {
            continue;
        };
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(&file.bytes) {
            if let Some(value) = map.get("runtime_fingerprint") {
                return Ok(Some(Recorded {
                    file: file.display,
                    value: value.clone(),
                }));
            }
        }
    }
    Ok(None)
}

/// Reads a snapshot file, refusing anything that is not one this fpcheck
/// wrote: a foreign or corrupt file must never read as "unchanged".
pub fn load(path: &Path) -> Result<Snapshot, GateError> {
    let name = path.display().to_string();
    // Bounded and non-blocking: a FIFO or a link to a device must not hang
    // the gate or exhaust its memory (it then fails closed: restart).
    let bytes = safe_io::read_regular(path, Links::Follow, safe_io::JSON_LIMIT).map_err(|e| {
        GateError::SnapshotUnreadable {
            path: name.clone(),
            why: match e {
                ReadError::Io(e) => super::io_reason(&e),
                e => e.to_string(),
            },
        }
    })?;
    parse(&bytes).map_err(|why| GateError::SnapshotInvalid { path: name, why })
}

/// Parses and validates snapshot bytes; the error is a sentence fragment.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, String> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(map) = &value else {
        return Err("not a JSON object".into());
    };
    match map.get("kind").and_then(Value::as_str) {
        Some(KIND) => {}
        _ => return Err(format!("not an fpcheck snapshot (no \"kind\": \"{KIND}\")")),
    }
    match map.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "snapshot schema_version {v}, this fpcheck reads {SCHEMA_VERSION}: take the snapshot with the same fpcheck"
            ))
        }
        None => return Err("no numeric \"schema_version\"".into()),
    }
    let snap: Snapshot =
        serde_json::from_value(value).map_err(|e| format!("malformed snapshot: {e}"))?;
    validate(&snap)?;
    Ok(snap)
}

/// Consistency checks a hand-edited or truncated-then-patched file fails.
fn validate(s: &Snapshot) -> Result<(), String> {
    let is_digest = |d: &str| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit());
    match s.digest() {
        None if s.unavailable_reason.is_none() => {
            return Err("an empty fingerprint without an unavailable_reason".into());
        }
        None => {}
        Some(fp) if !is_digest(fp) => {
            return Err(format!("fingerprint {fp:?} is not 64 hex digits"));
        }
        Some(_) if s.files.is_empty() => return Err("a fingerprint with no files".into()),
        Some(_) => {}
    }
    if UpdaterVersion::from_json(&s.updater_version).is_none() {
        return Err("updater_version is not JSON text".into());
    }
    if let Some((path, _)) = s.files.iter().find(|(_, d)| !is_digest(d)) {
        return Err(format!("the digest of {path} is not 64 hex digits"));
    }
    Ok(())
}

/// How one runtime file differs between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Its path below the runtime root.
    pub path: String,
    /// `added`, `removed` or `modified`.
    pub change: &'static str,
}

/// The runtime files that differ, in path order; `None` when either side's
/// fingerprint is unavailable (its file list is then unknown).
pub fn changed_files(before: &Snapshot, after: &Snapshot) -> Option<Vec<FileChange>> {
    if before.digest().is_none() || after.digest().is_none() {
        return None;
    }
    let paths: std::collections::BTreeSet<&String> =
        before.files.keys().chain(after.files.keys()).collect();
    let mut out = Vec::new();
    for path in paths {
        let change = match (before.files.get(path), after.files.get(path)) {
            (Some(a), Some(b)) if a != b => "modified",
            (Some(_), None) => "removed",
            (None, Some(_)) => "added",
            _ => continue,
        };
        out.push(FileChange {
            path: path.clone(),
            change,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unavailable fingerprint (the file's `""`) matches no recorded
    /// value, not even a recorded `""`.
    #[test]
    fn an_unavailable_fingerprint_matches_no_record() {
        let r = |v: &str| Recorded {
            file: "version.json".into(),
            value: Value::from(v),
        };
        assert!(!r("").matches(None));
        assert!(!r("").matches(crate::fingerprint::available("")));
        assert!(r("ab").matches(Some("ab")));
        assert!(!r("ab").matches(Some("cd")));
    }

    fn settings() -> SnapshotSettings {
        let r = Rules::default();
        SnapshotSettings {
            runtime: None,
            extensions: r.extensions,
            exclude: r.exclude,
        }
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        dir
    }

    fn sha(bytes: &[u8]) -> String {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(bytes))
    }

    #[test]
    fn take_records_every_file_digest_and_the_release() {
        let dir = tree(&[
            ("a.py", "print(1)\n"),
            ("pkg/__init__.py", ""),
            ("pkg/other/__init__.py", ""),
            ("tests/t.py", "x"),
            (
                "version.json",
                "{\"version\": \"2.0\", \"force_restart\": \"false\"}",
            ),
        ]);
        let s = take(dir.path(), &settings()).unwrap();
        assert_eq!(s.version.as_deref(), Some("2.0"));
        assert!(s.force_restart);
        assert_eq!(s.force_restart_raw, Some(Value::String("false".into())));
        let want: BTreeMap<String, String> = [
            ("a.py", sha(b"print(1)\n")),
            ("pkg/__init__.py", sha(b"")),
            ("pkg/other/__init__.py", sha(b"")),
        ]
        .into_iter()
        .map(|(p, d)| (p.to_string(), d))
        .collect();
        assert_eq!(s.files, want);
        let fp = crate::compute(&DirSource::new(dir.path()), &Rules::default()).unwrap();
        assert_eq!(s.fingerprint, fp.as_gate_str());
        assert_eq!(parse(&s.to_bytes()).unwrap(), s);
    }

    #[test]
    fn foreign_and_broken_files_are_refused() {
        let ok = take(tree(&[("a.py", "")]).path(), &settings()).unwrap();
        let good: Value = serde_json::from_slice(&ok.to_bytes()).unwrap();
        let with = |key: &str, v: Value| {
            let mut g = good.clone();
            g[key] = v;
            serde_json::to_vec(&g).unwrap()
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"".to_vec(), "not valid JSON"),
            (b"[]".to_vec(), "not a JSON object"),
            (
                b"{\"fingerprint\": \"x\"}".to_vec(),
                "not an fpcheck snapshot",
            ),
            (with("kind", "other".into()), "not an fpcheck snapshot"),
            (
                with("schema_version", 1.into()),
                "snapshot schema_version 1",
            ),
            (with("fingerprint", "abc".into()), "is not 64 hex digits"),
            (
                with("files", serde_json::json!({})),
                "a fingerprint with no files",
            ),
            (
                with("fingerprint", "".into()),
                "without an unavailable_reason",
            ),
            (with("settings", Value::Null), "malformed snapshot"),
        ];
        for (bytes, want) in cases {
            let err = parse(&bytes).unwrap_err();
            assert!(err.contains(want), "{err} should contain {want}");
        }
    }

    #[test]
    fn changed_files_in_path_order() {
        let base = take(tree(&[("a.py", "")]).path(), &settings()).unwrap();
        let mut before = base.clone();
        let mut after = base.clone();
        let d = |c: char| c.to_string().repeat(64);
        before.files = [("a.py", d('1')), ("b.py", d('2')), ("d.py", d('4'))]
            .into_iter()
            .map(|(p, x)| (p.to_string(), x))
            .collect();
        after.files = [("a.py", d('1')), ("b.py", d('9')), ("c.py", d('3'))]
            .into_iter()
            .map(|(p, x)| (p.to_string(), x))
            .collect();
        let got = changed_files(&before, &after).unwrap();
        let got: Vec<(&str, &str)> = got.iter().map(|c| (c.path.as_str(), c.change)).collect();
        assert_eq!(
            got,
            [("b.py", "modified"), ("c.py", "added"), ("d.py", "removed")]
        );
        after.fingerprint.clear();
        assert_eq!(changed_files(&before, &after), None);
    }
}

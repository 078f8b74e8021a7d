//! The restart marker, `mcp-restart-required.json` (docs/spec.md section
//! 6), in the reference's schema 3, and how a marker on disk is read.
//!
//! Readers are lenient where the reference is (extra keys, a missing
//! `required`) and strict where safety needs it: anything that is not a
//! JSON object is *corrupt*, which forces a restart (section 7, rule 1).

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::client::py_strip;
use crate::release::python_truthy;
use crate::safe_io::io_reason;
use crate::safe_io::{self, Links, ReadError};

/// The reference's marker file name.
pub const FILE_NAME: &str = "mcp-restart-required.json";

/// The schema the reference gate writes and reads.
pub(crate) const SCHEMA_VERSION: u32 = 3;

/// A marker as the gate writes it; field order is the reference's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Marker {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Always `true` when written by a gate.
    pub required: bool,
    /// The version before the update (`""` when unknown).
    pub from_version: String,
    /// The version after it.
    pub to_version: String,
    /// The fingerprint before the update (`""` when unavailable).
    pub from_fingerprint: String,
    /// The fingerprint after it.
    pub to_fingerprint: String,
    /// Why it was written.
    pub reason: super::updater::MarkerReason,
    /// UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub updated_at: String,
    /// Client name to action (`restart_session_required`,
    /// `restart_client_required`, or `"ok"` once acknowledged).
    pub clients: Map<String, Value>,
}

impl Marker {
    /// The bytes written: pretty JSON with a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::pretty::json_bytes(self)
    }
}

/// A marker file as found on disk.
#[derive(Clone, Debug, PartialEq)]
pub enum MarkerState {
    /// No file at that path.
    Absent,
    /// Something is there (or may be) but it cannot be read as a JSON
    /// object: the sentence says why.
    Corrupt(String),
    /// A JSON object, in any schema.
    Present(Map<String, Value>),
}

impl MarkerState {
    /// Is there (or may there be) a file?
    pub fn exists(&self) -> bool {
        !matches!(self, MarkerState::Absent)
    }

    /// The object, when readable.
    pub fn object(&self) -> Option<&Map<String, Value>> {
        match self {
            MarkerState::Present(map) => Some(map),
            _ => None,
        }
    }
}

/// Reads the marker at `path`. Only "no such file" means absent: any other
/// failure (permissions, a parent that is not a directory, a directory, a
/// FIFO or a device in its place, a file over 16 MiB) is corrupt, because
/// the answer cannot rule a marker out. Never blocks, never reads more than
/// [`safe_io::JSON_LIMIT`] bytes.
pub fn read(path: &Path) -> MarkerState {
    match safe_io::read_regular(path, Links::Follow, safe_io::JSON_LIMIT) {
        Ok(bytes) => parse(&bytes),
        Err(ReadError::Missing) => MarkerState::Absent,
        Err(ReadError::Io(e)) => MarkerState::Corrupt(format!("cannot be read: {}", io_reason(&e))),
        Err(e) => MarkerState::Corrupt(e.to_string()),
    }
}

/// Parses marker bytes.
///
/// Parsed exactly as the reference's `json.loads` parses it (`NaN`, deep
/// nesting, duplicate keys: last wins), then held as plain JSON: what the
/// checks look at (`required`'s truthiness, `to_fingerprint`, `clients`
/// entries equal to `"ok"`) is the same in both (`NaN` becomes the truthy
/// text `"nan"`, a lone surrogate U+FFFD).
pub fn parse(bytes: &[u8]) -> MarkerState {
    match crate::pyjson::loads(bytes) {
        Ok(v) => match crate::release::to_report_json(&v) {
            Value::Object(mut map) => {
                no_clients_as_empty(&mut map);
                match shape_problem(&map) {
                    Some(why) => MarkerState::Corrupt(why),
                    None => MarkerState::Present(map),
                }
            }
            other => MarkerState::Corrupt(format!(
                "is not a JSON object (found {})",
                crate::pretty::kind(&other)
            )),
        },
        Err(e) => MarkerState::Corrupt(format!("is not valid JSON: {e}")),
    }
}

/// What makes a JSON object not a marker of section 6's shape. The
/// reference reads `clients` as `dict(marker.get("clients") or {})`: a
/// value Python finds false (`null`, `false`, `0`, `""`, `[]`) is no
/// clients at all, and [`no_clients_as_empty`] has made it `{}` before
/// this looks; any other value must be an object. `dict` fails on a list of names or a number, and a server
/// sees that failure as an error, not as "no restart"; so must fpcheck,
/// whatever `required` says. (`dict` also reads a list of pairs, which
/// fpcheck calls corrupt: a restart, never fewer.)
fn shape_problem(marker: &Map<String, Value>) -> Option<String> {
    match marker.get("clients") {
        None | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "has `clients` that is not a JSON object (found {})",
            crate::pretty::kind(other)
        )),
    }
}

/// A `clients` Python finds false, read as the reference reads it: no
/// clients, an empty object (which `ack` then fills, as the reference
/// does).
fn no_clients_as_empty(marker: &mut Map<String, Value>) {
    if let Some(clients) = marker.get_mut("clients") {
        if !clients.is_object() && !python_truthy(clients) {
            *clients = Value::Object(Map::new());
        }
    }
}

/// Whether a marker asks for a restart: a missing `required` counts as
/// true; otherwise Python's truthiness of its value.
pub fn required(marker: &Map<String, Value>) -> bool {
    marker.get("required").is_none_or(python_truthy)
}

/// The marker's `to_fingerprint` when it has one: a string, stripped,
/// non-empty.
pub fn to_fingerprint(marker: &Map<String, Value>) -> Option<&str> {
    match marker.get("to_fingerprint") {
        Some(Value::String(s)) if !py_strip(s).is_empty() => Some(py_strip(s)),
        _ => None,
    }
}

/// Whether the marker has a non-empty `to_fingerprint` in the reference's
/// sense, `str(value or "").strip() != ""`: any truthy value that is not
/// a blank string (a number, say, is "there", though no fingerprint).
pub(crate) fn has_to_fingerprint(marker: &Map<String, Value>) -> bool {
    match marker.get("to_fingerprint") {
        Some(Value::String(s)) => !py_strip(s).is_empty(),
        Some(v) => python_truthy(v),
        None => false,
    }
}

/// The action recorded for `client`, if any.
pub fn client_action<'a>(marker: &'a Map<String, Value>, client: &str) -> Option<&'a Value> {
    marker.get("clients")?.as_object()?.get(client)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn written_markers_have_the_reference_shape() {
        let m = Marker {
            schema_version: SCHEMA_VERSION,
            required: true,
            from_version: "1.0".into(),
            to_version: "1.1".into(),
            from_fingerprint: "a".repeat(64),
            to_fingerprint: "b".repeat(64),
            reason: super::super::updater::MarkerReason::BrainUpdate,
            updated_at: "2026-04-27T10:00:00Z".into(),
            clients: obj(json!({"codex": "restart_session_required"})),
        };
        let v: Value = serde_json::from_slice(&m.to_bytes()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "schema_version",
                "required",
                "from_version",
                "to_version",
                "from_fingerprint",
                "to_fingerprint",
                "reason",
                "updated_at",
                "clients"
            ]
        );
        assert_eq!(v["schema_version"], json!(3));
        assert_eq!(v["required"], json!(true));
        assert!(m.to_bytes().ends_with(b"}\n"));
    }

    #[test]
    fn parse_states() {
        assert_eq!(
            parse(b"{\"required\": true}"),
            MarkerState::Present(obj(json!({"required": true})))
        );
        assert_eq!(
            parse(b"[1]"),
            MarkerState::Corrupt("is not a JSON object (found an array)".into())
        );
        assert!(matches!(parse(b""), MarkerState::Corrupt(_)));
        assert!(matches!(parse(b"{\"a\":"), MarkerState::Corrupt(_)));
        assert!(matches!(parse(b"null"), MarkerState::Corrupt(_)));
    }

    /// `dict(marker.get("clients") or {})`: a false `clients` is none.
    #[test]
    fn a_false_clients_is_no_clients_as_in_the_reference() {
        for clients in ["null", "false", "0", "0.0", "\"\"", "[]", "{}"] {
            let text = format!("{{\"required\": true, \"clients\": {clients}}}");
            assert_eq!(
                parse(text.as_bytes()),
                MarkerState::Present(obj(json!({"required": true, "clients": {}}))),
                "{clients}"
            );
        }
        for clients in [
            "[\"codex\"]",
            "[[\"codex\", \"ok\"]]",
            "\"codex\"",
            "7",
            "true",
        ] {
            let text = format!("{{\"clients\": {clients}}}");
            assert!(
                matches!(parse(text.as_bytes()), MarkerState::Corrupt(_)),
                "{clients}"
            );
        }
    }

    #[test]
    fn markers_parse_as_python_does() {
        // NaN is truthy; a duplicate key's last value wins; deep nesting is
        // fine: none of these is corrupt for the reference.
        let MarkerState::Present(m) = parse(b"{\"required\": false, \"required\": NaN}") else {
            panic!("read")
        };
        assert!(required(&m));
        let deep = format!("{{\"x\": {}1{}}}", "[".repeat(300), "]".repeat(300));
        assert!(matches!(parse(deep.as_bytes()), MarkerState::Present(_)));
        assert!(matches!(parse(b"{\"a\": -NaN}"), MarkerState::Corrupt(_)));
    }

    #[test]
    fn required_defaults_to_true_and_follows_python() {
        for (m, want) in [
            (json!({}), true),
            (json!({"required": true}), true),
            (json!({"required": false}), false),
            (json!({"required": null}), false),
            (json!({"required": "false"}), true),
            (json!({"required": 0}), false),
        ] {
            assert_eq!(required(&obj(m.clone())), want, "{m}");
        }
    }

    #[test]
    fn reading_a_directory_or_through_a_file_is_corrupt_not_absent() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&dir.path().join("none.json")), MarkerState::Absent);
        assert!(matches!(read(dir.path()), MarkerState::Corrupt(_)));
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(
            read(&file.join("m.json")),
            MarkerState::Corrupt(_)
        ));
    }
}

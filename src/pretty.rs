//! JSON as fpcheck writes it and speaks of it: the one form of every
//! document it prints or writes (reports, snapshots, markers, patches):
//! pretty, two-space indented, with a final newline; and what a value is,
//! for messages.

use serde::Serialize;
use serde_json::Value;

/// Pretty JSON with a final newline.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("fpcheck's documents are plain data");
    text.push('\n');
    text
}

/// What a JSON value is, for messages: "a string", "an array", ...
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// [`json`] as bytes, for files.
pub(crate) fn json_bytes<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    json(value).into_bytes()
}

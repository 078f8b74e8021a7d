//! Surgical edits of a JSON object's text: replace the value span of a key
//! that exists, append new keys before the closing brace, and write both in
//! the file's own layout (newline, indentation, `": "` or `":"`). Nothing
//! outside the edited spans changes, so key order, the spelling of other
//! values and the final newline survive byte for byte.

use serde_json::Value;

use super::scan::{Document, Member};

/// How a file lays out its top-level object, read from the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Style {
    /// One member per line (otherwise all on one line).
    pub pretty: bool,
    /// `"\n"` or `"\r\n"`.
    pub newline: String,
    /// The indentation of the top-level keys.
    pub indent: String,
    /// The indentation of the line holding the top-level `{`.
    pub root_indent: String,
    /// One level of indentation, for nested values.
    pub unit: String,
    /// Between a key and its value, as the file writes it.
    pub colon: String,
    /// After a comma on one line (compact files).
    pub space: String,
}

impl Style {
    /// The layout of `doc`; an empty object gets the common default
    /// (two-space indentation, one member per line).
    pub fn of(doc: &Document) -> Style {
        let text = doc.text;
        let root_indent = line_indent(text, doc.open).unwrap_or_default();
        let Some(last) = doc.members.last() else {
            let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
            return Style {
                pretty: true,
                newline: newline.into(),
                indent: format!("{root_indent}  "),
                root_indent,
                unit: "  ".into(),
                colon: ": ".into(),
                space: " ".into(),
            };
        };
        let first = &doc.members[0];
        let colon = text[first.key_end..first.value_start].to_string();
        // The whitespace before the last key says how members are separated.
        let before = &text[..last.key_start];
        let sep = &before[before.trim_end_matches([' ', '\t', '\n', '\r']).len()..];
        let pretty = sep.contains('\n');
        let newline = if sep.contains("\r\n") { "\r\n" } else { "\n" };
        let indent = match sep.rfind('\n') {
            Some(i) => sep[i + 1..].to_string(),
            None => String::new(),
        };
        let unit = match indent.strip_prefix(root_indent.as_str()) {
            Some(u) if !u.is_empty() => u.to_string(),
            _ if indent.contains('\t') => "\t".into(),
            _ => "  ".into(),
        };
        let space = if doc.members.len() > 1 && !pretty {
            sep.to_string()
        } else if colon.ends_with(' ') {
            " ".into()
        } else {
            String::new()
        };
        Style {
            pretty,
            newline: newline.into(),
            indent,
            root_indent,
            unit,
            colon,
            space,
        }
    }
}

/// The whitespace that starts the line holding `offset`, when only
/// whitespace precedes `offset` on that line.
fn line_indent(text: &str, offset: usize) -> Option<String> {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let lead = &text[start..offset];
    lead.chars()
        .all(|c| c == ' ' || c == '\t')
        .then(|| lead.to_string())
}

/// `value` as JSON text in `style`, its nested lines indented from `indent`
/// (the indentation of the line it starts on).
pub fn render(value: &Value, style: &Style, indent: &str) -> String {
    let mut out = String::new();
    write_value(&mut out, value, style, indent);
    out
}

fn write_value(out: &mut String, value: &Value, style: &Style, indent: &str) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let items = map.iter().map(|(k, v)| (Some(k.as_str()), v));
            write_items(out, ('{', '}'), items, style, indent);
        }
        Value::Array(items) if !items.is_empty() => {
            let items = items.iter().map(|v| (None, v));
            write_items(out, ('[', ']'), items, style, indent);
        }
        // serde_json's Display is compact JSON with correct string escapes.
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn write_items<'v>(
    out: &mut String,
    (open, close): (char, char),
    items: impl Iterator<Item = (Option<&'v str>, &'v Value)>,
    style: &Style,
    indent: &str,
) {
    let inner = format!("{indent}{}", style.unit);
    out.push(open);
    for (i, (key, value)) in items.enumerate() {
        if i > 0 {
            out.push(',');
            if !style.pretty {
                out.push_str(&style.space);
            }
        }
        if style.pretty {
            out.push_str(&style.newline);
            out.push_str(&inner);
        }
        if let Some(key) = key {
            out.push_str(&Value::from(key).to_string());
            out.push_str(&style.colon);
        }
        write_value(out, value, style, &inner);
    }
    if style.pretty {
        out.push_str(&style.newline);
        out.push_str(indent);
    }
    out.push(close);
}

/// One replacement of `start..end` by `text`.
type Edit = (usize, usize, String);

/// The text of `doc` with each `(key, value)` of `set` written in: existing
/// keys get their value replaced in place, new ones are appended in order.
pub fn apply(doc: &Document, set: &[(String, Value)]) -> String {
    let style = Style::of(doc);
    let mut edits: Vec<Edit> = Vec::new();
    let mut appended: Vec<(&str, &Value)> = Vec::new();
    for (key, value) in set {
        match doc.member(key) {
            Some(m) => {
                let indent = member_indent(doc.text, m, &style);
                edits.push((m.value_start, m.value_end, render(value, &style, &indent)));
            }
            None => appended.push((key, value)),
        }
    }
    if !appended.is_empty() {
        edits.push(insertion(doc, &style, &appended));
    }
    splice(doc.text, edits)
}

/// The indentation nested lines of `m`'s value hang from.
fn member_indent(text: &str, m: &Member, style: &Style) -> String {
    line_indent(text, m.key_start).unwrap_or_else(|| style.indent.clone())
}

/// New members go right after the last value (before any whitespace that
/// precedes the closing brace), each introduced the way the file introduces
/// its members; into an empty object they replace the inner whitespace.
fn insertion(doc: &Document, style: &Style, new: &[(&str, &Value)]) -> Edit {
    let lead = if style.pretty {
        format!("{}{}", style.newline, style.indent)
    } else {
        style.space.clone()
    };
    let member = |(key, value): &(&str, &Value)| {
        format!(
            "{}{}{}",
            Value::from(*key),
            style.colon,
            render(value, style, &style.indent)
        )
    };
    match doc.members.last() {
        Some(last) => {
            let text: String = new
                .iter()
                .map(|m| format!(",{lead}{}", member(m)))
                .collect();
            (last.value_end, last.value_end, text)
        }
        None => {
            let body: Vec<String> = new.iter().map(member).collect();
            let text = if style.pretty {
                format!(
                    "{lead}{}{}{}",
                    body.join(&format!(",{lead}")),
                    style.newline,
                    style.root_indent
                )
            } else {
                body.join(&format!(",{lead}"))
            };
            (doc.open + 1, doc.close, text)
        }
    }
}

/// Applies non-overlapping edits.
fn splice(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|(start, end, _)| (*start, *end));
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0;
    for (start, end, replacement) in edits {
        debug_assert!(start >= cursor, "edits overlap");
        out.push_str(&text[cursor..start]);
        out.push_str(&replacement);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(text: &str, set: Value) -> String {
        let doc = Document::parse(text.as_bytes(), "v.json").unwrap();
        let set: Vec<(String, Value)> = set
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        apply(&doc, &set)
    }

    #[test]
    fn appends_in_the_files_layout() {
        let set = json!({"fp": "ab", "spec": {"ext": [".py"], "x": []}});
        assert_eq!(
            edit("{\n    \"version\": \"1\"\n}", set.clone()),
            "{\n    \"version\": \"1\",\n    \"fp\": \"ab\",\n    \"spec\": {\n        \"ext\": [\n            \".py\"\n        ],\n        \"x\": []\n    }\n}"
        );
        assert_eq!(
            edit("{\r\n\t\"a\": 1,\r\n\t\"b\": 2\r\n}\r\n", set.clone()),
            "{\r\n\t\"a\": 1,\r\n\t\"b\": 2,\r\n\t\"fp\": \"ab\",\r\n\t\"spec\": {\r\n\t\t\"ext\": [\r\n\t\t\t\".py\"\r\n\t\t],\r\n\t\t\"x\": []\r\n\t}\r\n}\r\n"
        );
        assert_eq!(
            edit("{\"a\":1,\"b\":2}", set.clone()),
            "{\"a\":1,\"b\":2,\"fp\":\"ab\",\"spec\":{\"ext\":[\".py\"],\"x\":[]}}"
        );
        assert_eq!(
            edit("{\"a\": 1}\n", set.clone()),
            "{\"a\": 1, \"fp\": \"ab\", \"spec\": {\"ext\": [\".py\"], \"x\": []}}\n"
        );
    }

    #[test]
    fn replaces_values_in_place_and_fills_empty_objects() {
        assert_eq!(
            edit(
                "{\n  \"fp\": \"old\",\n  \"n\": 1.50,\n  \"spec\": [1,2]\n}\n",
                json!({"spec": {"a": 1}, "fp": "new"})
            ),
            "{\n  \"fp\": \"new\",\n  \"n\": 1.50,\n  \"spec\": {\n    \"a\": 1\n  }\n}\n"
        );
        assert_eq!(edit("{}", json!({"a": true})), "{\n  \"a\": true\n}");
        assert_eq!(
            edit(" { \n }\n", json!({"a": true, "b": "é"})),
            " {\n   \"a\": true,\n   \"b\": \"é\"\n }\n"
        );
    }
}

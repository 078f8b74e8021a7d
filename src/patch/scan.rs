//! Where things are in a JSON document: the byte spans of the top-level
//! members, so that a patch can be applied by editing the text instead of
//! re-serialising it (which would lose the file's key order, indentation,
//! number spellings and final newline).
//!
//! serde_json validates the text first (strict RFC 8259, with line and
//! column on error); the scanner then only has to find boundaries in text
//! already known to be valid, which keeps it small. It also refuses
//! duplicate keys at any depth: serde_json and Python's `json.load` both
//! keep the last one silently, so the file would not mean what it says.

use std::collections::HashMap;

use serde_json::Value;

use super::PatchError;

/// One member of the top-level object, located in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The decoded key.
    pub key: String,
    /// Offset of the key's opening quote.
    pub key_start: usize,
    /// Offset just past the key's closing quote.
    pub key_end: usize,
    /// Offset of the value's first byte.
    pub value_start: usize,
    /// Offset just past the value's last byte.
    pub value_end: usize,
}

/// A parsed JSON object document with the spans of its members.
#[derive(Clone, Debug)]
pub struct Document<'t> {
    /// The whole text, untouched.
    pub text: &'t str,
    /// The parsed value (always an object).
    pub value: Value,
    /// Offset of the top-level `{`.
    pub open: usize,
    /// Offset of the top-level `}`.
    pub close: usize,
    /// The top-level members, in text order.
    pub members: Vec<Member>,
}

impl<'t> Document<'t> {
    /// Parses `bytes`; `path` names the file in errors.
    pub fn parse(bytes: &'t [u8], path: &str) -> Result<Document<'t>, PatchError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| invalid(path, &e))?;
        // serde_json checked every string; outside strings valid JSON is ASCII.
        let text = std::str::from_utf8(bytes).map_err(|e| PatchError::InvalidJson {
            path: path.to_string(),
            line: line_of(bytes, e.valid_up_to()),
            column: 1,
            message: "not valid UTF-8".into(),
        })?;
        let open = skip_ws(bytes, 0);
        if !value.is_object() {
            return Err(PatchError::NotAnObject {
                path: path.to_string(),
                line: line_of(bytes, open),
                found: crate::pretty::kind(&value),
            });
        }
        let mut scan = Scan {
            bytes,
            pos: open,
            path,
        };
        let members = scan.object("")?;
        Ok(Document {
            text,
            value,
            open,
            close: scan.pos - 1,
            members,
        })
    }

    /// The member named `key`.
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// The 1-based line of byte `offset`.
pub(crate) fn line_of(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

/// Escapes a key for a JSON Pointer (RFC 6901).
pub(crate) fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn invalid(path: &str, e: &serde_json::Error) -> PatchError {
    // serde_json ends its message with " at line L column C"; the position
    // is reported separately, in the compiler style `path:line:column`.
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    PatchError::InvalidJson {
        path: path.to_string(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && matches!(bytes[pos], b' ' | b'\t' | b'\n' | b'\r') {
        pos += 1;
    }
    pos
}

/// A cursor over text that serde_json already accepted.
struct Scan<'t> {
    bytes: &'t [u8],
    pos: usize,
    path: &'t str,
}

impl Scan<'_> {
    fn peek(&self) -> u8 {
        self.bytes.get(self.pos).copied().unwrap_or(0)
    }

    fn ws(&mut self) {
        self.pos = skip_ws(self.bytes, self.pos);
    }

    /// A byte the grammar requires here; anything else means the scanner
    /// and serde_json disagree, which must stop the edit, not panic.
    fn expect(&mut self, byte: u8) -> Result<(), PatchError> {
        if self.peek() != byte {
            return Err(PatchError::Internal(format!(
                "{}: expected `{}` at byte {} while locating keys",
                self.path, byte as char, self.pos
            )));
        }
        self.pos += 1;
        Ok(())
    }

    fn value(&mut self, pointer: &str) -> Result<(), PatchError> {
        match self.peek() {
            b'{' => self.object(pointer).map(drop),
            b'[' => self.array(pointer),
            b'"' => self.string(),
            _ => {
                // Numbers and literals end at a delimiter or whitespace.
                while !matches!(
                    self.peek(),
                    0 | b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r'
                ) {
                    self.pos += 1;
                }
                Ok(())
            }
        }
    }

    fn string(&mut self) -> Result<(), PatchError> {
        self.expect(b'"')?;
        loop {
            match self.peek() {
                b'"' => {
                    self.pos += 1;
                    return Ok(());
                }
                b'\\' => self.pos += 2,
                0 if self.pos >= self.bytes.len() => {
                    return Err(PatchError::Internal(format!(
                        "{}: unterminated string while locating keys",
                        self.path
                    )))
                }
                _ => self.pos += 1,
            }
        }
    }

    fn array(&mut self, pointer: &str) -> Result<(), PatchError> {
        self.expect(b'[')?;
        self.ws();
        if self.peek() == b']' {
            self.pos += 1;
            return Ok(());
        }
        for index in 0.. {
            self.value(&format!("{pointer}/{index}"))?;
            self.ws();
            if self.peek() == b',' {
                self.pos += 1;
                self.ws();
            } else {
                break;
            }
        }
        self.expect(b']')
    }

    /// An object's members; duplicate keys are refused with both lines.
    fn object(&mut self, pointer: &str) -> Result<Vec<Member>, PatchError> {
        self.expect(b'{')?;
        self.ws();
        let mut members = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        if self.peek() == b'}' {
            self.pos += 1;
            return Ok(members);
        }
        loop {
            let key_start = self.pos;
            self.string()?;
            let key_end = self.pos;
            let key: String = serde_json::from_slice(&self.bytes[key_start..key_end])
                .map_err(|e| PatchError::Internal(format!("{}: a key: {e}", self.path)))?;
            if let Some(first) = seen.get(&key) {
                return Err(PatchError::DuplicateKey {
                    path: self.path.to_string(),
                    line: line_of(self.bytes, key_start),
                    first_line: line_of(self.bytes, *first),
                    pointer: pointer.to_string(),
                    key,
                });
            }
            seen.insert(key.clone(), key_start);
            self.ws();
            self.expect(b':')?;
            self.ws();
            let value_start = self.pos;
            self.value(&format!("{pointer}/{}", pointer_token(&key)))?;
            members.push(Member {
                key,
                key_start,
                key_end,
                value_start,
                value_end: self.pos,
            });
            self.ws();
            if self.peek() == b',' {
                self.pos += 1;
                self.ws();
            } else {
                break;
            }
        }
        self.expect(b'}')?;
        Ok(members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(String, String)> {
        let doc = Document::parse(text.as_bytes(), "v.json").unwrap();
        doc.members
            .iter()
            .map(|m| {
                (
                    text[m.key_start..m.key_end].to_string(),
                    text[m.value_start..m.value_end].to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn finds_every_kind_of_value() {
        let text = "\u{feff}"; // a BOM is not JSON (Python refuses it too)
        assert!(Document::parse(text.as_bytes(), "v.json").is_err());
        let text = "{ \"a\" :1.5e3,\"b\\\"\": \"x\\\\\" ,\"c\":[1,[2],{\"d\":null}],\n\t\"e\":{},\"f\":true , \"g\": -0 }\n";
        assert_eq!(
            spans(text),
            [
                ("\"a\"", "1.5e3"),
                ("\"b\\\"\"", "\"x\\\\\""),
                ("\"c\"", "[1,[2],{\"d\":null}]"),
                ("\"e\"", "{}"),
                ("\"f\"", "true"),
                ("\"g\"", "-0"),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        let doc = Document::parse(text.as_bytes(), "v.json").unwrap();
        assert_eq!(doc.members[1].key, "b\"");
        assert_eq!(&text[doc.open..=doc.open], "{");
        assert_eq!(&text[doc.close..=doc.close], "}");
    }

    #[test]
    fn duplicates_are_found_at_any_depth_even_when_escaped() {
        let err = Document::parse(b"{\n\"a\": 1,\n\"\\u0061\": 2}", "v.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "v.json:3: duplicate key \"a\" in the top-level object (first at line 2): the gate would silently use the last one"
        );
        let err = Document::parse(b"{\"x\": [0, {\"k\": 1,\n \"k\": 2}]}", "v.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "v.json:2: duplicate key \"k\" in /x/1 (first at line 1): the gate would silently use the last one"
        );
    }

    #[test]
    fn invalid_json_and_non_objects_name_path_and_line() {
        let err = Document::parse(b"{\n  \"a\": 1,\n}\n", "src/version.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "src/version.json:3:1: not valid JSON: trailing comma"
        );
        let err = Document::parse(b"\n[1]", "v.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "v.json:2: the document is an array, not a JSON object"
        );
        let err = Document::parse(b"{\"a\": \"\xff\"}", "v.json").unwrap_err();
        assert!(err.to_string().starts_with("v.json:1:"), "{err}");
    }
}

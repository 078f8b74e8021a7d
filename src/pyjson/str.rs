//! [`PyStr`]: a Python `str`, which may hold lone surrogates.
//!
//! JSON's `"\ud800"` escape gives Python a one-character string holding the
//! surrogate U+D800, distinct from `"\udc00"` and from U+FFFD. Rust's `String`
//! cannot hold it, so a `PyStr` keeps its code points in *generalised* UTF-8:
//! ordinary UTF-8, plus the 3-byte form for U+D800..U+DFFF. A surrogate pair
//! written as two escapes is joined into one code point by the parser (as
//! Python does), so the encoding is one-to-one and byte equality is string
//! equality.

use std::fmt::Write as _;

use super::printable::is_printable;

/// A Python `str`: a sequence of code points, lone surrogates included.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PyStr {
    /// Generalised UTF-8; valid UTF-8 exactly when there is no surrogate.
    bytes: Vec<u8>,
}

impl PyStr {
    /// The Python string equal to `s`. (Infallible, so not `FromStr`.)
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(s: &str) -> PyStr {
        PyStr {
            bytes: s.as_bytes().to_vec(),
        }
    }

    /// The string of these code points; `None` if one is above U+10FFFF.
    pub fn from_code_points(cps: impl IntoIterator<Item = u32>) -> Option<PyStr> {
        let mut s = PyStr::default();
        for cp in cps {
            if cp > 0x10FFFF {
                return None;
            }
            s.push(cp);
        }
        Some(s)
    }

    /// Appends one code point (at most U+10FFFF; surrogates allowed).
    pub(super) fn push(&mut self, cp: u32) {
        debug_assert!(cp <= 0x10FFFF);
        match char::from_u32(cp) {
            Some(c) => {
                let mut buf = [0u8; 4];
                self.bytes
                    .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            // A surrogate: the 3-byte pattern UTF-8 would give it.
            None => self.bytes.extend_from_slice(&[
                0xE0 | (cp >> 12) as u8,
                0x80 | ((cp >> 6) & 0x3F) as u8,
                0x80 | (cp & 0x3F) as u8,
            ]),
        }
    }

    /// Appends whole UTF-8 characters (a slice of a `str`).
    pub(super) fn push_utf8(&mut self, utf8: &[u8]) {
        debug_assert!(std::str::from_utf8(utf8).is_ok());
        self.bytes.extend_from_slice(utf8);
    }

    /// The code points, in order.
    pub fn code_points(&self) -> CodePoints<'_> {
        CodePoints { rest: &self.bytes }
    }

    /// Python's `len(s)`.
    pub fn char_len(&self) -> usize {
        self.code_points().count()
    }

    /// Python's `s == ""`.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// True when the string holds a lone surrogate (no Rust `String` for it).
    pub fn has_surrogates(&self) -> bool {
        std::str::from_utf8(&self.bytes).is_err()
    }

    /// The string as `&str`, unless it holds a lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// The string as an owned `String`, unless it holds a lone surrogate.
    pub fn to_string_lossless(&self) -> Option<String> {
        self.as_str().map(str::to_owned)
    }

    /// For people: each lone surrogate becomes U+FFFD. Never compare this.
    /// (Escaping control characters for a terminal is `term::escape`'s job.)
    pub fn display(&self) -> String {
        self.code_points()
            .map(|cp| char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect()
    }

    /// Python's `s.strip()` with no argument: drops leading and trailing code
    /// points for which `str.isspace()` is true.
    pub fn strip(&self) -> PyStr {
        let cps: Vec<u32> = self.code_points().collect();
        let start = cps.iter().position(|&c| !is_py_space(c));
        let Some(start) = start else {
            return PyStr::default();
        };
        let end = cps.iter().rposition(|&c| !is_py_space(c)).unwrap_or(start);
        let mut out = PyStr::default();
        for &cp in &cps[start..=end] {
            out.push(cp);
        }
        out
    }

    /// `json.dumps(s)` (ensure_ascii=True): ASCII only, lone surrogates as
    /// `\udxxx`, other non-ASCII as `\uxxxx` or a surrogate pair.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.bytes.len() + 2);
        out.push('"');
        for cp in self.code_points() {
            match json_short_escape(cp) {
                Some(esc) => out.push_str(esc),
                None if (0x20..0x7F).contains(&cp) => out.push(cp as u8 as char),
                None if cp >= 0x10000 => {
                    let v = cp - 0x10000;
                    let _ = write!(
                        out,
                        "\\u{:04x}\\u{:04x}",
                        0xD800 + (v >> 10),
                        0xDC00 + (v & 0x3FF)
                    );
                }
                None => {
                    let _ = write!(out, "\\u{cp:04x}");
                }
            }
        }
        out.push('"');
        out
    }

    /// `json.dumps(s, ensure_ascii=False)`; `None` when the string holds a
    /// lone surrogate, which Python can serialise but then cannot write as
    /// UTF-8 (`UnicodeEncodeError`).
    pub fn to_json_unicode(&self) -> Option<String> {
        let s = self.as_str()?;
        let mut out = String::with_capacity(s.len() + 2);
        out.push('"');
        for c in s.chars() {
            match json_short_escape(c as u32) {
                Some(esc) => out.push_str(esc),
                None if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                None => out.push(c),
            }
        }
        out.push('"');
        Some(out)
    }

    /// Python's `repr(s)`: single quotes unless the string holds `'` and no
    /// `"`; non-printable code points escaped as `\xhh`, `\uhhhh`, `\Uhhhhhhhh`.
    pub fn repr(&self) -> String {
        let has_single = self.bytes.contains(&b'\'');
        let has_double = self.bytes.contains(&b'"');
        let quote = if has_single && !has_double { '"' } else { '\'' };
        let mut out = String::with_capacity(self.bytes.len() + 2);
        out.push(quote);
        for cp in self.code_points() {
            match cp {
                _ if cp == quote as u32 || cp == u32::from(b'\\') => {
                    out.push('\\');
                    out.push(cp as u8 as char);
                }
                0x09 => out.push_str("\\t"),
                0x0A => out.push_str("\\n"),
                0x0D => out.push_str("\\r"),
                _ if cp < 0x20 || cp == 0x7F => {
                    let _ = write!(out, "\\x{cp:02x}");
                }
                _ if cp < 0x7F => out.push(cp as u8 as char),
                _ if is_printable(cp) => {
                    out.push(char::from_u32(cp).expect("printable code points are not surrogates"))
                }
                _ if cp <= 0xFF => {
                    let _ = write!(out, "\\x{cp:02x}");
                }
                _ if cp <= 0xFFFF => {
                    let _ = write!(out, "\\u{cp:04x}");
                }
                _ => {
                    let _ = write!(out, "\\U{cp:08x}");
                }
            }
        }
        out.push(quote);
        out
    }
}

impl std::fmt::Debug for PyStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl From<&str> for PyStr {
    fn from(s: &str) -> PyStr {
        PyStr::from_str(s)
    }
}

impl PartialEq<str> for PyStr {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for PyStr {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

/// Iterator over a [`PyStr`]'s code points.
pub struct CodePoints<'a> {
    rest: &'a [u8],
}

impl Iterator for CodePoints<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let (&b0, tail) = self.rest.split_first()?;
        // Only `push` and `from_str` build the bytes: always well formed.
        let (len, init) = match b0 {
            0x00..=0x7F => (1, u32::from(b0)),
            0xC0..=0xDF => (2, u32::from(b0 & 0x1F)),
            0xE0..=0xEF => (3, u32::from(b0 & 0x0F)),
            _ => (4, u32::from(b0 & 0x07)),
        };
        let cp = tail[..len - 1]
            .iter()
            .fold(init, |acc, &b| (acc << 6) | u32::from(b & 0x3F));
        self.rest = &tail[len - 1..];
        Some(cp)
    }
}

/// Python's `str.isspace()` for one code point (Unicode 14, CPython 3.11;
/// the set has not changed since): bidirectional class WS, B or S, or Zs.
pub fn is_py_space(cp: u32) -> bool {
    matches!(
        cp,
        0x09..=0x0D
            | 0x1C..=0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
    )
}

/// The two-character escapes `json.dumps` uses.
fn json_short_escape(cp: u32) -> Option<&'static str> {
    Some(match cp {
        0x22 => "\\\"",
        0x5C => "\\\\",
        0x0A => "\\n",
        0x0D => "\\r",
        0x09 => "\\t",
        0x08 => "\\b",
        0x0C => "\\f",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lone(cp: u32) -> PyStr {
        PyStr::from_code_points([cp]).unwrap()
    }

    #[test]
    fn surrogates_are_distinct_code_points() {
        assert_ne!(lone(0xD800), lone(0xDC00));
        assert_ne!(lone(0xD800), PyStr::from_str("\u{FFFD}"));
        assert_eq!(lone(0xD800).char_len(), 1);
        assert_eq!(lone(0xD800).as_str(), None);
        assert!(lone(0xDFFF).has_surrogates());
        assert_eq!(lone(0xD800).display(), "\u{FFFD}");
        let hi_lo = PyStr::from_code_points([0xD83D, 0xDE00]).unwrap();
        assert_ne!(hi_lo, PyStr::from_str("😀"));
        assert_eq!(hi_lo.code_points().collect::<Vec<_>>(), [0xD83D, 0xDE00]);
        assert_eq!(PyStr::from_code_points([0x110000]), None);
    }

    #[test]
    fn strip_uses_python_isspace() {
        let s = PyStr::from_str("\u{1c}\u{85}\u{2028}\u{3000} 7.38.7\t\u{b}\u{c}\u{a0}");
        assert_eq!(s.strip(), "7.38.7");
        // Zero-width space and BOM are not whitespace for Python.
        assert_eq!(
            PyStr::from_str("\u{200b}1\u{feff}").strip(),
            "\u{200b}1\u{feff}"
        );
        assert_eq!(PyStr::from_str(" \u{2029} ").strip(), "");
        let sur = PyStr::from_code_points([0x20, 0xD800, 0x20]).unwrap();
        assert_eq!(sur.strip(), lone(0xD800));
    }

    #[test]
    fn to_json_matches_json_dumps() {
        assert_eq!(
            PyStr::from_str("a\"\\/\n\r\t\u{8}\u{c}\u{1}\u{7f}é€😀").to_json(),
            r#""a\"\\/\n\r\t\b\f\u0001\u007f\u00e9\u20ac\ud83d\ude00""#
        );
        assert_eq!(lone(0xD800).to_json(), r#""\ud800""#);
        assert_eq!(
            PyStr::from_str("é\u{1}").to_json_unicode().unwrap(),
            "\"é\\u0001\""
        );
        assert_eq!(lone(0xDC00).to_json_unicode(), None);
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(PyStr::from_str("a").repr(), "'a'");
        assert_eq!(PyStr::from_str("a'b").repr(), "\"a'b\"");
        assert_eq!(PyStr::from_str("a\"b").repr(), "'a\"b'");
        assert_eq!(PyStr::from_str("a'\"b").repr(), "'a\\'\"b'");
        assert_eq!(PyStr::from_str("\\").repr(), "'\\\\'");
        assert_eq!(
            PyStr::from_str("\u{7f}\u{a0}\u{200b}\u{e0001} \t\n\r\u{1}é😀").repr(),
            "'\\x7f\\xa0\\u200b\\U000e0001 \\t\\n\\r\\x01é😀'"
        );
        assert_eq!(lone(0xD800).repr(), "'\\ud800'");
    }
}

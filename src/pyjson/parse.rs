//! The parser: CPython 3.11's `json` C scanner (`Modules/_json.c`), step for
//! step, so that it accepts and rejects the same documents and reports the
//! same error at the same position. It is iterative (an explicit stack), so a
//! hostile document cannot overflow fpcheck's own stack; nesting past
//! [`MAX_DEPTH`] is refused the way Python's `RecursionError` refuses it.

use std::collections::HashMap;

use super::str::PyStr;
use super::{PyDict, PyInt, PyJsonError, PyValue, MAX_DEPTH, MAX_INT_DIGITS};

/// Parses decoded, newline-translated text as `json.loads(str)` does.
/// The scanner walks UTF-8 bytes (every byte JSON's grammar looks at is
/// ASCII); positions become Python's character indices only in errors.
pub(super) fn parse_text(text: &str) -> Result<PyValue, PyJsonError> {
    let text = text.as_bytes();
    if text.starts_with("\u{FEFF}".as_bytes()) {
        return Err(decode_error(
            text,
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            0,
        ));
    }
    let start = skip_ws(text, 0);
    let (value, end) = Scanner { text }.scan(start)?;
    let end = skip_ws(text, end);
    if end != text.len() {
        return Err(decode_error(text, "Extra data", end));
    }
    Ok(value)
}

/// Python's `JSONDecodeError` at byte offset `at`: the character index,
/// line and column Python reports.
pub(super) fn decode_error(text: &[u8], msg: &'static str, at: usize) -> PyJsonError {
    let before = &text[..at.min(text.len())];
    // Characters are the bytes that do not continue a UTF-8 sequence.
    let chars = |b: &[u8]| b.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    let pos = chars(before);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = match before.iter().rposition(|&b| b == b'\n') {
        Some(nl) => chars(&before[nl..]),
        None => pos + 1,
    };
    PyJsonError::Decode {
        msg,
        line,
        column,
        pos,
    }
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(text: &[u8], mut idx: usize) -> usize {
    while idx < text.len() && is_ws(text[idx]) {
        idx += 1;
    }
    idx
}

/// An open container, waiting for its next element.
enum Frame {
    List(Vec<PyValue>),
    Dict {
        entries: Vec<(PyStr, PyValue)>,
        /// Position of each key in `entries`, once there are more than
        /// [`SCAN_KEYS`]: a repeated key replaces the value in place (Python
        /// dict semantics) without a quadratic scan.
        index: Option<HashMap<PyStr, usize>>,
        key: PyStr,
    },
}

struct Scanner<'a> {
    /// Valid UTF-8.
    text: &'a [u8],
}

/// What `scan_once` found at a position.
enum Step {
    /// A complete value and the index after it.
    Value(PyValue, usize),
    /// An open container whose first element starts at the index.
    Open(Frame, usize),
}

impl Scanner<'_> {
    fn at(&self, idx: usize) -> Option<u8> {
        self.text.get(idx).copied()
    }

    fn err(&self, msg: &'static str, pos: usize) -> PyJsonError {
        decode_error(self.text, msg, pos)
    }

    /// `scan_once` at `idx`, iteratively: returns the value and its end.
    fn scan(&self, mut idx: usize) -> Result<(PyValue, usize), PyJsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            let (mut value, mut next) = match self.scan_one(idx, stack.len())? {
                Step::Open(frame, first) => {
                    stack.push(frame);
                    idx = first;
                    continue;
                }
                Step::Value(value, next) => (value, next),
            };
            // Hand the value to the innermost open container; close those
            // that end here.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok((value, next));
                };
                let closer = match frame {
                    Frame::List(items) => {
                        items.push(value);
                        b']'
                    }
                    Frame::Dict {
                        entries,
                        index,
                        key,
                    } => {
                        insert(entries, index, std::mem::take(key), value);
                        b'}'
                    }
                };
                let after = skip_ws(self.text, next);
                if self.at(after) == Some(closer) {
                    value = close(stack.pop().expect("the frame just used"));
                    next = after + 1;
                    continue;
                }
                if self.at(after) != Some(b',') {
                    return Err(self.err("Expecting ',' delimiter", after));
                }
                let mut elem = skip_ws(self.text, after + 1);
                if let Some(Frame::Dict { key, .. }) = stack.last_mut() {
                    let (k, value_at) = self.member_key(elem)?;
                    *key = k;
                    elem = value_at;
                }
                idx = elem;
                break;
            }
        }
    }

    /// One step of `scan_once_unicode`; `depth` containers are open.
    fn scan_one(&self, idx: usize, depth: usize) -> Result<Step, PyJsonError> {
        let Some(c) = self.at(idx) else {
            return Err(self.err("Expecting value", idx));
        };
        let word = |w: &str| self.text[idx..].starts_with(w.as_bytes());
        let constant = |v: PyValue, len: usize| Ok(Step::Value(v, idx + len));
        match c {
            b'"' => {
                let (s, next) = self.scan_string(idx + 1)?;
                Ok(Step::Value(PyValue::Str(s), next))
            }
            b'{' | b'[' => {
                // Py_EnterRecursiveCall: entering the container itself counts.
                if depth + 1 > MAX_DEPTH {
                    return Err(PyJsonError::TooDeep { limit: MAX_DEPTH });
                }
                let first = skip_ws(self.text, idx + 1);
                if c == b'[' {
                    if self.at(first) == Some(b']') {
                        return Ok(Step::Value(PyValue::List(Vec::new()), first + 1));
                    }
                    return Ok(Step::Open(Frame::List(Vec::new()), first));
                }
                if self.at(first) == Some(b'}') {
                    return Ok(Step::Value(PyValue::Dict(PyDict::default()), first + 1));
                }
                let (key, value_at) = self.member_key(first)?;
                let frame = Frame::Dict {
                    entries: Vec::new(),
                    index: None,
                    key,
                };
                Ok(Step::Open(frame, value_at))
            }
            b'n' if word("null") => constant(PyValue::None, 4),
            b't' if word("true") => constant(PyValue::Bool(true), 4),
            b'f' if word("false") => constant(PyValue::Bool(false), 5),
            b'N' if word("NaN") => constant(PyValue::Float(f64::NAN), 3),
            b'I' if word("Infinity") => constant(PyValue::Float(f64::INFINITY), 8),
            b'-' if word("-Infinity") => constant(PyValue::Float(f64::NEG_INFINITY), 9),
            _ => self.scan_number(idx),
        }
    }

    /// A member's key, the `:` and the whitespace after it: returns the key
    /// and where its value starts.
    fn member_key(&self, idx: usize) -> Result<(PyStr, usize), PyJsonError> {
        if self.at(idx) != Some(b'"') {
            return Err(self.err("Expecting property name enclosed in double quotes", idx));
        }
        let (key, next) = self.scan_string(idx + 1)?;
        let colon = skip_ws(self.text, next);
        if self.at(colon) != Some(b':') {
            return Err(self.err("Expecting ':' delimiter", colon));
        }
        Ok((key, skip_ws(self.text, colon + 1)))
    }

    /// `_match_number_unicode`: `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`.
    fn scan_number(&self, start: usize) -> Result<Step, PyJsonError> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut idx = start;
        if self.at(idx) == Some(b'-') {
            idx += 1;
        }
        match self.at(idx) {
            Some(b'1'..=b'9') => {
                while digit(idx) {
                    idx += 1;
                }
            }
            Some(b'0') => idx += 1,
            _ => return Err(self.err("Expecting value", start)),
        }
        let mut is_float = false;
        if self.at(idx) == Some(b'.') && digit(idx + 1) {
            is_float = true;
            idx += 2;
            while digit(idx) {
                idx += 1;
            }
        }
        if matches!(self.at(idx), Some(b'e' | b'E')) {
            let mut e = idx + 1;
            if matches!(self.at(e), Some(b'+' | b'-')) {
                e += 1;
            }
            if digit(e) {
                while digit(e) {
                    e += 1;
                }
                is_float = true;
                idx = e;
            }
        }
        let literal =
            std::str::from_utf8(&self.text[start..idx]).expect("the scanner matched ASCII");
        let value = if is_float {
            // Correctly rounded, like Python's float(); 1e400 is inf.
            PyValue::Float(
                literal
                    .parse()
                    .expect("the scanner matched a float literal"),
            )
        } else {
            let (negative, digits) = match literal.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, literal),
            };
            if digits.len() > MAX_INT_DIGITS {
                return Err(PyJsonError::IntTooLong {
                    digits: digits.len(),
                });
            }
            PyValue::Int(PyInt::from_parts(negative, digits))
        };
        Ok(Step::Value(value, idx))
    }

    /// `scanstring_unicode` (strict): `end` is just after the opening quote.
    /// Indices count bytes where Python's count characters, but every
    /// character the rules look at is ASCII, so each decision is the same
    /// (the "one more character after `\uXXXX`" rule too: a character is at
    /// least one byte).
    fn scan_string(&self, mut end: usize) -> Result<(PyStr, usize), PyJsonError> {
        let text = self.text;
        let len = text.len();
        let begin = end - 1;
        let mut out = PyStr::default();
        loop {
            // The next quote or backslash; control characters are refused.
            let mut next = end;
            let mut found = None;
            while next < len {
                let c = text[next];
                if c == b'"' || c == b'\\' {
                    found = Some(c);
                    break;
                }
                if c <= 0x1F {
                    return Err(self.err("Invalid control character at", next));
                }
                next += 1;
            }
            let Some(c) = found else {
                return Err(self.err("Unterminated string starting at", begin));
            };
            // Whole UTF-8 characters: the chunk ends before an ASCII byte.
            out.push_utf8(&text[end..next]);
            next += 1;
            if c == b'"' {
                return Ok((out, next));
            }
            if next == len {
                return Err(self.err("Unterminated string starting at", begin));
            }
            if text[next] != b'u' {
                end = next + 1;
                let ch = match text[next] {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    _ => return Err(self.err("Invalid \\escape", end - 2)),
                };
                out.push(u32::from(ch));
                continue;
            }
            // \uXXXX: Python wants one more character after the four digits.
            next += 1;
            end = next + 4;
            if end >= len {
                return Err(self.err("Invalid \\uXXXX escape", next - 1));
            }
            let mut cp = self.hex4(next, end)?;
            // A high surrogate followed by a `\u` low surrogate is one code
            // point; anything else leaves it lone.
            if (0xD800..=0xDBFF).contains(&cp)
                && end + 6 < len
                && text[end] == b'\\'
                && text[end + 1] == b'u'
            {
                let low = self.hex4(end + 2, end + 6)?;
                if (0xDC00..=0xDFFF).contains(&low) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    end += 6;
                }
            }
            out.push(cp);
        }
    }

    /// Four hex digits in `from..to`; an error names the `u` before them.
    fn hex4(&self, from: usize, to: usize) -> Result<u32, PyJsonError> {
        let mut cp = 0;
        for &c in &self.text[from..to] {
            let Some(d) = char::from(c).to_digit(16) else {
                return Err(self.err("Invalid \\uXXXX escape", to - 5));
            };
            cp = (cp << 4) | d;
        }
        Ok(cp)
    }
}

/// Small objects (nearly all) find a repeated key by scanning.
const SCAN_KEYS: usize = 16;

/// `d[key] = value`: a new key goes last, a repeated one keeps its place.
fn insert(
    entries: &mut Vec<(PyStr, PyValue)>,
    index: &mut Option<HashMap<PyStr, usize>>,
    key: PyStr,
    value: PyValue,
) {
    let found = match index {
        Some(index) => index.get(&key).copied(),
        None => entries.iter().position(|(k, _)| *k == key),
    };
    if let Some(at) = found {
        entries[at].1 = value;
        return;
    }
    if let Some(index) = index {
        index.insert(key.clone(), entries.len());
    } else if entries.len() >= SCAN_KEYS {
        let mut built: HashMap<PyStr, usize> = entries
            .iter()
            .enumerate()
            .map(|(at, (k, _))| (k.clone(), at))
            .collect();
        built.insert(key.clone(), entries.len());
        *index = Some(built);
    }
    entries.push((key, value));
}

fn close(frame: Frame) -> PyValue {
    match frame {
        Frame::List(items) => PyValue::List(items),
        Frame::Dict { entries, .. } => PyValue::Dict(PyDict { entries }),
    }
}

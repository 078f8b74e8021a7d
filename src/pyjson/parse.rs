//! The parser: CPython 3.11's `json` C scanner (`Modules/_json.c`), step for
//! step, so that it accepts and rejects the same documents and reports the
//! same error at the same position. It is iterative (an explicit stack), so a
//! hostile document cannot overflow fpcheck's own stack; nesting past
//! [`MAX_DEPTH`] is refused the way Python's `RecursionError` refuses it.

use std::collections::HashMap;

use super::str::PyStr;
use super::{PyDict, PyInt, PyJsonError, PyValue, MAX_DEPTH, MAX_INT_DIGITS};

/// Parses decoded, newline-translated text as `json.loads(str)` does.
pub(super) fn parse_text(text: &[char]) -> Result<PyValue, PyJsonError> {
    if text.first() == Some(&'\u{FEFF}') {
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

/// Python's `JSONDecodeError` position: line and column from a char index.
pub(super) fn decode_error(text: &[char], msg: &'static str, pos: usize) -> PyJsonError {
    let before = &text[..pos.min(text.len())];
    let line = before.iter().filter(|&&c| c == '\n').count() + 1;
    let column = match before.iter().rposition(|&c| c == '\n') {
        Some(nl) => pos - nl,
        None => pos + 1,
    };
    PyJsonError::Decode {
        msg,
        line,
        column,
        pos,
    }
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn skip_ws(text: &[char], mut idx: usize) -> usize {
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
        /// Position of each key in `entries`: a repeated key replaces the
        /// value in place (Python dict semantics) without a quadratic scan.
        index: HashMap<PyStr, usize>,
        key: PyStr,
    },
}

struct Scanner<'a> {
    text: &'a [char],
}

/// What `scan_once` found at a position.
enum Step {
    /// A complete value and the index after it.
    Value(PyValue, usize),
    /// An open container whose first element starts at the index.
    Open(Frame, usize),
}

impl Scanner<'_> {
    fn at(&self, idx: usize) -> Option<char> {
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
                        ']'
                    }
                    Frame::Dict {
                        entries,
                        index,
                        key,
                    } => {
                        let key = std::mem::take(key);
                        match index.get(&key) {
                            Some(&at) => entries[at].1 = value,
                            None => {
                                index.insert(key.clone(), entries.len());
                                entries.push((key, value));
                            }
                        }
                        '}'
                    }
                };
                let after = skip_ws(self.text, next);
                if self.at(after) == Some(closer) {
                    value = close(stack.pop().expect("the frame just used"));
                    next = after + 1;
                    continue;
                }
                if self.at(after) != Some(',') {
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
        let word = |w: &str| {
            w.chars()
                .enumerate()
                .all(|(i, wc)| self.at(idx + i) == Some(wc))
        };
        let constant = |v: PyValue, len: usize| Ok(Step::Value(v, idx + len));
        match c {
            '"' => {
                let (s, next) = self.scan_string(idx + 1)?;
                Ok(Step::Value(PyValue::Str(s), next))
            }
            '{' | '[' => {
                // Py_EnterRecursiveCall: entering the container itself counts.
                if depth + 1 > MAX_DEPTH {
                    return Err(PyJsonError::TooDeep { limit: MAX_DEPTH });
                }
                let first = skip_ws(self.text, idx + 1);
                if c == '[' {
                    if self.at(first) == Some(']') {
                        return Ok(Step::Value(PyValue::List(Vec::new()), first + 1));
                    }
                    return Ok(Step::Open(Frame::List(Vec::new()), first));
                }
                if self.at(first) == Some('}') {
                    return Ok(Step::Value(PyValue::Dict(PyDict::default()), first + 1));
                }
                let (key, value_at) = self.member_key(first)?;
                let frame = Frame::Dict {
                    entries: Vec::new(),
                    index: HashMap::new(),
                    key,
                };
                Ok(Step::Open(frame, value_at))
            }
            'n' if word("null") => constant(PyValue::None, 4),
            't' if word("true") => constant(PyValue::Bool(true), 4),
            'f' if word("false") => constant(PyValue::Bool(false), 5),
            'N' if word("NaN") => constant(PyValue::Float(f64::NAN), 3),
            'I' if word("Infinity") => constant(PyValue::Float(f64::INFINITY), 8),
            '-' if word("-Infinity") => constant(PyValue::Float(f64::NEG_INFINITY), 9),
            _ => self.scan_number(idx),
        }
    }

    /// A member's key, the `:` and the whitespace after it: returns the key
    /// and where its value starts.
    fn member_key(&self, idx: usize) -> Result<(PyStr, usize), PyJsonError> {
        if self.at(idx) != Some('"') {
            return Err(self.err("Expecting property name enclosed in double quotes", idx));
        }
        let (key, next) = self.scan_string(idx + 1)?;
        let colon = skip_ws(self.text, next);
        if self.at(colon) != Some(':') {
            return Err(self.err("Expecting ':' delimiter", colon));
        }
        Ok((key, skip_ws(self.text, colon + 1)))
    }

    /// `_match_number_unicode`: `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`.
    fn scan_number(&self, start: usize) -> Result<Step, PyJsonError> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut idx = start;
        if self.at(idx) == Some('-') {
            idx += 1;
        }
        match self.at(idx) {
            Some('1'..='9') => {
                while digit(idx) {
                    idx += 1;
                }
            }
            Some('0') => idx += 1,
            _ => return Err(self.err("Expecting value", start)),
        }
        let mut is_float = false;
        if self.at(idx) == Some('.') && digit(idx + 1) {
            is_float = true;
            idx += 2;
            while digit(idx) {
                idx += 1;
            }
        }
        if matches!(self.at(idx), Some('e' | 'E')) {
            let mut e = idx + 1;
            if matches!(self.at(e), Some('+' | '-')) {
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
        let literal: String = self.text[start..idx].iter().collect();
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
                None => (false, literal.as_str()),
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
                if c == '"' || c == '\\' {
                    found = Some(c);
                    break;
                }
                if (c as u32) <= 0x1F {
                    return Err(self.err("Invalid control character at", next));
                }
                next += 1;
            }
            let Some(c) = found else {
                return Err(self.err("Unterminated string starting at", begin));
            };
            for &ch in &text[end..next] {
                out.push(ch as u32);
            }
            next += 1;
            if c == '"' {
                return Ok((out, next));
            }
            if next == len {
                return Err(self.err("Unterminated string starting at", begin));
            }
            if text[next] != 'u' {
                end = next + 1;
                let ch = match text[next] {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    _ => return Err(self.err("Invalid \\escape", end - 2)),
                };
                out.push(ch as u32);
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
                && text[end] == '\\'
                && text[end + 1] == 'u'
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
            let Some(d) = c.to_digit(16) else {
                return Err(self.err("Invalid \\uXXXX escape", to - 5));
            };
            cp = (cp << 4) | d;
        }
        Ok(cp)
    }
}

fn close(frame: Frame) -> PyValue {
    match frame {
        Frame::List(items) => PyValue::List(items),
        Frame::Dict { entries, .. } => PyValue::Dict(PyDict { entries }),
    }
}

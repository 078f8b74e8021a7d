//! JSON exactly as the reference gate reads it: Python's
//! `json.loads(path.read_text(encoding="utf-8"))`, and the values it then
//! looks at, as Python sees them (`str(value)`, truthiness, `==`).
//!
//! Why a hand-written parser: the gate's verdict turns on what Python accepts
//! and what `str(value).strip()` gives, and no crate reproduces that.
//! serde_json refuses `NaN` and `Infinity`, refuses lone surrogates
//! (`"\ud800"`) or would have to map them to U+FFFD (making `"\ud800"` and
//! `"\udc00"` equal), and stops at 128 levels of nesting where Python goes on
//! to about 1000; it also keeps the last duplicate key at the last position.
//! Python's rules here are small and fixed, so this module follows CPython
//! 3.11's C scanner step by step, and a differential test runs `python3` on
//! the same inputs.
//!
//! What the reference does with a file (its `_read_json_file`,
//! `read_version_for_path`, `read_restart_required_marker`): read the whole
//! file as text, UTF-8 strict (a BOM is kept, and `json.loads` then refuses
//! it; invalid UTF-8 raises), with universal newlines (`\r\n` and `\r` become
//! `\n`, which moves error positions but changes nothing else), then
//! `json.loads`. Every exception (`JSONDecodeError`, `UnicodeDecodeError`,
//! `RecursionError`, the `ValueError` for an integer of more than 4300
//! digits) is caught the same way, as "unreadable". [`loads`] does all of that
//! and returns which of them happened. (The reference's updater reads with
//! `read_text()` and no encoding, i.e. the locale's: UTF-8 under the UTF-8
//! locales and the C locale that Python coerces to UTF-8.)

mod parse;
mod printable;
mod str;
mod value;

pub use self::str::{is_py_space, CodePoints, PyStr};
pub use self::value::{float_repr, PyDict, PyInt, PyValue};

/// Deepest nesting accepted. CPython 3.11 raises `RecursionError` when the
/// open containers plus the Python frames on the caller's stack reach
/// `sys.getrecursionlimit()` (1000): 995 levels from a module's top level
/// (measured: 994 from one function down), fewer from deep inside a server
/// (the reference reads a few to a few dozen frames down). CPython 3.12 and
/// later count the scanner's recursion apart from Python frames, against a
/// compile-time C limit (1500 in early 3.12 releases; 10000 on Linux, 3000
/// on Windows in later ones; 3.14 measures the stack instead), so they read
/// much deeper files. 990 sits in 3.11's band. Between ~950 and the
/// running Python's limit, Python versions disagree with each other; see
/// [`PyJsonError::python_dependent`].
pub const MAX_DEPTH: usize = 990;

/// `sys.int_info.default_max_str_digits`: Python 3.11+ refuses to convert
/// longer integer literals (a `ValueError`, not a `JSONDecodeError`).
pub(crate) const MAX_INT_DIGITS: usize = 4300;

/// Why Python would not have read the document. Messages name positions,
/// never the file's contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PyJsonError {
    /// A `json.JSONDecodeError`; the message is CPython 3.11's (and
    /// 3.12's) word for word; 3.13 words a trailing comma differently.
    #[error("{msg}: line {line} column {column} (char {pos})")]
    Decode {
        /// CPython's message.
        msg: &'static str,
        /// 1-based, counted in `\n` after newline translation.
        line: usize,
        /// 1-based, in characters.
        column: usize,
        /// 0-based character index in the translated text.
        pos: usize,
    },
    /// `read_text(encoding="utf-8")` raised `UnicodeDecodeError`.
    #[error("not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 {
        /// The byte offset of the first invalid byte.
        offset: usize,
    },
    /// Python raised `RecursionError` (see [`MAX_DEPTH`]).
    #[error("nested deeper than {limit} levels (Python raises RecursionError)")]
    TooDeep {
        /// The nesting Python reads.
        limit: usize,
    },
    /// Python raised `ValueError` converting an over-long integer.
    #[error("an integer of {digits} digits (Python refuses more than {MAX_INT_DIGITS})")]
    IntTooLong {
        /// How many digits the integer has.
        digits: usize,
    },
}

impl PyJsonError {
    /// True when another Python would have read the document: nesting
    /// (3.12+ reads deeper, see [`MAX_DEPTH`]) and long integers (Pythons
    /// before 3.11 / 3.10.7, or `PYTHONINTMAXSTRDIGITS`, accept them). A
    /// caller that must lean one way decides with this.
    pub fn python_dependent(&self) -> bool {
        matches!(
            self,
            PyJsonError::TooDeep { .. } | PyJsonError::IntTooLong { .. }
        )
    }
}

/// `json.loads(path.read_text(encoding="utf-8"))` on a file's bytes.
pub fn loads(bytes: &[u8]) -> Result<PyValue, PyJsonError> {
    let text = std::str::from_utf8(bytes).map_err(|e| PyJsonError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    parse::parse_text(&translate_newlines(text))
}

/// `json.loads(s)` on a Python string that holds no lone surrogate (no
/// newline translation: that belongs to reading a file).
pub fn loads_str(s: &str) -> Result<PyValue, PyJsonError> {
    parse::parse_text(s)
}

/// Universal newlines, as Python's text mode reads: `\r\n` and `\r` → `\n`.
fn translate_newlines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

#[cfg(test)]
mod tests;

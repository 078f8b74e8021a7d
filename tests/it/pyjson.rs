//! `fpcheck::pyjson` against Python itself: every input of a corpus (hostile
//! hand-picked cases plus generated ones) is written to a file, read by
//! `python3` exactly as the reference gate reads it
//! (`json.loads(path.read_text(encoding="utf-8"))`), and by `pyjson::loads`;
//! accept/reject, the error, `str(value)`, `str(value).strip()`,
//! `str(value.get("version", ""))` and truthiness must agree.

use std::fmt::Write as _;
use std::process::Command;

use fpcheck::pyjson::{self, PyJsonError, PyValue, MAX_DEPTH};
use proptest::prelude::*;

mod agreement;

/// Reads every file named on stdin, in order, the reference's way, and
/// prints one tab-separated line per file. Strings go through
/// `json.dumps` (ASCII, surrogates escaped), so a line never holds a tab.
/// The first line gives Python's version and the deepest `[` nesting it
/// reads from the same call depth.
const READER: &str = r#"
import json, sys
from pathlib import Path

def attempt(get_text):
    return json.loads(get_text())

def deepest():
    lo, hi = 1, 100000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            attempt(lambda: "[" * mid + "]" * mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo

print("python", "%d.%d" % sys.version_info[:2], deepest(), sep="\t")
for name in sys.stdin.read().split("\n"):
    if not name:
        continue
    try:
        v = attempt(lambda: Path(name).read_text(encoding="utf-8"))
    except Exception as e:
        msg = str(e) if isinstance(e, json.JSONDecodeError) else ""
        print("err", type(e).__name__, msg, sep="\t")
        continue
    if isinstance(v, dict):
        version = json.dumps(str(v.get("version", "")))
        force = str(bool(v.get("force_restart")))
    else:
        version = force = "-"
    print("ok", json.dumps(str(v)), json.dumps(str(v).strip()), version, force, str(bool(v)), sep="\t")
"#;

/// fpcheck's answer, in the reader's line format.
fn ours(bytes: &[u8]) -> String {
    match pyjson::loads(bytes) {
        Ok(v) => {
            let (version, force) = match &v {
                PyValue::Dict(_) => {
                    let version = v.get("version").map(PyValue::py_str).unwrap_or_default();
                    let force = v.get("force_restart").is_some_and(PyValue::truthy);
                    (version.to_json(), py_bool(force).to_owned())
                }
                _ => ("-".to_owned(), "-".to_owned()),
            };
            let s = v.py_str();
            format!(
                "ok\t{}\t{}\t{version}\t{force}\t{}",
                s.to_json(),
                s.strip().to_json(),
                py_bool(v.truthy())
            )
        }
        Err(e @ PyJsonError::Decode { .. }) => format!("err\tJSONDecodeError\t{e}"),
        Err(PyJsonError::NotUtf8 { .. }) => "err\tUnicodeDecodeError\t".to_owned(),
        Err(PyJsonError::TooDeep { .. }) => "err\tRecursionError\t".to_owned(),
        Err(PyJsonError::IntTooLong { .. }) => "err\tValueError\t".to_owned(),
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Hostile and boundary inputs, each chosen for a rule of section 5.
fn hand_picked() -> Vec<Vec<u8>> {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    // `n` levels (`n` odd) or `n - 1`: objects and lists alternating.
    let nest_obj = |n: usize| {
        let pairs = (n - 1) / 2;
        format!(
            "{{\"version\": {}\"7\"{}}}",
            "{\"v\": [".repeat(pairs),
            "]}".repeat(pairs)
        )
    };
    let mut c: Vec<String> = [
        // Versions of every type, as str(value).strip() renders them.
        r#"{"version": "7.38.7"}"#,
        r#"{"version": " 7.38.7 "}"#,
        "{\"version\": \"\\u00a07.38.7\\u2028\\u0085\\u001c\"}",
        r#"{"version": 7}"#,
        r#"{"version": 7.0}"#,
        r#"{"version": -0.0}"#,
        r#"{"version": 1e16}"#,
        r#"{"version": 1E400}"#,
        r#"{"version": -1e-7}"#,
        r#"{"version": 0.1}"#,
        r#"{"version": 123456789012345678901234567890123456789}"#,
        r#"{"version": null}"#,
        r#"{"version": true}"#,
        r#"{"version": false}"#,
        r#"{"version": NaN}"#,
        r#"{"version": Infinity}"#,
        r#"{"version": -Infinity}"#,
        r#"{"version": -NaN}"#,
        r#"{"version": [1, "a", null, 2.5, {"k": "it's"}]}"#,
        r#"{"version": {"a": "say \"x\"", "b": "both '\""}}"#,
        r#"{"version": ""}"#,
        r#"{"other": 1}"#,
        r#"{"version": "1", "version": "2"}"#,
        r#"{"version": "1", "x": 0, "version": " 2 "}"#,
        // Lone surrogates and pairs.
        r#"{"version": "\ud800"}"#,
        r#"{"version": "\udc00"}"#,
        r#"{"version": "\ud83d\ude00"}"#,
        r#"{"version": "\udc00\ud800"}"#,
        r#"{"version": "\ud800\u0041"}"#,
        r#"{"version": "\ud800\ud800\udc00"}"#,
        r#"["\ud800", "x\udfff"]"#,
        "\"\\ud800\\u12x4\"",
        "\"\\ud800\\u",
        "\"\\ud800\\udc0\"",
        // force_restart truthiness.
        r#"{"force_restart": "false"}"#,
        r#"{"force_restart": 0}"#,
        r#"{"force_restart": 0.0}"#,
        r#"{"force_restart": []}"#,
        r#"{"force_restart": {}}"#,
        r#"{"force_restart": NaN}"#,
        r#"{"force_restart": 1}"#,
        // Syntax Python refuses, with its message and position.
        "",
        " ",
        "[1,]",
        "{\"a\":1,}",
        "{1: 2}",
        "{'a': 1}",
        "[1 2]",
        "{\"a\" 1}",
        "01",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "-",
        "- 1",
        "tru",
        "nul",
        "NaN1",
        "\"abc",
        "\"a\\",
        "\"\\q\"",
        "\"\\u12\"",
        "\"\\u0041",
        "\"\\u004g\"",
        "\"a\u{1}\"",
        "\"a\tb\"",
        "\"a\u{7f}\u{9f}b\"",
        "\"a\nb\"",
        "[\n\n  x",
        "[\r\n\r\n  x",
        "[\r\r x",
        "1 x",
        "{} {}",
        "\u{b}1",
        "1\u{c}",
        "\u{a0}1",
        "\u{2028}[]",
        " \t\r\n[ \t\r\n1 \t\r\n] \t\r\n",
        "\u{feff}{}",
        "[\u{feff}]",
        "\"\u{feff}\"",
        // Error positions count characters, not bytes.
        "[\"é€😀\", x]",
        "[1,\n\"😀\" x]",
        "é",
        "\"é\\u00é\"",
        "\"\\ud800\\u00é\"",
        "\"\\ud800\\u00é",
        "\"\\u0é",
        "\"\\u0éé",
        "{\"€\": 1 \"x\"}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Nesting: 200 is valid for Python, 1000 and beyond is not (3.11).
    for n in [200, 900, MAX_DEPTH, 1000, 5000, 100_000] {
        c.push(nest(n));
        c.push(nest_obj(n));
    }
    // One past the limit: the only hand-picked case Python 3.11 may still
    // read (from a shallow stack), see `agrees_with_python_json_loads`.
    c.push(nest(MAX_DEPTH + 1));
    c.push("[".repeat(100_000));
    c.push(format!("{{\"version\": \"1\", \"deep\": {}}}", nest(200)));
    // A large object (the parser indexes its keys) with repeated keys.
    let keys: Vec<String> = (0..50).map(|i| format!("\"k{i}\": {i}")).collect();
    c.push(format!(
        "{{\"version\": 1, {}, \"k7\": [], \"version\": \" 2 \", \"k49\": NaN}}",
        keys.join(", ")
    ));
    // Integers around Python's 4300-digit limit; floats have none.
    c.push("9".repeat(4300));
    c.push(format!("-{}", "9".repeat(4300)));
    c.push("9".repeat(4301));
    c.push(format!("{}.0", "9".repeat(5000)));
    c.push(format!("0.{}1", "0".repeat(400)));
    // Floats exactly halfway between two shortest reprs (Python: half even).
    for tie in [
        "72656021730249.125",
        "1621238007578910.25",
        "-72656021730249.121",
        "5e-324",
        "2.5e-323",
    ] {
        c.push(tie.to_owned());
    }
    let mut bytes: Vec<Vec<u8>> = c.into_iter().map(String::into_bytes).collect();
    // Encodings: invalid UTF-8, encoded surrogates, UTF-16 with BOM, BOM.
    bytes.push(b"{\"version\": \"\xff\"}".to_vec());
    bytes.push(b"\"\xed\xa0\x80\"".to_vec());
    bytes.push(b"\xff\xfe1\x00".to_vec());
    bytes.push(b"\xef\xbb\xbf{\"version\": \"1\"}".to_vec());
    bytes.push(b"\"\xc0\xaf\"".to_vec());
    bytes
}

/// A small generator of JSON-like text, valid or not, for the bulk of the
/// corpus: random structure, every scalar shape, odd whitespace, then a few
/// random edits.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic, so a failure can be replayed.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn ws(&mut self, out: &mut String) {
        for _ in 0..self.below(3) {
            out.push_str(self.pick(&[" ", "\t", "\n", "\r\n", "\r", "", "", "\u{b}", "\u{a0}"]));
        }
    }

    fn value(&mut self, out: &mut String, depth: u32) {
        self.ws(out);
        match self.below(if depth > 4 { 6 } else { 9 }) {
            0 => out.push_str(self.pick(&[
                "null",
                "true",
                "false",
                "NaN",
                "Infinity",
                "-Infinity",
                "-NaN",
            ])),
            1 | 2 => self.number(out),
            3..=5 => self.string(out),
            6 | 7 => {
                out.push('[');
                for i in 0..self.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    self.value(out, depth + 1);
                }
                self.ws(out);
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..self.below(4) {
                    if i > 0 {
                        out.push(',');
                    }
                    self.ws(out);
                    let key = self.pick(&[
                        "\"version\"",
                        "\"force_restart\"",
                        "\"a\"",
                        "\"\\ud800\"",
                        "\"version\"",
                    ]);
                    out.push_str(key);
                    self.ws(out);
                    out.push(':');
                    self.value(out, depth + 1);
                }
                self.ws(out);
                out.push('}');
            }
        }
        self.ws(out);
    }

    fn number(&mut self, out: &mut String) {
        if self.below(3) == 0 {
            out.push('-');
        }
        match self.below(4) {
            0 => out.push('0'),
            1 => {
                let _ = write!(out, "{}", self.below(1000));
            }
            2 => {
                let _ = write!(out, "{}", self.next());
            }
            _ => {
                let digits = 1 + self.below(40);
                for i in 0..digits {
                    let d = self.below(10);
                    let _ = write!(out, "{}", if i == 0 && d == 0 { 1 } else { d });
                }
            }
        }
        if self.below(2) == 0 {
            out.push('.');
            for _ in 0..1 + self.below(20) {
                let _ = write!(out, "{}", self.below(10));
            }
        }
        if self.below(3) == 0 {
            out.push_str(self.pick(&["e", "E", "e+", "e-", "E-"]));
            let _ = write!(
                out,
                "{}",
                self.below(if self.0.is_multiple_of(2) { 30 } else { 400 })
            );
        }
    }

    fn string(&mut self, out: &mut String) {
        out.push('"');
        for _ in 0..self.below(8) {
            match self.below(10) {
                0..=3 => out.push_str(self.pick(&[
                    "a",
                    "7.38.7",
                    " ",
                    "'",
                    "é",
                    "€",
                    "😀",
                    "\u{2028}",
                    "\u{85}",
                    "\u{200b}",
                    "\u{feff}",
                    "\u{7f}",
                    "\u{e000}",
                    "\u{e0001}",
                    "Ж",
                ])),
                4 | 5 => out.push_str(
                    self.pick(&["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]),
                ),
                _ => {
                    let ranges: [(u32, u32); 8] = [
                        (0x0, 0x100),
                        (0x400, 0x500),
                        (0x2000, 0x2070),
                        (0x3000, 0x3040),
                        (0xD800, 0xE000),
                        (0xE000, 0xE100),
                        (0xFFF0, 0x10000),
                        (0xD83D, 0xD83E),
                    ];
                    let (lo, hi) = ranges[self.below(ranges.len() as u64) as usize];
                    let cp = lo + self.below(u64::from(hi - lo)) as u32;
                    let _ = write!(out, "\\u{cp:04x}");
                    if (0xD800..0xDC00).contains(&cp) && self.below(2) == 0 {
                        let low = 0xDC00 + self.below(0x400) as u32;
                        let _ = write!(out, "\\u{low:04X}");
                    }
                }
            }
        }
        out.push('"');
    }

    /// A document, sometimes damaged.
    fn document(&mut self) -> Vec<u8> {
        let mut s = String::new();
        if self.below(3) == 0 {
            s.push('{');
            s.push_str("\"version\":");
            self.value(&mut s, 1);
            s.push('}');
        } else {
            self.value(&mut s, 0);
        }
        let mut chars: Vec<char> = s.chars().collect();
        for _ in 0..self.below(3) {
            if chars.is_empty() {
                break;
            }
            let at = self.below(chars.len() as u64) as usize;
            match self.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(
                    at,
                    self.pick(&[",", "]", "}", "\"", "\\", ":", "\u{1}", "[", "{"])
                        .chars()
                        .next()
                        .unwrap(),
                ),
                _ => chars.truncate(at),
            }
        }
        let mut bytes = chars.into_iter().collect::<String>().into_bytes();
        match self.below(40) {
            0 => {
                bytes.splice(0..0, *b"\xef\xbb\xbf");
            }
            1 if !bytes.is_empty() => {
                // A stray continuation byte: not UTF-8.
                let at = self.below(bytes.len() as u64) as usize;
                bytes.insert(at, 0x80 + self.below(0x40) as u8);
            }
            _ => {}
        }
        bytes
    }
}

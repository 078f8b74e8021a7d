//! What Python does to a file's bytes before it tokenises them, done the
//! same way before the parser reads them, so that the parser sees the text
//! Python's tokenizer sees (or the file is refused: `code`).
//!
//! CPython reads a module's source with `compile(bytes)` (importlib), whose
//! tokenizer (`decode_str` in `Parser/tokenizer.c`) first turns every `\r\n`
//! and every lone `\r` into `\n` (`translate_newlines`), then drops a UTF-8
//! byte-order mark, then looks for a PEP 263 declaration on the first two
//! lines and decodes the whole file with that codec (UTF-8 by default).
//! A parser given the raw bytes may take a lone `\r` as whitespace (or as
//! part of a comment), reads every file as UTF-8 and skips a byte-order
//! mark anywhere, and a codec such as UTF-7 or `unicode_escape` can turn
//! bytes of a comment into a line break: parsing the raw bytes could call
//! a code change `layout`.
//!
//! So: a NUL byte refuses the file (Python rejects it); line breaks are
//! normalised as Python does; a leading byte-order mark is dropped (with a
//! declaration other than UTF-8 it is an error); and only encodings whose
//! decoding is known exactly are accepted: UTF-8 (the file must be valid
//! UTF-8), Latin-1 (transcoded to UTF-8, as Python's decoder does), and
//! ASCII or the other ASCII-compatible `iso-8859-*` / `cp125x` code pages
//! for files that are all ASCII (for those the decoding changes nothing).
//! Any other declaration refuses the file.

use std::sync::Arc;

/// The text to parse for a file's bytes, `None` when the file is refused
/// (its changes are then `code`). The bytes are shared, not copied, when
/// Python reads them as they are (no `\r`, no byte-order mark, UTF-8 or
/// ASCII): the common case.
pub(super) fn prepare(source: Arc<Vec<u8>>) -> Option<Arc<Vec<u8>>> {
    if source.contains(&0) {
        return None;
    }
    let source = if source.contains(&b'\r') || source.starts_with(BOM) {
        Arc::new(rewrite(Arc::unwrap_or_clone(source))?)
    } else {
        source
    };
    match encoding(&source) {
        Encoding::Utf8 => std::str::from_utf8(&source).is_ok().then_some(source),
        Encoding::Latin1 if source.is_ascii() => Some(source),
        Encoding::Latin1 => Some(Arc::new(latin1_to_utf8(&source))),
        Encoding::AsciiCompatible => source.is_ascii().then_some(source),
        Encoding::Other => None,
    }
}

/// Line breaks normalised and a leading byte-order mark dropped, as Python
/// does; `None` when the mark comes with a declaration Python refuses.
fn rewrite(source: Vec<u8>) -> Option<Vec<u8>> {
    let mut source = normalise_newlines(source);
    if source.starts_with(BOM) {
        // After a byte-order mark Python refuses any declaration that
        // `get_normal_name` does not spell `utf-8` (even `utf8`).
        if declared(&source[BOM.len()..]).is_some_and(|name| normal_name(name) != "utf-8") {
            return None;
        }
        source.drain(..BOM.len());
    }
    Some(source)
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// `\r\n` and lone `\r` become `\n`, as CPython's `translate_newlines`
/// does before anything else; in place (the text only shrinks).
fn normalise_newlines(mut s: Vec<u8>) -> Vec<u8> {
    let Some(first) = s.iter().position(|b| *b == b'\r') else {
        return s;
    };
    let (mut read, mut write) = (first, first);
    while read < s.len() {
        let b = s[read];
        read += 1;
        if b == b'\r' {
            s[write] = b'\n';
            if s.get(read) == Some(&b'\n') {
                read += 1;
            }
        } else {
            s[write] = b;
        }
        write += 1;
    }
    s.truncate(write);
    s
}

/// Each byte of Latin-1 is the code point of the same value.
fn latin1_to_utf8(s: &[u8]) -> Vec<u8> {
    s.iter().map(|b| char::from(*b)).collect::<String>().into()
}

/// How a file is decoded, as far as the classifier can follow it.
#[derive(Debug, PartialEq, Eq)]
enum Encoding {
    Utf8,
    Latin1,
    /// ASCII itself, or a code page that decodes ASCII bytes to themselves
    /// (its other bytes are not followed: the file must be all ASCII).
    AsciiCompatible,
    /// Anything else, refused.
    Other,
}

/// The file's encoding from its declaration (see [`declared`]). To be
/// safe, every declaration-like text on the first two lines must name an
/// accepted encoding, whether or not Python would read it there.
fn encoding(source: &[u8]) -> Encoding {
    let mut lines = source.split(|b| *b == b'\n');
    let (first, second) = (lines.next().unwrap_or(b""), lines.next().unwrap_or(b""));
    let any_other = [first, second]
        .iter()
        .flat_map(|line| all_declared(line))
        .any(|name| classify_name(name) == Encoding::Other);
    if any_other {
        return Encoding::Other;
    }
    declared(source).map_or(Encoding::Utf8, classify_name)
}

/// The declared encoding's name as CPython's `check_coding_spec` finds it:
/// on the first line, then on the second when the first holds nothing but
/// a comment or whitespace.
fn declared(source: &[u8]) -> Option<&[u8]> {
    let mut lines = source.split(|b| *b == b'\n');
    let first = lines.next()?;
    match coding_spec(first) {
        Some(name) => Some(name),
        None if comment_or_blank(first) => coding_spec(lines.next()?),
        None => None,
    }
}

/// The name in a line's encoding declaration as CPython finds it
/// (`get_coding_spec`): only whitespace before a `#`, then the first
/// `coding` followed by `:` or `=`, spaces or tabs, and a name of letters,
/// digits, `-`, `_` and `.`.
fn coding_spec(line: &[u8]) -> Option<&[u8]> {
    let hash = line
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))?;
    if line[hash] != b'#' {
        return None;
    }
    all_declared(&line[hash..]).next()
}

/// Every `coding[:=] NAME` in `text`, in order (a `coding` with no name
/// after it does not count, as in CPython).
fn all_declared(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    (0..text.len()).filter_map(move |i| {
        let rest = text[i..].strip_prefix(b"coding")?;
        let rest = rest
            .strip_prefix(b":")
            .or_else(|| rest.strip_prefix(b"="))?;
        let start = rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t'))
            .unwrap_or(rest.len());
        let rest = &rest[start..];
        let len = rest
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')))
            .unwrap_or(rest.len());
        (len > 0).then(|| &rest[..len])
    })
}

/// Whether a line holds nothing but whitespace and maybe a comment
/// (CPython then also looks at the second line; after a line continuation
/// it refuses such a line: `limits::continuation_ok`).
pub(super) fn comment_or_blank(line: &[u8]) -> bool {
    line.iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\x0c'))
        .is_none_or(|b| *b == b'#')
}

/// CPython's `get_normal_name`: its first 12 characters, lowercase, `_`
/// read as `-`; the `utf-8` and `latin-1` spellings (and those names
/// followed by `-` and anything) become `utf-8` and `iso-8859-1`.
fn normal_name(name: &[u8]) -> String {
    let normal: String = String::from_utf8_lossy(name)
        .chars()
        .take(12)
        .map(|c| {
            if c == '_' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if normal == "utf-8" || normal.starts_with("utf-8-") {
        return "utf-8".to_string();
    }
    let latin = ["latin-1", "iso-8859-1", "iso-latin-1"];
    if latin
        .iter()
        .any(|l| normal == *l || normal.starts_with(&format!("{l}-")))
    {
        return "iso-8859-1".to_string();
    }
    String::from_utf8_lossy(name).into_owned()
}

/// The encoding a declared name selects: [`normal_name`], then the codec
/// registry's names for the few others accepted.
fn classify_name(name: &[u8]) -> Encoding {
    let normal = normal_name(name);
    // `codecs.lookup` lowercases and reads `-` and spaces as `_`.
    let codec = normal.to_ascii_lowercase().replace(['-', ' '], "_");
    match codec.as_str() {
        "utf_8" | "utf8" | "u8" => Encoding::Utf8,
        "iso_8859_1" | "latin1" | "l1" | "iso8859_1" => Encoding::Latin1,
        "ascii" | "us_ascii" => Encoding::AsciiCompatible,
        _ if code_page(&codec) => Encoding::AsciiCompatible,
        _ => Encoding::Other,
    }
}

/// `iso8859_N` / `iso_8859_N` (N from 2 to 16) and `cp125N` /
/// `windows_125N`: code pages whose bytes below 128 are ASCII.
fn code_page(codec: &str) -> bool {
    let iso = codec
        .strip_prefix("iso8859_")
        .or_else(|| codec.strip_prefix("iso_8859_"))
        .and_then(|n| n.parse::<u8>().ok())
        .is_some_and(|n| (2..=16).contains(&n) && n != 12);
    let windows = codec
        .strip_prefix("cp125")
        .or_else(|| codec.strip_prefix("windows_125"))
        .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit() && n != "9");
    iso || windows
}

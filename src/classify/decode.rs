//! What Python does to a file's bytes before it tokenises them, done the
//! same way before tree-sitter parses them, so that the parser sees the text
//! Python's tokenizer sees (or the file is refused: `code`).
//!
//! CPython reads a module's source with `compile(bytes)` (importlib), whose
//! tokenizer (`decode_str` in `Parser/tokenizer.c`) first turns every `\r\n`
//! and every lone `\r` into `\n` (`translate_newlines`), then drops a UTF-8
//! byte-order mark, then looks for a PEP 263 declaration on the first two
//! lines and decodes the whole file with that codec (UTF-8 by default).
//! tree-sitter's grammar instead takes a lone `\r` as whitespace (or as
//! part of a comment), reads every file as UTF-8 and skips a byte-order
//! mark anywhere, and a codec such as UTF-7 or `unicode_escape` can turn
//! bytes of a comment into a line break: parsing the raw bytes could call
//! a code change `layout`.
//!
//! So: a NUL byte refuses the file (Python rejects it), and line breaks are
//! normalised as Python does.

/// The text to parse for a file's bytes, `None` when the file is refused
/// (its changes are then `code`).
pub(super) fn prepare(source: Vec<u8>) -> Option<Vec<u8>> {
    if source.contains(&0) {
        return None;
    }
    Some(normalise_newlines(source))
}

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

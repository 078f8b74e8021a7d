//! What Python rejects although tree-sitter's grammar accepts it, checked
//! on the parsed tree (by the stream's walk, see `stream.rs`): a file that
//! fails any check counts as not parsing, so its changes are `code`.
//!
//! - Python's limits: 200 nested brackets (tokenizer `MAXLEVEL`), 99
//!   indentation levels (`MAXINDENT`), and expressions nested about 3,000
//!   deep (the compiler's recursion limit): the syntax tree may be at most
//!   [`MAX_TREE_DEPTH`] nodes deep, well below.
//! - A line continuation followed by a blank or comment-only line, or by
//!   the end of the file (Python: "invalid syntax", "unexpected EOF").
//! - A docstring whose escapes Python cannot decode (`\x4`, `\u12`,
//!   `\U00110000`; `\N{...}` is refused too, since the names of the
//!   Unicode version of the Python that runs the code are not known).

/// The most brackets open at once that Python accepts.
pub(super) const MAX_BRACKETS: usize = 200;
/// The most nested blocks; Python accepts 99 indentation levels (each
/// indented block is one; a block on its statement's line is counted too,
/// to be safe).
pub(super) const MAX_BLOCKS: usize = 99;
/// The deepest syntax tree accepted. Python's compiler gives up near 3,000
/// nested expressions (`a + a + ...`, `not not ...`, `-(-(...))`), each of
/// them at least one tree level.
pub(super) const MAX_TREE_DEPTH: usize = 1000;

/// Whether a file may be parsed: its brackets, counted from its bytes
/// alone, never nest deeper than Python allows, nor do runs of the one-byte
/// prefix operators (`- - ~x`). tree-sitter's memory grows with what is
/// open at once (hundreds of times the file's size for a file of nested
/// brackets or of `-`), and Python rejects such a file anyway.
///
/// These are byte counts, not a tokenizer: brackets and operators in
/// strings and comments count too. The bracket count restarts at a blank
/// line (which a deep, hostile nesting need not have, and which ends most
/// statements: counting a whole file's unbalanced brackets in strings would
/// refuse ordinary files); a run of operators may hold spaces and tabs. They
/// can only make a file `code` without parsing it: whether the file stays
/// within Python's limits is the tree's check ([`MAX_BRACKETS`],
/// [`MAX_TREE_DEPTH`]), and the memory of what they let through is bounded
/// by the classifier's file size limit (`apply.rs`).
pub(super) fn may_parse(source: &[u8]) -> bool {
    let (mut depth, mut run) = (0usize, 0usize);
    let mut previous = 0u8;
    for &b in source {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' if previous == b'\n' => depth = 0,
            _ => {}
        }
        match b {
            b'-' | b'+' | b'~' => run += 1,
            b' ' | b'\t' => {}
            _ => run = 0,
        }
        if depth > MAX_BRACKETS || run > MAX_TREE_DEPTH {
            return false;
        }
        previous = b;
    }
    true
}

/// Whether the bytes after a line continuation (`end`: just past its line
/// break) start a line with code on it, as Python requires outside
/// brackets (inside them it would accept a blank line: refusing it there
/// too is the safe side).
pub(super) fn continuation_ok(source: &[u8], end: usize) -> bool {
    let rest = &source[end.min(source.len())..];
    let line = rest.split(|b| *b == b'\n').next().unwrap_or(b"");
    !super::decode::comment_or_blank(line)
}

/// Whether Python decodes the escapes of a plain string literal (`text`:
/// prefix and quotes included). A raw string has none.
pub(super) fn escapes_ok(text: &[u8]) -> bool {
    let Some(quote) = text.iter().position(|b| *b == b'"' || *b == b'\'') else {
        return false;
    };
    if text[..quote].iter().any(|b| b.eq_ignore_ascii_case(&b'r')) {
        return true;
    }
    let q = text[quote];
    let width = if text[quote..].starts_with(&[q, q, q]) && text.len() >= quote + 6 {
        3
    } else {
        1
    };
    let Some(body) = text.get(quote + width..text.len().saturating_sub(width)) else {
        return false;
    };
    let mut i = 0;
    while i < body.len() {
        if body[i] != b'\\' {
            i += 1;
            continue;
        }
        let hex = |n: usize| {
            body.get(i + 2..i + 2 + n)
                .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
        };
        let ok = match body.get(i + 1) {
            Some(b'x') => hex(2).is_some(),
            Some(b'u') => hex(4).is_some(),
            Some(b'U') => hex(8).is_some_and(|d| {
                std::str::from_utf8(d)
                    .ok()
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
                    .is_some_and(|v| v <= 0x10ffff)
            }),
            Some(b'N') => false,
            Some(_) => true,
            None => false,
        };
        if !ok {
            return false;
        }
        i += 2;
    }
    true
}

/// An upper bound, from the bytes alone, on how deep brackets nest inside
/// an f-string or t-string (whose inside is one leaf of the stream): the
/// number of opening brackets in it.
pub(super) fn brackets_in(text: &[u8]) -> usize {
    text.iter()
        .filter(|b| matches!(b, b'(' | b'[' | b'{'))
        .count()
}

/// Whether a string literal's prefix makes it an f-string or t-string.
pub(super) fn interpolated(text: &[u8]) -> bool {
    text.iter()
        .take_while(|b| **b != b'"' && **b != b'\'')
        .any(|b| matches!(b.to_ascii_lowercase(), b'f' | b't'))
}

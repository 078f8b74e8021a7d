//! A `.gitattributes` blob as git reads it on checkout, where gix's parser
//! reads it otherwise, and the patterns whose matching cost fpcheck
//! refuses (docs/spec.md section 4.1).
//!
//! git reads an in-tree `.gitattributes` from the index on checkout
//! (attr.c `read_attr_from_index`, then `read_attr_from_buf` and
//! `parse_attr_line`): a blob of 100 MiB or more is ignored whole, the
//! text ends at its first NUL (it is read as a C string), a line of 2048
//! bytes or more is ignored, and no byte-order mark is skipped. gix reads
//! every line, past a NUL, and skips any byte-order mark (UTF-8, UTF-16,
//! UTF-32).

/// git's ATTR_MAX_FILE_SIZE: a larger blob is ignored.
const GIT_MAX_FILE: usize = 100 << 20;

/// git's ATTR_MAX_LINE_LENGTH: a line at least this long is ignored.
const GIT_MAX_LINE: usize = 2048;

/// The UTF-8 byte-order mark, the one gix skips first.
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// The most `*` runs a matched pattern may have: gix's matcher gives up
/// (and answers "no match", where git may match) past 64 nested
/// wildcards.
pub(super) const MAX_WILDCARDS: usize = 32;

/// The most `**` runs a matched pattern may have: each one can double the
/// work of matching a path, in git's matcher and in gix's.
pub(super) const MAX_DOUBLE_STARS: usize = 8;

/// The bytes to hand gix's parser so that it reads what git reads from
/// `raw`: the lines git ignores emptied (so line numbers stay), the text
/// cut at its first NUL, and a UTF-8 byte-order mark put in front, the
/// only one gix then skips, so a mark in `raw` stays part of its first
/// line as in git.
pub(super) fn as_git_reads(raw: &[u8]) -> Vec<u8> {
    let mut out = UTF8_BOM.to_vec();
    if raw.len() >= GIT_MAX_FILE {
        return out;
    }
    let text = raw
        .iter()
        .position(|b| *b == 0)
        .map_or(raw, |nul| &raw[..nul]);
    for (i, line) in text.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        if line.len() < GIT_MAX_LINE {
            out.extend_from_slice(&cut_at_escaped_nul(line));
        }
    }
    out
}

/// A line whose quoted pattern holds an escaped NUL (`"*.py\000x" eol=crlf`)
/// with the pattern ending there, as git reads it: git unquotes the
/// pattern into a C string, so it ends at the NUL (`*.py`), where gix keeps
/// the NUL and the rest, which then match nothing. Any other line as it is.
fn cut_at_escaped_nul(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let Some(start) = line.iter().position(|b| !blank(b)) else {
        return line.into();
    };
    if line[start] != b'"' {
        return line.into();
    }
    let quoted = &line[start..];
    let Some(end) = closing_quote(quoted) else {
        return line.into();
    };
    let mut i = 1;
    while i < end - 1 {
        if quoted[i] == b'\\' {
            if quoted.get(i + 1..i + 4) == Some(b"000") {
                let mut cut = line[..start + i].to_vec();
                cut.extend_from_slice(&quoted[end - 1..]);
                return cut.into();
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    line.into()
}

/// A pattern fpcheck will not match: its text (as written) and its count
/// of `*` runs and of `**` runs.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Costly {
    pub(super) pattern: String,
    pub(super) wildcards: usize,
    pub(super) double_stars: usize,
}

/// The first pattern line of `text` (as [`as_git_reads`] gives it) whose
/// matching could take exponential time or exceed gix's nesting limit:
/// more than [`MAX_WILDCARDS`] runs of `*`, or more than
/// [`MAX_DOUBLE_STARS`] runs of `**`. Macro definitions have no pattern.
pub(super) fn costly_pattern(text: &[u8]) -> Option<Costly> {
    // The mark put in front for gix is not part of the first pattern.
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    text.split(|b| *b == b'\n').find_map(|line| {
        let pattern = pattern_of(line)?;
        let (wildcards, double_stars) = star_runs(pattern);
        (wildcards > MAX_WILDCARDS || double_stars > MAX_DOUBLE_STARS).then(|| Costly {
            pattern: shown(pattern),
            wildcards,
            double_stars,
        })
    })
}

/// A pattern as a reason shows it: its first 64 characters.
fn shown(pattern: &[u8]) -> String {
    let text = String::from_utf8_lossy(pattern);
    match text.char_indices().nth(64) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.into_owned(),
    }
}

/// The pattern of one attributes line, as written (a quoted one with its
/// quotes): `None` for a blank line, a comment or a macro definition.
fn pattern_of(line: &[u8]) -> Option<&[u8]> {
    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\r');
    let start = line.iter().position(|b| !blank(b))?;
    let line = &line[start..];
    if line[0] == b'#' {
        return None;
    }
    let end = if line[0] == b'"' {
        closing_quote(line).unwrap_or(line.len())
    } else {
        line.iter().position(blank).unwrap_or(line.len())
    };
    let pattern = &line[..end];
    (!(pattern.starts_with(b"[attr]") && pattern.len() > 6)).then_some(pattern)
}

/// The end of a quoted pattern: just after its closing quote.
fn closing_quote(line: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The runs of `*` in `pattern`, and how many of them are `**` or longer
/// (an escaped `\*` is counted too: over-counting only refuses more).
fn star_runs(pattern: &[u8]) -> (usize, usize) {
    let (mut runs, mut doubles, mut len) = (0, 0, 0);
    for b in pattern.iter().chain(std::iter::once(&b'\0')) {
        if *b == b'*' {
            len += 1;
            continue;
        }
        if len > 0 {
            runs += 1;
            doubles += usize::from(len > 1);
        }
        len = 0;
    }
    (runs, doubles)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(raw: &[u8]) -> Vec<u8> {
        as_git_reads(raw)[UTF8_BOM.len()..].to_vec()
    }

    #[test]
    fn a_blob_of_git_s_file_limit_is_read_as_empty() {
        let mut big = b"*.py eol=crlf\n".to_vec();
        big.resize(GIT_MAX_FILE - 1, b'\n');
        assert_eq!(seen(&big).len(), GIT_MAX_FILE - 1);
        big.push(b'\n');
        assert_eq!(seen(&big), b"");
    }

    #[test]
    fn the_text_ends_at_the_first_nul() {
        assert_eq!(seen(b"a eol=crlf\nz\0z\nb eol=crlf\n"), b"a eol=crlf\nz");
    }

    #[test]
    fn lines_of_2048_bytes_or_more_are_emptied() {
        let long = vec![b'x'; GIT_MAX_LINE];
        let kept = vec![b'y'; GIT_MAX_LINE - 1];
        let raw = [&long[..], b"\n", &kept[..], b"\nz\n"].concat();
        assert_eq!(seen(&raw), [b"\n", &kept[..], b"\nz\n"].concat());
    }

    #[test]
    fn a_byte_order_mark_stays_in_the_first_line() {
        let out = as_git_reads(b"\xef\xbb\xbf*.py eol=crlf\n");
        assert_eq!(out, b"\xef\xbb\xbf\xef\xbb\xbf*.py eol=crlf\n");
    }

    #[test]
    fn stars_are_counted_by_runs() {
        assert_eq!(star_runs(b"**/*.py"), (2, 1));
        assert_eq!(star_runs(b"a***b*"), (2, 1));
        assert_eq!(star_runs(b"plain"), (0, 0));
    }

    #[test]
    fn costly_patterns_are_found_and_macros_and_comments_skipped() {
        let nine = "**/".repeat(9);
        let text = format!("# {nine}\n[attr]m{nine} eol=crlf\n  {nine}x eol=crlf\n");
        let found = costly_pattern(&as_git_reads(text.as_bytes())).unwrap();
        assert_eq!(found.pattern, format!("{nine}x"));
        assert_eq!((found.wildcards, found.double_stars), (9, 9));
        let eight = format!("{}x eol=crlf\n", "**/".repeat(8));
        assert_eq!(costly_pattern(eight.as_bytes()), None);
        let quoted = format!("\"{}\" eol=crlf\n", "a*".repeat(33));
        assert_eq!(costly_pattern(quoted.as_bytes()).unwrap().wildcards, 33);
        assert_eq!(costly_pattern(b"\"a*b\" x=*****\n"), None);
    }

    /// git ends a quoted pattern at an escaped NUL; an escaped backslash
    /// before `000` is no NUL.
    #[test]
    fn a_quoted_pattern_ends_at_an_escaped_nul() {
        let view = |raw: &[u8]| as_git_reads(raw)[UTF8_BOM.len()..].to_vec();
        assert_eq!(
            view(b"\"*.py\\000x\" eol=crlf"),
            b"\"*.py\" eol=crlf".to_vec()
        );
        assert_eq!(view(b"  \"a\\000\" text"), b"  \"a\" text".to_vec());
        assert_eq!(
            view(b"\"*.py\\\\000\" eol=crlf"),
            b"\"*.py\\\\000\" eol=crlf".to_vec()
        );
        assert_eq!(view(b"*.py\\000 eol=crlf"), b"*.py\\000 eol=crlf".to_vec());
    }
}

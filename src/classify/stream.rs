//! A parsed file as the tokens that decide what Python executes, grouped
//! in units of whole top-level statements, and how two files' tokens
//! compare.
//!
//! Comments (but a PEP 263 encoding declaration), blank lines, newlines
//! inside brackets and backslash continuations leave no token, nor does the
//! whitespace between tokens (`python.rs` refuses a file whose gaps hold
//! anything else). The line break ending a logical line, INDENT and DEDENT
//! are tokens, so statement boundaries and block structure are compared;
//! how deep a block is indented is not (a block re-indented as a whole is
//! layout). Names, numbers and strings compare by their exact text. An
//! f-string or t-string is one token with its full text, prefix and quotes
//! included: its replacement fields (where PEP 701 even allows comments,
//! and where `f"{x = }"` prints its own spaces) compare byte for byte.

use std::sync::Arc;

use ruff_python_ast::token::TokenKind;

/// One token: offsets from the start of its unit.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
    /// Part of a docstring statement (or the line break ending it).
    pub doc: bool,
    /// Part of the literal value of a module-level version assignment.
    pub version: bool,
}

impl Tok {
    /// A token at `start..end` (offsets checked to fit by the caller).
    pub(super) fn new(kind: TokenKind, start: usize, end: usize) -> Tok {
        Tok {
            kind,
            start: start as u32,
            end: end as u32,
            doc: false,
            version: false,
        }
    }

    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Whole top-level statements from a line start to the next unit, with
/// their tokens. A newer version of a file shares the units an edit did not
/// touch with the older one (see `window.rs`): the same tokens, at the same
/// bytes, perhaps moved.
#[derive(Clone, Debug)]
pub(super) struct Unit {
    /// Where the unit starts in its file.
    pub start: usize,
    pub toks: Arc<[Tok]>,
}

/// Whether a token's text matters, beyond its kind: names, numbers,
/// strings, an encoding declaration. An operator or keyword has one text;
/// a line break, INDENT or DEDENT says where a line or block starts or
/// ends, not how it is spelt or how deep.
fn text_matters(kind: TokenKind) -> bool {
    !matches!(
        kind,
        TokenKind::Newline | TokenKind::Indent | TokenKind::Dedent
    )
}

/// One side of a comparison: its bytes and the units to compare.
pub(super) struct Side<'a> {
    pub source: &'a [u8],
    pub units: &'a [Unit],
}

/// Which marked tokens a comparison leaves out.
#[derive(Clone, Copy)]
pub(super) enum Skip {
    /// None: every token counts.
    Nothing,
    /// Docstring statements.
    Docstrings,
    /// Docstring statements and the values of version assignments.
    DocstringsAndVersions,
}

impl Skip {
    fn keeps(self, t: &Tok) -> bool {
        match self {
            Skip::Nothing => true,
            Skip::Docstrings => !t.doc,
            Skip::DocstringsAndVersions => !t.doc && !t.version,
        }
    }
}

impl Side<'_> {
    fn tokens(&self, skip: Skip) -> impl Iterator<Item = (Tok, usize)> + '_ {
        self.units.iter().flat_map(move |u| {
            u.toks
                .iter()
                .filter(move |t| skip.keeps(t))
                .map(move |t| (*t, u.start))
        })
    }
}

/// Whether two sides have the same tokens, but those `skip` leaves out.
pub(super) fn same(a: &Side<'_>, b: &Side<'_>, skip: Skip) -> bool {
    let mut x = a.tokens(skip);
    let mut y = b.tokens(skip);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some((s, sa)), Some((t, tb))) => {
                if s.kind != t.kind {
                    return false;
                }
                if text_matters(s.kind) {
                    let left = &a.source[sa + s.start as usize..sa + s.end as usize];
                    let right = &b.source[tb + t.start as usize..tb + t.end as usize];
                    if left != right {
                        return false;
                    }
                }
            }
            _ => return false,
        }
    }
}

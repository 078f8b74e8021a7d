//! Indentation, checked stricter than Python does. Ruff's lexer follows
//! CPython's rules (a dedent must return to a column an outer block used;
//! tabs and spaces must give the same answer at tab sizes 8 and 1). On top
//! of that, every line-starting statement of a block must have
//! byte-identical leading whitespace, which strictly extends the leading
//! whitespace of the block around it (how deep blocks nest,
//! `limits::tokens_ok` checked before the parse). A file that fails counts
//! as not parsing, so its changes are `code`: a whitespace edit can never turn a
//! file into one that some Python reads differently.

use ruff_python_ast::token::TokenKind;

/// The check, fed the tokens of a slice in order.
pub(super) struct Check<'s> {
    source: &'s [u8],
    /// The leading whitespace of each open block, outermost first (the
    /// top level's is empty).
    blocks: Vec<(usize, usize)>,
    /// The next token starts a logical line.
    line_start: bool,
    /// An INDENT came before it.
    indented: bool,
}

impl<'s> Check<'s> {
    pub(super) fn new(source: &'s [u8]) -> Self {
        Check {
            source,
            blocks: vec![(0, 0)],
            line_start: true,
            indented: false,
        }
    }

    /// Takes the next token; `None` when the indentation fails the check.
    pub(super) fn token(&mut self, kind: TokenKind, start: usize) -> Option<()> {
        match kind {
            TokenKind::Indent => self.indented = true,
            TokenKind::Dedent if self.blocks.len() > 1 => {
                self.blocks.pop();
            }
            TokenKind::Dedent => {}
            TokenKind::Newline => self.line_start = true,
            TokenKind::Comment | TokenKind::NonLogicalNewline | TokenKind::EndOfFile => {}
            _ if self.line_start => {
                self.line_start = false;
                let ws = self.leading(start)?;
                let text = |r: (usize, usize)| &self.source[r.0..r.1];
                let outer = *self.blocks.last()?;
                if std::mem::take(&mut self.indented) {
                    let (w, o) = (text(ws), text(outer));
                    if !(w.len() > o.len() && w.starts_with(o)) {
                        return None;
                    }
                    self.blocks.push(ws);
                } else if text(ws) != text(outer) {
                    return None;
                }
            }
            _ => {}
        }
        Some(())
    }

    /// The whitespace before `at` on its line, as a byte range; `None` if
    /// anything else precedes it there.
    fn leading(&self, at: usize) -> Option<(usize, usize)> {
        let start = self.source[..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        self.source[start..at]
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
            .then_some((start, at))
    }
}

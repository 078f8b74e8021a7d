//! A cheap proof that a change is `code`, from Ruff's lexer alone: most
//! changes a release makes add, remove or move code, and telling so from
//! the kinds of the tokens costs a fraction of a parse.
//!
//! A file's shape is the sequence of its token kinds with every kind left
//! out that a cosmetic change may add, remove or alter: comments and
//! newlines inside brackets (layout), and strings, parentheses and the
//! line breaks ending logical lines (a docstring statement is made of
//! those, and `stream.rs` leaves it out whole). An f-string or t-string
//! counts as one token, whatever is inside it (`stream.rs` compares it as
//! one token, by its text), and a soft keyword counts as a name (the
//! parser turns `match`, `case` or `type` used as a name into one).
//!
//! Two valid files whose changes are `layout` or `docstrings` have the
//! same significant tokens once the docstring statements are left out
//! (`stream.rs`), so they have the same shape: leaving the same kinds out
//! of two equal sequences leaves equal sequences. So two files whose shapes
//! differ are a `code` change, or one of them does not parse, which is
//! `code` too. Equal shapes prove nothing (`x = 1` and `x = 2` have the
//! same): those changes are parsed. Ruff's lexer does not recurse, so this
//! runs on any stack, on any input.

use ruff_python_ast::token::TokenKind;
use ruff_python_parser::lexer::Lexer;

/// Whether the shapes of `old` and `new` differ (so the change is `code`).
/// Both are lexed side by side, up to the first difference: an edit near
/// the start of a file is told from the bytes before it and a few tokens.
pub(super) fn differ(old: &str, new: &str) -> bool {
    let mut a = Shape::new(old);
    let mut b = Shape::new(new);
    loop {
        let (x, y) = (a.next(), b.next());
        if x != y {
            // A lexer that was stuck (`None`) proves nothing.
            return x.is_some() && y.is_some();
        }
        match x {
            None | Some(TokenKind::EndOfFile) => return false,
            Some(_) => {}
        }
    }
}

/// One file's shape, read token by token.
struct Shape<'s> {
    lexer: Lexer<'s>,
    /// The lexer moves on at every token but INDENT and DEDENT, one each
    /// per line at most: past this many tokens it is stuck.
    left: usize,
}

impl<'s> Shape<'s> {
    fn new(text: &'s str) -> Self {
        Shape {
            lexer: ruff_python_parser::lexer::lex(text, ruff_python_parser::Mode::Module),
            left: 2 * text.len() + 8,
        }
    }

    /// The next kind of the shape; `None` when the lexer is stuck.
    fn next(&mut self) -> Option<TokenKind> {
        // How many f-strings or t-strings are open.
        let mut open = 0usize;
        loop {
            self.left = self.left.checked_sub(1)?;
            let kind = self.lexer.next_token();
            match kind {
                TokenKind::FStringStart | TokenKind::TStringStart => open += 1,
                TokenKind::FStringEnd | TokenKind::TStringEnd if open > 0 => {
                    open -= 1;
                    if open == 0 {
                        return Some(TokenKind::FStringStart);
                    }
                }
                // An f-string the file ends inside does not parse.
                TokenKind::EndOfFile => return Some(kind),
                _ if open > 0 => {}
                _ if kind.is_soft_keyword() => return Some(TokenKind::Name),
                _ if left_out(kind) => {}
                _ => return Some(kind),
            }
        }
    }
}

/// The kinds no shape holds: what a cosmetic change may add, remove or
/// alter.
fn left_out(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Comment
            | TokenKind::NonLogicalNewline
            | TokenKind::Newline
            | TokenKind::String
            | TokenKind::Lpar
            | TokenKind::Rpar
    )
}

//! What Python rejects although Ruff's parser accepts it, and what could
//! make the parser itself misbehave: a file that fails any check counts as
//! not parsing, so its changes are `code`.
//!
//! - Python's limits: 200 nested brackets (tokenizer `MAXLEVEL`), 99
//!   indentation levels (`MAXINDENT`), and expressions nested about 3,000
//!   deep (the compiler's recursion limit): the syntax tree may be at most
//!   [`MAX_TREE_DEPTH`] nodes deep, well below.
//! - A line continuation followed by a blank or comment-only line, or by
//!   the end of the file (Python: "invalid syntax", "unexpected EOF").
//! - Anything but whitespace and continuations between tokens (a
//!   non-breaking space, a vertical tab).
//! - A docstring with a `\N{...}` escape: the names of the Unicode version
//!   of the Python that runs the code are not known. (Escapes that Python
//!   cannot decode, `\x4`, `\u12`, `\U00110000`, Ruff's parser rejects in
//!   every string.)

/// The most brackets open at once that Python accepts.
pub(super) const MAX_BRACKETS: usize = 200;
/// The most nested blocks; Python accepts 99 indentation levels.
pub(super) const MAX_BLOCKS: usize = 99;
/// The deepest syntax tree accepted (statements and expressions, one level
/// each). Python's compiler gives up near 3,000 nested expressions
/// (`a + a + ...`, `not not ...`, `-(-(...))`).
pub(crate) const MAX_TREE_DEPTH: usize = 1000;
/// The most tokens in a logical line that make Ruff's parser recurse a
/// level each (see [`tokens_ok`]): at under 1 KiB of stack a level, what
/// passes stays far within the parse thread's stack.
pub(super) const MAX_RECURSIVE: usize = 50_000;
/// Whether the parser may read `text` (a file or the slice of one to
/// parse), from its tokens: brackets that nest at most [`MAX_BRACKETS`]
/// deep and each close the innermost one open (Python rejects a file
/// where one does not), blocks nested at most [`MAX_BLOCKS`] deep, and at
/// most [`MAX_RECURSIVE`] tokens in a logical line that may make the
/// parser recurse a level each: `not`, `lambda`, `await`, `async`, `if`,
/// `else`, `elif`, `yield`, `**`, and
/// `-`, `+`, `~`, `*` where they are unary or star an expression (an
/// expression ends with its line: the parser's stack is then as deep as
/// the blocks around it).
///
/// This is what keeps the parse thread's stack safe (see `python.rs`). It
/// counts tokens, not bytes: a count of bytes is fooled by strings
/// (`(')'(')'...` nests as deep as it is long with a byte depth of one),
/// blank lines and runs of prefix operators. Ruff's lexer does not
/// recurse: this runs on any stack. Every check holds
/// within a top-level statement, so that a slice of a file passes exactly
/// when the whole file does where the slice is.
pub(crate) fn tokens_ok(text: &str) -> bool {
    use ruff_python_ast::token::TokenKind as K;
    let mut lexer = ruff_python_parser::lexer::lex(text, ruff_python_parser::Mode::Module);
    let mut open = Vec::new();
    let (mut blocks, mut recursive) = (0usize, 0usize);
    let mut after_operand = false;
    // The lexer moves on at every token but INDENT and DEDENT, one each
    // per line at most: more than this is a lexer that is stuck.
    for _ in 0..2 * text.len() + 8 {
        let kind = lexer.next_token();
        match kind {
            K::EndOfFile => return true,
            K::Newline => recursive = 0,
            K::Indent => {
                blocks += 1;
                if blocks > MAX_BLOCKS {
                    return false;
                }
            }
            K::Dedent => blocks = blocks.saturating_sub(1),
            K::Lpar | K::Lsqb | K::Lbrace => {
                open.push(kind);
                if open.len() > MAX_BRACKETS {
                    return false;
                }
            }
            K::Rpar | K::Rsqb | K::Rbrace => {
                let opener = match kind {
                    K::Rpar => K::Lpar,
                    K::Rsqb => K::Lsqb,
                    _ => K::Lbrace,
                };
                if open.pop() != Some(opener) {
                    return false;
                }
            }
            K::Not
            | K::Lambda
            | K::Await
            | K::Async
            | K::If
            | K::Else
            | K::Elif
            | K::Yield
            | K::DoubleStar => recursive += 1,
            // A unary operator or a starred expression; after an operand
            // these are binary operators, which the parser loops over.
            K::Star | K::Minus | K::Plus | K::Tilde if !after_operand => recursive += 1,
            _ => {}
        }
        if recursive > MAX_RECURSIVE {
            return false;
        }
        if !matches!(kind, K::Comment | K::NonLogicalNewline) {
            after_operand = matches!(
                kind,
                K::Name
                    | K::Int
                    | K::Float
                    | K::Complex
                    | K::String
                    | K::FStringEnd
                    | K::TStringEnd
                    | K::Rpar
                    | K::Rsqb
                    | K::Rbrace
                    | K::None
                    | K::True
                    | K::False
                    | K::Ellipsis
            );
        }
    }
    false
}

/// Whether the bytes between two tokens, `source[from..to]`, are what
/// Python skips there: spaces, tabs, form feeds, line breaks, and line
/// continuations followed by a line with code on it.
pub(super) fn gap_ok(source: &[u8], from: usize, to: usize) -> bool {
    let gap = &source[from..to];
    gap.iter().enumerate().all(|(i, b)| match b {
        b' ' | b'\t' | b'\x0c' | b'\n' => true,
        b'\\' => gap.get(i + 1) == Some(&b'\n') && continuation_ok(source, from + i + 2),
        _ => false,
    })
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

/// Whether a docstring (`text`: a plain string literal, prefix and quotes
/// included) has no `\N{...}` escape: the names of the Unicode version of
/// the Python that runs the code are not known. (Ruff's parser rejects
/// the escapes no Python decodes, `\x4`, `\u12`, `\U00110000`, in every
/// string.) A raw string has no escapes.
pub(super) fn escapes_ok(text: &[u8]) -> bool {
    let Some(quote) = text.iter().position(|b| *b == b'"' || *b == b'\'') else {
        return false;
    };
    if text[..quote].iter().any(|b| b.eq_ignore_ascii_case(&b'r')) {
        return true;
    }
    let mut i = quote;
    while i < text.len() {
        if text[i] == b'\\' {
            if text.get(i + 1) == Some(&b'N') {
                return false;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    true
}

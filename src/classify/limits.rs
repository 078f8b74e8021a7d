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
pub(super) const MAX_TREE_DEPTH: usize = 1000;
/// The most words and operators that make Ruff's parser recurse a level
/// each (`not`, `lambda`, `await`, `if`, `else`, `yield`, `**`, and runs of
/// `-`, `+`, `~`), counted in the whole file: at under 1 KiB of stack a
/// level, what passes stays far within the parse thread's stack.
pub(super) const MAX_RECURSIVE: usize = 50_000;
/// The longest run of one-byte prefix operators (`- - ~x`).
const MAX_RUN: usize = 1000;

/// Whether a file may be parsed: its brackets, counted from its bytes
/// alone, never nest deeper than Python allows; no run of the one-byte
/// prefix operators (`- - ~x`) is longer than [`MAX_RUN`]; and at most
/// [`MAX_RECURSIVE`] words and operators could make the parser recurse.
/// These bound the parse thread's stack (see `python.rs`), and Python
/// rejects what nests that deep anyway.
///
/// These are byte counts, not a tokenizer: brackets, words and operators in
/// strings and comments count too. The bracket count restarts at a blank
/// line (which a deep, hostile nesting need not have, and which ends most
/// statements: counting a whole file's unbalanced brackets in strings would
/// refuse ordinary files); a run of operators may hold spaces and tabs. They
/// can only make a file `code` without parsing it: whether the file stays
/// within Python's limits is checked on its tokens and tree
/// ([`MAX_BRACKETS`], [`MAX_BLOCKS`], [`MAX_TREE_DEPTH`]).
pub(super) fn may_parse(source: &[u8]) -> bool {
    let (mut depth, mut run, mut recursive) = (0usize, 0usize, 0usize);
    let mut previous = 0u8;
    let mut i = 0;
    while i < source.len() {
        let b = source[i];
        match CLASS[usize::from(b)] {
            WORD => {
                // A whole word at once (most of a file's bytes): it opens
                // no bracket and ends a run of operators.
                let start = i;
                while i < source.len() && CLASS[usize::from(source[i])] == WORD {
                    i += 1;
                }
                recursive += usize::from(recursive_word(&source[start..i]));
                run = 0;
                previous = source[i - 1];
                continue;
            }
            SPACE => {
                // Indentation: a run at once; it changes no count.
                while i + 1 < source.len() && CLASS[usize::from(source[i + 1])] == SPACE {
                    i += 1;
                }
                previous = source[i];
                i += 1;
                continue;
            }
            OPEN => {
                depth += 1;
                run = 0;
            }
            CLOSE => {
                depth = depth.saturating_sub(1);
                run = 0;
            }
            NEWLINE => {
                if previous == b'\n' {
                    depth = 0;
                }
                run = 0;
            }
            PREFIX => {
                run += 1;
                recursive += usize::from(run == 1);
            }
            STAR => {
                recursive += usize::from(previous == b'*');
                run = 0;
            }
            _ => run = 0,
        }
        if depth > MAX_BRACKETS || run > MAX_RUN || recursive > MAX_RECURSIVE {
            return false;
        }
        previous = b;
        i += 1;
    }
    recursive <= MAX_RECURSIVE
}

/// Whether the parser may read `text` (a file or the slice of one to
/// parse), from its tokens: brackets that nest at most [`MAX_BRACKETS`]
/// deep and each close the innermost one open (Python rejects a file
/// where one does not), blocks nested at most [`MAX_BLOCKS`] deep, and at
/// most [`MAX_RECURSIVE`] tokens in a logical line that may make the
/// parser recurse a level each: the words of [`may_parse`], `**`, and
/// `-`, `+`, `~`, `*` where they are unary or star an expression (an
/// expression ends with its line: the parser's stack is then as deep as
/// the blocks around it).
///
/// [`may_parse`] counts bytes, which a string or comment can fool:
/// `(')'(')'...` nests as deep as it is long with a byte depth of one, so
/// can brackets separated by blank lines, and a run of prefix operators
/// counts once there (`- - -`) while the parser recurses for each. Ruff's
/// lexer does not recurse: this runs on any stack. Every check holds
/// within a top-level statement, so that a slice of a file passes exactly
/// when the whole file does where the slice is.
pub(super) fn tokens_ok(text: &str) -> bool {
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

/// What a byte is to [`may_parse`].
const OTHER: u8 = 0;
const WORD: u8 = 1;
const SPACE: u8 = 2;
const OPEN: u8 = 3;
const CLOSE: u8 = 4;
const NEWLINE: u8 = 5;
const PREFIX: u8 = 6;
const STAR: u8 = 7;
static CLASS: [u8; 256] = {
    let mut class = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        class[b] = match c {
            b'(' | b'[' | b'{' => OPEN,
            b')' | b']' | b'}' => CLOSE,
            b'\n' => NEWLINE,
            b' ' | b'\t' => SPACE,
            b'-' | b'+' | b'~' => PREFIX,
            b'*' => STAR,
            _ if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 => WORD,
            _ => OTHER,
        };
        b += 1;
    }
    class
};

/// Whether a whole word is one of the keywords that make the parser
/// recurse.
fn recursive_word(word: &[u8]) -> bool {
    matches!(
        word,
        b"not" | b"lambda" | b"await" | b"if" | b"else" | b"yield" | b"elif"
    )
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

//! Parsing Python with Ruff's parser, on a thread of its own.
//!
//! Ruff's parser is recursive descent with no depth limit of its own: each
//! nested unary operator, `not`, `lambda`, `await`, conditional or `**`
//! costs about 0.5 to 0.9 KiB of stack, a nested bracket about 2.2 KiB, and
//! dropping a left-deep tree (`a.b.c...`, `1+1+...`) recurses too, 64 bytes
//! a level (measured, release build). A hostile file could overflow a
//! normal thread's stack, which aborts the process. So every parse runs on
//! one worker thread per [`Parser`] with a [`STACK`]-byte stack (reserved,
//! touched only as deep as a file needs), and `limits::tokens_ok` first
//! refuses, from the tokens of what is to be parsed (Ruff's lexer does
//! not recurse), anything that could need more: brackets past Python's
//! 200, blocks past 99, and more than [`limits::MAX_RECURSIVE`] tokens
//! that recurse in one logical line. A panic in the parser makes
//! the file "does not parse" (its changes are then `code`), never a crash.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::stream::{Tok, Unit};
use super::{indent, limits, mcp};

/// The parse thread's stack. The deepest file `limits::tokens_ok` lets
/// through needs about 45 MiB: 50,000 nested `not` at 0.9 KiB a level
/// (dropping the tree afterwards needs less: 64 bytes a level, at most
/// one level per 2 bytes of a 1 MiB file). Reserved, not committed, so
/// the margin costs address space only; an address-space limit too low
/// for it (`ulimit -v`) leaves the thread unstarted and every change
/// `code`.
const STACK: usize = 128 << 20;

/// What to parse: `source[start..end]`, a run of whole top-level
/// statements starting on a line of its own (or the whole file).
pub(super) struct Slice {
    pub source: Arc<Vec<u8>>,
    pub start: usize,
    pub end: usize,
}

/// A worker thread that parses slices; spawned on first use.
#[derive(Default)]
pub(super) struct Parser {
    worker: Option<Worker>,
}

struct Worker {
    send: Option<mpsc::Sender<Slice>>,
    receive: mpsc::Receiver<Option<Vec<Unit>>>,
    thread: Option<JoinHandle<()>>,
}

impl Parser {
    /// The units of `slice` (offsets in the whole source), `None` when it
    /// does not parse as Python 3 by the checks of this module.
    pub(super) fn units(&mut self, slice: Slice) -> Option<Vec<Unit>> {
        if self.worker.is_none() {
            self.worker = Worker::spawn();
        }
        let worker = self.worker.as_ref()?;
        let answer = worker
            .send
            .as_ref()?
            .send(slice)
            .ok()
            .and_then(|()| worker.receive.recv().ok());
        match answer {
            Some(units) => units,
            None => {
                // The thread is gone: the next parse starts another.
                self.worker = None;
                None
            }
        }
    }
}

impl Worker {
    fn spawn() -> Option<Worker> {
        let (send, requests) = mpsc::channel::<Slice>();
        let (answers, receive) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fpcheck-python-parser".into())
            .stack_size(STACK)
            .spawn(move || {
                for slice in requests {
                    let units = catch_unwind(AssertUnwindSafe(|| parse(&slice))).unwrap_or(None);
                    if answers.send(units).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Worker {
            send: Some(send),
            receive,
            thread: Some(thread),
        })
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        drop(self.send.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Runs `read` on the syntax tree of each of `texts` that parses, on one
/// thread with the parser's stack, after the checks classification makes
/// before a parse (`limits::tokens_ok`): `None` for a text that does not
/// parse, is refused, or makes `read` panic. For readers of a module's
/// facts (the advice), which see only what the tree says.
pub(crate) fn read_modules<T: Send>(
    texts: &[&str],
    read: impl Fn(&ruff_python_ast::ModModule, &str) -> T + Sync,
) -> Vec<Option<T>> {
    let one = |text: &str| -> Option<T> {
        if !limits::tokens_ok(text) {
            return None;
        }
        let parsed = ruff_python_parser::parse_module(text).ok()?;
        catch_unwind(AssertUnwindSafe(|| read(parsed.syntax(), text))).ok()
    };
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("fpcheck-python-reader".into())
            .stack_size(STACK)
            .spawn_scoped(s, || texts.iter().map(|t| one(t)).collect::<Vec<_>>())
            .ok()
            .and_then(|h| h.join().ok())
    })
    .unwrap_or_else(|| texts.iter().map(|_| None).collect())
}

/// Parses one slice (on the worker thread).
fn parse(slice: &Slice) -> Option<Vec<Unit>> {
    let bytes = slice.source.get(slice.start..slice.end)?;
    let text = std::str::from_utf8(bytes).ok()?;
    if !limits::tokens_ok(text) {
        return None;
    }
    let parsed = ruff_python_parser::parse_module(text).ok()?;
    let module = parsed.syntax();
    let mut facts = Facts {
        docs: Vec::new(),
        depth: 0,
        deepest: 0,
    };
    if slice.start == 0 {
        facts.docstring(&module.body);
    }
    facts.visit_body(&module.body);
    if facts.deepest > limits::MAX_TREE_DEPTH {
        return None;
    }
    facts.docs.sort_by_key(|r| r.start());
    let versions: Vec<TextRange> = module.body.iter().filter_map(version_value).collect();
    let mut tokens = Tokens::new(bytes, slice.start, parsed.tokens(), &facts.docs)?;
    mark_versions(&mut tokens.toks, &versions);
    let starts = unit_starts(bytes, &module.body);
    Some(tokens.into_units(&starts))
}

/// What the syntax tree tells: docstring statements, and how deep it nests.
struct Facts {
    docs: Vec<TextRange>,
    depth: usize,
    deepest: usize,
}

impl Facts {
    /// Notes the first statement of `body` when it is a docstring: a plain
    /// string literal (`str`, implicit concatenation included; not an
    /// f-string, t-string or bytes).
    fn docstring(&mut self, body: &[Stmt]) {
        if let Some(Stmt::Expr(stmt)) = body.first() {
            if matches!(*stmt.value, Expr::StringLiteral(_)) {
                self.docs.push(stmt.range());
            }
        }
    }

    /// Goes one level down; `false` past the deepest tree accepted (the
    /// walk stops there: the answer is known, and a left-deep chain such
    /// as `a.b.c...` is as deep as the file is long).
    fn enter(&mut self) -> bool {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.depth <= limits::MAX_TREE_DEPTH
    }
}

impl<'a> Visitor<'a> for Facts {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.enter() {
            match stmt {
                // A registered MCP function's docstring is its
                // description, which clients see: it is code.
                Stmt::FunctionDef(f) if mcp::registered(&f.decorator_list).is_some() => {}
                Stmt::FunctionDef(f) => self.docstring(&f.body),
                Stmt::ClassDef(c) => self.docstring(&c.body),
                _ => {}
            }
            walk_stmt(self, stmt);
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.enter() {
            walk_expr(self, expr);
        }
        self.depth -= 1;
    }
}

/// The names whose module-level assignment is a version string.
pub(super) const VERSION_NAMES: [&str; 2] = ["__version__", "VERSION"];

/// The value of a module-level `__version__ = "1.2"` (or `VERSION`,
/// annotated or not, one target) when it is a literal: a plain string or
/// a tuple of strings and numbers (`(1, 2, "rc1")`). Changing only that
/// value changes nothing else Python executes.
pub(super) fn version_value(stmt: &Stmt) -> Option<TextRange> {
    let (target, value) = match stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => (&a.targets[0], &*a.value),
        Stmt::AnnAssign(a) => (&*a.target, a.value.as_deref()?),
        _ => return None,
    };
    let Expr::Name(name) = target else {
        return None;
    };
    if !VERSION_NAMES.contains(&name.id.as_str()) {
        return None;
    }
    let literal = |e: &Expr| matches!(e, Expr::StringLiteral(_) | Expr::NumberLiteral(_));
    let ok = match value {
        Expr::StringLiteral(_) => true,
        Expr::Tuple(t) => !t.elts.is_empty() && t.elts.iter().all(literal),
        _ => false,
    };
    ok.then(|| value.range())
}

/// Marks the tokens inside the version values `ranges`.
fn mark_versions(toks: &mut [Tok], ranges: &[TextRange]) {
    if ranges.is_empty() {
        return;
    }
    for t in toks {
        let at = t.start as usize;
        t.version = ranges
            .iter()
            .any(|r| r.start().to_usize() <= at && at < r.end().to_usize());
    }
}

/// Where units start in the slice: at 0, then at each top-level statement
/// but the first that begins a line (after a line break not escaped by a
/// backslash). Statements after `;` or a continuation stay in the unit
/// before them, so that a unit boundary is always a point where a fresh
/// lexer is in the state the whole file's lexer is in. The first statement
/// stays in the first unit, with the comments before it: at the start of
/// the file it may be the module's docstring, which only a parse from the
/// start recognises.
fn unit_starts(bytes: &[u8], body: &[Stmt]) -> Vec<usize> {
    let mut starts = vec![0];
    for stmt in body.iter().skip(1) {
        let at = stmt.start().to_usize();
        let line_start = at >= 1 && bytes[at - 1] == b'\n' && (at < 2 || bytes[at - 2] != b'\\');
        if at > 0 && line_start && starts.last() != Some(&at) {
            starts.push(at);
        }
    }
    starts
}

/// A slice's significant tokens, checked.
struct Tokens {
    offset: usize,
    toks: Vec<Tok>,
}

impl Tokens {
    /// The tokens that count (see `stream.rs`), with the checks of
    /// `limits.rs` and `indent.rs`; `None` when one fails. (How deep
    /// brackets nest, `limits::tokens_ok` checked before the parse.)
    fn new(
        bytes: &[u8],
        offset: usize,
        tokens: &[ruff_python_ast::token::Token],
        docs: &[TextRange],
    ) -> Option<Self> {
        u32::try_from(offset + bytes.len()).ok()?;
        let mut toks = Vec::with_capacity(tokens.len());
        let mut indent = indent::Check::new(bytes);
        let mut covered = 0usize;
        // The f-string or t-string being merged into one token: its start
        // and how many are open.
        let mut interpolated: Option<(usize, usize)> = None;
        // A declaration is on the file's first two lines: in a slice that
        // starts past them, no comment is one.
        let head_end = match offset {
            0 => super::window::past_second_line(bytes),
            _ => 0,
        };
        for token in tokens {
            let kind = token.kind();
            let (start, end) = (token.start().to_usize(), token.end().to_usize());
            if start > covered && !limits::gap_ok(bytes, covered, start) {
                return None;
            }
            covered = covered.max(end);
            if let Some((from, open)) = interpolated.as_mut() {
                match kind {
                    TokenKind::FStringStart | TokenKind::TStringStart => *open += 1,
                    TokenKind::FStringEnd | TokenKind::TStringEnd => *open -= 1,
                    _ => {}
                }
                if *open == 0 {
                    let from = *from;
                    interpolated = None;
                    toks.push(Tok::new(TokenKind::FStringStart, from, end));
                }
                continue;
            }
            indent.token(kind, start)?;
            match kind {
                TokenKind::FStringStart | TokenKind::TStringStart => {
                    interpolated = Some((start, 1));
                }
                TokenKind::Comment => {
                    if start < head_end && bytes[start..end].windows(6).any(|w| w == b"coding") {
                        // A PEP 263 declaration: it decides how every
                        // other byte is decoded.
                        toks.push(Tok::new(kind, start, end));
                    }
                }
                TokenKind::NonLogicalNewline | TokenKind::EndOfFile => {}
                _ => toks.push(Tok::new(kind, start, end)),
            }
        }
        if interpolated.is_some() || !limits::gap_ok(bytes, covered, bytes.len()) {
            return None;
        }
        mark_docstrings(&mut toks, bytes, docs)?;
        Some(Tokens { offset, toks })
    }

    /// Splits the tokens at `starts` (offsets in the slice). The tokens
    /// that close the unit before a start (its line break and DEDENTs) come
    /// before the first token at or after it.
    fn into_units(self, starts: &[usize]) -> Vec<Unit> {
        let mut units = Vec::with_capacity(starts.len());
        let mut rest = &self.toks[..];
        for (i, &start) in starts.iter().enumerate() {
            let next = starts.get(i + 1).copied();
            let split = match next {
                Some(next) => rest
                    .iter()
                    .position(|t| t.start as usize >= next && t.kind != TokenKind::Dedent)
                    .unwrap_or(rest.len()),
                None => rest.len(),
            };
            let (mine, after) = rest.split_at(split);
            let base = start as u32;
            let toks: Arc<[Tok]> = mine
                .iter()
                .map(|t| Tok {
                    start: t.start.saturating_sub(base),
                    end: t.end.saturating_sub(base),
                    ..*t
                })
                .collect();
            units.push(Unit {
                start: self.offset + start,
                toks,
            });
            rest = after;
        }
        units
    }
}

/// Marks the tokens of docstring statements (`docs`, sorted), and the line
/// break after each that starts its logical line (not one on its header's
/// line, `class A: 'doc'`, whose line break ends the header's statement):
/// leaving them out then leaves the statement out as if it were not there.
/// `None` when a docstring holds an escape Python may not decode.
fn mark_docstrings(toks: &mut [Tok], bytes: &[u8], docs: &[TextRange]) -> Option<()> {
    let mut doc = docs.iter().peekable();
    let mut after_doc = false;
    let mut own_line = false;
    let mut previous: Option<(TokenKind, bool)> = None;
    for t in toks {
        while doc
            .peek()
            .is_some_and(|r| r.end().to_usize() <= t.start as usize)
        {
            doc.next();
            after_doc = own_line;
        }
        let inside = doc
            .peek()
            .is_some_and(|r| r.start().to_usize() <= t.start as usize);
        if inside && !previous.is_some_and(|(_, doc)| doc) {
            own_line = matches!(
                previous,
                None | Some((
                    TokenKind::Indent | TokenKind::Newline | TokenKind::Comment,
                    _
                ))
            );
        }
        previous = Some((t.kind, inside));
        if inside {
            if t.kind == TokenKind::String && !limits::escapes_ok(&bytes[t.range()]) {
                return None;
            }
            t.doc = true;
        } else if after_doc && t.kind == TokenKind::Newline {
            t.doc = true;
        }
        if !inside {
            after_doc = false;
        }
    }
    Some(())
}

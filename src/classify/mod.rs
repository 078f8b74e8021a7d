//! Which changes to a runtime file alter what Python executes, and which are
//! only cosmetic: `layout` (comments, blank lines, whitespace between
//! tokens), `docstrings` (also module, class and function docstrings), or
//! `code` (anything else, and anything either side of which does not parse).
//!
//! The gate restarts for any changed byte, and fpcheck keeps reproducing
//! that: this is advice to releasers ("this restart could have waited"),
//! never an input to the verdict. Both sides are parsed with Ruff's parser
//! (see docs/classify.md for why) and compared as streams of its tokens,
//! so that nothing here tokenises Python by hand.

use std::sync::Arc;

use ruff_python_ast::token::TokenKind;

mod apply;
pub(crate) mod cache;
mod decode;
mod history;
mod indent;
mod limits;
pub mod mcp;
mod python;
mod shape;
mod stream;
mod window;

pub use crate::changes::ChangeKind;
pub use apply::{
    avoidable, avoidable_by, avoidable_markdown, avoidable_sentence, may_be_avoidable,
    settings_changed, Avoidable,
};
pub(crate) use apply::{classify_changes, compares_files, Bytes};
pub(crate) use cache::KindCache;
pub(crate) use history::{avoidable_updates, Update};
/// The parser's safety limits, shared with [`crate::imports`].
pub(crate) use limits::{tokens_ok, MAX_TREE_DEPTH};
pub(crate) use python::read_modules;
use stream::Unit;

/// Whether `path` is Python source by its name: `.py` (what `import`
/// loads), `.pyw` (the same, on Windows) or `.pyi` (a stub, Python syntax
/// read by type checkers). A runtime may list other extensions (data files,
/// templates, Cython), which fpcheck cannot know how the runtime reads: a
/// comment or a string in Python's grammar can be data there, so their
/// changes are `code`, never parsed.
pub fn is_python_source(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    [".py", ".pyw", ".pyi"]
        .iter()
        .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix))
}

/// A reusable Python parser (it keeps a parse thread; reuse it for many
/// files).
#[derive(Default)]
pub struct Classifier {
    parser: python::Parser,
    /// Files (or slices of files) parsed so far.
    parses: usize,
}

/// One parsed version of a file, kept so that its next version can be
/// parsed where it changed (see `window.rs`) and compared there.
pub struct Parsed {
    /// The bytes as Python reads them (see `decode.rs`); shared with the
    /// history's kept blobs when nothing needed changing.
    source: Arc<Vec<u8>>,
    /// `None` when the file does not parse as Python 3.
    units: Option<Vec<Unit>>,
}

impl Parsed {
    /// Whether the whole file parses as Python 3: Ruff's parser accepts
    /// it, and it passes the checks of `decode.rs`, `limits.rs` and
    /// `indent.rs`.
    pub fn is_valid(&self) -> bool {
        self.units.is_some()
    }

    fn invalid() -> Parsed {
        Parsed {
            source: Arc::new(Vec::new()),
            units: None,
        }
    }
}

/// A whole file parsed on its own, for comparing with [`compare`].
pub struct Stream(Parsed);

impl Stream {
    /// How many tokens it has (for tests and curiosity).
    pub fn len(&self) -> usize {
        self.0
            .units
            .as_ref()
            .map_or(0, |u| u.iter().map(|u| u.toks.len()).sum())
    }

    /// Whether it has none (an empty module).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Classifier {
    /// A parser for Python.
    pub fn new() -> Self {
        Classifier::default()
    }

    /// One whole file, parsed on its own; `None` when it does not parse as
    /// Python 3.
    pub fn stream(&mut self, source: &[u8]) -> Option<Stream> {
        let parsed = self.parse(source.to_vec(), None);
        parsed.is_valid().then_some(Stream(parsed))
    }

    /// Parses `source`; with `previous` (the file's older version), only
    /// where it differs from it when that can be done (see `window.rs`).
    /// A file Python would not decode (see `decode.rs`) is not parsed: it
    /// is known not to be valid.
    pub fn parse(&mut self, source: impl Into<Arc<Vec<u8>>>, previous: Option<&Parsed>) -> Parsed {
        let Some(source) = decode::prepare(source.into()) else {
            return Parsed::invalid();
        };
        if let Some((old, units)) = previous.and_then(|p| Some((p, p.units.as_ref()?))) {
            if old.source == source {
                return Parsed {
                    source,
                    units: Some(units.clone()),
                };
            }
            if let Some(units) = self.parse_window(&old.source, units, &source) {
                return Parsed {
                    source,
                    units: Some(units),
                };
            }
        }
        let units = self.parser.units(python::Slice {
            source: source.clone(),
            start: 0,
            end: source.len(),
        });
        self.parses += 1;
        Parsed { source, units }
    }

    /// The units of `new` from those of its older version `old` and a
    /// parse of the bytes between; `None` when that slice does not parse.
    fn parse_window(
        &mut self,
        old: &[u8],
        units: &[Unit],
        new: &Arc<Vec<u8>>,
    ) -> Option<Vec<Unit>> {
        let plan = window::plan(old, units, new);
        if plan.lead == 0 && plan.trail == 0 {
            return None;
        }
        let middle = self.parser.units(python::Slice {
            source: new.clone(),
            start: plan.start,
            end: plan.end,
        });
        self.parses += 1;
        let middle = middle?;
        if plan.lead == 0 && !has_statement(&middle) {
            // The first kept unit would hold the module's first statement,
            // which may be its docstring: only a parse from the start
            // tells.
            return None;
        }
        let moved = |u: &Unit| Unit {
            start: u.start + new.len() - old.len(),
            toks: u.toks.clone(),
        };
        let trail = &units[units.len() - plan.trail..];
        Some(
            units[..plan.lead]
                .iter()
                .cloned()
                .chain(middle)
                .chain(trail.iter().map(moved))
                .collect(),
        )
    }

    /// How many files (or changed parts of files) [`Classifier::parse`]
    /// parsed (for the history's statistics).
    pub fn parses(&self) -> usize {
        self.parses
    }

    /// How `new` differs from `old` (`new` parsed where it changed).
    pub fn classify(
        &mut self,
        old: impl Into<Arc<Vec<u8>>>,
        new: impl Into<Arc<Vec<u8>>>,
    ) -> ChangeKind {
        let old = self.parse(old, None);
        let new = self.parse(new, Some(&old));
        compare_parsed(&old, &new)
    }
}

/// Whether the change from `old` to `new` is `code` by what is cheap to
/// tell, without parsing: either side is a file Python would not decode
/// (see `decode.rs`), or their shapes differ (see `shape.rs`). `false`
/// proves nothing.
pub fn proven_code(old: &Arc<Vec<u8>>, new: &Arc<Vec<u8>>) -> bool {
    let (Some(old), Some(new)) = (decode::prepare(old.clone()), decode::prepare(new.clone()))
    else {
        return true;
    };
    match (std::str::from_utf8(&old), std::str::from_utf8(&new)) {
        // A panic in the lexer proves nothing: the parse thread, which
        // survives one, tells.
        (Ok(old), Ok(new)) => std::panic::catch_unwind(|| shape::differ(old, new)).unwrap_or(false),
        _ => true,
    }
}

/// Whether `units` hold a statement: any token but an encoding
/// declaration (the only comment kept).
fn has_statement(units: &[Unit]) -> bool {
    units
        .iter()
        .any(|u| u.toks.iter().any(|t| t.kind != TokenKind::Comment))
}

/// Compares two parsed versions (`code` when either does not parse). The
/// units a windowed parse shared are the same tokens on both sides and are
/// not compared again.
pub fn compare_parsed(old: &Parsed, new: &Parsed) -> ChangeKind {
    let (Some(a), Some(b)) = (&old.units, &new.units) else {
        return ChangeKind::Code;
    };
    let shared = |x: &Unit, y: &Unit| Arc::ptr_eq(&x.toks, &y.toks);
    let front = a.iter().zip(b).take_while(|(x, y)| shared(x, y)).count();
    let (a, b) = (&a[front..], &b[front..]);
    let back = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| shared(x, y))
        .count();
    let a = stream::Side {
        source: &old.source,
        units: &a[..a.len() - back],
    };
    let b = stream::Side {
        source: &new.source,
        units: &b[..b.len() - back],
    };
    if stream::same(&a, &b, stream::Skip::Nothing) {
        ChangeKind::Layout
    } else if stream::same(&a, &b, stream::Skip::Docstrings) {
        ChangeKind::Docstrings
    } else if stream::same(&a, &b, stream::Skip::DocstringsAndVersions) {
        ChangeKind::Version
    } else {
        ChangeKind::Code
    }
}

/// Compares two whole files, each parsed on its own.
pub fn compare(a: &Stream, b: &Stream) -> ChangeKind {
    compare_parsed(&a.0, &b.0)
}

/// Classifies one pair of files with a fresh parser.
pub fn classify(old: &[u8], new: &[u8]) -> ChangeKind {
    Classifier::new().classify(old.to_vec(), new.to_vec())
}

#[cfg(test)]
mod tests;

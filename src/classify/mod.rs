//! Which changes to a runtime file alter what Python executes, and which are
//! only cosmetic: `layout` (comments, blank lines, whitespace between
//! tokens), `docstrings` (also module, class and function docstrings), or
//! `code` (anything else, and anything either side of which does not parse).
//!
//! The gate restarts for any changed byte, and fpcheck keeps reproducing
//! that: this is advice to releasers ("this restart could have waited"),
//! never an input to the verdict. Both sides are parsed with tree-sitter's
//! Python grammar (see docs/classify.md for why) and compared as streams of
//! syntax-tree events, so that nothing here tokenises Python by hand.

use std::cell::Cell;
use std::sync::Arc;

use serde::Serialize;

mod apply;
pub(crate) mod cache;
mod decode;
mod history;
mod indent;
mod limits;
mod stream;
mod window;

pub use apply::{
    annotate, avoidable, avoidable_markdown, avoidable_sentence, may_be_avoidable, settings_changed,
};
pub(crate) use apply::{annotate_with, compares_files};
pub(crate) use cache::KindCache;
pub(crate) use history::{avoidable_updates, Update};
pub use stream::Stream;
use stream::{Kinds, Skip};

/// How a runtime file changed, as far as Python is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Only comments, blank lines or whitespace that is not indentation.
    Layout,
    /// Also module, class or function docstrings (visible as `__doc__`).
    Docstrings,
    /// Anything else; also files that do not parse, links, additions,
    /// deletions, renames and mode changes.
    Code,
}

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

impl ChangeKind {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Layout => "layout",
            ChangeKind::Docstrings => "docstrings",
            ChangeKind::Code => "code",
        }
    }

    /// `layout` or `docstrings`: the restart could have waited for this file.
    pub fn is_cosmetic(self) -> bool {
        self != ChangeKind::Code
    }
}

/// A reusable Python parser (building one loads the grammar; reuse it for
/// many files).
pub struct Classifier {
    parser: tree_sitter::Parser,
    /// Files parsed so far.
    parses: usize,
}

/// One parsed version of a file, kept so that its next version can be
/// parsed incrementally (tree-sitter reuses the unchanged subtrees, and
/// gives the same tree as a fresh parse) and compared where it changed.
pub struct Parsed {
    tree: Option<tree_sitter::Tree>,
    /// Shared with the history's kept blobs, not copied.
    source: Arc<Vec<u8>>,
    /// Whether the whole file parses as Python 3 (see [`Classifier::stream`]),
    /// once known.
    valid: Cell<Option<bool>>,
}

impl Parsed {
    /// Whether the whole file parses as Python 3: no error or missing node,
    /// no Python 2 statement, indentation Python accepts. Walks the whole
    /// tree the first time.
    pub fn is_valid(&self) -> bool {
        if let Some(known) = self.valid.get() {
            return known;
        }
        let valid = self
            .tree
            .as_ref()
            .is_some_and(|t| stream::valid(t.root_node(), &self.source, Kinds::get()));
        self.valid.set(Some(valid));
        valid
    }
}

impl Classifier {
    /// A parser for Python.
    pub fn new() -> Self {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&language)
            .expect("the bundled grammar matches the tree-sitter version");
        Classifier { parser, parses: 0 }
    }

    /// The event stream of one whole file, `None` when it does not parse as
    /// Python 3 (bytes Python would not decode as `decode.rs` follows it,
    /// an error or missing node, Python 2 statements, an indentation Python
    /// would reject).
    pub fn stream(&mut self, source: &[u8]) -> Option<Stream<'static>> {
        let source = decode::prepare(Arc::new(source.to_vec())).filter(|s| limits::may_parse(s))?;
        let tree = self.parser.parse(source.as_slice(), None)?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        stream::build(root, &source, Kinds::get(), Skip::default()).map(Stream::into_owned)
    }

    /// Parses `source`; with `previous` (the file's older version),
    /// incrementally from its tree.
    /// A file Python would not decode (see `decode.rs`) or whose brackets
    /// nest too deep (`limits::may_parse`) is not parsed: it is known not to
    /// be valid.
    pub fn parse(&mut self, source: impl Into<Arc<Vec<u8>>>, previous: Option<&Parsed>) -> Parsed {
        let Some(source) = decode::prepare(source.into()).filter(|s| limits::may_parse(s)) else {
            return Parsed {
                tree: None,
                source: Arc::new(Vec::new()),
                valid: Cell::new(Some(false)),
            };
        };
        let old = previous.and_then(|p| {
            let mut tree = p.tree.clone()?;
            tree.edit(&edit_between(&p.source, &source));
            Some(tree)
        });
        let tree = self.parser.parse(source.as_slice(), old.as_ref());
        self.parses += 1;
        Parsed {
            tree,
            source,
            valid: Cell::new(None),
        }
    }

    /// How many files [`Classifier::parse`] parsed (for the history's
    /// statistics).
    pub fn parses(&self) -> usize {
        self.parses
    }

    /// How `new` differs from `old` (each parsed once, `new` incrementally).
    pub fn classify(&mut self, old: &[u8], new: &[u8]) -> ChangeKind {
        let old = self.parse(old.to_vec(), None);
        let new = self.parse(new.to_vec(), Some(&old));
        compare_parsed(&old, &new)
    }
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new()
    }
}

/// Compares two parsed versions (`code` when either does not parse), from
/// the statements where they differ (see `window.rs`): the same answer as
/// [`compare`] on the whole streams. Learns whether `new` parses when the
/// answer is cosmetic (it then does).
pub fn compare_parsed(old: &Parsed, new: &Parsed) -> ChangeKind {
    let (Some(ta), Some(tb)) = (&old.tree, &new.tree) else {
        return ChangeKind::Code;
    };
    let (ra, rb) = (ta.root_node(), tb.root_node());
    if ra.has_error() || rb.has_error() {
        return ChangeKind::Code;
    }
    let kinds = Kinds::get();
    let skip = window::skip((ta, &old.source[..]), (tb, &new.source[..]), kinds);
    let a = stream::build(ra, &old.source, kinds, skip);
    let b = stream::build(rb, &new.source, kinds, skip);
    // Built whole (nothing left out): the stream says whether it parses.
    if skip == Skip::default() {
        old.valid.set(Some(a.is_some()));
        new.valid.set(Some(b.is_some()));
    }
    // The left-out statements are the same on both sides: they parse in
    // the new file if they do in the old one (known for a file the history
    // compared before, so its next version need not be walked whole).
    if old.valid.get() == Some(true) {
        new.valid.set(Some(b.is_some()));
    }
    let (Some(a), Some(b)) = (a, b) else {
        return ChangeKind::Code;
    };
    let kind = compare(&a, &b);
    if kind.is_cosmetic() && old.is_valid() {
        new.valid.set(Some(true));
        kind
    } else {
        ChangeKind::Code
    }
}

/// The edit that turns `old` into `new`: the span between their common
/// prefix and common suffix. Lines are counted once through the prefix,
/// then through the changed bytes only.
fn edit_between(old: &[u8], new: &[u8]) -> tree_sitter::InputEdit {
    let (prefix, suffix) = window::shared(old, new);
    let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
    let start = advance(tree_sitter::Point { row: 0, column: 0 }, &old[..prefix]);
    tree_sitter::InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: start,
        old_end_position: advance(start, &old[prefix..old_end]),
        new_end_position: advance(start, &new[prefix..new_end]),
    }
}

/// The row and byte column, as tree-sitter counts them, after `text`
/// that starts at `from`.
fn advance(from: tree_sitter::Point, text: &[u8]) -> tree_sitter::Point {
    match text.iter().rposition(|b| *b == b'\n') {
        None => tree_sitter::Point {
            row: from.row,
            column: from.column + text.len(),
        },
        Some(last) => tree_sitter::Point {
            row: from.row + text.iter().filter(|b| **b == b'\n').count(),
            column: text.len() - last - 1,
        },
    }
}

/// Compares two whole streams.
pub fn compare(a: &Stream<'_>, b: &Stream<'_>) -> ChangeKind {
    if a.same_as(b, true) {
        ChangeKind::Layout
    } else if a.same_as(b, false) {
        ChangeKind::Docstrings
    } else {
        ChangeKind::Code
    }
}

/// Classifies one pair of files with a fresh parser.
pub fn classify(old: &[u8], new: &[u8]) -> ChangeKind {
    Classifier::new().classify(old, new)
}

#[cfg(test)]
mod tests;

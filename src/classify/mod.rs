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

use serde::Serialize;

mod apply;
mod indent;
mod stream;

pub use apply::{all_cosmetic, annotate, avoidable, avoidable_sentence};
pub use stream::Stream;

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
    kinds: stream::Kinds,
}

impl Classifier {
    /// A parser for Python.
    pub fn new() -> Self {
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&language)
            .expect("the bundled grammar matches the tree-sitter version");
        Classifier {
            parser,
            kinds: stream::Kinds::new(&language),
        }
    }

    /// The event stream of one file, `None` when it does not parse as
    /// Python 3 (an error or missing node, Python 2 statements, an
    /// indentation Python would reject).
    pub fn stream<'s>(&mut self, source: &'s [u8]) -> Option<Stream<'s>> {
        let tree = self.parser.parse(source, None)?;
        let root = tree.root_node();
        if root.has_error() || !indent::consistent(root, source, &self.kinds) {
            return None;
        }
        stream::build(root, source, &self.kinds)
    }

    /// How `new` differs from `old` (each parsed once).
    pub fn classify(&mut self, old: &[u8], new: &[u8]) -> ChangeKind {
        let Some(a) = self.stream(old) else {
            return ChangeKind::Code;
        };
        let Some(b) = self.stream(new) else {
            return ChangeKind::Code;
        };
        compare(&a, &b)
    }
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new()
    }
}

/// Compares two parsed files.
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

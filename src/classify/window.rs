//! Comparing two versions of a file where they differ, not everywhere.
//!
//! Two versions share a prefix and a suffix of bytes. A top-level statement
//! (a child of the module) that lies in the shared prefix at the same
//! offsets in both trees, or in the shared suffix at the same distance from
//! the end, with the same kind and extent, was parsed from the same bytes
//! in the same state (at the top level nothing is open: no bracket, string
//! or block), so its events are the same on both sides and need not be
//! built or compared: the streams are built for the children between (see
//! [`Skip`]). Building a whole stream walks every node of the file; this
//! walks the statements an edit touched.
//!
//! What the events of a child depend on besides its bytes is kept equal
//! too: a child left out of the suffix starts on a line whose line break
//! is inside the suffix (its indentation is compared by the stream and the
//! bytes before it on its line are the same), and on line 3 or later on
//! both sides (an encoding declaration counts on lines 1 and 2 only); the
//! first statement (the module docstring) is left out only when everything
//! up to it is. Whether the left-out children would parse as Python 3 is
//! the older side's whole-file check, which they share.

use tree_sitter::{Node, Tree};

use super::stream::{Kinds, Skip};

/// The children to leave out of the streams: the same counts on both
/// sides, since a child is left out only with its match on the other.
pub(super) fn skip(old: (&Tree, &[u8]), new: (&Tree, &[u8]), kinds: &Kinds) -> Skip {
    let (a, b) = (children(old.0.root_node()), children(new.0.root_node()));
    let (prefix, suffix) = shared(old.1, new.1);
    let lead = a
        .iter()
        .zip(&b)
        .take_while(|(x, y)| {
            x.kind_id() == y.kind_id()
                && x.start_byte() == y.start_byte()
                && x.end_byte() == y.end_byte()
                && x.end_byte() <= prefix
        })
        .count();
    let (first_a, first_b) = (first_statement(&a, kinds), first_statement(&b, kinds));
    let (a_suffix, b_suffix) = (old.1.len() - suffix, new.1.len() - suffix);
    let trail = a
        .iter()
        .enumerate()
        .rev()
        .zip(b.iter().enumerate().rev())
        .take_while(|((i, x), (j, y))| {
            *i >= lead
                && *j >= lead
                && *i > first_a
                && *j > first_b
                && x.kind_id() == y.kind_id()
                && x.end_byte() - x.start_byte() == y.end_byte() - y.start_byte()
                && x.start_byte().checked_sub(a_suffix) == y.start_byte().checked_sub(b_suffix)
                && x.start_byte() >= a_suffix
                && line_break_before(old.1, x.start_byte()).is_some_and(|at| at >= a_suffix)
                && x.start_position().row >= 2
                && y.start_position().row >= 2
        })
        .count();
    Skip { lead, trail }
}

/// The module's children, comments included.
fn children(root: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = root.walk();
    root.children(&mut cursor).collect()
}

/// The index of the module's first statement (its docstring, if it is
/// one), as the stream finds it; past the end when there is none.
fn first_statement(children: &[Node<'_>], kinds: &Kinds) -> usize {
    children
        .iter()
        .position(|c| c.is_named() && !c.is_extra() && c.kind_id() != kinds.comment)
        .unwrap_or(children.len())
}

/// The lengths of the longest shared prefix and of the longest shared
/// suffix that does not overlap it.
pub(super) fn shared(old: &[u8], new: &[u8]) -> (usize, usize) {
    let prefix = common_len(old, new, false);
    let (old, new) = (&old[prefix..], &new[prefix..]);
    (prefix, common_len(old, new, true))
}

/// How many bytes `a` and `b` share from their starts, or from their ends
/// (`from_end`). Blocks are compared as slices first (a `memcmp`), then the
/// bytes of the block that differs.
fn common_len(a: &[u8], b: &[u8], from_end: bool) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    // The `len` bytes that are `at` bytes in from the chosen end.
    let part = |s: &[u8], at: usize, len: usize| -> std::ops::Range<usize> {
        if from_end {
            s.len() - at - len..s.len() - at
        } else {
            at..at + len
        }
    };
    let mut same = 0;
    while same + BLOCK <= n && a[part(a, same, BLOCK)] == b[part(b, same, BLOCK)] {
        same += BLOCK;
    }
    while same < n && a[part(a, same, 1)] == b[part(b, same, 1)] {
        same += 1;
    }
    same
}

/// Where the line break that ends the line before `at`'s line is.
fn line_break_before(source: &[u8], at: usize) -> Option<usize> {
    source[..at]
        .iter()
        .rposition(|b| *b == b'\n' || *b == b'\r')
}

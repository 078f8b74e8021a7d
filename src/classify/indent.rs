//! Indentation Python would accept. tree-sitter's scanner builds blocks from
//! indentation but tolerates some that Python rejects (a dedent to a column
//! no outer block used, tabs mixed with spaces, an indented top-level
//! statement), so a whitespace edit could leave the same tree and a file
//! that no longer imports. This check is deliberately stricter than Python:
//! every line-starting statement of a block has byte-identical leading
//! whitespace, which strictly extends the leading whitespace of the line
//! that opens the block; clauses (`else:`, `except:`, a decorated `def`)
//! line up with their statement. A file that fails it counts as not parsing,
//! so its changes are `code`.
//!
//! The check runs during the stream's walk (one pass over the tree): each
//! open node is a [`Frame`] that sees its children as they are entered.

use tree_sitter::Node;

use super::stream::Kinds;

/// What an open node needs to check its children. The leading whitespace
/// of its lines is looked up only when a check needs it (for a block, or a
/// clause): most open nodes are expressions, which need neither.
pub(super) struct Frame {
    kind: u16,
    /// Where the node starts.
    start: usize,
    /// Where its parent starts (for a block: its statement).
    parent_start: Option<usize>,
    /// For a block: the whitespace of its first line-starting child.
    first: Option<(usize, usize)>,
    /// For a block: a child that does not start its line.
    inline: bool,
}

impl Frame {
    /// The frame of `node`, whose parent starts at `parent_start`.
    pub(super) fn new(node: Node<'_>, parent_start: Option<usize>) -> Frame {
        Frame {
            kind: node.kind_id(),
            start: node.start_byte(),
            parent_start,
            first: None,
            inline: false,
        }
    }

    /// Checks a child (not a comment) as it is entered.
    pub(super) fn child_ok(&mut self, child: Node<'_>, source: &[u8], kinds: &Kinds) -> bool {
        let text = |r: (usize, usize)| &source[r.0..r.1];
        if self.kind == kinds.module {
            let ws = line_start_whitespace(source, child.start_byte());
            return ws.is_none_or(|w| w.0 == w.1);
        }
        if self.kind == kinds.block {
            let Some(ws) = line_start_whitespace(source, child.start_byte()) else {
                self.inline = true;
                return true;
            };
            return match self.first {
                None => {
                    // The leading whitespace of the line of its statement.
                    let owner = self
                        .parent_start
                        .map_or((0, 0), |p| leading_whitespace(source, p));
                    let (w, owner) = (text(ws), text(owner));
                    self.first = Some(ws);
                    w.len() > owner.len() && w.starts_with(owner)
                }
                Some(f) => text(f) == text(ws),
            };
        }
        if !kinds.clauses.contains(&child.kind_id()) {
            return true;
        }
        let own = leading_whitespace(source, self.start);
        line_start_whitespace(source, child.start_byte()).is_none_or(|w| text(w) == text(own))
    }

    /// Checks what can only be known once all children were seen: `if x: a`
    /// then an indented `b` on the next line is "unexpected indent".
    pub(super) fn close_ok(&self) -> bool {
        !(self.inline && self.first.is_some())
    }
}

/// The whitespace before `at` (as a byte range) when only whitespace
/// precedes it on its line.
fn line_start_whitespace(source: &[u8], at: usize) -> Option<(usize, usize)> {
    let start = line_start(source, at);
    source[start..at]
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .then_some((start, at))
}

/// The whitespace that begins the line holding `at`, as a byte range.
fn leading_whitespace(source: &[u8], at: usize) -> (usize, usize) {
    let start = line_start(source, at);
    let len = source[start..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .count();
    (start, start + len)
}

fn line_start(source: &[u8], at: usize) -> usize {
    source[..at]
        .iter()
        .rposition(|b| *b == b'\n' || *b == b'\r')
        .map_or(0, |i| i + 1)
}

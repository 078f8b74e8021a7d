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

use tree_sitter::Node;

use super::stream::Kinds;

/// Whether every block of the tree is indented as described above.
pub(super) fn consistent(root: Node<'_>, source: &[u8], kinds: &Kinds) -> bool {
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        if !node_ok(node, source, kinds) {
            return false;
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                return true;
            }
        }
    }
}

/// Checks the children of `node` that start a line.
fn node_ok(node: Node<'_>, source: &[u8], kinds: &Kinds) -> bool {
    let kind = node.kind_id();
    let is_block = kind == kinds.block;
    let own = leading_whitespace(source, node.start_byte());
    let mut first: Option<&[u8]> = None;
    let mut inline = false;
    let mut cursor = node.walk();
    for child in node.children(&mut cursor).filter(|c| !c.is_extra()) {
        let ws = line_start_whitespace(source, child.start_byte());
        if kind == kinds.module {
            if ws.is_some_and(|w| !w.is_empty()) {
                return false;
            }
        } else if is_block {
            let Some(ws) = ws else {
                inline = true;
                continue;
            };
            match first {
                None => {
                    let owner = node
                        .parent()
                        .map_or(&[][..], |p| leading_whitespace(source, p.start_byte()));
                    if !(ws.len() > owner.len() && ws.starts_with(owner)) {
                        return false;
                    }
                    first = Some(ws);
                }
                Some(f) if f != ws => return false,
                Some(_) => {}
            }
        } else if kinds.clauses.contains(&child.kind_id()) && ws.is_some_and(|w| w != own) {
            return false;
        }
    }
    // `if x: a` then an indented `b` on the next line: Python says
    // "unexpected indent".
    !(inline && first.is_some())
}

/// The whitespace before `at` when only whitespace precedes it on its line.
fn line_start_whitespace(source: &[u8], at: usize) -> Option<&[u8]> {
    let start = line_start(source, at);
    let ws = &source[start..at];
    ws.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .then_some(ws)
}

/// The whitespace that begins the line holding `at`.
fn leading_whitespace(source: &[u8], at: usize) -> &[u8] {
    let start = line_start(source, at);
    let len = source[start..]
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .count();
    &source[start..start + len]
}

fn line_start(source: &[u8], at: usize) -> usize {
    source[..at]
        .iter()
        .rposition(|b| *b == b'\n' || *b == b'\r')
        .map_or(0, |i| i + 1)
}

//! Random edits of real Python files for the classifier's corpus tests
//! (`classify_corpus.rs`): cosmetic ones (comments, blank lines, spaces,
//! re-indented blocks, docstring text) and code ones (a number, a name, an
//! operator, a moved statement, a default argument). What each edit really
//! is, CPython decides; the intent only says which generator made it.

use tree_sitter::Node;

/// A deterministic generator (SplitMix64): the same edits on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.below(items.len())])
    }
}

/// An edit and what it should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intent {
    Cosmetic,
    Code,
}

pub struct Edit {
    pub what: &'static str,
    pub intent: Intent,
    pub text: Vec<u8>,
}

/// Leaves of the tree in order, strings as one leaf (their insides are
/// never edited by a "whitespace" edit).
fn leaves<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    if node.child_count() == 0 || node.kind() == "string" {
        out.push(node);
        return;
    }
    let mut c = node.walk();
    for child in node.children(&mut c) {
        leaves(child, out);
    }
}

fn all_nodes<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    out.push(node);
    let mut c = node.walk();
    for child in node.children(&mut c) {
        all_nodes(child, out);
    }
}

fn splice(src: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    let mut v = src[..start].to_vec();
    v.extend_from_slice(with);
    v.extend_from_slice(&src[end..]);
    v
}

fn line_start(src: &[u8], at: usize) -> usize {
    src[..at]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
}

/// A file and its tree, indexed for the edit generators.
pub struct Parsed<'s> {
    src: &'s [u8],
    leaves: Vec<Node<'s>>,
    nodes: Vec<Node<'s>>,
    /// Whether each byte is strictly inside a string literal.
    strings: Vec<bool>,
}

impl<'s> Parsed<'s> {
    /// Indexes `src`, whose tree's root is `root`.
    pub fn new(src: &'s [u8], root: Node<'s>) -> Self {
        let mut p = Parsed {
            src,
            leaves: Vec::new(),
            nodes: Vec::new(),
            strings: vec![false; src.len()],
        };
        leaves(root, &mut p.leaves);
        all_nodes(root, &mut p.nodes);
        for n in p.nodes.iter().filter(|n| n.kind() == "string") {
            p.strings[n.start_byte() + 1..n.end_byte()].fill(true);
        }
        p
    }
}

impl Parsed<'_> {
    fn in_string(&self, at: usize) -> bool {
        self.strings.get(at).copied().unwrap_or(false)
    }

    /// Line starts that are not inside a string and not after a backslash
    /// continuation.
    fn free_line_starts(&self) -> Vec<usize> {
        let mut out = vec![0];
        for (i, b) in self.src.iter().enumerate() {
            if *b == b'\n' && i + 1 < self.src.len() {
                let prev = self.src[..i].trim_ascii_end();
                if !self.in_string(i + 1) && !prev.ends_with(b"\\") {
                    out.push(i + 1);
                }
            }
        }
        out
    }

    fn docstrings(&self) -> Vec<Node<'_>> {
        self.nodes
            .iter()
            .filter(|n| matches!(n.kind(), "module" | "block"))
            .filter(|n| {
                n.kind() == "module"
                    || n.parent().is_some_and(|p| {
                        matches!(p.kind(), "function_definition" | "class_definition")
                    })
            })
            .filter_map(|body| {
                let mut c = body.walk();
                let first = body.named_children(&mut c).find(|n| n.kind() != "comment");
                first
            })
            .filter(|s| s.kind() == "expression_statement" && s.child_count() == 1)
            .filter_map(|s| s.child(0))
            .filter(|s| s.kind() == "string")
            .collect()
    }
}

/// A cosmetic edit of `p` (`None` when the picked kind has no spot).
pub fn cosmetic(p: &Parsed<'_>, rng: &mut Rng) -> Option<Edit> {
    let src = p.src;
    let edit = |what, text| {
        Some(Edit {
            what,
            intent: Intent::Cosmetic,
            text,
        })
    };
    match rng.below(7) {
        0 => {
            let at = rng.pick(&p.free_line_starts())?;
            let indent = " ".repeat(rng.below(9));
            edit(
                "comment line",
                splice(
                    src,
                    at,
                    at,
                    format!("{indent}# fpcheck was here\n").as_bytes(),
                ),
            )
        }
        1 => {
            let at = rng.pick(&p.free_line_starts())?;
            let blank = ["\n", "\n\n", "   \n", "\t\n"][rng.below(4)];
            edit("blank line", splice(src, at, at, blank.as_bytes()))
        }
        2 => {
            // A comment at the end of a line that does not continue.
            let ends: Vec<usize> = p
                .free_line_starts()
                .into_iter()
                .filter(|s| *s > 0)
                .map(|s| s - 1)
                .filter(|e| {
                    let prev = src[..*e].trim_ascii_end();
                    !prev.ends_with(b"\\") && !p.in_string(*e)
                })
                .collect();
            let at = rng.pick(&ends)?;
            edit("trailing comment", splice(src, at, at, b"  # note"))
        }
        3 | 4 => {
            // Spaces between two tokens of a line, or a newline between two
            // tokens inside brackets.
            let mut depth = 0i32;
            let mut spots = Vec::new();
            for w in p.leaves.windows(2) {
                let t = &src[w[0].start_byte()..w[0].end_byte()];
                match t {
                    b"(" | b"[" | b"{" => depth += 1,
                    b")" | b"]" | b"}" => depth -= 1,
                    _ => {}
                }
                let (end, next) = (w[0].end_byte(), w[1].start_byte());
                let same_line = !src[end..next].contains(&b'\n');
                let real =
                    !w[0].is_extra() && !w[1].is_extra() && w[0].kind() != "line_continuation";
                if same_line && real && !p.in_string(end) && next >= end {
                    spots.push((end, depth > 0));
                }
            }
            let (at, bracketed) = rng.pick(&spots)?;
            if bracketed && rng.below(2) == 0 {
                let indent = " ".repeat(rng.below(13));
                edit(
                    "newline in brackets",
                    splice(src, at, at, format!("\n{indent}").as_bytes()),
                )
            } else {
                edit("spaces between tokens", splice(src, at, at, b"   "))
            }
        }
        5 => {
            // Re-indent a whole block by two more spaces.
            if src.windows(2).any(|w| w == b"\n\t") {
                return None;
            }
            let blocks: Vec<&Node<'_>> = p
                .nodes
                .iter()
                .filter(|n| n.kind() == "block" && n.start_position().row < n.end_position().row)
                .filter(|n| line_start(src, n.start_byte()) < n.start_byte())
                .collect();
            let block = rng.pick(&blocks)?;
            let (from, to) = (line_start(src, block.start_byte()), block.end_byte());
            let mut out = Vec::new();
            let mut at_line_start = true;
            for (i, b) in src.iter().enumerate() {
                if at_line_start && i >= from && i < to && !p.in_string(i) && *b != b'\n' {
                    out.extend_from_slice(b"  ");
                }
                out.push(*b);
                at_line_start = *b == b'\n';
            }
            edit("re-indented block", out)
        }
        _ => {
            let doc = rng.pick(&p.docstrings())?;
            let text = &src[doc.start_byte()..doc.end_byte()];
            let quotes = text.iter().position(|b| *b == b'"' || *b == b'\'')?;
            let q = if text[quotes..].starts_with(b"\"\"\"") || text[quotes..].starts_with(b"'''") {
                3
            } else {
                1
            };
            let at = doc.start_byte() + quotes + q;
            edit(
                "docstring text",
                splice(src, at, at, b"Edited by fpcheck. "),
            )
        }
    }
}

/// A code edit of `p` (`None` when the picked kind has no spot).
pub fn code(p: &Parsed<'_>, rng: &mut Rng) -> Option<Edit> {
    let src = p.src;
    let text = |n: &Node<'_>| &src[n.start_byte()..n.end_byte()];
    let edit = |what, text| {
        Some(Edit {
            what,
            intent: Intent::Code,
            text,
        })
    };
    let of_kind = |kinds: &[&str]| -> Vec<Node<'_>> {
        p.leaves
            .iter()
            .filter(|n| kinds.contains(&n.kind()))
            .copied()
            .collect()
    };
    match rng.below(5) {
        0 => {
            let n = rng.pick(&of_kind(&["integer"]))?;
            let t = std::str::from_utf8(text(&n)).ok()?;
            let new = match t.parse::<u64>() {
                Ok(v) if !t.starts_with('0') => (v + 1).to_string(),
                _ if t == "0" => "1".to_string(),
                _ => return None,
            };
            edit(
                "changed number",
                splice(src, n.start_byte(), n.end_byte(), new.as_bytes()),
            )
        }
        1 => {
            let n = rng.pick(&of_kind(&["identifier"]))?;
            edit(
                "changed name",
                splice(src, n.end_byte(), n.end_byte(), b"_x"),
            )
        }
        2 => {
            let swaps: [(&str, &str); 8] = [
                ("+", "-"),
                ("-", "+"),
                ("*", "//"),
                ("==", "!="),
                ("!=", "=="),
                ("<", "<="),
                ("and", "or"),
                ("or", "and"),
            ];
            let ops: Vec<Node<'_>> = p
                .leaves
                .iter()
                .filter(|n| !n.is_named() && swaps.iter().any(|(a, _)| text(n) == a.as_bytes()))
                .copied()
                .collect();
            let n = rng.pick(&ops)?;
            let (_, to) = swaps.iter().find(|(a, _)| text(&n) == a.as_bytes())?;
            edit(
                "changed operator",
                splice(src, n.start_byte(), n.end_byte(), to.as_bytes()),
            )
        }
        3 => {
            // Swap two adjacent one-line statements of a block.
            let mut pairs = Vec::new();
            for body in p
                .nodes
                .iter()
                .filter(|n| matches!(n.kind(), "block" | "module"))
            {
                let mut c = body.walk();
                let stmts: Vec<Node<'_>> = body
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "comment")
                    .collect();
                for w in stmts.windows(2) {
                    let one_line = |n: &Node<'_>| n.start_position().row == n.end_position().row;
                    let starts = |n: &Node<'_>| line_start(src, n.start_byte());
                    if one_line(&w[0])
                        && one_line(&w[1])
                        && w[1].start_position().row == w[0].end_position().row + 1
                        && src[starts(&w[0])..w[0].start_byte()]
                            == src[starts(&w[1])..w[1].start_byte()]
                        && text(&w[0]) != text(&w[1])
                    {
                        pairs.push((w[0], w[1]));
                    }
                }
            }
            let (a, b) = rng.pick(&pairs)?;
            let mut out = src[..a.start_byte()].to_vec();
            out.extend_from_slice(text(&b));
            out.extend_from_slice(&src[a.end_byte()..b.start_byte()]);
            out.extend_from_slice(text(&a));
            out.extend_from_slice(&src[b.end_byte()..]);
            edit("moved statement", out)
        }
        _ => {
            let defaults: Vec<Node<'_>> = p
                .nodes
                .iter()
                .filter(|n| matches!(n.kind(), "default_parameter" | "typed_default_parameter"))
                .filter_map(|n| n.child_by_field_name("value"))
                .collect();
            let v = rng.pick(&defaults)?;
            let new: &[u8] = if text(&v) == b"None" { b"0" } else { b"None" };
            edit(
                "changed default argument",
                splice(src, v.start_byte(), v.end_byte(), new),
            )
        }
    }
}

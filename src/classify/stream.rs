//! A parsed file as a stream of syntax-tree events: entering and leaving
//! every node (so block nesting, i.e. indentation structure, is compared),
//! and every leaf token with its exact text. Comments and line continuations
//! leave no event; the whitespace between tokens leaves none either, unless
//! it holds anything but ASCII whitespace (tree-sitter's grammar also skips
//! a byte-order mark and Unicode spaces, which Python does not accept).
//!
//! A string literal is one leaf with its full text, prefix and quotes
//! included: its contents are a value, and an f-string's replacement fields
//! (where PEP 701 even allows comments) are compared byte for byte.

use tree_sitter::{Language, Node};

use super::indent::Frame;

/// Node kinds the stream needs to recognise, as grammar ids.
pub(super) struct Kinds {
    pub module: u16,
    pub block: u16,
    pub comment: u16,
    string: u16,
    concatenated_string: u16,
    expression_statement: u16,
    function_definition: u16,
    class_definition: u16,
    /// Python 2 statements the grammar still accepts.
    python2: [u16; 2],
    /// Parts of a compound statement that start a line at its indentation.
    pub clauses: IdSet,
    /// Nodes whose children can be statements, blocks or clauses.
    containers: IdSet,
}

/// A set of node kinds, looked up by id (every node of a file asks).
pub(super) struct IdSet(Vec<bool>);

impl IdSet {
    fn of(ids: impl IntoIterator<Item = u16>) -> IdSet {
        let mut set = Vec::new();
        for id in ids {
            let i = usize::from(id);
            if set.len() <= i {
                set.resize(i + 1, false);
            }
            set[i] = true;
        }
        IdSet(set)
    }

    pub(super) fn contains(&self, id: &u16) -> bool {
        self.0.get(usize::from(*id)).is_some_and(|b| *b)
    }
}

impl Kinds {
    /// The ids of the bundled Python grammar, looked up once.
    pub(super) fn get() -> &'static Kinds {
        static KINDS: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();
        KINDS.get_or_init(|| Kinds::new(&tree_sitter_python::LANGUAGE.into()))
    }

    fn new(language: &Language) -> Self {
        let id = |name: &str| {
            let id = language.id_for_node_kind(name, true);
            assert!(id != 0, "the Python grammar has no `{name}` node");
            id
        };
        Kinds {
            module: id("module"),
            block: id("block"),
            comment: id("comment"),
            string: id("string"),
            concatenated_string: id("concatenated_string"),
            expression_statement: id("expression_statement"),
            function_definition: id("function_definition"),
            class_definition: id("class_definition"),
            python2: [id("print_statement"), id("exec_statement")],
            clauses: IdSet::of(
                [
                    "elif_clause",
                    "else_clause",
                    "except_clause",
                    "finally_clause",
                    "function_definition",
                    "class_definition",
                    "decorator",
                    "case_clause",
                ]
                .map(id),
            ),
            containers: IdSet::of(
                [
                    "module",
                    "block",
                    "case_clause",
                    "class_definition",
                    "decorated_definition",
                    "elif_clause",
                    "else_clause",
                    "except_clause",
                    "finally_clause",
                    "for_statement",
                    "function_definition",
                    "if_statement",
                    "match_statement",
                    "try_statement",
                    "while_statement",
                    "with_statement",
                ]
                .map(id),
            ),
        }
    }
}

const OPEN: u32 = 1 << 16;
const CLOSE: u32 = 2 << 16;
const LEAF: u32 = 3 << 16;
const GAP: u32 = 4 << 16;
const SKIP: u32 = 5 << 16;

#[derive(Clone, Copy, Debug)]
struct Event {
    /// OPEN/LEAF | kind id, CLOSE, GAP or SKIP.
    tag: u32,
    /// Byte offsets (files over 4 GiB do not parse).
    start: u32,
    end: u32,
    /// Part of a docstring statement.
    doc: bool,
}

/// One file's events, with its bytes.
pub struct Stream<'s> {
    source: &'s [u8],
    events: Vec<Event>,
}

impl Stream<'_> {
    /// Equal event by event; `with_docs: false` skips docstring statements.
    pub fn same_as(&self, other: &Stream<'_>, with_docs: bool) -> bool {
        let keep = |e: &&Event| with_docs || !e.doc;
        let mut a = self.events.iter().filter(keep);
        let mut b = other.events.iter().filter(keep);
        loop {
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if self.same_event(x, other, y) => {}
                _ => return false,
            }
        }
    }

    fn same_event(&self, x: &Event, other: &Stream<'_>, y: &Event) -> bool {
        if x.tag != y.tag {
            return false;
        }
        let (tx, ty) = (
            &self.source[x.start as usize..x.end as usize],
            &other.source[y.start as usize..y.end as usize],
        );
        match x.tag & !0xffff {
            LEAF => tx == ty,
            GAP => significant(tx).eq(significant(ty)),
            _ => true,
        }
    }

    /// How many events (for tests and curiosity).
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether there are none (never, for a parsed file: the module opens).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

/// The bytes of a gap Python does not skip as whitespace.
fn significant(gap: &[u8]) -> impl Iterator<Item = &u8> {
    gap.iter().filter(|b| !is_python_space(**b))
}

/// Python's whitespace between tokens (and line ends).
pub(super) fn is_python_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\x0c' | b'\r' | b'\n')
}

/// Module children left out of a stream: the first `lead` and the last
/// `trail`, known to be the same on both sides of a comparison (see
/// `window.rs`). Each leaves one `SKIP` event where its events would be, so
/// that comparing two windowed streams answers exactly what comparing the
/// whole streams would.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Skip {
    pub lead: usize,
    pub trail: usize,
}

/// Builds the stream of a tree without errors; `None` for Python 2 or for
/// indentation Python rejects (in the children it walks: a [`Skip`]ped one
/// is not checked).
pub(super) fn build<'s>(
    root: Node<'_>,
    source: &'s [u8],
    kinds: &Kinds,
    skip: Skip,
) -> Option<Stream<'s>> {
    u32::try_from(source.len()).ok()?;
    let mut b = Builder {
        source,
        kinds,
        events: Vec::new(),
        last_end: 0,
        docs: Vec::new(),
        open: Vec::new(),
        frames: Vec::new(),
        indent_ok: true,
        in_doc: 0,
    };
    if b.enter(root)? {
        let children = root.child_count();
        let mut cursor = root.walk();
        let mut more = cursor.goto_first_child();
        let mut i = 0;
        while more {
            let node = cursor.node();
            if i < skip.lead || i + skip.trail >= children {
                b.skip(node);
            } else {
                b.walk(node)?;
            }
            i += 1;
            more = cursor.goto_next_sibling();
        }
        b.close(root);
    }
    b.gap(source.len());
    if !b.indent_ok {
        return None;
    }
    Some(Stream {
        source,
        events: b.events,
    })
}

/// Whether a whole tree parses as Python 3 by the checks [`build`] makes
/// (no error, no Python 2 statement, indentation Python accepts), without
/// building events: only the nodes that can hold statements are visited,
/// since every check is about statements and clauses.
pub(super) fn valid(root: Node<'_>, source: &[u8], kinds: &Kinds) -> bool {
    if root.has_error() {
        return false;
    }
    // Each visited container's checker, with where it starts.
    let mut frames = vec![(Frame::new(root, None, source), root.start_byte())];
    let mut cursor = root.walk();
    if !cursor.goto_first_child() {
        return true;
    }
    loop {
        let child = cursor.node();
        if !child.is_extra() {
            let kind = child.kind_id();
            let Some((frame, start)) = frames.last_mut() else {
                return false;
            };
            if kinds.python2.contains(&kind) || !frame.child_ok(child, source, kinds) {
                return false;
            }
            let start = *start;
            if kinds.containers.contains(&kind) && cursor.goto_first_child() {
                frames.push((Frame::new(child, Some(start), source), child.start_byte()));
                continue;
            }
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return true;
            }
            match frames.pop() {
                Some((frame, _)) if frame.close_ok() => {}
                _ => return false,
            }
        }
    }
}

struct Builder<'s, 'k, 't> {
    source: &'s [u8],
    kinds: &'k Kinds,
    events: Vec<Event>,
    /// Where the last leaf (comments included) ended.
    last_end: usize,
    /// Docstring statements found so far, waiting to be entered.
    docs: Vec<Node<'t>>,
    /// For each open node, whether it is a docstring statement.
    open: Vec<bool>,
    /// For each open node, its indentation checker.
    frames: Vec<(Frame, usize)>,
    /// No indentation Python would reject was seen.
    indent_ok: bool,
    in_doc: usize,
}

impl<'t> Builder<'_, '_, 't> {
    /// Emits the events of `node` and everything below it.
    fn walk(&mut self, node: Node<'t>) -> Option<()> {
        let mut cursor = node.walk();
        'walk: loop {
            let at = cursor.node();
            if self.enter(at)? && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.depth() == 0 {
                    break 'walk;
                }
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                cursor.goto_parent();
                self.close(cursor.node());
            }
        }
        Some(())
    }

    /// Stands in for a module child known to be equal on both sides: one
    /// `SKIP` event where its first event would be (after the gap before
    /// it for a token or comment, before it for a node that opens).
    fn skip(&mut self, node: Node<'t>) {
        let leaf =
            node.is_extra() || node.child_count() == 0 || node.kind_id() == self.kinds.string;
        if leaf {
            self.gap(node.start_byte());
        }
        self.push(SKIP, node.start_byte(), node.start_byte());
        if !leaf {
            self.gap(node.start_byte());
        }
        self.last_end = node.end_byte();
    }

    /// Emits the events of entering `node`; `Some(true)` to walk its
    /// children, `None` for a construct Python 3 rejects.
    fn enter(&mut self, node: Node<'t>) -> Option<bool> {
        let kind = node.kind_id();
        if self.kinds.python2.contains(&kind) {
            return None;
        }
        if node.is_extra() {
            self.gap(node.start_byte());
            self.last_end = node.end_byte();
            if kind == self.kinds.comment && is_encoding_declaration(node, self.source) {
                // It decides how every other byte is decoded.
                self.push(LEAF | u32::from(kind), node.start_byte(), node.end_byte());
            }
            return Some(false);
        }
        if let Some((frame, _)) = self.frames.last_mut() {
            self.indent_ok &= frame.child_ok(node, self.source, self.kinds);
        }
        // An empty module still opens and closes, as one holding only
        // comments does.
        let leaf =
            (node.child_count() == 0 && kind != self.kinds.module) || kind == self.kinds.string;
        if leaf {
            self.gap(node.start_byte());
            self.push(LEAF | u32::from(kind), node.start_byte(), node.end_byte());
            self.last_end = node.end_byte();
            return Some(false);
        }
        self.find_docstring(node);
        let is_doc = match self.docs.iter().position(|d| *d == node) {
            Some(i) => {
                self.docs.swap_remove(i);
                true
            }
            None => false,
        };
        if is_doc {
            self.in_doc += 1;
        }
        self.open.push(is_doc);
        let parent_start = self.frames.last().map(|(_, start)| *start);
        self.frames.push((
            Frame::new(node, parent_start, self.source),
            node.start_byte(),
        ));
        self.push(OPEN | u32::from(kind), node.start_byte(), node.start_byte());
        Some(true)
    }

    fn close(&mut self, node: Node<'t>) {
        self.push(CLOSE, node.end_byte(), node.end_byte());
        if let Some((frame, _)) = self.frames.pop() {
            self.indent_ok &= frame.close_ok();
        }
        if self.open.pop() == Some(true) {
            self.in_doc -= 1;
        }
    }

    fn push(&mut self, tag: u32, start: usize, end: usize) {
        // `build` checked that every offset fits.
        self.events.push(Event {
            tag,
            start: start as u32,
            end: end as u32,
            doc: self.in_doc > 0,
        });
    }

    /// The bytes between the last leaf and `until`, when they are not all
    /// whitespace.
    fn gap(&mut self, until: usize) {
        let start = self.last_end.min(until);
        if significant(&self.source[start..until]).next().is_some() {
            self.push(GAP, start, until);
        }
    }

    /// Notes the docstring statement of a module, class or function body.
    fn find_docstring(&mut self, node: Node<'t>) {
        let k = self.kinds;
        let kind = node.kind_id();
        let body = if kind == k.module {
            Some(node)
        } else if kind == k.function_definition || kind == k.class_definition {
            node.child_by_field_name("body")
        } else {
            None
        };
        let Some(body) = body else { return };
        let mut cursor = body.walk();
        let first = body
            .named_children(&mut cursor)
            .find(|c| !c.is_extra() && c.kind_id() != k.comment);
        if let Some(stmt) = first.filter(|s| self.is_docstring(*s)) {
            self.docs.push(stmt);
        }
    }

    /// A statement that is only a plain string literal (implicit
    /// concatenation included; not an f-string, t-string or bytes).
    fn is_docstring(&self, stmt: Node<'_>) -> bool {
        let k = self.kinds;
        if stmt.kind_id() != k.expression_statement {
            return false;
        }
        let mut cursor = stmt.walk();
        let mut children = stmt.children(&mut cursor).filter(|c| !c.is_extra());
        let (Some(expr), None) = (children.next(), children.next()) else {
            return false;
        };
        let plain = |s: Node<'_>| s.kind_id() == k.string && plain_prefix(s, self.source);
        if expr.kind_id() == k.concatenated_string {
            let mut cursor = expr.walk();
            let parts: Vec<Node<'_>> = expr
                .children(&mut cursor)
                .filter(|c| !c.is_extra())
                .collect();
            !parts.is_empty() && parts.into_iter().all(plain)
        } else {
            plain(expr)
        }
    }
}

/// Whether a string literal's prefix leaves it a plain `str` constant.
fn plain_prefix(string: Node<'_>, source: &[u8]) -> bool {
    let text = &source[string.start_byte()..string.end_byte()];
    let quote = text.iter().position(|b| *b == b'"' || *b == b'\'');
    let prefix = &text[..quote.unwrap_or(text.len())];
    prefix
        .iter()
        .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'u'))
}

/// A comment on one of the first two lines that mentions `coding` (PEP 263
/// decides the encoding from it; any such comment counts, to be safe).
fn is_encoding_declaration(comment: Node<'_>, source: &[u8]) -> bool {
    comment.start_position().row < 2
        && source[comment.start_byte()..comment.end_byte()]
            .windows(6)
            .any(|w| w == b"coding")
}

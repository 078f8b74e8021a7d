//! Data files: a file under the runtime root that is not Python source,
//! read by a runtime module by a literal name.
//!
//! Read in every runtime module (a Python file the newer end's rules
//! select) under the root (all count as reachable: the import graph is
//! not read yet, which errs towards advice): the string literals given to `open`, `Path`,
//! `with_name`, `joinpath`, `read_text`, `read_bytes`, `open_text`,
//! `open_binary`, `read_binary`, `get_data` (`pkgutil`), `os.path.join`
//! (its literals joined), and the literal parts of a path built with
//! `/` (`Path(__file__).parent / "data" / "x.json"`). A changed file
//! matches a literal naming it or ending its path (`lock.json` names
//! `src/managed_mcp/lock.json`). Not seen: names built at run time
//! (f-strings, variables), files read by a subprocess or a library.

use std::sync::Arc;

use ruff_python_ast::visitor::{walk_expr, Visitor};
use ruff_python_ast::{Expr, ModModule, Operator};
use ruff_text_size::Ranged;

use super::{tree, AdviceCause, AdviceKind, Inflated, Item, Memo, Update};
use crate::source::git::Session;

/// A literal file name a module reads, and the line (from 1) reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Read {
    name: String,
    line: usize,
}

/// Calls whose string arguments name a file.
const READERS: [&str; 11] = [
    "open",
    "Path",
    "with_name",
    "joinpath",
    "read_text",
    "read_bytes",
    "open_text",
    "open_binary",
    "read_binary",
    "get_data",
    "join",
];

struct Finder {
    lines: super::Lines,
    reads: Vec<Read>,
}

impl Finder {
    fn note(&mut self, name: String, at: usize) {
        let name = name.trim_start_matches("./").to_string();
        if !name.is_empty() {
            let line = self.lines.line(at);
            self.reads.push(Read { name, line });
        }
    }
}

/// The literal parts of a path built with `/`, outermost last; empty
/// when its right-hand side is not a string.
fn segments(expr: &Expr) -> Vec<String> {
    match expr {
        Expr::BinOp(b) if b.op == Operator::Div => match &*b.right {
            Expr::StringLiteral(s) => {
                let mut parts = segments(&b.left);
                parts.push(s.value.to_str().to_string());
                parts
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

impl<'a> Visitor<'a> for Finder {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Call(call) => {
                let name = match &*call.func {
                    Expr::Name(n) => n.id.as_str(),
                    Expr::Attribute(a) => a.attr.as_str(),
                    _ => "",
                };
                if READERS.contains(&name) {
                    let literals: Vec<String> = (call.arguments.args.iter())
                        .filter_map(|a| match a {
                            Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
                            _ => None,
                        })
                        .collect();
                    let at = expr.start().to_usize();
                    if name == "join" && literals.len() > 1 {
                        self.note(literals.join("/"), at);
                    }
                    for l in literals {
                        self.note(l, at);
                    }
                }
            }
            Expr::BinOp(_) => {
                let parts = segments(expr);
                if !parts.is_empty() {
                    self.note(parts.join("/"), expr.start().to_usize());
                    if let Some(last) = parts.last().filter(|_| parts.len() > 1) {
                        self.note(last.clone(), expr.start().to_usize());
                    }
                }
            }
            _ => {}
        }
        walk_expr(self, expr);
    }
}

fn reads_of(module: &ModModule, text: &str) -> Vec<Read> {
    let mut finder = Finder {
        lines: super::Lines::of(text),
        reads: Vec::new(),
    };
    finder.visit_body(&module.body);
    finder.reads
}

/// Whether literal `name` names the file at `path` (below the root).
fn names(name: &str, path: &str) -> bool {
    path == name || path.ends_with(&format!("/{name}"))
}

/// The data-file advice of a free release: one item per changed data
/// file some module reads.
pub(super) fn advise(repo: &Session, u: &Update<'_>, memo: &mut Memo) -> Vec<Item> {
    let roots = (
        tree::subtree(repo, u.trees.from, u.root),
        tree::subtree(repo, u.trees.to, u.root),
    );
    let runtime = |p: &str| u.runtime.has(p);
    let data: Vec<String> = tree::changed(repo, roots.0, roots.1)
        .into_iter()
        .map(|(path, ..)| path)
        .filter(|p| !runtime(p) && !crate::classify::is_python_source(p))
        .collect();
    if data.is_empty() {
        return Vec::new();
    }
    let all = match u.runtime {
        super::Runtime::Selection(ids) => ids.iter().map(|(p, id)| (p.clone(), *id)).collect(),
        super::Runtime::Rules(_) => roots
            .1
            .map(|root| tree::walk(repo, root, None))
            .unwrap_or_default(),
    };
    let modules: Vec<(String, gix::ObjectId)> = all
        .into_iter()
        .filter(|(p, _)| runtime(p) && crate::classify::is_python_source(p))
        .collect();
    let reads = module_reads((repo, u.inflated), (&modules, &data), memo);
    let mut items = Vec::new();
    for file in &data {
        let mut readers: Vec<String> = modules
            .iter()
            .zip(&reads)
            .flat_map(|((module, _), reads)| {
                reads
                    .iter()
                    .filter(|r| names(&r.name, file))
                    .map(move |r| format!("{}:{}", super::join(u.root, module), r.line))
            })
            .collect();
        readers.dedup();
        if readers.is_empty() {
            continue;
        }
        let shown = super::join(u.root, file);
        items.push(Item {
            kind: AdviceKind::PossibleMissedRestart,
            cause: AdviceCause::DataFile,
            message: format!(
                "possible missed restart: {shown} changed and {} reads it; running servers keep \
                 what they read until they restart; set force_restart",
                readers[0]
            ),
            evidence: readers,
            changes: vec![shown],
        });
    }
    items
}

/// The reads of each module, parsed once per run (by blob id). Only a
/// module whose text holds the name of one of `data` can name it (a
/// literal naming a file ends with its name): the others are not parsed.
fn module_reads(
    (repo, inflated): (&Session, Inflated<'_>),
    (modules, data): (&[(String, gix::ObjectId)], &[String]),
    memo: &mut Memo,
) -> Vec<Arc<Vec<Read>>> {
    let names: Vec<&str> = data
        .iter()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .collect();
    let mut todo: Vec<(gix::ObjectId, String)> = Vec::new();
    for (_, id) in modules
        .iter()
        .filter(|(_, id)| !memo.reads.contains_key(id))
    {
        let text = match memo.names.get(id) {
            Some(runs) => names
                .iter()
                .any(|n| !plain(n) || runs.binary_search(&name_hash(n.as_bytes())).is_ok())
                .then(|| module_text(repo, inflated, *id))
                .flatten(),
            None => {
                let Some(text) = module_text(repo, inflated, *id) else {
                    continue;
                };
                memo.names.insert(*id, Arc::new(file_names(&text)));
                names.iter().any(|n| text.contains(n)).then_some(text)
            }
        };
        if let Some(text) = text {
            todo.push((*id, text));
        }
    }
    let texts: Vec<&str> = todo.iter().map(|(_, t)| t.as_str()).collect();
    let found = crate::classify::read_modules(&texts, reads_of);
    for ((id, _), reads) in todo.iter().zip(found) {
        memo.reads.insert(*id, Arc::new(reads.unwrap_or_default()));
    }
    modules
        .iter()
        .map(|(_, id)| memo.reads.get(id).cloned().unwrap_or_default())
        .collect()
}

/// The text of module `id` as [`tree::text`] reads it, from the bytes the
/// caller already inflated when it kept them (a blob is read once a run).
fn module_text(repo: &Session, inflated: Inflated<'_>, id: gix::ObjectId) -> Option<String> {
    match inflated(id) {
        Some(kept) => (kept.len() as u64 <= tree::FILE_LIMIT)
            .then(|| String::from_utf8(kept.to_vec()).ok())
            .flatten(),
        None => tree::text(repo, id),
    }
}

/// Whether a file name is made only of the characters [`file_names`]
/// keeps together (else a module's text is searched for it).
fn plain(name: &str) -> bool {
    name.contains('.') && name.bytes().all(name_byte)
}

fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
}

/// The runs of file-name characters holding a dot in `text`, as their
/// [`name_hash`]es, sorted: a literal naming a file holds its name as such
/// a run (between quotes or after a `/`). Remembered by blob id, so that a
/// module is read once however many releases it lives through. Hashes, not
/// the runs themselves: a module holds thousands (`self.x`), and two names
/// sharing a hash only cost a parse, which then compares the names.
fn file_names(text: &str) -> Vec<u64> {
    // By bytes: a non-ASCII character's bytes are none of a name's.
    let mut runs: Vec<u64> = (text.as_bytes())
        .split(|b| !name_byte(*b))
        .filter(|r| r.contains(&b'.'))
        .map(name_hash)
        .collect();
    runs.sort_unstable();
    runs.dedup();
    runs
}

/// A run's 64-bit FNV-1a hash: short runs, hashed by the thousand.
fn name_hash(run: &[u8]) -> u64 {
    run.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(source: &str) -> Vec<(String, usize)> {
        crate::classify::read_modules(&[source], reads_of)[0]
            .clone()
            .unwrap()
            .into_iter()
            .map(|r| (r.name, r.line))
            .collect()
    }

    #[test]
    fn literal_readers_are_found() {
        let source = "from pathlib import Path\n\
                      LOCK = Path(__file__).with_name(\"lock.json\")\n\
                      DATA = Path(__file__).parent / \"data\" / \"x.csv\"\n\
                      def f():\n    return open(\"./cfg.yaml\").read()\n\
                      T = pkgutil.get_data(__name__, \"t.txt\")\n\
                      name = compute()\nopen(name)\n";
        let expected = [
            ("lock.json", 2),
            ("data/x.csv", 3),
            ("x.csv", 3),
            ("data", 3),
            ("cfg.yaml", 5),
            ("t.txt", 6),
        ];
        let expected: Vec<(String, usize)> =
            expected.iter().map(|(n, l)| (n.to_string(), *l)).collect();
        assert_eq!(reads(source), expected);
        assert!(names("lock.json", "managed_mcp/lock.json"));
        assert!(!names("lock.json", "managed_mcp/block.json"));
    }

    #[test]
    fn a_module_holds_the_names_it_reads() {
        let text = "LOCK = Path(__file__).with_name(\"lock.json\")\n\
                    DATA = open(\"data/x.csv\")\nself.value = \"é.json\"\n";
        let runs = file_names(text);
        let holds = |n: &str| plain(n) && runs.binary_search(&name_hash(n.as_bytes())).is_ok();
        assert!(holds("lock.json"));
        assert!(holds("x.csv"));
        assert!(holds("self.value"));
        assert!(!holds("lock.jso"));
        assert!(!holds("block.json"));
        assert!(!holds("data/x.csv"));
        // "é.json" is cut at the accent: its ASCII tail is a run.
        assert!(holds(".json"));
    }
}

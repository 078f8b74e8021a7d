//! The MCP surface clients see: the functions registered as tools,
//! resources or prompts (see `classify::mcp` for the decorators read),
//! at both ends of each changed runtime module, by kind and name: added,
//! removed, and changed (how it is registered, its signature, its
//! description: the decorator's `description=` literal, else the
//! docstring). Clients must re-initialise to see a change.

use std::collections::BTreeMap;
use std::sync::Arc;

use ruff_python_ast::visitor::{walk_stmt, Visitor};
use ruff_python_ast::{Expr, ModModule, Stmt};
use ruff_text_size::Ranged;

use super::{tree, AdviceCause, AdviceKind, Item, Memo, Update};
use crate::classify::mcp;
use crate::source::git::Session;

/// One registered function, as clients see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Registered {
    kind: mcp::Registration,
    name: String,
    /// The decorator's text, spaces collapsed.
    registration: String,
    /// `(parameters) -> returns`, spaces collapsed.
    signature: String,
    description: Option<String>,
    line: usize,
}

struct Finder<'a> {
    text: &'a str,
    lines: super::Lines,
    found: Vec<Registered>,
}

/// `text` with runs of whitespace made one space.
fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn literal(expr: &Expr) -> Option<String> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
        _ => None,
    }
}

impl<'a> Visitor<'a> for Finder<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if let Stmt::FunctionDef(f) = stmt {
            if let Some((kind, decorator)) = mcp::registered(&f.decorator_list) {
                let keyword = |name: &str| match &decorator.expression {
                    Expr::Call(call) => call
                        .arguments
                        .keywords
                        .iter()
                        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
                        .and_then(|k| literal(&k.value)),
                    _ => None,
                };
                let docstring = match f.body.first() {
                    Some(Stmt::Expr(e)) => literal(&e.value),
                    _ => None,
                };
                let params = &self.text[f.parameters.range().to_std_range()];
                let returns = f
                    .returns
                    .as_ref()
                    .map(|r| format!(" -> {}", &self.text[r.range().to_std_range()]))
                    .unwrap_or_default();
                self.found.push(Registered {
                    kind,
                    name: keyword("name").unwrap_or_else(|| f.name.to_string()),
                    registration: collapsed(&self.text[decorator.range().to_std_range()]),
                    signature: collapsed(&format!("{params}{returns}")),
                    description: keyword("description").or(docstring).map(|d| collapsed(&d)),
                    line: self.lines.line(f.name.start().to_usize()),
                });
            }
        }
        walk_stmt(self, stmt);
    }
}

fn registered_in(module: &ModModule, text: &str) -> Vec<Registered> {
    let mut finder = Finder {
        text,
        lines: super::Lines::of(text),
        found: Vec::new(),
    };
    finder.visit_body(&module.body);
    finder.found
}

/// The registered functions of blob `id`, parsed once per run.
fn read(repo: &Session, memo: &mut Memo, id: Option<gix::ObjectId>) -> Arc<Vec<Registered>> {
    let Some(id) = id else {
        return Arc::default();
    };
    if let Some(found) = memo.tools.get(&id) {
        return found.clone();
    }
    let text = tree::text(repo, id).unwrap_or_default();
    // Cheap: a module that never names a registering attribute has none.
    let found = if [".tool", ".resource", ".prompt"]
        .iter()
        .any(|w| text.contains(w))
    {
        crate::classify::read_modules(&[&text], registered_in)
            .pop()
            .flatten()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let found = Arc::new(found);
    memo.tools.insert(id, found.clone());
    found
}

/// What changed in the MCP surface: one item per function added,
/// removed or changed, in order of kind and name.
pub(super) fn advise(repo: &Session, u: &Update<'_>, memo: &mut Memo) -> Vec<Item> {
    let roots = (
        tree::subtree(repo, u.trees.from, u.root),
        tree::subtree(repo, u.trees.to, u.root),
    );
    type Side = BTreeMap<(mcp::Registration, String), (String, Registered)>;
    let (mut old, mut new): (Side, Side) = Default::default();
    for (path, from, to) in tree::changed(repo, roots.0, roots.1) {
        if !crate::classify::is_python_source(&path) {
            continue;
        }
        let shown = super::join(u.root, &path);
        for (side, id) in [(&mut old, from), (&mut new, to)] {
            for r in read(repo, memo, id).iter() {
                side.insert((r.kind, r.name.clone()), (shown.clone(), r.clone()));
            }
        }
    }
    let mut keys: Vec<_> = old.keys().chain(new.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    let mut items = Vec::new();
    for key in keys {
        let (kind, name) = (&key.0, &key.1);
        let what = format!("{} `{name}`", kind.as_str());
        let item = |cause, message: String, (path, r): &(String, Registered), changes| Item {
            kind: AdviceKind::McpSurface,
            cause,
            message,
            evidence: vec![format!("{path}:{}", r.line)],
            changes,
        };
        match (old.get(&key), new.get(&key)) {
            (None, Some(n)) => items.push(item(
                AdviceCause::Added,
                format!("{what} added; clients see it once they re-initialise"),
                n,
                vec![format!("{name}{}", n.1.signature)],
            )),
            (Some(o), None) => items.push(item(
                AdviceCause::Removed,
                format!("{what} removed; clients see it gone once they re-initialise"),
                o,
                Vec::new(),
            )),
            (Some(o), Some(n)) => {
                let mut changes = Vec::new();
                if o.1.registration != n.1.registration {
                    changes.push(format!(
                        "registration: {} → {}",
                        o.1.registration, n.1.registration
                    ));
                }
                if o.1.signature != n.1.signature {
                    changes.push(format!("signature: {} → {}", o.1.signature, n.1.signature));
                }
                if o.1.description != n.1.description {
                    changes.push("description changed".to_string());
                }
                if !changes.is_empty() {
                    items.push(item(
                        AdviceCause::Changed,
                        format!("{what} changed; clients see it once they re-initialise"),
                        n,
                        changes,
                    ));
                }
            }
            (None, None) => {}
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(source: &str) -> Vec<(String, String, Option<String>, usize)> {
        crate::classify::read_modules(&[source], registered_in)[0]
            .clone()
            .unwrap()
            .into_iter()
            .map(|r| (r.name, r.signature, r.description, r.line))
            .collect()
    }

    #[test]
    fn registered_functions_are_read_and_others_are_not() {
        let source = "import functools\n\
                      @mcp.tool\ndef search(q: str, n: int = 3) -> list:\n    \"\"\"Find things.\"\"\"\n\n\
                      @server.tool(name=\"ping2\", description=\"Ping it\")\nasync def ping():\n    pass\n\
                      @functools.cache\ndef cached(x):\n    \"\"\"Not a tool.\"\"\"\n";
        assert_eq!(
            found(source),
            [
                (
                    "search".to_string(),
                    "(q: str, n: int = 3) -> list".to_string(),
                    Some("Find things.".to_string()),
                    3
                ),
                (
                    "ping2".to_string(),
                    "()".to_string(),
                    Some("Ping it".to_string()),
                    7
                ),
            ]
        );
    }
}

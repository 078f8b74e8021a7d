//! What Python code imports, and where that code lies in a tree.
//!
//! Three small steps, each usable alone: [`imports_of`] reads the imports
//! of one Python source with Ruff's parser (nothing is executed);
//! [`resolve`] finds a module's file inside a tree, as Python's path
//! search would from the given search roots (packages, namespace packages,
//! relative imports); [`closure`] follows them from entry files to every
//! file of the tree they reach. Modules that are not in the tree (the
//! standard library, installed packages) are left unresolved: the tree is
//! all that is read.
//!
//! Reading is bounded: a file over [`MAX_SOURCE`] bytes, or one whose
//! tokens could make the recursive parser run deep (`classify`'s limits),
//! has no imports read; the parse runs on a thread with a large reserved
//! stack, and a panic in the parser is a file that does not parse.

use std::collections::{BTreeMap, BTreeSet};

use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{Expr, Stmt};

/// Sources larger than this are not parsed (their imports are not read).
pub const MAX_SOURCE: usize = 4 << 20;

/// The parse thread's stack: reserved, touched only as deep as a file
/// needs (see `classify`'s parser, whose limits apply here too).
const STACK: usize = 128 << 20;

/// One import statement (or call) of a source.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Import {
    /// The dotted module (`a.b`; empty for `from . import x`).
    pub module: String,
    /// How many leading dots: 0 for an absolute import.
    pub level: u32,
    /// The names of `from M import n1, n2` (each may be a submodule);
    /// empty for `import M` and `import_module("M")`.
    pub names: Vec<String>,
}

/// The imports of one Python source, in the order written: `import a.b`,
/// `from .x import y` (any level), wherever they stand (inside functions,
/// conditionals, `try`), and `importlib.import_module("m")` or
/// `__import__("m")` with a literal name. `None` when the source is not
/// read (too large, not UTF-8, not Python, too deep to parse safely).
pub fn imports_of(source: &[u8]) -> Option<Vec<Import>> {
    if source.len() > MAX_SOURCE {
        return None;
    }
    let text = std::str::from_utf8(source).ok()?.to_string();
    let parse = move || {
        std::panic::catch_unwind(|| parse_imports(&text))
            .ok()
            .flatten()
    };
    std::thread::Builder::new()
        .name("fpcheck-imports".into())
        .stack_size(STACK)
        .spawn(parse)
        .ok()?
        .join()
        .ok()
        .flatten()
}

fn parse_imports(text: &str) -> Option<Vec<Import>> {
    if !crate::classify::tokens_ok(text) {
        return None;
    }
    let parsed = ruff_python_parser::parse_module(text).ok()?;
    let mut found = Found::default();
    found.visit_body(&parsed.syntax().body);
    (found.deepest <= crate::classify::MAX_TREE_DEPTH).then_some(found.imports)
}

#[derive(Default)]
struct Found {
    imports: Vec<Import>,
    depth: usize,
    deepest: usize,
}

impl Found {
    fn enter(&mut self) -> bool {
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        self.depth <= crate::classify::MAX_TREE_DEPTH
    }
}

impl<'a> Visitor<'a> for Found {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.enter() {
            match stmt {
                Stmt::Import(i) => {
                    for alias in &i.names {
                        self.imports.push(Import {
                            module: alias.name.as_str().to_string(),
                            level: 0,
                            names: Vec::new(),
                        });
                    }
                }
                Stmt::ImportFrom(i) => self.imports.push(Import {
                    module: i
                        .module
                        .as_ref()
                        .map(|m| m.as_str().to_string())
                        .unwrap_or_default(),
                    level: i.level,
                    names: i
                        .names
                        .iter()
                        .map(|a| a.name.as_str().to_string())
                        .filter(|n| n != "*")
                        .collect(),
                }),
                _ => {}
            }
            walk_stmt(self, stmt);
        }
        self.depth -= 1;
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.enter() {
            if let Some(module) = literal_import(expr) {
                self.imports.push(Import {
                    module,
                    level: 0,
                    names: Vec::new(),
                });
            }
            walk_expr(self, expr);
        }
        self.depth -= 1;
    }
}

/// `importlib.import_module("m")`, `import_module("m")` or
/// `__import__("m")` with a literal absolute name: the name.
fn literal_import(expr: &Expr) -> Option<String> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let callee = match call.func.as_ref() {
        Expr::Name(n) => n.id.as_str(),
        Expr::Attribute(a) => match a.value.as_ref() {
            Expr::Name(n) if n.id.as_str() == "importlib" => a.attr.as_str(),
            _ => return None,
        },
        _ => return None,
    };
    if !matches!(callee, "import_module" | "__import__") {
        return None;
    }
    let Some(Expr::StringLiteral(s)) = call.arguments.args.first() else {
        return None;
    };
    let name = s.value.to_str();
    let plain = !name.is_empty()
        && name
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    plain.then(|| name.to_string())
}

/// What a tree holds at a path (`/`-separated, from its top; `""` is the
/// top): how [`resolve`] and [`closure`] see a directory on disk, a git
/// tree, or a test's map.
pub trait Tree {
    /// Whether `path` is a regular file (links are not followed).
    fn is_file(&self, path: &str) -> bool;
    /// Whether `path` is a directory (links are not followed).
    fn is_dir(&self, path: &str) -> bool;
    /// The bytes of the file at `path`, at most [`MAX_SOURCE`] + 1 of them;
    /// `None` when it cannot be read.
    fn read(&self, path: &str) -> Option<Vec<u8>>;
}

/// A directory on disk as a [`Tree`]: nothing outside it is read, no link
/// is followed, reads are bounded.
pub struct DirTree<'a>(pub &'a std::path::Path);

impl DirTree<'_> {
    fn meta(&self, path: &str) -> Option<std::fs::Metadata> {
        if path.split('/').any(|p| p == ".." || p == ".") {
            return None;
        }
        std::fs::symlink_metadata(self.0.join(path)).ok()
    }
}

impl Tree for DirTree<'_> {
    fn is_file(&self, path: &str) -> bool {
        self.meta(path).is_some_and(|m| m.is_file())
    }

    fn is_dir(&self, path: &str) -> bool {
        self.meta(path).is_some_and(|m| m.is_dir())
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        if !self.is_file(path) {
            return None;
        }
        crate::safe_io::read_regular(
            &self.0.join(path),
            crate::safe_io::Links::Refuse,
            MAX_SOURCE as u64 + 1,
        )
        .ok()
    }
}

/// `a/b` joined with `c` (`""` is the top).
fn join(dir: &str, name: &str) -> String {
    match (dir.is_empty(), name.is_empty()) {
        (true, _) => name.to_string(),
        (_, true) => dir.to_string(),
        _ => format!("{dir}/{name}"),
    }
}

/// The directory of `path` (`""` for the top).
pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Where a module was found: its file (a module's `.py`, a package's
/// `__init__.py`), or, for a namespace package, its directory.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Location {
    /// A module file or a package's `__init__.py`.
    File(String),
    /// A namespace package (a directory without `__init__.py`).
    Namespace(String),
}

impl Location {
    /// The path, file or directory.
    pub fn path(&self) -> &str {
        match self {
            Location::File(p) | Location::Namespace(p) => p,
        }
    }
}

/// The dotted `module` inside `tree`, looked for under each of `search`
/// (directories from the top, `""` the top itself) in order, as Python's
/// path search does: `a/b.py`, else the package `a/b/__init__.py`, else
/// the namespace package `a/b/`. `None` when it is not in the tree.
pub fn resolve(tree: &dyn Tree, module: &str, search: &[String]) -> Option<Location> {
    search
        .iter()
        .find_map(|root| resolve_under(tree, root, module))
}

/// The dotted `module` below the one directory `base`.
fn resolve_under(tree: &dyn Tree, base: &str, module: &str) -> Option<Location> {
    if module.is_empty() {
        return package_at(tree, base);
    }
    let parts: Vec<&str> = module.split('.').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        return None;
    }
    let mut dir = base.to_string();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let here = join(&dir, part);
        if last {
            let file = format!("{here}.py");
            if tree.is_file(&file) {
                return Some(Location::File(file));
            }
            return package_at(tree, &here);
        }
        if !tree.is_dir(&here) {
            return None;
        }
        dir = here;
    }
    None
}

/// The package whose directory is `dir`, if it is one.
fn package_at(tree: &dyn Tree, dir: &str) -> Option<Location> {
    let init = join(dir, "__init__.py");
    if tree.is_file(&init) {
        Some(Location::File(init))
    } else if tree.is_dir(dir) {
        Some(Location::Namespace(dir.to_string()))
    } else {
        None
    }
}

/// The directory a relative import of `level` dots in the file `importer`
/// starts from (`.` its own package, `..` the one above); `None` when it
/// climbs above the top.
pub fn relative_base(importer: &str, level: u32) -> Option<String> {
    let mut dir = parent(importer).to_string();
    for _ in 1..level {
        if dir.is_empty() {
            return None;
        }
        dir = parent(&dir).to_string();
    }
    Some(dir)
}

/// The directories Python would search for a file's absolute imports when
/// it is run or imported: the top, `src` (a `src/` layout), the file's own
/// directory (a script run directly), and the directory holding its
/// outermost package (so that its package imports its siblings).
pub fn search_roots(tree: &dyn Tree, file: &str) -> Vec<String> {
    let mut roots: Vec<String> = vec![String::new()];
    if tree.is_dir("src") {
        roots.push("src".into());
    }
    let own = parent(file).to_string();
    let mut outer = own.clone();
    while !outer.is_empty() && tree.is_file(&join(&outer, "__init__.py")) {
        outer = parent(&outer).to_string();
    }
    for dir in [outer, own] {
        if !roots.contains(&dir) {
            roots.push(dir);
        }
    }
    roots
}

/// One resolved import of the closure: who imports what, and where it is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The importing file.
    pub from: String,
    /// The module as written (dots of a relative import included).
    pub module: String,
    /// Where it was found.
    pub to: Location,
}

/// What the entry files reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closure {
    /// Every file reached (the entries included).
    pub files: BTreeSet<String>,
    /// Each import resolved inside the tree, once per (file, location).
    pub edges: Vec<Edge>,
    /// The walk stopped at its file limit.
    pub truncated: bool,
}

/// The files of `tree` that `entries` (files) reach through their imports,
/// following at most `max_files` files. Importing `a.b.c` runs the
/// `__init__.py` of `a` and `a.b` too, so those are reached; `from a
/// import b` reaches the submodule `a.b` when there is one.
pub fn closure(tree: &dyn Tree, entries: &[String], max_files: usize) -> Closure {
    let mut out = Closure::default();
    let mut queue: Vec<String> = entries.iter().rev().cloned().collect();
    let mut seen_edges: BTreeMap<(String, String), ()> = BTreeMap::new();
    while let Some(file) = queue.pop() {
        if !out.files.insert(file.clone()) {
            continue;
        }
        if out.files.len() > max_files {
            out.truncated = true;
            break;
        }
        let Some(imports) = tree.read(&file).and_then(|b| imports_of(&b)) else {
            continue;
        };
        let roots = search_roots(tree, &file);
        for import in imports {
            for (module, location) in locate(tree, &file, &import, &roots) {
                if seen_edges
                    .insert((file.clone(), location.path().to_string()), ())
                    .is_none()
                {
                    out.edges.push(Edge {
                        from: file.clone(),
                        module,
                        to: location.clone(),
                    });
                }
                if let Location::File(f) = &location {
                    if !out.files.contains(f) {
                        queue.push(f.clone());
                    }
                }
            }
        }
    }
    out
}

/// Every location one import statement runs: each package on the way to
/// the module, the module, and the submodules `from M import n` names.
fn locate(
    tree: &dyn Tree,
    file: &str,
    import: &Import,
    roots: &[String],
) -> Vec<(String, Location)> {
    let dots = ".".repeat(import.level as usize);
    let bases: Vec<String> = if import.level > 0 {
        match relative_base(file, import.level) {
            Some(base) => vec![base],
            None => return Vec::new(),
        }
    } else {
        roots.to_vec()
    };
    // The first base that holds the module's first part decides, as the
    // first entry of sys.path that holds it does.
    let first = import.module.split('.').next().unwrap_or_default();
    let Some(base) = bases
        .iter()
        .find(|b| resolve_under(tree, b, first).is_some() || first.is_empty())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let parts: Vec<&str> = import.module.split('.').filter(|p| !p.is_empty()).collect();
    for n in 1..=parts.len() {
        let module = parts[..n].join(".");
        if let Some(at) = resolve_under(tree, base, &module) {
            out.push((format!("{dots}{module}"), at));
        }
    }
    if parts.is_empty() {
        if let Some(at) = resolve_under(tree, base, "") {
            out.push((dots.clone(), at));
        }
    }
    for name in &import.names {
        let module = join_dotted(&import.module, name);
        if let Some(at @ Location::File(_)) = resolve_under(tree, base, &module) {
            out.push((format!("{dots}{module}"), at));
        }
    }
    out
}

fn join_dotted(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}.{name}")
    }
}

/// The deepest directory that holds every one of the directories `dirs`
/// (`/`-separated; `""` is the top).
pub fn common_dir<'a>(dirs: impl IntoIterator<Item = &'a str>) -> String {
    let mut common: Option<Vec<&str>> = None;
    for path in dirs {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        common = Some(match common {
            None => parts,
            Some(c) => c
                .iter()
                .zip(&parts)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    common.unwrap_or_default().join("/")
}

#[cfg(test)]
mod tests;

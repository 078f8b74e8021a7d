//! A proposed root is never narrower than what its code imports: the
//! import closure of every Python file under it ([`crate::imports`]) is
//! followed inside the repository, and the root grows to the smallest
//! directory that holds it all, leaving out by name (`exclude`) the
//! directories beside it that nothing imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::changes::join;
use crate::imports::{self, DirTree, Location};
use crate::select::Rules;

/// Python files read as entries under one root, at most.
const MAX_ENTRIES: usize = 5_000;
/// Files the closure follows, at most.
const MAX_CLOSURE: usize = 20_000;

/// A root grown to hold its imports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Widened {
    /// The smallest directory holding the root and every file it imports.
    pub root: String,
    /// Why: `src/black imports blib2to3 (src/blib2to3)`, one per package
    /// outside the old root.
    pub imports: Vec<String>,
    /// Names to exclude under the new root (directories beside the old
    /// root that nothing imports), each with why.
    pub exclude: Vec<(String, String)>,
    /// The closure stopped at its limit (said in the file).
    pub truncated: bool,
}

/// `root` grown to hold every file its Python files import, inside the
/// tree at `top`; `None` when it already does.
pub(super) fn widen(top: &Path, root: &str) -> Option<Widened> {
    let tree = DirTree(top);
    let entries = python_files(top, root);
    let closure = imports::closure(&tree, &entries, MAX_CLOSURE);
    let outside: Vec<&String> = closure.files.iter().filter(|f| !under(f, root)).collect();
    if outside.is_empty() {
        return None;
    }
    let dirs = std::iter::once(root).chain(outside.iter().map(|f| imports::parent(f)));
    let new_root = imports::common_dir(dirs);
    let mut by_package: BTreeMap<String, String> = BTreeMap::new();
    for edge in &closure.edges {
        let to = edge.to.path();
        if !under(&edge.from, root) || under(to, root) {
            continue;
        }
        let package = first_below(&new_root, to, &edge.to);
        by_package
            .entry(package.clone())
            .or_insert_with(|| format!("{} imports {} ({package})", shown(root), edge.module));
    }
    Some(Widened {
        exclude: unimported_siblings(top, &new_root, &closure.files),
        root: new_root,
        imports: by_package.into_values().collect(),
        truncated: closure.truncated,
    })
}

/// The top-level package or module under `base` that holds `path`:
/// `src/blib2to3` for `src/blib2to3/pgen2/driver.py` under `src`.
fn first_below(base: &str, path: &str, at: &Location) -> String {
    let rest = if base.is_empty() {
        path
    } else {
        path.strip_prefix(&format!("{base}/")).unwrap_or(path)
    };
    match rest.split_once('/') {
        Some((first, _)) => join(base, first),
        None if matches!(at, Location::Namespace(_)) => join(base, rest),
        None => join(base, rest),
    }
}

/// The directories right under `root` that hold Python code but no file
/// of the closure, whose name is no part of any file of it (an exclude
/// name matches at any depth), and that the gate does not already leave
/// out: excluded, each with why.
fn unimported_siblings(
    top: &Path,
    root: &str,
    closure: &BTreeSet<String>,
) -> Vec<(String, String)> {
    let defaults = Rules::default().exclude;
    let Ok(entries) = std::fs::read_dir(top.join(root)) else {
        return Vec::new();
    };
    let used: BTreeSet<&str> = closure.iter().flat_map(|f| f.split('/')).collect();
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || name.starts_with('.') || defaults.contains(&name) || used.contains(&*name) {
            continue;
        }
        let dir = join(root, &name);
        if python_files(top, &dir).is_empty() {
            continue;
        }
        out.push((
            name,
            format!("{dir} holds Python code that nothing above imports"),
        ));
    }
    out.sort();
    out
}

/// The Python files under `root` (links not followed, the gate's excluded
/// names and hidden directories skipped), at most [`MAX_ENTRIES`].
fn python_files(top: &Path, root: &str) -> Vec<String> {
    let skip = Rules::default().exclude;
    let mut out = Vec::new();
    let mut stack = vec![root.to_string()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(top.join(&dir)) else {
            continue;
        };
        let mut names: Vec<(String, bool)> = entries
            .flatten()
            .filter_map(|e| {
                let kind = e.file_type().ok()?;
                let name = e.file_name().to_str()?.to_string();
                (kind.is_dir() || kind.is_file()).then_some((name, kind.is_dir()))
            })
            .collect();
        names.sort();
        for (name, is_dir) in names {
            let path = join(&dir, &name);
            if is_dir {
                if !name.starts_with('.') && !skip.contains(&name) {
                    stack.push(path);
                }
            } else if name.ends_with(".py") {
                out.push(path);
                if out.len() >= MAX_ENTRIES {
                    return out;
                }
            }
        }
    }
    out
}

/// Whether `path` is `root` or below it (`""` holds everything).
fn under(path: &str, root: &str) -> bool {
    root.is_empty()
        || path == root
        || path
            .strip_prefix(root)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A root as comments show it (`.` for the top).
fn shown(root: &str) -> &str {
    crate::source::show_root(root)
}

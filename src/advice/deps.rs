//! Dependencies: the runtime's own project's manifests at both ends.
//!
//! The project is the nearest `pyproject.toml` at the runtime root or in a
//! folder above it (another project's, an example's, sits elsewhere and
//! is not read). Read there: `[project] dependencies` and Poetry's
//! `[tool.poetry.dependencies]` (which extras a deployment installs is not
//! in the repository: optional dependencies are not read);
//! `requirements*.txt` directly in the runtime root and beside that
//! `pyproject.toml`; and, for the packages those name, the versions
//! locked in the nearest `uv.lock` or `poetry.lock` at or above the
//! project's folder.

use std::collections::BTreeMap;
use std::sync::Arc;

use gix::ObjectId;

use super::{tree, AdviceCause, AdviceKind, Item, Memo, Update};
use crate::pair::Pair;
use crate::source::git::Session;

/// One manifest's packages: normalised name → (specifier, line).
#[derive(Debug, Default)]
pub(super) struct Manifest {
    packages: BTreeMap<String, (String, usize)>,
}

/// A file of one end: its path from the top, and its blob.
type File = (String, ObjectId);

/// The manifests of the runtime's project at one end, and its lock file.
fn manifests(repo: &Session, top: ObjectId, root: &str) -> (Vec<File>, Option<File>) {
    let mut found = Vec::new();
    let project = ancestors(root).find_map(|dir| {
        let path = super::join(&dir, "pyproject.toml");
        repo.blob_at(top, &path).map(|id| (dir, path, id))
    });
    let mut dirs = vec![root.to_string()];
    if let Some((dir, path, id)) = &project {
        found.push((path.clone(), *id));
        if dir != root {
            dirs.push(dir.clone());
        }
    }
    for dir in dirs {
        let Some(sub) = tree::subtree(repo, top, &dir) else {
            continue;
        };
        for (name, id) in tree::files_in(repo, sub) {
            if name.starts_with("requirements") && name.ends_with(".txt") {
                found.push((super::join(&dir, &name), id));
            }
        }
    }
    let lock_from = project
        .map(|(dir, ..)| dir)
        .unwrap_or_else(|| root.to_string());
    let lock = ancestors(&lock_from).find_map(|dir| {
        ["uv.lock", "poetry.lock"].iter().find_map(|name| {
            let path = super::join(&dir, name);
            repo.blob_at(top, &path).map(|id| (path, id))
        })
    });
    (found, lock)
}

/// `dir` and each folder above it, up to the top (`""`).
fn ancestors(dir: &str) -> impl Iterator<Item = String> + '_ {
    let mut next = Some(dir.trim_matches('/').to_string());
    std::iter::from_fn(move || {
        let here = next.take()?;
        if !here.is_empty() {
            next = Some(
                here.rsplit_once('/')
                    .map_or(String::new(), |(up, _)| up.to_string()),
            );
        }
        Some(here)
    })
}

/// PEP 503's normal form of a package name.
fn normal(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// A PEP 508 requirement's name and the rest (extras, specifier,
/// markers), spaces dropped.
fn requirement(text: &str) -> Option<(String, String)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(text.len());
    if end == 0 {
        return None;
    }
    let rest: String = text[end..].chars().filter(|c| !c.is_whitespace()).collect();
    Some((normal(&text[..end]), rest))
}

/// The line (from 1) of the first line of `text` holding `needle`.
fn line_with(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(1, |i| i + 1)
}

fn parse_pyproject(text: &str) -> Manifest {
    let mut m = Manifest::default();
    let Ok(doc) = text.parse::<toml::Table>() else {
        return m;
    };
    let listed = doc
        .get("project")
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_array());
    for dep in listed.into_iter().flatten().filter_map(|d| d.as_str()) {
        if let Some((name, spec)) = requirement(dep) {
            m.packages.insert(name, (spec, line_with(text, dep)));
        }
    }
    let poetry = doc
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_table());
    for (name, spec) in poetry.into_iter().flatten() {
        if name == "python" {
            continue;
        }
        let spec = match spec {
            toml::Value::String(s) => s.clone(),
            // A table (`{ version = "^1", extras = [...] }`): its version.
            other => other
                .get("version")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string(),
        };
        let line = line_with(text, &format!("{name} ="));
        m.packages.insert(normal(name), (spec, line));
    }
    m
}

fn parse_requirements(text: &str) -> Manifest {
    let mut m = Manifest::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.split(" #").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('-') {
            continue;
        }
        if let Some((name, spec)) = requirement(line) {
            m.packages.insert(name, (spec, i + 1));
        }
    }
    m
}

fn parse_lock(text: &str) -> Manifest {
    let mut m = Manifest::default();
    let Ok(doc) = text.parse::<toml::Table>() else {
        return m;
    };
    let packages = doc.get("package").and_then(|p| p.as_array());
    for p in packages.into_iter().flatten() {
        let (Some(name), Some(version)) = (
            p.get("name").and_then(|n| n.as_str()),
            p.get("version").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let line = line_with(text, &format!("name = \"{name}\""));
        m.packages.insert(normal(name), (version.to_string(), line));
    }
    m
}

/// The manifest in blob `id` at `path`, parsed once per run.
fn read(repo: &Session, memo: &mut Memo, path: &str, id: Option<ObjectId>) -> Arc<Manifest> {
    let Some(id) = id else {
        return Arc::default();
    };
    if let Some(m) = memo.manifests.get(&id) {
        return m.clone();
    }
    let text = tree::text(repo, id).unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or(path);
    let m = Arc::new(match name {
        "pyproject.toml" => parse_pyproject(&text),
        "uv.lock" | "poetry.lock" => parse_lock(&text),
        _ => parse_requirements(&text),
    });
    memo.manifests.insert(id, m.clone());
    m
}

/// The dependency advice of a free release.
pub(super) fn advise(repo: &Session, u: &Update<'_>, memo: &mut Memo) -> Option<Item> {
    let (from, from_lock) = manifests(repo, u.trees.from, u.root);
    let (to, to_lock) = manifests(repo, u.trees.to, u.root);
    if from == to && from_lock == to_lock {
        return None;
    }
    let mut paths: Vec<&String> = from.iter().chain(&to).map(|(p, _)| p).collect();
    paths.sort();
    paths.dedup();
    let id_in =
        |list: &[(String, ObjectId)], p: &str| list.iter().find(|(q, _)| q == p).map(|(_, id)| *id);
    let mut changes = Vec::new();
    let mut evidence = Vec::new();
    let mut declared = std::collections::BTreeSet::new();
    for path in paths {
        let ends = Pair::new(id_in(&from, path), id_in(&to, path));
        let old = read(repo, memo, path, ends.from);
        let new = read(repo, memo, path, ends.to);
        declared.extend(old.packages.keys().cloned());
        declared.extend(new.packages.keys().cloned());
        if ends.from == ends.to {
            continue;
        }
        compare(path, (&old, &new), false, (&mut changes, &mut evidence));
    }
    let lock_path = to_lock
        .as_ref()
        .or(from_lock.as_ref())
        .map(|(p, _)| p.clone());
    if let Some(path) =
        lock_path.filter(|_| from_lock.as_ref().map(|l| l.1) != to_lock.as_ref().map(|l| l.1))
    {
        let old = read(repo, memo, &path, from_lock.map(|l| l.1));
        let new = read(repo, memo, &path, to_lock.map(|l| l.1));
        let only = |m: &Manifest| Manifest {
            packages: m
                .packages
                .iter()
                .filter(|(name, _)| declared.contains(*name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        };
        compare(
            &path,
            (&only(&old), &only(&new)),
            true,
            (&mut changes, &mut evidence),
        );
    }
    if changes.is_empty() {
        return None;
    }
    Some(Item {
        kind: AdviceKind::PossibleMissedRestart,
        cause: AdviceCause::Dependencies,
        message: "possible missed restart: the dependencies changed; running servers keep the \
                  old versions until they restart; set force_restart"
            .to_string(),
        evidence,
        changes,
    })
}

/// Names the changes between two readings of one manifest, package by
/// package.
fn compare(
    path: &str,
    (old, new): (&Manifest, &Manifest),
    locked: bool,
    (changes, evidence): (&mut Vec<String>, &mut Vec<String>),
) {
    let mut names: Vec<&String> = old.packages.keys().chain(new.packages.keys()).collect();
    names.sort();
    names.dedup();
    let shown = |spec: &str| {
        if spec.is_empty() {
            "any version".to_string()
        } else {
            spec.to_string()
        }
    };
    for name in names {
        let (line, text) = match (old.packages.get(name), new.packages.get(name)) {
            (None, Some((spec, line))) if locked => (*line, format!("{name} locked at {spec}")),
            (None, Some((spec, line))) => (*line, format!("{name} added ({})", shown(spec))),
            (Some(_), None) if locked => continue,
            (Some((spec, line)), None) => (*line, format!("{name} removed (was {})", shown(spec))),
            (Some((a, _)), Some((b, line))) if a != b => {
                let what = if locked {
                    "locked version"
                } else {
                    "specifier"
                };
                (*line, format!("{name} {what} {} → {}", shown(a), shown(b)))
            }
            _ => continue,
        };
        changes.push(format!("{path}: {text}"));
        evidence.push(format!("{path}:{line}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_and_specifiers_kept() {
        assert_eq!(
            requirement("Pydocket >= 0.16.6, <0.17.0"),
            Some(("pydocket".into(), ">=0.16.6,<0.17.0".into()))
        );
        assert_eq!(
            requirement("jsonschema_path"),
            Some(("jsonschema-path".into(), String::new()))
        );
        assert_eq!(requirement(">=1"), None);
    }

    #[test]
    fn ancestors_go_up_to_the_top() {
        assert_eq!(ancestors("a/b").collect::<Vec<_>>(), ["a/b", "a", ""]);
        assert_eq!(ancestors("").collect::<Vec<_>>(), [""]);
    }

    #[test]
    fn requirements_skip_options_and_comments() {
        let m = parse_requirements("# c\n-r base.txt\nfoo==1.0  # pin\n\nBar>2\n");
        assert_eq!(m.packages.get("foo"), Some(&("==1.0".to_string(), 3)));
        assert_eq!(m.packages.get("bar"), Some(&(">2".to_string(), 5)));
        assert_eq!(m.packages.len(), 2);
    }
}

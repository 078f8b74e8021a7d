//! `fpcheck init`: a commented `fpcheck.toml` proposing runtimes from what
//! the repository holds. Nothing found is executed: entry points are
//! recognised by name (`server.py`, `__main__.py`) and by the
//! `[project.scripts]` table of a `pyproject.toml`, parsed as TOML.
//!
//! The scan never follows a link, skips what the gate excludes, and stops
//! at a depth and an entry count, so a hostile or huge tree costs bounded
//! time. The file is created next to the repository's top without ever
//! replacing anything: written to a temporary file, then hard-linked into
//! place (which fails if any file or link is already there).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::{ConfigFile, FILE_NAME};
use crate::safe_io::{self, Links};
use crate::select::Rules;
use crate::setting::Setting;

/// File names that make their directory a long-running entry point.
pub(crate) const ENTRY_FILES: [&str; 2] = ["server.py", "__main__.py"];

/// How far the scan goes.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Directories deeper than this below the top are not read.
    pub max_depth: usize,
    /// Entries read in all before the scan stops.
    pub max_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: 8,
            max_entries: 50_000,
        }
    }
}

/// One proposed runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposal {
    /// The `NAME` of `[runtimes.NAME]`: letters, digits, `_` and `-`.
    pub name: String,
    /// The root, from the top (`""`: the top itself).
    pub root: String,
    /// What was found there, for the comment.
    pub evidence: Vec<String>,
}

/// What the scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Proposals, in root order.
    pub proposals: Vec<Proposal>,
    /// The scan stopped at a limit (said in the file and on stderr).
    pub truncated: bool,
    /// Things the user should know (an unreadable pyproject.toml, a name
    /// that is not UTF-8).
    pub notes: Vec<String>,
}

/// Why `init` could not write.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A config is already there: nothing is replaced.
    #[error("{0} already exists: fpcheck init never replaces a file; edit it, or move it away and run init again ({stdout} prints the proposal)", stdout = Setting::Stdout.flag())]
    Exists(String),
    /// The write failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Scans the tree under `top` for runtimes.
pub fn scan(top: &Path, limits: Limits) -> Scan {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut scan = Scan::default();
    let skip = Rules::default().exclude;
    let mut seen = 0usize;
    // Depth-first over (directory, path from the top, depth).
    let mut stack = vec![(top.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            seen += 1;
            if seen > limits.max_entries {
                scan.truncated = true;
                break;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                scan.notes.push(format!(
                    "skipped a name that is not UTF-8 in {}",
                    shown_dir(&rel)
                ));
                continue;
            };
            // `file_type` does not follow links: a link is neither.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let child = join(&rel, name);
            if kind.is_dir() {
                if name.starts_with('.') || skip.iter().any(|s| s == name) || name == "venv" {
                    continue;
                }
                if depth < limits.max_depth {
                    subdirs.push((entry.path(), child, depth + 1));
                } else {
                    scan.truncated = true;
                }
            } else if kind.is_file() {
                if ENTRY_FILES.contains(&name) {
                    found.entry(rel.clone()).or_default().push(child);
                } else if name == "pyproject.toml" {
                    scripts(&dir, &rel, &mut found, &mut scan.notes);
                }
            }
        }
        if scan.truncated && seen > limits.max_entries {
            break;
        }
        // Sorted so that the order (and the proposals) never depend on the
        // file system's listing order.
        subdirs.sort_by(|a, b| b.1.cmp(&a.1));
        stack.extend(subdirs);
    }
    scan.proposals = name_all(found);
    scan
}

/// The `[project.scripts]` entries of `dir/pyproject.toml`: each
/// `name = "pkg.module:func"` proposes the package's directory, when it is
/// there (`pkg/` or `src/pkg/`).
fn scripts(
    dir: &Path,
    rel: &str,
    found: &mut BTreeMap<String, Vec<String>>,
    notes: &mut Vec<String>,
) {
    let file = join(rel, "pyproject.toml");
    let text = match safe_io::read_regular(
        &dir.join("pyproject.toml"),
        Links::Refuse,
        safe_io::JSON_LIMIT,
    )
    .map(String::from_utf8)
    {
        Ok(Ok(text)) => text,
        Ok(Err(_)) => {
            notes.push(format!("skipped {file}: not UTF-8"));
            return;
        }
        Err(e) => {
            notes.push(format!("skipped {file}: {e}"));
            return;
        }
    };
    let Ok(doc) = toml::from_str::<toml::Table>(&text) else {
        notes.push(format!("skipped {}: not valid TOML", file));
        return;
    };
    let Some(table) = doc
        .get("project")
        .and_then(|p| p.get("scripts"))
        .and_then(toml::Value::as_table)
    else {
        return;
    };
    for (script, target) in table {
        let Some(module) = target.as_str().and_then(|t| t.split(':').next()) else {
            continue;
        };
        let package = module.split('.').next().unwrap_or_default().trim();
        if package.is_empty() || package.contains(['/', '\\']) || package.starts_with('.') {
            continue;
        }
        for base in ["", "src"] {
            let candidate = dir.join(base).join(package);
            let is_dir = std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.is_dir());
            if is_dir {
                let root = join(&join(rel, base), package);
                found
                    .entry(root)
                    .or_default()
                    .push(format!("{file} [project.scripts] {script}"));
                break;
            }
        }
    }
}

/// Names each root after its directory (`server/src` → `server`), made
/// unique with a number.
fn name_all(found: BTreeMap<String, Vec<String>>) -> Vec<Proposal> {
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    found
        .into_iter()
        .map(|(root, evidence)| {
            let base = base_name(&root);
            let count = used.entry(base.clone()).or_insert(0);
            *count += 1;
            let name = if *count == 1 {
                base
            } else {
                format!("{base}-{count}")
            };
            Proposal {
                name,
                root,
                evidence,
            }
        })
        .collect()
}

/// The last path segment that says something (`src`, `app` and `lib` are
/// layouts, not names), reduced to a TOML bare key.
fn base_name(root: &str) -> String {
    let generic = ["src", "lib", "app", "python"];
    let parts: Vec<&str> = root.split('/').filter(|p| !p.is_empty()).collect();
    let pick = parts
        .iter()
        .rev()
        .find(|p| !generic.contains(p))
        .or(parts.last())
        .copied()
        .unwrap_or("main");
    let name: String = pick
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.trim_matches('_').is_empty() {
        "runtime".into()
    } else {
        name
    }
}

fn join(rel: &str, name: &str) -> String {
    match (rel.is_empty(), name.is_empty()) {
        (_, true) => rel.to_string(),
        (true, false) => name.to_string(),
        (false, false) => format!("{rel}/{name}"),
    }
}

fn shown_dir(rel: &str) -> String {
    if rel.is_empty() {
        "the top".into()
    } else {
        rel.to_string()
    }
}

/// A TOML basic string: quotes, backslashes and control characters
/// escaped, so that any directory name round-trips.
fn toml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The text of the file: one `[runtime]` when one runtime was found,
/// `[runtimes.NAME]` tables when several, every line explained.
pub fn render(scan: &Scan) -> String {
    let defaults = Rules::default();
    let list = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| toml_str(s)).collect();
        format!("[{}]", items.join(", "))
    };
    let mut out = String::from(
        "# fpcheck.toml: which files make up each long-running runtime, so that\n\
         # `fpcheck FROM..TO` can tell whether a release forces it to restart.\n\
         # Proposed by `fpcheck init` from the entry points found below; edit freely.\n\
         # Every key is optional: root defaults to \"src\", extensions to [\".py\"],\n\
         # exclude to the gate's list (shown commented out in each table).\n",
    );
    if scan.truncated {
        out.push_str(
            "#\n# The scan stopped at its depth or entry limit: runtimes deeper in the\n\
             # tree may be missing; add them by hand.\n",
        );
    }
    let keys = |out: &mut String, p: &Proposal| {
        for e in &p.evidence {
            out.push_str(&format!("# found: {}\n", comment(e)));
        }
        out.push_str(&format!(
            "root = {}\n",
            toml_str(crate::select::show_root(&p.root))
        ));
        out.push_str(&format!("# extensions = {}\n", list(&defaults.extensions)));
        out.push_str(&format!("# exclude = {}\n", list(&defaults.exclude)));
        out.push_str("# version_file = \"version.json\"  # where `fpcheck patch` writes\n");
    };
    match scan.proposals.as_slice() {
        [] => {
            out.push_str(
                "\n# No entry point (server.py, __main__.py, [project.scripts]) was found:\n\
                 # set root to the directory your server loads its code from.\n\
                 [runtime]\nroot = \"src\"\n",
            );
        }
        [one] => {
            out.push_str("\n[runtime]\n");
            keys(&mut out, one);
        }
        several => {
            out.push_str(
                "\n# Several runtimes: `fpcheck FROM..TO` gives a verdict for each;\n\
                 # --runtime NAME narrows it to one. Remove the ones that are not servers.\n",
            );
            for p in several {
                out.push_str(&format!("\n[runtimes.{}]\n", p.name));
                keys(&mut out, p);
            }
        }
    }
    out
}

/// A comment holds one line of printable text.
fn comment(text: &str) -> String {
    crate::term::escape(text)
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Checks that `text` is a config fpcheck reads (a bug otherwise).
pub fn check(text: &str) -> Result<ConfigFile, crate::config::ConfigError> {
    ConfigFile::parse(text, Path::new(FILE_NAME))
}

/// Creates `top/fpcheck.toml` holding `text`; never replaces a file, a
/// link or anything else already at that name, and never leaves half a
/// file: the text is written to a temporary file and hard-linked into
/// place, which fails when the name is taken.
pub fn create(top: &Path, text: &str) -> Result<PathBuf, InitError> {
    let path = top.join(FILE_NAME);
    let shown = || path.display().to_string();
    let write_err = |source| InitError::Write {
        path: shown(),
        source,
    };
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(InitError::Exists(shown()));
    }
    let mut tmp = tempfile::Builder::new()
        .prefix(".fpcheck.toml.")
        .tempfile_in(top)
        .map_err(write_err)?;
    tmp.write_all(text.as_bytes()).map_err(write_err)?;
    tmp.as_file().sync_all().map_err(write_err)?;
    let linked = std::fs::hard_link(tmp.path(), &path);
    // The temporary name goes away whatever happened (its drop removes it).
    drop(tmp);
    match linked {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(InitError::Exists(shown())),
        Err(e) => Err(write_err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_skip_layout_directories_and_stay_bare_keys() {
        assert_eq!(base_name("server/src"), "server");
        assert_eq!(base_name("services/Billing API/src/app"), "billing_api");
        assert_eq!(base_name("src"), "src");
        assert_eq!(base_name(""), "main");
        assert_eq!(base_name("ü"), "runtime");
    }

    #[test]
    fn the_file_parses_whatever_the_roots_hold() {
        let scan = Scan {
            proposals: vec![
                Proposal {
                    name: "a".into(),
                    root: "we\"ird\\dir\n".into(),
                    evidence: vec!["x\ny # z".into()],
                },
                Proposal {
                    name: "b".into(),
                    root: String::new(),
                    evidence: vec![],
                },
            ],
            truncated: true,
            notes: vec![],
        };
        let text = render(&scan);
        let file = check(&text).unwrap();
        assert_eq!(file.runtimes["a"].root.as_deref(), Some("we\"ird\\dir\n"));
        assert_eq!(file.runtimes["b"].root.as_deref(), Some("."));
    }
}

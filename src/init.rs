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

mod widen;
pub use widen::Widened;

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
    /// Why it is proposed commented out (an example, the docs, tests, a
    /// benchmark, vendored code, or not the project's own package), or
    /// `None` for an active runtime.
    pub left_out: Option<String>,
    /// The strength of the evidence: higher first in the file.
    pub rank: u32,
    /// When the root was grown to hold what its code imports: the root
    /// found first, and why it grew.
    pub widened: Option<(String, Widened)>,
}

/// What the scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Proposals: the active ones first, then those left out, each by
    /// rank (strongest evidence first), then root.
    pub proposals: Vec<Proposal>,
    /// The scan stopped at a limit (said in the file and on stderr).
    pub truncated: bool,
    /// Things the user should know (an unreadable pyproject.toml, a name
    /// that is not UTF-8).
    pub notes: Vec<String>,
    /// Tag globs of prefixed release tags (`server-v*` for
    /// `server-v1.2.0`), with how many tags each matches: see
    /// [`tag_patterns`].
    pub tag_patterns: Vec<(String, usize)>,
    /// How many tags the repository has, for the evidence of a pattern.
    pub tags_total: usize,
}

/// The globs that read a monorepo's prefixed release tags (`server-v1.2.0`,
/// `mcp@1.2.0`) as versions: for each tag that is not a version itself,
/// its shortest prefix whose rest is one, as `PREFIX*`; with the number
/// of tags each matches, most first.
pub fn tag_patterns<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for name in names {
        let prefix = crate::version::parse_prefixed(name).map(|(i, _)| i);
        if let Some(i) = prefix {
            let rest = &name[i..];
            // `server-v1.2.0` gives `server-v*`, as such tags are written.
            let cut = if rest.starts_with('v') { i + 1 } else { i };
            *counts.entry(format!("{}*", &name[..cut])).or_insert(0) += 1;
        }
    }
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// The tag pattern proposed for each active runtime, with how many tags it
/// matches: the pattern whose prefix is the runtime's name (`server-v*`
/// for `server`, `mcp@*` for `mcp`, `-` and `_` alike); for a single
/// runtime, also a pattern most of the repository's tags match (its tags
/// are then all prefixed, whatever the runtime is called). Plain `v1.2.0`
/// tags give no pattern, so nothing is proposed for them.
pub fn runtime_patterns(scan: &Scan) -> BTreeMap<String, (String, usize)> {
    let key = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    let usable = |glob: &String| crate::config::check_tag_pattern(glob).is_ok();
    let named = |name: &str| {
        scan.tag_patterns
            .iter()
            .filter(|(glob, _)| usable(glob))
            .find(|(glob, _)| {
                let prefix = crate::version::literal_prefix(glob);
                let bare = prefix
                    .strip_suffix('v')
                    .filter(|p| p.ends_with(['-', '_', '/', '@']))
                    .unwrap_or(prefix)
                    .trim_end_matches(['-', '_', '/', '@']);
                !bare.is_empty() && key(bare) == key(name)
            })
            .cloned()
    };
    let active: Vec<&Proposal> = scan.active().collect();
    let mut out = BTreeMap::new();
    for p in &active {
        let most = || {
            let (glob, n) = scan.tag_patterns.first().filter(|(g, _)| usable(g))?;
            (active.len() == 1 && 2 * n > scan.tags_total).then(|| (glob.clone(), *n))
        };
        if let Some(found) = named(&p.name).or_else(most) {
            out.insert(p.name.clone(), found);
        }
    }
    out
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

impl crate::error::Classified for InitError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            InitError::Exists(_) => crate::error::Kind::Usage,
            InitError::Write { .. } => crate::error::Kind::Output,
        }
    }
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
                    let imports = framework_import(&entry.path());
                    let list = found.entry(rel.clone()).or_default();
                    list.push(child.clone());
                    if let Some(framework) = imports {
                        list.push(format!("{child} imports {framework} (a server framework)"));
                    }
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
    let own = own_package(top, &mut scan.notes);
    if let Some((root, evidence)) = &own {
        found
            .entry(root.clone())
            .or_default()
            .insert(0, evidence.clone());
    }
    scan.proposals = arrange(name_all(found), own.as_ref().map(|o| o.0.as_str()));
    for p in scan.proposals.iter_mut().filter(|p| p.left_out.is_none()) {
        if let Some(w) = widen::widen(top, &p.root) {
            let found_at = std::mem::replace(&mut p.root, w.root.clone());
            p.widened = Some((found_at, w));
        }
    }
    scan
}

/// Server frameworks whose top-level import marks an entry point as a
/// server (ranked above one that imports none).
const FRAMEWORKS: [&str; 9] = [
    "mcp",
    "fastmcp",
    "fastapi",
    "flask",
    "starlette",
    "aiohttp",
    "django",
    "uvicorn",
    "tornado",
];

/// The first server framework that `file` imports at the top level (an
/// unindented `import X` or `from X...`), read without following a link.
fn framework_import(file: &Path) -> Option<&'static str> {
    let bytes = safe_io::read_regular(file, Links::Refuse, 1024 * 1024).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    text.lines().find_map(|line| {
        let rest = line
            .strip_prefix("import ")
            .or_else(|| line.strip_prefix("from "))?;
        let module = rest
            .trim_start()
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()?;
        FRAMEWORKS.iter().copied().find(|f| *f == module)
    })
}

/// The project's own package: the one the top-level `pyproject.toml`
/// names (`[project] name`, normalised as an import name: `my-sdk` is
/// `my_sdk`), when it is a directory under `src/` or at the top.
fn own_package(top: &Path, notes: &mut Vec<String>) -> Option<(String, String)> {
    let bytes = match safe_io::read_regular(
        &top.join("pyproject.toml"),
        Links::Refuse,
        safe_io::JSON_LIMIT,
    ) {
        Ok(bytes) => bytes,
        // Absent, or already reported by the scan's own read.
        Err(_) => return None,
    };
    let doc = toml::from_str::<toml::Table>(std::str::from_utf8(&bytes).ok()?).ok()?;
    let name = doc.get("project")?.get("name")?.as_str()?;
    let package: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '-' | '.' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    if package.is_empty()
        || !package
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        notes.push(format!(
            "pyproject.toml names `{name}`, which is not a package directory name"
        ));
        return None;
    }
    for base in ["src", ""] {
        let candidate = top.join(base).join(&package);
        if std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.is_dir()) {
            return Some((
                join(base, &package),
                format!(
                    "pyproject.toml [project] name = {} (the project's own package)",
                    toml_str(name)
                ),
            ));
        }
    }
    None
}

/// Directory names whose code is not the project's runtime, and why.
const LEFT_OUT: [(&[&str], &str); 5] = [
    (
        &["examples", "example", "samples", "sample"],
        "an example, not the project's runtime",
    ),
    (
        &["docs", "doc", "documentation"],
        "documentation, not the project's runtime",
    ),
    (
        &["tests", "test", "testing"],
        "tests, not the project's runtime",
    ),
    (
        &["benchmarks", "benchmark", "benches", "bench"],
        "a benchmark, not the project's runtime",
    ),
    (
        &["vendor", "vendored", "_vendor", "third_party", "external"],
        "vendored code, not the project's runtime",
    ),
];

/// Why a root is left out by where it lies, if it is.
fn left_out_by_place(root: &str) -> Option<String> {
    root.split('/').find_map(|part| {
        LEFT_OUT
            .iter()
            .find(|(names, _)| names.contains(&part))
            .map(|(_, why)| format!("under {part}/: {why}"))
    })
}

/// Ranks by evidence: the project's own package, then `[project.scripts]`,
/// then an entry point importing a server framework, then any entry point.
fn rank_of(evidence: &[String]) -> u32 {
    evidence
        .iter()
        .map(|e| {
            if e.ends_with("(the project's own package)") {
                100
            } else if e.contains(" [project.scripts] ") {
                10
            } else if e.ends_with("(a server framework)") {
                5
            } else {
                1
            }
        })
        .sum()
}

/// Marks what is left out and orders the proposals. With the project's
/// own package found, it is the one active runtime and every other is
/// listed commented out; without it, everything not under an example,
/// docs, tests, benchmark or vendored directory stays active.
fn arrange(mut proposals: Vec<Proposal>, own: Option<&str>) -> Vec<Proposal> {
    for p in &mut proposals {
        p.rank = rank_of(&p.evidence);
        p.left_out = match own {
            Some(root) if p.root == root => None,
            _ => left_out_by_place(&p.root).or_else(|| {
                own.map(|_| "not the project's own package (named by pyproject.toml)".to_string())
            }),
        };
    }
    // Active first; then what is left out only for not being the
    // project's package, before what lies under an example or the like.
    let group = |p: &Proposal| match &p.left_out {
        None => 0,
        Some(why) if !why.starts_with("under ") => 1,
        Some(_) => 2,
    };
    proposals.sort_by(|a, b| {
        group(a)
            .cmp(&group(b))
            .then(b.rank.cmp(&a.rank))
            .then_with(|| a.root.cmp(&b.root))
    });
    proposals
}

impl Scan {
    /// The runtimes the file declares (the others are commented out).
    pub fn active(&self) -> impl Iterator<Item = &Proposal> {
        self.proposals.iter().filter(|p| p.left_out.is_none())
    }
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
                left_out: None,
                rank: 0,
                widened: None,
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

/// Each runtime's tag pattern, as [`runtime_patterns`] proposes it.
type Patterns = BTreeMap<String, (String, usize)>;

/// The text of the file: one `[runtime]` when one runtime was found,
/// `[runtimes.NAME]` tables when several, every line explained.
pub fn render(scan: &Scan) -> String {
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
    let patterns = runtime_patterns(scan);
    let active: Vec<&Proposal> = scan.active().collect();
    let left_out: Vec<&Proposal> = scan
        .proposals
        .iter()
        .filter(|p| p.left_out.is_some())
        .collect();
    render_active(&mut out, &active, (scan, &patterns));
    render_unassigned(&mut out, scan, &patterns);
    render_left_out(&mut out, (&active, &left_out), (scan, &patterns));
    out
}

/// The runtimes proposed: none (a `[runtime]` to edit), one, or several.
fn render_active(out: &mut String, active: &[&Proposal], found: (&Scan, &Patterns)) {
    match active {
        [] => {
            out.push_str(
                "\n# No entry point (server.py, __main__.py, [project.scripts]) was found:\n\
                 # (none outside examples, docs, tests, benchmarks and vendored code)\n\
                 # set root to the directory your server loads its code from.\n\
                 [runtime]\nroot = \"src\"\n",
            );
        }
        [one] => {
            out.push_str("\n[runtime]\n");
            runtime_keys(out, one, "", found);
        }
        several => {
            out.push_str(
                "\n# Several runtimes: `fpcheck FROM..TO` gives a verdict for each;\n\
                 # --runtime NAME narrows it to one. Remove the ones that are not servers.\n\
                 # Ranked by evidence: the project's own package, [project.scripts],\n\
                 # an entry point importing a server framework, any entry point.\n",
            );
            for p in several {
                out.push_str(&format!("\n[runtimes.{}]\n", p.name));
                runtime_keys(out, p, "", found);
            }
        }
    }
}

/// The tag prefixes found that no runtime is named after.
fn render_unassigned(out: &mut String, scan: &Scan, patterns: &Patterns) {
    let unassigned: Vec<&(String, usize)> = scan
        .tag_patterns
        .iter()
        .filter(|(glob, _)| !patterns.values().any(|(g, _)| g == glob))
        .collect();
    if !unassigned.is_empty() {
        out.push_str(
            "\n# Release tags with a prefix were found (a monorepo's, one prefix per\n\
             # runtime) that no runtime above is named after: give a runtime its\n\
             # glob as `tag_pattern = \"GLOB\"` (the prefix is stripped before the\n\
             # version is read; `fpcheck history --tags GLOB` reads them once).\n",
        );
        for (glob, n) in unassigned {
            out.push_str(&format!(
                "#   {}  ({n} tag{})\n",
                comment(glob),
                if *n == 1 { "" } else { "s" }
            ));
        }
    }
}

/// The entry points left out, commented out, each with why.
fn render_left_out(
    out: &mut String,
    (active, left_out): (&[&Proposal], &[&Proposal]),
    found: (&Scan, &Patterns),
) {
    if !left_out.is_empty() {
        out.push_str(&format!(
            "\n# Left out, ranked by evidence: {} more entry point{} found where a\n\
             # long-running runtime is unlikely. To check one too, declare it as a\n\
             # [runtimes.NAME] table{}.\n",
            left_out.len(),
            if left_out.len() == 1 { "" } else { "s" },
            if active.len() == 1 {
                " (and turn [runtime] above into one)"
            } else {
                ""
            }
        ));
        for p in left_out {
            let why = p.left_out.as_deref().unwrap_or_default();
            out.push_str(&format!("\n# left out: {}\n", comment(why)));
            out.push_str(&format!("# [runtimes.{}]\n", p.name));
            runtime_keys(out, p, "# ", found);
        }
    }
}

/// One runtime's keys, each line led by `lead` (`"# "`: commented out),
/// with the evidence it was found by.
fn runtime_keys(out: &mut String, p: &Proposal, lead: &str, (scan, patterns): (&Scan, &Patterns)) {
    let defaults = Rules::default();
    let list = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| toml_str(s)).collect();
        format!("[{}]", items.join(", "))
    };
    for e in &p.evidence {
        out.push_str(&format!("# found: {}\n", comment(e)));
    }
    if let Some((found_at, w)) = &p.widened {
        out.push_str(&format!(
            "# root: {} grown to {}, which holds every file its code imports:\n",
            comment(crate::source::show_root(found_at)),
            comment(crate::source::show_root(&w.root))
        ));
        for line in &w.imports {
            out.push_str(&format!("# {}\n", comment(line)));
        }
        if w.truncated {
            out.push_str("# (the imports were followed up to a limit: check for more)\n");
        }
    }
    out.push_str(&format!(
        "{lead}root = {}\n",
        toml_str(crate::source::show_root(&p.root))
    ));
    let extra = p
        .widened
        .as_ref()
        .map(|(_, w)| w.exclude.as_slice())
        .unwrap_or_default();
    if lead.is_empty() {
        out.push_str(&format!("# extensions = {}\n", list(&defaults.extensions)));
        if extra.is_empty() {
            out.push_str(&format!("# exclude = {}\n", list(&defaults.exclude)));
        } else {
            for (_, why) in extra {
                out.push_str(&format!("# exclude: {}\n", comment(why)));
            }
            let mut all = defaults.exclude.clone();
            all.extend(extra.iter().map(|(name, _)| name.clone()));
            out.push_str(&format!("exclude = {}\n", list(&all)));
        }
        out.push_str("# version_file = \"version.json\"  # where `fpcheck patch` writes\n");
        if let Some((glob, n)) = patterns.get(&p.name) {
            out.push_str(&format!(
                "# found: {n} of {} tag{} match {}: the prefix is stripped before the version is read\n",
                scan.tags_total,
                if scan.tags_total == 1 { "" } else { "s" },
                comment(glob)
            ));
            out.push_str(&format!("tag_pattern = {}\n", toml_str(glob)));
        }
    }
}

/// The root a proposal is checked against: the default (`src`) when it is
/// the only runtime proposed; with several, the widest directory above it
/// that holds no other (a monorepo's `src` holds every server, whose
/// changes say nothing about this one).
pub fn reference_root(scan: &Scan, p: &Proposal) -> String {
    let others: Vec<&str> = scan
        .active()
        .filter(|o| o.root != p.root)
        .map(|o| o.root.as_str())
        .collect();
    if others.is_empty() {
        return crate::config::RuntimeSpec::default().root;
    }
    let holds = |dir: &str, root: &str| {
        dir.is_empty() || root == dir || root.starts_with(&format!("{dir}/"))
    };
    let mut best = p.root.clone();
    let mut dir = p.root.as_str();
    while let Some((parent, _)) = dir.rsplit_once('/') {
        if others.iter().any(|o| holds(parent, o)) {
            break;
        }
        best = parent.to_string();
        dir = parent;
    }
    best
}

/// The updates of the repository's release history that `p` would call
/// free while `reference` (see [`reference_root`]) restarts, its
/// fingerprints available at both ends: the proposal may leave out code
/// the server runs. Each as `FROM → TO`; empty when the repository has no
/// releases, the proposal is the reference, or the history cannot be read.
pub fn free_where_default_restarts(
    repo: &crate::source::git::Session,
    p: &Proposal,
    reference: &str,
) -> Vec<String> {
    let default_root = reference.to_string();
    let exclude: Vec<String> = match &p.widened {
        Some((_, w)) if !w.exclude.is_empty() => {
            let mut all = Rules::default().exclude;
            all.extend(w.exclude.iter().map(|(n, _)| n.clone()));
            all
        }
        _ => Vec::new(),
    };
    if p.root == default_root && exclude.is_empty() {
        return Vec::new();
    }
    let opts = crate::history::HistoryOptions {
        persistent_cache: true,
        // Only which updates restart is compared: the two roots' own
        // readings, without git's checkouts.
        witness: crate::witness::Mode::Never,
        ..Default::default()
    };
    let run = |root: Option<String>, exclude: Vec<String>| {
        let request = crate::config::SettingsRequest::overrides_only(crate::config::Overrides {
            root,
            exclude,
            ..Default::default()
        });
        crate::history::run(repo, &request, &opts, &|_, _| {}).ok()
    };
    let (Some(proposed), Some(default)) = (
        run(Some(p.root.clone()), exclude),
        run(Some(default_root), Vec::new()),
    ) else {
        return Vec::new();
    };
    let free: BTreeMap<(&str, &str), bool> = proposed
        .record
        .updates
        .iter()
        .map(|s| ((s.from.as_str(), s.to.as_str()), !s.restart_required))
        .collect();
    let available = |fp: &str| crate::fingerprint::available(fp).is_some();
    default
        .record
        .updates
        .iter()
        .filter(|s| {
            s.restart_required && available(&s.from_fingerprint) && available(&s.to_fingerprint)
        })
        .filter(|s| free.get(&(s.from.as_str(), s.to.as_str())) == Some(&true))
        .map(|s| format!("{} → {}", s.from, s.to))
        .collect()
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
    fn prefixed_tags_give_their_globs() {
        let names = [
            "server-v1.2.0",
            "server-v1.3.0rc1",
            "worker-v1.0.0",
            "mcp@1.2.0",
            "v1.0.0",
            "release-candidate",
            "py3-build",
        ];
        assert_eq!(
            tag_patterns(names),
            [
                ("server-v*".to_string(), 2),
                ("mcp@*".to_string(), 1),
                ("worker-v*".to_string(), 1),
            ]
        );
    }

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
                    left_out: None,
                    rank: 0,
                    widened: None,
                },
                Proposal {
                    name: "b".into(),
                    root: String::new(),
                    evidence: vec![],
                    left_out: None,
                    rank: 0,
                    widened: None,
                },
            ],
            truncated: true,
            notes: vec![],
            tag_patterns: vec![("we\nird*".into(), 1)],
            tags_total: 1,
        };
        let text = render(&scan);
        let file = check(&text).unwrap();
        assert_eq!(file.runtimes["a"].root.as_deref(), Some("we\"ird\\dir\n"));
        assert_eq!(file.runtimes["b"].root.as_deref(), Some("."));
    }
}

//! Which files count: the selection rules of docs/spec.md sections 1 and 3,
//! written once and applied to the entries of any [`Source`].
//!
//! The walk here is the only recursion over a runtime root in fpcheck, so the
//! git tree and the directory on disk cannot drift apart in what they select.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::source::{
    display_path, too_deep, Budget, Entry, EntryKind, Node, RootState, Source, SourceError, Target,
    MAX_DIRS, MAX_ENTRIES, MAX_TREE_DEPTH,
};
use crate::warning::{Code, Warning};

/// Selected files are a source's nodes with their paths: defined with them.
pub use crate::source::SelectedFile;

/// The excluded names of the reference gate (spec section 1).
pub const DEFAULT_EXCLUDE: [&str; 8] = [
    "scripts",
    "tests",
    "migrations",
    "crons",
    "__pycache__",
    "node_modules",
    ".git",
    "versions",
];

/// The runtime extensions of the reference gate.
pub(crate) const DEFAULT_EXTENSIONS: [&str; 1] = [".py"];

/// Which entries under a runtime root are runtime files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rules {
    /// A name is selected when it ends with one of these (case-sensitive).
    pub extensions: Vec<String>,
    /// A path is dropped when any of its segments equals one of these.
    pub exclude: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            extensions: DEFAULT_EXTENSIONS.iter().map(|s| s.to_string()).collect(),
            exclude: DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// Why a changed path does or does not count, for explanations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class<'a> {
    /// The path is a runtime file.
    Runtime,
    /// A segment of the path equals this excluded name.
    Excluded(&'a str),
    /// The file name does not end with a runtime extension.
    NotRuntimeExtension,
}

impl Rules {
    /// Does this entry name end with a runtime extension?
    pub fn selects_name(&self, name: &[u8]) -> bool {
        self.extensions
            .iter()
            .any(|ext| name.ends_with(ext.as_bytes()))
    }

    /// The excluded name equal to this segment, if any.
    pub fn excluded_name(&self, segment: &[u8]) -> Option<&str> {
        self.exclude
            .iter()
            .find(|n| n.as_bytes() == segment)
            .map(String::as_str)
    }

    /// Classifies a path relative to the runtime root (`/`-separated).
    pub fn classify<'a>(&'a self, path: &[u8]) -> Class<'a> {
        if let Some(name) = path
            .split(|b| *b == b'/')
            .find_map(|s| self.excluded_name(s))
        {
            return Class::Excluded(name);
        }
        let file_name = path.rsplit(|b| *b == b'/').next().unwrap_or(path);
        if self.selects_name(file_name) {
            Class::Runtime
        } else {
            Class::NotRuntimeExtension
        }
    }
}

/// What the selection makes of one entry below the root, by its name and
/// kind alone: the one rule of section 1, which the selection walk
/// ([`select`]) and the scan that stands in for it on a git tree
/// ([`plain_selection`]) both follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryRule {
    /// Not a runtime file, and nothing below it can be one: excluded, or
    /// not selected and no directory.
    Skip,
    /// A runtime file (a regular file, or a link to resolve).
    Select,
    /// A directory to walk into; `selected` when its name is a runtime
    /// file's, which is a problem too ([`IS_A_DIRECTORY`]).
    Enter { selected: bool },
    /// Something at this path makes the selection unavailable.
    Problem(&'static str),
}

/// The problem of a directory named like a runtime file.
const IS_A_DIRECTORY: &str = "is a directory";

impl Rules {
    /// See [`EntryRule`].
    pub(crate) fn entry_rule(&self, name: &[u8], kind: EntryKind) -> EntryRule {
        if self.excluded_name(name).is_some() {
            return EntryRule::Skip;
        }
        let selected = self.selects_name(name);
        match kind {
            EntryKind::Dir => EntryRule::Enter { selected },
            EntryKind::Submodule => EntryRule::Problem(
                "is a submodule: its files cannot be seen (exclude it or vendor its code)",
            ),
            EntryKind::File | EntryKind::Symlink if selected => EntryRule::Select,
            EntryKind::Other if selected => EntryRule::Problem("is not a regular file"),
            EntryKind::File | EntryKind::Symlink | EntryKind::Other => EntryRule::Skip,
        }
    }
}

/// The number of files [`select`] would select from `source`, when a scan
/// of its trees proves that walk would find no problem, resolve no link
/// and see no `.gitattributes` below the root (then the selection is a
/// function of the root tree, its depth and `rules`); `None` when the full
/// walk must answer. See [`GitSource::plain_selection`].
pub(crate) fn plain_selection(source: &crate::source::GitSource, rules: &Rules) -> Option<usize> {
    use crate::source::ScanStep;
    source.plain_selection(
        &|name: &[u8], kind: EntryKind| match rules.entry_rule(name, kind) {
            EntryRule::Skip => ScanStep::Skip,
            EntryRule::Select if kind == EntryKind::File => ScanStep::Count,
            EntryRule::Enter { selected: false } => ScanStep::Enter,
            // A link to resolve, a problem: the walk's to answer.
            _ => ScanStep::Walk,
        },
    )
}

/// Why a fingerprint cannot be computed, naming the path at fault.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    /// The path, as the user knows it (root prefix included).
    pub path: String,
    /// A sentence fragment that follows the path.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.what)
        } else if self.what.starts_with(':') {
            write!(f, "{}{}", self.path, self.what)
        } else {
            write!(f, "{} {}", self.path, self.what)
        }
    }
}

/// The result of applying the rules to a source: the files to hash, in hash
/// order, or the problems that make the fingerprint unavailable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Selected files in hash order (by UTF-8 bytes of the path).
    pub files: Vec<SelectedFile>,
    /// Problems in path order; non-empty means "unavailable".
    pub problems: Vec<Problem>,
    /// Directories that could not be read and were skipped, as the
    /// reference gate's `Path.rglob` skips them (its PermissionError is
    /// swallowed): their files are not part of the selection.
    pub skipped: Vec<Problem>,
}

impl Selection {
    /// True when a fingerprint can be computed from this selection.
    pub fn is_available(&self) -> bool {
        self.problems.is_empty() && !self.files.is_empty()
    }

    /// Warnings for the directories skipped because they cannot be read.
    pub fn skipped_warnings(&self) -> Vec<Warning> {
        self.skipped
            .iter()
            .map(|p| {
                Warning::new(
                    Code::DirectorySkipped,
                    format!("{p}: skipped, as the reference gate's Path.rglob skips a directory it cannot read"),
                )
            })
            .collect()
    }

    /// The sentence that explains an unavailable fingerprint.
    pub fn unavailable_reason(&self, root_display: &str, rules: &Rules) -> Option<String> {
        if let Some(first) = self.problems.first() {
            let more = self.problems.len() - 1;
            return Some(match more {
                0 => first.to_string(),
                1 => format!("{first} (and 1 more problem)"),
                n => format!("{first} (and {n} more problems)"),
            });
        }
        if self.files.is_empty() {
            let exts = rules.extensions.join(" or ");
            return Some(format!("no {exts} files under {root_display}"));
        }
        None
    }

    /// Content ids by path: equal maps mean equal fingerprints, no blob read.
    pub fn identity(&self) -> BTreeMap<&str, &Node> {
        self.files
            .iter()
            .map(|f| (f.path.as_str(), &f.content))
            .collect()
    }
}

/// Walks `source` from its runtime root and applies `rules`.
///
/// Excluded directories are not entered: every path below them carries the
/// excluded segment, so nothing there can be selected or be at fault.
pub fn select(source: &dyn Source, rules: &Rules) -> Result<Selection, SourceError> {
    let root_display = source.root_display();
    let root = match source.root()? {
        RootState::Dir(node) => node,
        RootState::Missing => return Ok(unavailable(&root_display, "does not exist")),
        RootState::NotADirectory => return Ok(unavailable(&root_display, "is not a directory")),
        RootState::Unresolvable(why) => return Ok(unavailable(&root_display, &why)),
    };
    let mut walk = Walk::new(&root_display, source.root_depth());
    walk.run(source, rules, root)?;
    let Walk {
        candidates,
        mut problems,
        mut skipped,
        ..
    } = walk;
    let files = resolve_candidates(source, &root_display, candidates, &mut problems)?;
    problems.sort();
    skipped.sort();
    Ok(Selection {
        files,
        problems,
        skipped,
    })
}

/// One walk of a runtime root: what it found so far, and where it is.
///
/// Depth first, each directory's entries in their order, a directory's
/// files listed when it is reached: a git tree (entries sorted as git
/// sorts them, a directory's name compared as `name/`) then yields its
/// paths already in byte order, and the sort after the walk is a check.
struct Walk<'a> {
    root_display: &'a str,
    /// How deep a directory below the root may be for its entries to stay
    /// within git's core.maxTreeDepth (counted from the top of the
    /// repository).
    max_below_root: usize,
    candidates: Vec<(Vec<u8>, Entry)>,
    problems: Vec<Problem>,
    skipped: Vec<Problem>,
    /// The path of the directory being read: each frame's prefix is a
    /// prefix of it (held once, not per level, for deep trees).
    dir_path: Vec<u8>,
    stack: Vec<Frame>,
    budget: Budget,
}

impl<'a> Walk<'a> {
    fn new(root_display: &'a str, root_depth: usize) -> Self {
        Walk {
            root_display,
            max_below_root: MAX_TREE_DEPTH.saturating_sub(root_depth + 1),
            candidates: Vec::new(),
            problems: Vec::new(),
            skipped: Vec::new(),
            dir_path: Vec::new(),
            stack: Vec::new(),
            budget: Budget::default(),
        }
    }

    /// Walks everything below `root` that `rules` may select from, until
    /// the walk's budget runs out (a problem, not an error).
    fn run(&mut self, source: &dyn Source, rules: &Rules, root: Node) -> Result<(), SourceError> {
        let mut next: Option<(Node, usize)> = Some((root, 0));
        loop {
            if let Some((dir, depth)) = next.take() {
                if !self.budget.enter_dir() {
                    self.too_many();
                    return Ok(());
                }
                self.read_dir(source, &dir, depth)?;
            }
            let Some(frame) = self.stack.last_mut() else {
                return Ok(());
            };
            let Some(entry) = frame.entries.next() else {
                self.stack.pop();
                continue;
            };
            if !self.budget.visit(1) {
                self.too_many();
                return Ok(());
            }
            let (depth, prefix) = (frame.depth, frame.prefix);
            next = self.place(rules, entry, depth, prefix);
        }
    }

    /// Reads the directory `dir` at the walk's path, to walk its entries
    /// next. One that cannot be read is skipped, as the reference gate's
    /// `Path.rglob` skips it; a malformed tree is a problem.
    fn read_dir(
        &mut self,
        source: &dyn Source,
        dir: &Node,
        depth: usize,
    ) -> Result<(), SourceError> {
        match source.read_dir(dir, &self.dir_path) {
            Err(SourceError::Unreadable { path, why }) => self.skipped.push(Problem {
                path,
                what: format!(": {why}"),
            }),
            // Never skipped: a malformed tree has no agreed content.
            Err(SourceError::Malformed { path, why }) => {
                self.problems.push(Problem { path, what: why })
            }
            Err(e) => return Err(e),
            Ok(entries) => self.stack.push(Frame {
                entries: entries.into_iter(),
                prefix: self.dir_path.len(),
                depth,
            }),
        }
        Ok(())
    }

    /// Sorts `entry`, of the directory at `depth` whose path is `prefix`
    /// bytes long, by its rule: a candidate, a problem, or the directory
    /// to walk into next (returned).
    fn place(
        &mut self,
        rules: &Rules,
        entry: Entry,
        depth: usize,
        prefix: usize,
    ) -> Option<(Node, usize)> {
        let rule = rules.entry_rule(&entry.name, entry.kind);
        if rule == EntryRule::Skip {
            return None;
        }
        self.dir_path.truncate(prefix);
        let mut path = self.dir_path.clone();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(&entry.name);
        match rule {
            EntryRule::Skip => {}
            EntryRule::Select => self.candidates.push((path, entry)),
            EntryRule::Problem(what) => self.problems.push(problem(self.root_display, &path, what)),
            EntryRule::Enter { selected } => {
                if selected {
                    self.problems
                        .push(problem(self.root_display, &path, IS_A_DIRECTORY));
                }
                if depth + 1 > self.max_below_root {
                    self.problems
                        .push(problem(self.root_display, &path, &too_deep()));
                    return None;
                }
                self.dir_path = path;
                return Some((entry.node, depth + 1));
            }
        }
        None
    }

    /// The walk stops here: past its budget of directories or entries.
    fn too_many(&mut self) {
        self.problems
            .push(problem(self.root_display, &self.dir_path, &too_many()));
    }
}

/// The selected files of `candidates` (paths below the root, in any order)
/// in hash order, their links resolved; each one that cannot be hashed is
/// a problem instead.
fn resolve_candidates(
    source: &dyn Source,
    root_display: &str,
    mut candidates: Vec<(Vec<u8>, Entry)>,
    problems: &mut Vec<Problem>,
) -> Result<Vec<SelectedFile>, SourceError> {
    // Hash order: by the bytes of the path (a directory on disk lists its
    // entries in any order).
    if !candidates.is_sorted_by(|a, b| a.0 < b.0) {
        candidates.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    let mut files = Vec::with_capacity(candidates.len());
    for (path, entry) in candidates {
        let Ok(utf8) = String::from_utf8(path.clone()) else {
            problems.push(problem(root_display, &path, "is not valid UTF-8"));
            continue;
        };
        match source.resolve(&path, &entry) {
            Ok(Target::File(content)) => files.push(SelectedFile {
                path: utf8,
                content,
            }),
            Ok(Target::Unavailable(what)) => problems.push(problem(root_display, &path, &what)),
            Err(SourceError::Unreadable { path, why }) => problems.push(Problem {
                path,
                what: format!(": {why}"),
            }),
            Err(SourceError::Malformed { path, why }) => problems.push(Problem { path, what: why }),
            Err(e) => return Err(e),
        }
    }
    Ok(files)
}

/// A directory being walked: its entries not yet visited.
struct Frame {
    entries: std::vec::IntoIter<Entry>,
    /// The length of its path (a prefix of the walk's directory path).
    prefix: usize,
    depth: usize,
}

fn too_many() -> String {
    format!(
        ": the walk below the root passed {MAX_DIRS} directories or {MAX_ENTRIES} entries \
         (a tree naming the same subtree many times over?): fpcheck stops there"
    )
}

fn unavailable(root_display: &str, what: &str) -> Selection {
    Selection {
        files: Vec::new(),
        problems: vec![Problem {
            path: root_display.to_string(),
            what: what.to_string(),
        }],
        skipped: Vec::new(),
    }
}

fn problem(root_display: &str, rel: &[u8], what: &str) -> Problem {
    Problem {
        path: display_path(root_display, rel),
        what: what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_selected_case_sensitively() {
        let rules = Rules::default();
        assert!(rules.selects_name(b"a.py"));
        assert!(rules.selects_name(b".hidden.py"));
        assert!(rules.selects_name(b".py"));
        assert!(!rules.selects_name(b"A.PY"));
        assert!(!rules.selects_name(b"x.pyc"));
        assert!(!rules.selects_name(b"x.pyi"));
    }

    #[test]
    fn classify_names_the_excluded_segment() {
        let rules = Rules::default();
        assert_eq!(rules.classify(b"plugins/foo.py"), Class::Runtime);
        assert_eq!(
            rules.classify(b"plugins/tests/x.py"),
            Class::Excluded("tests")
        );
        assert_eq!(rules.classify(b"scripts/x.md"), Class::Excluded("scripts"));
        assert_eq!(rules.classify(b"README.md"), Class::NotRuntimeExtension);
        assert_eq!(rules.classify(b"testsx/a.py"), Class::Runtime);
    }

    /// A directory source whose `locked` subdirectory cannot be read.
    struct Locked(tempfile::TempDir);

    impl Source for Locked {
        fn root_display(&self) -> String {
            "src".into()
        }
        fn root(&self) -> Result<RootState, SourceError> {
            Ok(RootState::Dir(Node::Path(self.0.path().to_path_buf())))
        }
        fn read_dir(&self, dir: &Node, rel: &[u8]) -> Result<Vec<Entry>, SourceError> {
            if rel == b"locked" {
                return Err(SourceError::Unreadable {
                    path: "src/locked".into(),
                    why: "Permission denied".into(),
                });
            }
            crate::source::DirSource::new(self.0.path()).read_dir(dir, rel)
        }
        fn resolve(&self, rel: &[u8], entry: &Entry) -> Result<Target, SourceError> {
            crate::source::DirSource::new(self.0.path()).resolve(rel, entry)
        }
        fn read(
            &self,
            rel: &str,
            content: &Node,
            sink: &mut dyn FnMut(&[u8]),
        ) -> Result<(), SourceError> {
            crate::source::DirSource::new(self.0.path()).read(rel, content, sink)
        }
        fn read_meta(
            &self,
            _: &str,
            _: bool,
        ) -> Result<Option<crate::source::MetaFile>, SourceError> {
            Ok(None)
        }
        fn origin(&self) -> crate::source::Origin {
            crate::source::Origin::Dir { dir: "src".into() }
        }
    }

    #[test]
    fn unreadable_directories_are_skipped_as_rglob_skips_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "a\n").unwrap();
        std::fs::create_dir(dir.path().join("locked")).unwrap();
        std::fs::write(dir.path().join("locked/b.py"), "b\n").unwrap();
        let source = Locked(dir);
        let fp = crate::compute(&source, &Rules::default()).unwrap();
        assert_eq!(fp.files(), ["a.py"]);
        // The same as the fingerprint of a.py alone.
        let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
        sha2::Digest::update(&mut hasher, b"a.py\0a\n\n");
        assert_eq!(
            fp.digest.as_deref(),
            Some(hex::encode(sha2::Digest::finalize(hasher)).as_str())
        );
        assert_eq!(
            fp.warnings,
            [Warning::new(
                Code::DirectorySkipped,
                "src/locked: Permission denied: skipped, as the reference gate's Path.rglob skips a directory it cannot read"
            )]
        );
    }

    #[test]
    fn problems_read_as_sentences() {
        let p = Problem {
            path: "src/a.py".into(),
            what: ": symlink to ../../x leaves the repository".into(),
        };
        assert_eq!(
            p.to_string(),
            "src/a.py: symlink to ../../x leaves the repository"
        );
        let p = Problem {
            path: "src/pkg.py".into(),
            what: "is a directory".into(),
        };
        assert_eq!(p.to_string(), "src/pkg.py is a directory");
    }
}

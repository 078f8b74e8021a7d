//! The property of issue 2: for generated runtime trees, the fingerprint from
//! the commit (tree mode), from the `src/` directory of a checkout of that
//! commit (directory mode), and from the Python reference
//! (`tests/reference_fingerprint.py`) are the same string and select the same
//! files.
//!
//! Trees are built under `src/` of a real repository: names with punctuation,
//! unicode, dots and spaces; excluded names at any depth; empty, text and
//! binary contents; links to files and to directories, links that leave the
//! root but stay in the repository, broken and looping links, links through
//! other links; directories named `*.py`; and sometimes a submodule (a
//! gitlink), which makes tree mode unavailable unless it is excluded. Link
//! targets never leave the repository and are never absolute: there a
//! checkout differs from the tree by design.
//!
//! `PROPTEST_CASES` sets the number of cases (48 by default).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use fpcheck::select::DEFAULT_EXCLUDE;
use fpcheck::source::git::open_repo;
use fpcheck::{DirSource, GitSource, Revision, Rules};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::Value;

use crate::support::{git_in, write_tree, TestRepo};

/// Any commit id does for a gitlink: nothing ever reads the submodule.
const GITLINK_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

// ---------------------------------------------------------------------------
// The generated tree.
//
// Any one hazard (a directory named `*.py`, a selected link that is broken,
// loops or leads to a directory, a submodule) makes the whole fingerprint
// unavailable and hides every other difference. So each case draws a hazard
// rate: at 0 every hazard is tamed (directories renamed, selected links aimed
// at files, submodules moved under `tests/`) and the digest must exist; at
// low rates a case holds one or two hazards, each on its own; at 100 it is
// wild. Links that are not selected (other names, excluded directories) stay
// wild at every rate: the rules must ignore them.

/// A node of the tree under `src/`, as generated.
#[derive(Clone, Debug)]
enum Gen {
    File(Vec<u8>),
    Link(LinkSpec),
    /// Entries, and the roll that decides if a `*.py` name may stay.
    Dir(BTreeMap<String, Gen>, Index),
}

/// A symbolic link, before its target is chosen among the tree's paths.
#[derive(Clone, Copy, Debug)]
struct LinkSpec {
    form: LinkForm,
    a: Index,
    b: Index,
    c: Index,
    /// Decides, against the hazard rate, if a selected link may stay wild.
    roll: Index,
}

#[derive(Clone, Copy, Debug)]
enum LinkForm {
    /// The relative path from the link's directory to any path of the
    /// repository (a file, a directory, a link, a missing name).
    Direct,
    /// The same with a trailing `/` or `/.`.
    DirectSlash,
    /// Through another link: `<link>/<name>`.
    ViaLink,
    /// Up from wherever another link leads: `<link>/../<name>`.
    ViaLinkUp,
    /// Up from a path that is not a link: `<path>/../<name>`.
    ViaNode,
    /// The link itself, as `<own name>` or `./<own name>`.
    SelfLoop,
}

/// What is committed at one path.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    File(Vec<u8>),
    Link(String),
    Submodule,
}

/// One generated case: every path committed, from the top of the repository.
#[derive(Clone)]
struct Case {
    /// Percent chance that each potential hazard is kept.
    hazard_rate: usize,
    entries: Vec<(String, Kind)>,
}

fn is_excluded(segment: &str) -> bool {
    DEFAULT_EXCLUDE.contains(&segment)
}

impl Case {
    /// A submodule below `src/` whose path has no excluded segment: tree
    /// mode cannot see its files, so it must say "unavailable".
    fn live_submodule(&self) -> Option<&str> {
        self.entries.iter().find_map(|(path, kind)| {
            let below = path.strip_prefix("src/")?;
            let excluded = below.split('/').any(is_excluded);
            (*kind == Kind::Submodule && !excluded).then_some(path.as_str())
        })
    }

    /// Whether some file or link below `src/` would be selected.
    fn selects_something(&self) -> bool {
        self.entries.iter().any(|(path, kind)| {
            path.strip_prefix("src/").is_some_and(|below| {
                *kind != Kind::Submodule
                    && below.ends_with(".py")
                    && !below.split('/').any(is_excluded)
            })
        })
    }
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tree ({} entries, hazard rate {}%):",
            self.entries.len(),
            self.hazard_rate
        )?;
        for (path, kind) in &self.entries {
            match kind {
                Kind::File(bytes) => writeln!(f, "  {path:?}  file b\"{}\"", bytes.escape_ascii())?,
                Kind::Link(target) => writeln!(f, "  {path:?}  -> {target:?}")?,
                Kind::Submodule => writeln!(f, "  {path:?}  submodule")?,
            }
        }
        Ok(())
    }
}

/// Files outside the runtime root, for links that leave it to point at.
fn outside_fixture() -> Vec<(String, Kind)> {
    let file = |p: &str, c: &str| (p.to_string(), Kind::File(c.as_bytes().to_vec()));
    let link = |p: &str, t: &str| (p.to_string(), Kind::Link(t.to_string()));
    vec![
        file("README.md", "# outside the root\n"),
        file("lib/x.py", "# outside the root\n"),
        file("lib/data.txt", "data\n"),
        file("lib/sub/z.py", "z = 1\n"),
        link("lib/link.py", "x.py"),
        link("lib/dirlink", "sub"),
        link("lib/loop.py", "loop.py"),
    ]
}

fn name() -> impl Strategy<Value = String> {
    let stem = prop_oneof![
        4 => prop::sample::select(vec![
            "a", "b", "A", "_", "__init__", "café", "cafe", "日本", "x y", "it's", "a-b",
            "a!", "back\\slash", "é t é", "ß", "😀", "tab\there", "with.dots", ".hidden",
            "-dash", "#hash", "[x]", "*", "?", "~", "100%", "a,b", " lead", "trail ",
            "dots..", "\u{301}combining", "\u{7f}del",
        ])
        .prop_map(String::from),
        3 => "[a-zA-Z0-9 _.,!#$%&'()+=@^~{};\\[\\]-]{1,6}",
        2 => "[a-zé日😀 .]{1,4}",
    ];
    let ext = prop::sample::select(vec![
        "", "", ".py", ".py", ".py", ".py", ".PY", ".pyc", ".txt", ".py.bak", ".md",
    ]);
    prop_oneof![
        1 => prop::sample::select(vec![
            "tests", "scripts", "migrations", "crons", "__pycache__", "node_modules",
            "versions", "testsx", "Tests", "test",
        ])
        .prop_map(String::from),
        6 => (stem, ext).prop_map(|(s, e)| s + e),
    ]
    .prop_filter("a name git and the file system accept", |n| {
        let lower = n.to_lowercase();
        n != "."
            && n != ".."
            && !n.contains(['/', '\0', '\n', '\r'])
            && !lower.starts_with(".git")
            && !lower.starts_with("git~")
            && n.len() <= 200
    })
}

fn contents() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => Just(Vec::new()),
        3 => prop::sample::select(vec![
            b"x = 1\n".to_vec(),
            b"# shared\n".to_vec(),
            b"a = 1\r\nb = 2\r\n".to_vec(),
            b"no newline at end".to_vec(),
        ]),
        3 => "[ -~\n\t]{0,40}".prop_map(String::into_bytes),
        2 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

fn link_spec() -> impl Strategy<Value = LinkSpec> {
    let form = prop_oneof![
        6 => Just(LinkForm::Direct),
        1 => Just(LinkForm::DirectSlash),
        2 => Just(LinkForm::ViaLink),
        1 => Just(LinkForm::ViaLinkUp),
        1 => Just(LinkForm::ViaNode),
        1 => Just(LinkForm::SelfLoop),
    ];
    (form, any::<[Index; 4]>()).prop_map(|(form, [a, b, c, roll])| LinkSpec {
        form,
        a,
        b,
        c,
        roll,
    })
}

fn node() -> impl Strategy<Value = Gen> {
    let leaf = prop_oneof![
        3 => contents().prop_map(Gen::File),
        1 => link_spec().prop_map(Gen::Link),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        (
            prop::collection::btree_map(name(), inner, 0..5),
            any::<Index>(),
        )
            .prop_map(|(entries, roll)| Gen::Dir(entries, roll))
    })
}

/// Where to put a submodule: under which directory, whether inside a
/// `tests/` there (so it is excluded), its name, and the roll that decides
/// if it may stay outside `tests/`.
type SubmoduleSpec = (Index, bool, String, Index);

fn case() -> impl Strategy<Value = Case> {
    let rate = prop_oneof![
        3 => Just(0usize),
        4 => Just(8),
        2 => Just(25),
        1 => Just(100),
    ];
    (
        prop::collection::btree_map(name(), node(), 1..7),
        prop::option::weighted(
            0.25,
            (any::<Index>(), any::<bool>(), name(), any::<Index>()),
        ),
        rate,
    )
        .prop_map(|(root, submodule, rate)| build(root, submodule, rate))
}

/// Keeps a hazard with `rate` percent chance.
fn keep(roll: &Index, rate: usize) -> bool {
    roll.index(100) < rate
}

/// Renames directories called `*.py` that are not excluded, unless kept.
fn tame_directories(
    map: BTreeMap<String, Gen>,
    excluded: bool,
    rate: usize,
) -> BTreeMap<String, Gen> {
    let mut out = BTreeMap::new();
    let names: Vec<String> = map.keys().cloned().collect();
    for (name, node) in map {
        let excluded = excluded || is_excluded(&name);
        match node {
            Gen::Dir(children, roll) => {
                let children = tame_directories(children, excluded, rate);
                let mut name = name;
                if !excluded && name.ends_with(".py") && !keep(&roll, rate) {
                    while names.contains(&name) || out.contains_key(&name) {
                        name.push_str("_d");
                    }
                }
                out.insert(name, Gen::Dir(children, roll));
            }
            other => {
                out.insert(name, other);
            }
        }
    }
    out
}

/// A path generated below `src/`, before links get their targets.
enum Flat {
    File(Vec<u8>),
    /// A link, and whether its name is selected (so it may be a hazard).
    Link(LinkSpec, bool),
    Dir,
    Submodule,
}

fn flatten(
    prefix: &[String],
    excluded: bool,
    map: &BTreeMap<String, Gen>,
    out: &mut Vec<(Vec<String>, Flat)>,
) {
    for (name, node) in map {
        let mut path = prefix.to_vec();
        path.push(name.clone());
        let excluded = excluded || is_excluded(name);
        match node {
            Gen::File(bytes) => out.push((path, Flat::File(bytes.clone()))),
            Gen::Link(spec) => {
                let selected = !excluded && name.ends_with(".py");
                out.push((path, Flat::Link(*spec, selected)))
            }
            Gen::Dir(children, _) => {
                out.push((path.clone(), Flat::Dir));
                flatten(&path, excluded, children, out);
            }
        }
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('/').map(String::from).collect()
}

/// The relative path from directory `from` to `to`, both from the top of
/// the repository. Every segment it walks is a real directory, so it means
/// the same thing on disk and in the tree, and it never leaves the
/// repository.
fn relative(from: &[String], to: &[String]) -> String {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(to[common..].iter().map(String::as_str));
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// The paths a link may be aimed at, from the top of the repository.
struct Targets {
    /// Everything: files, directories, links, submodules, missing paths.
    any: Vec<Vec<String>>,
    /// Everything that is not a link (so `<it>/..` is its real parent).
    not_links: Vec<Vec<String>>,
    links: Vec<Vec<String>>,
    /// Names to append after a link or a `..`.
    names: Vec<String>,
    /// Paths that lead to a regular file, for tame links.
    files: Vec<Vec<String>>,
    /// Directories that exist in the commit, for tame `<dir>/../<file>`.
    dirs: Vec<Vec<String>>,
}

impl Targets {
    fn new(flat: &[(Vec<String>, Flat)], outside: &[(String, Kind)]) -> Targets {
        let is_link = |p: &[String]| {
            flat.iter()
                .any(|(q, f)| q == p && matches!(f, Flat::Link(..)))
                || outside
                    .iter()
                    .any(|(q, k)| split(q) == p && matches!(k, Kind::Link(_)))
        };
        let mut any: Vec<Vec<String>> =
            ["src", "lib", "lib/sub", "src/missing.py", "lib/nope/x.py"]
                .iter()
                .map(|p| split(p))
                .collect();
        any.extend(outside.iter().map(|(p, _)| split(p)));
        any.extend(flat.iter().map(|(p, _)| p.clone()));
        let not_links = any.iter().filter(|p| !is_link(p)).cloned().collect();
        let links = any.iter().filter(|p| is_link(p)).cloned().collect();
        let mut names: Vec<String> = vec!["x.py".into(), "missing.py".into(), "sub".into()];
        names.extend(flat.iter().map(|(p, _)| p.last().unwrap().clone()));
        let mut files: Vec<Vec<String>> = [
            "lib/x.py",
            "lib/data.txt",
            "lib/sub/z.py",
            "README.md",
            "lib/link.py",
        ]
        .iter()
        .map(|p| split(p))
        .collect();
        files.extend(
            flat.iter()
                .filter(|(_, f)| matches!(f, Flat::File(_)))
                .map(|(p, _)| p.clone()),
        );
        // A directory is committed when something other than a directory
        // is below it.
        let mut dirs: Vec<Vec<String>> =
            ["src", "lib", "lib/sub"].iter().map(|p| split(p)).collect();
        dirs.extend(
            flat.iter()
                .filter(|(p, f)| {
                    matches!(f, Flat::Dir)
                        && flat.iter().any(|(q, g)| {
                            q.len() > p.len() && q.starts_with(p) && !matches!(g, Flat::Dir)
                        })
                })
                .map(|(p, _)| p.clone()),
        );
        Targets {
            any,
            not_links,
            links,
            names,
            files,
            dirs,
        }
    }

    /// Any target at all, from directory `dir` of a link named `own`.
    fn wild(&self, dir: &[String], own: &str, spec: &LinkSpec) -> String {
        let pick = |i: &Index, from: &[Vec<String>]| relative(dir, i.get::<Vec<String>>(from));
        let name = spec.b.get(&self.names);
        match spec.form {
            LinkForm::Direct => pick(&spec.a, &self.any),
            LinkForm::DirectSlash => {
                let slash = if spec.c.index(2) == 0 { "/" } else { "/." };
                pick(&spec.a, &self.any) + slash
            }
            LinkForm::ViaLink => format!("{}/{name}", pick(&spec.a, &self.links)),
            LinkForm::ViaLinkUp => format!("{}/../{name}", pick(&spec.a, &self.links)),
            LinkForm::ViaNode => format!("{}/../{name}", pick(&spec.a, &self.not_links)),
            LinkForm::SelfLoop if spec.c.index(2) == 0 => own.to_string(),
            LinkForm::SelfLoop => format!("./{own}"),
        }
    }

    /// A target that leads to a regular file, by one of several routes.
    fn tame(&self, dir: &[String], spec: &LinkSpec) -> String {
        let file = spec.a.get::<Vec<String>>(&self.files);
        match spec.b.index(6) {
            0..=2 => relative(dir, file),
            3 => relative(dir, &split("lib/dirlink")) + "/z.py",
            4 => relative(dir, &split("lib/dirlink")) + "/../x.py",
            _ => {
                let via = spec.c.get::<Vec<String>>(&self.dirs);
                let parent = &via[..via.len() - 1];
                format!("{}/../{}", relative(dir, via), relative(parent, file))
            }
        }
    }
}

/// Tames hazards by the rate, gives every link a target and places the
/// submodule.
///
/// No target can leave the repository: by induction, every link leads (if
/// anywhere) to a path at least one level below the top, so `<link>/..`
/// stays inside; every other `..` climbs real directories only, from the
/// link's own directory or from a real path.
fn build(root: BTreeMap<String, Gen>, submodule: Option<SubmoduleSpec>, rate: usize) -> Case {
    let root = tame_directories(root, false, rate);
    let mut flat = Vec::new();
    flatten(&["src".to_string()], false, &root, &mut flat);

    if let Some((at, in_tests, name, roll)) = submodule {
        let mut dirs = vec![vec!["src".to_string()]];
        dirs.extend(
            flat.iter()
                .filter(|(_, f)| matches!(f, Flat::Dir))
                .map(|(p, _)| p.clone()),
        );
        let mut path = at.get::<Vec<String>>(&dirs).clone();
        if in_tests || !keep(&roll, rate) {
            path.push("tests".into());
        }
        path.push(name);
        let clashes = flat
            .iter()
            .any(|(p, f)| p.starts_with(&path) || (path.starts_with(p) && !matches!(f, Flat::Dir)));
        if !clashes {
            flat.push((path, Flat::Submodule));
        }
    }

    let outside = outside_fixture();
    let targets = Targets::new(&flat, &outside);
    let mut entries = Vec::new();
    for (path, f) in &flat {
        let kind = match f {
            Flat::Dir => continue,
            Flat::File(bytes) => Kind::File(bytes.clone()),
            Flat::Submodule => Kind::Submodule,
            Flat::Link(spec, selected) => {
                let dir = &path[..path.len() - 1];
                let own = path.last().unwrap();
                Kind::Link(if *selected && !keep(&spec.roll, rate) {
                    targets.tame(dir, spec)
                } else {
                    targets.wild(dir, own, spec)
                })
            }
        };
        entries.push((path.join("/"), kind));
    }
    entries.extend(outside);
    Case {
        hazard_rate: rate,
        entries,
    }
}

// ---------------------------------------------------------------------------
// The three answers.

/// A fingerprint as the gate sees it, the selection, and why not: every
/// problem fpcheck found, or the reference's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Answer {
    digest: String,
    files: Vec<String>,
    why: String,
}

impl Answer {
    fn of(fp: &fpcheck::Fingerprint) -> Answer {
        Answer {
            digest: fp.as_gate_str().to_string(),
            files: fp.files().into_iter().map(String::from).collect(),
            why: match fp.selection.problems.as_slice() {
                [] => fp.unavailable_reason.clone().unwrap_or_default(),
                all => all
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("; "),
            },
        }
    }

    /// What must agree: the digest and the selection.
    fn key(&self) -> (&str, &[String]) {
        (&self.digest, &self.files)
    }
}

/// Runs the Python reference on a directory.
fn python(root: &Path, extra: &[&str]) -> Answer {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference_fingerprint.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(root)
        .arg("--list")
        .args(extra)
        .env("PYTHONUTF8", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs (the reference implementation needs it)");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{} failed: {stderr}",
        script.display()
    );
    let stdout = String::from_utf8(out.stdout).expect("the reference prints UTF-8");
    let body = stdout
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("no final newline: {stdout:?}"));
    let mut lines = body.split('\n').map(String::from);
    let digest = lines.next().unwrap_or_default();
    Answer {
        digest,
        files: lines.collect(),
        why: stderr.trim_end().to_string(),
    }
}

/// Commits the case, checks it out afresh and computes the three answers:
/// (tree, directory, python).
fn answers(case: &Case) -> (Answer, Answer, Answer) {
    let repo = TestRepo::new();
    let mut gitlinks = Vec::new();
    for (path, kind) in &case.entries {
        match kind {
            Kind::File(bytes) => {
                repo.write(path, bytes);
            }
            Kind::Link(target) => {
                repo.symlink(path, target);
            }
            Kind::Submodule => {
                // An unpopulated submodule is an empty directory, which keeps
                // `git add -A` from staging the gitlink's removal.
                std::fs::create_dir_all(repo.join(path)).unwrap();
                gitlinks.push(path.as_str());
            }
        }
    }
    for path in gitlinks {
        repo.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            "160000",
            GITLINK_COMMIT,
            path,
        ]);
    }
    let commit = repo.commit("generated tree");

    let git = open_repo(Some(repo.path())).unwrap();
    let rev = Revision::parse(&git, &commit).unwrap();
    let source = GitSource::new(git, rev, "src").unwrap();
    let tree = Answer::of(&fpcheck::compute(&source, &Rules::default()).unwrap());

    // A fresh checkout of the commit, not the directory it was made from.
    let parent = tempfile::tempdir().unwrap();
    let checkout = parent.path().join("checkout");
    git_in(
        parent.path(),
        &[
            "clone",
            "-q",
            repo.path().to_str().unwrap(),
            checkout.to_str().unwrap(),
        ],
    );
    let root = checkout.join("src");
    let dir = Answer::of(&fpcheck::compute(&DirSource::new(&root), &Rules::default()).unwrap());
    let py = python(&root, &[]);
    (tree, dir, py)
}

/// Checks one case; `Err` explains the disagreement.
fn check(case: &Case, tally: &Tally) -> Result<(), TestCaseError> {
    let (tree, dir, py) = answers(case);
    let all = format!("\n  tree:      {tree:?}\n  directory: {dir:?}\n  python:    {py:?}\n");
    prop_assert_eq!(dir.key(), py.key(), "directory mode != python{}", all);
    if let Some(sub) = case.live_submodule() {
        prop_assert_eq!(
            tree.digest.as_str(),
            "",
            "tree mode must be unavailable with the submodule {}{}",
            sub,
            all
        );
        prop_assert!(
            tree.why.contains(&format!("{sub} is a submodule")),
            "tree mode must name the submodule {}{}",
            sub,
            all
        );
        tally.submodule.fetch_add(1, Ordering::Relaxed);
    } else {
        prop_assert_eq!(tree.key(), dir.key(), "tree mode != directory mode{}", all);
    }
    if case.hazard_rate == 0 && case.selects_something() {
        // Every hazard was tamed: nothing may make the fingerprint unavailable.
        prop_assert!(
            !dir.digest.is_empty(),
            "a tree without hazards must have a fingerprint{}",
            all
        );
    }
    let counter = if dir.digest.is_empty() {
        &tally.unavailable
    } else {
        &tally.available
    };
    counter.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[derive(Default)]
struct Tally {
    available: AtomicUsize,
    unavailable: AtomicUsize,
    submodule: AtomicUsize,
}

/// A setting from the environment (as proptest reads it), or this default.
fn env_or(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: env_or("PROPTEST_CASES", 48),
        // Each case costs a repository, a commit, a clone and a python3 run
        // (about 0.2 s): bound the shrinking of a failure to 90 s.
        max_shrink_iters: env_or("PROPTEST_MAX_SHRINK_ITERS", 1000),
        max_shrink_time: env_or("PROPTEST_MAX_SHRINK_TIME", 90_000),
        // The minimal tree is printed in full; no regression files in tests/.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[test]
fn tree_directory_and_python_agree() {
    let config = config();
    let tally = Tally::default();
    let mut runner = TestRunner::new(config.clone());
    if let Err(e) = runner.run(&case(), |case| check(&case, &tally)) {
        panic!("{e}");
    }
    let available = tally.available.load(Ordering::Relaxed);
    let unavailable = tally.unavailable.load(Ordering::Relaxed);
    eprintln!(
        "{} cases: {available} with a fingerprint, {unavailable} without ({} by a submodule)",
        config.cases,
        tally.submodule.load(Ordering::Relaxed)
    );
    // Agreement on "unavailable" proves little: many cases must hash bytes.
    // About 60% do (mean 30 of 48, sd ~3.4); half was too tight for a
    // random seed (22 of 48 seen in CI), a third is still four deviations
    // below the mean and far above a generator that drifted to none.
    assert!(
        config.cases < 20 || available * 3 >= available + unavailable,
        "too few cases had a fingerprint ({available} of {}): the generator drifted",
        available + unavailable
    );
}

/// The oracle itself: the Python reference reproduces every spec vector.
#[test]
fn python_reference_reproduces_the_vectors() {
    let doc: Value = serde_json::from_str(include_str!("../data/vectors.json")).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 20, "the vectors file lost cases");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        write_tree(&root, case["files"].as_object().unwrap());
        let exclude = case.get("exclude").map(|ex| {
            ex.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(",")
        });
        let extra: Vec<&str> = match &exclude {
            Some(list) => vec!["--exclude", list],
            None => vec![],
        };
        let got = python(&root, &extra);
        let selected: Vec<String> = case["selected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            got.key(),
            (case["fingerprint"].as_str().unwrap(), selected.as_slice()),
            "case {name}: {}",
            got.why
        );
    }
}

// ---------------------------------------------------------------------------
// Hostile trees: raw tree objects no git command would write (duplicate
// names, `.`, `..`, `/` and NUL in names, `.git`, unsorted entries, links
// anywhere, gitlinks), fed to `fingerprint` and to the range. Neither may
// panic or fail, and both must give the same answer (digest, or the same
// unavailable reason).

/// One entry of a hostile tree, before it is written.
#[derive(Clone, Debug)]
enum Hostile {
    Blob(Vec<u8>),
    Exe(Vec<u8>),
    Link(Vec<u8>),
    Gitlink,
    Tree(Vec<(Vec<u8>, Hostile)>),
}

fn hostile_name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::sample::select(vec!["a.py", "b.py", "pkg", "x", "tests", "m.txt"])
            .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec![
            ".", "..", "", "a/b.py", ".git", ".GIT", "\u{1b}[31m.py", "sp ace.py",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => Just(b"n\0ul.py".to_vec()),
    ]
}

fn hostile_link() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        "a.py",
        "../a.py",
        "pkg/a.py",
        "pkg/",
        "/etc/passwd",
        "..",
        "",
        "x/../a.py",
        "../../../../a.py",
        "a.py/",
        "self.py",
    ])
    .prop_map(|s| s.as_bytes().to_vec())
}

fn hostile_tree() -> impl Strategy<Value = Hostile> {
    let leaf = prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..8).prop_map(Hostile::Blob),
        1 => prop::collection::vec(any::<u8>(), 0..8).prop_map(Hostile::Exe),
        2 => hostile_link().prop_map(Hostile::Link),
        1 => Just(Hostile::Gitlink),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop::collection::vec((hostile_name(), inner), 0..5).prop_map(Hostile::Tree)
    })
}

/// Writes `node` into `repo`, entries in the order generated.
fn write_hostile(repo: &gix::Repository, node: &Hostile) -> (&'static str, gix::ObjectId) {
    use gix::objs::Write as _;
    match node {
        Hostile::Blob(b) => ("100644", repo.write_blob(b).unwrap().detach()),
        Hostile::Exe(b) => ("100755", repo.write_blob(b).unwrap().detach()),
        Hostile::Link(t) => ("120000", repo.write_blob(t).unwrap().detach()),
        Hostile::Gitlink => (
            "160000",
            gix::ObjectId::from_hex(GITLINK_COMMIT.as_bytes()).unwrap(),
        ),
        Hostile::Tree(entries) => {
            let mut bytes = Vec::new();
            for (name, child) in entries {
                let (mode, id) = write_hostile(repo, child);
                bytes.extend_from_slice(mode.as_bytes());
                bytes.push(b' ');
                bytes.extend_from_slice(name);
                bytes.push(0);
                bytes.extend_from_slice(id.as_bytes());
            }
            let id = repo
                .objects
                .write_buf(gix::object::Kind::Tree, &bytes)
                .unwrap();
            ("40000", id)
        }
    }
}

fn check_hostile(repo: &TestRepo, tree: &Hostile) -> Result<(), TestCaseError> {
    let g = gix::open(repo.path()).unwrap();
    let src = match tree {
        Hostile::Tree(_) => tree.clone(),
        other => Hostile::Tree(vec![(b"a.py".to_vec(), other.clone())]),
    };
    let top = Hostile::Tree(vec![
        (b"src".to_vec(), src),
        (
            b"version.json".to_vec(),
            Hostile::Blob(b"{\"version\": \"2.0.0\"}\n".to_vec()),
        ),
    ]);
    let (_, top) = write_hostile(&g, &top);
    let commit = git_in(
        repo.path(),
        &[
            "commit-tree",
            &top.to_string(),
            "-p",
            "v1.0.0",
            "-m",
            "hostile",
        ],
    );
    let fp = repo.fpcheck(&["fingerprint", "--rev", &commit, "--json"]);
    prop_assert!(
        fp.code == 0 || fp.code == 3,
        "fingerprint: {} {}",
        fp.code,
        fp.stderr
    );
    let fp = fp.json();
    let range = repo.fpcheck(&[
        &format!("v1.0.0..{commit}"),
        "--format",
        "json",
        "--no-cache",
    ]);
    prop_assert_eq!(range.code, 0, "range: {}", range.stderr);
    let range = range.json();
    prop_assert_eq!(
        &range["to"]["fingerprint"],
        &fp["fingerprint"]
            .as_str()
            .map_or(Value::from(""), Value::from,)
    );
    prop_assert_eq!(
        &range["to"]["unavailable_reason"],
        &fp["unavailable_reason"]
    );
    if fp["fingerprint"].is_null() {
        prop_assert_eq!(&range["restart_required"], &Value::Bool(true));
    }
    Ok(())
}

#[test]
fn hostile_trees_never_panic_and_fingerprint_and_range_agree() {
    let repo = TestRepo::new();
    repo.write("src/a.py", "a\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("base");
    repo.tag("v1.0.0");
    let mut runner = TestRunner::new(ProptestConfig {
        cases: env_or("PROPTEST_CASES", 48),
        max_shrink_iters: env_or("PROPTEST_MAX_SHRINK_ITERS", 200),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    if let Err(e) = runner.run(&hostile_tree(), |tree| check_hostile(&repo, &tree)) {
        panic!("{e}");
    }
}

//! The generated trees: tree mode, directory mode and the Python reference
//! agree on every case.

use super::*;

mod check;

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
        prop::option::weighted(0.3, (0..ATTRIBUTES.len(), 0..3usize)),
    )
        .prop_map(|(root, submodule, rate, attributes)| {
            let mut case = build(root, submodule, rate);
            if let Some((text, at)) = attributes {
                with_attributes(&mut case, ATTRIBUTES[text], at);
            }
            case
        })
}

/// `.gitattributes` a share of the trees carry (git applies them on
/// checkout, so tree mode must too); no `working-tree-encoding`, which git
/// refuses to commit for files not in that encoding.
const ATTRIBUTES: [&str; 7] = [
    "*.py eol=crlf\n",
    "* text=auto eol=crlf\n",
    "*.py text eol=crlf ident\n",
    "[attr]stamped ident eol=crlf\n*.py stamped\n",
    "*.py ident\n**/x.py -text\n",
    "* text eol=lf\n",
    "*.py -text\nlib/** eol=crlf\n",
];

/// Puts `text` in a `.gitattributes` at the top (`at` 0), at the root (1)
/// or in `lib/` outside it (2, where selected links may lead), with a file
/// holding `$Id$` for `ident` to expand.
fn with_attributes(case: &mut Case, text: &str, at: usize) {
    let path = ["", "src/", "lib/"][at];
    // Macros are only read from the top-level file.
    let path = if text.starts_with("[attr]") { "" } else { path };
    let taken = |entries: &[(String, Kind)], p: &str| {
        entries.iter().any(|(e, _)| {
            e == p || e.starts_with(&format!("{p}/")) || p.starts_with(&format!("{e}/"))
        })
    };
    let file = format!("{path}.gitattributes");
    if taken(&case.entries, &file) {
        return;
    }
    case.entries
        .push((file, Kind::File(text.as_bytes().to_vec())));
    for stamp in ["src/stamp_id.py", "lib/stamp_id.py"] {
        if !taken(&case.entries, stamp) {
            let body = b"REV = \"$Id$\"\nA = 1\r\nB = 2\n".to_vec();
            case.entries.push((stamp.to_string(), Kind::File(body)));
        }
    }
    case.entries.sort_by(|a, b| a.0.cmp(&b.0));
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

//! Trees where a checkout's bytes differ from the stored ones, generated:
//! a runtime root one to three levels deep, sometimes reached through a
//! link to a directory whose name is not UTF-8, beside a byte-identical
//! copy of one of the directories above it; `.gitattributes` at any of
//! those directories (patterns naming raw bytes, `ident`, `eol=crlf`,
//! UTF-16 for the version file); a selected link into a chain whose
//! length puts the lookup around the kernel's 40 links; and a version
//! file with `$Id$` in the root or its parent. Each commit is written
//! through the index (raw bytes, no filter), cloned with `git clone`, and
//! must give, from the objects, the reference's fingerprint of the clone
//! and the release (version, `force_restart`, unreadable files) the gate
//! reads in it.
//!
//! `PROPTEST_CASES` sets the number of cases (16 by default).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use super::*;

/// One entry of a generated commit: its path from the top (bytes), and
/// whether it is a link (its content is then the target).
type Entry = (Vec<u8>, bool, Vec<u8>);

/// A generated commit and the runtime root it is read with.
#[derive(Clone)]
struct CheckoutCase {
    root: String,
    entries: Vec<Entry>,
}

impl fmt::Debug for CheckoutCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "root {}", self.root)?;
        for (path, link, content) in &self.entries {
            let arrow = if *link { " -> " } else { ": " };
            writeln!(
                f,
                "  {}{arrow}{:?}",
                gix::bstr::BStr::new(path),
                gix::bstr::BStr::new(content)
            )?;
        }
        Ok(())
    }
}

/// Attribute lines a `.gitattributes` may hold (raw bytes).
const LINES: [&[u8]; 10] = [
    b"*.py eol=crlf\n",
    b"*.py ident\n",
    b"*.py text\n",
    b"\xffreal/*.py eol=crlf\n",
    b"\"\\377real/*.py\" ident\n",
    b"real/*.py eol=crlf\n",
    b"**/sub/*.py eol=crlf\n",
    b"version.json ident\n",
    b"*.json working-tree-encoding=UTF-16\n",
    b"[attr]conv eol=crlf ident\n*.py conv\n",
];

/// What a case is made from: the depth of the root (1 to 3), the root as
/// a link to `real` or `\xffreal` beside it (none, UTF-8, not UTF-8),
/// which ancestor gets a copy beside the top, where attributes go (an
/// index into the directories, a line), a chain length for the selected
/// link (none, or 36 to 41), and where the version file is (root, parent)
/// with `force_restart` or not.
#[allow(clippy::type_complexity)]
fn checkout_case() -> impl Strategy<Value = CheckoutCase> {
    (
        1..=3usize,
        0..3usize,
        prop::option::of(any::<Index>()),
        prop::collection::vec((any::<Index>(), 0..LINES.len()), 0..4),
        prop::option::of(36..=41usize),
        (any::<bool>(), any::<bool>()),
    )
        .prop_map(|(depth, linked, copy, attributes, chain, version)| {
            build_case(depth, linked, copy, &attributes, chain, version)
        })
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return name.to_vec();
    }
    [dir, b"/", name].concat()
}

fn build_case(
    depth: usize,
    linked: usize,
    copy: Option<Index>,
    attributes: &[(Index, usize)],
    chain: Option<usize>,
    (version_in_root, force): (bool, bool),
) -> CheckoutCase {
    let parents: Vec<&[u8]> = [&b"x"[..], b"y"][..depth - 1].to_vec();
    let parent = parents.join(&b'/');
    let root = String::from_utf8(join(&parent, b"src")).unwrap();
    // The directory a checkout writes the runtime files in.
    let real_name: &[u8] = match linked {
        0 => b"src",
        1 => b"real",
        _ => b"\xffreal",
    };
    let real = join(&parent, real_name);
    let mut entries: Vec<Entry> = Vec::new();
    let mut file = |path: Vec<u8>, content: &[u8]| entries.push((path, false, content.to_vec()));
    file(join(&real, b"a.py"), b"A = '$Id$'\n");
    file(join(&real, b"sub/c.py"), b"C = 1\n");
    let version = format!(
        "{{\"version\": \"$Id$\"{}}}\n",
        if force {
            ", \"force_restart\": true"
        } else {
            ""
        }
    );
    let version_dir = if version_in_root {
        real.clone()
    } else {
        parent.clone()
    };
    file(join(&version_dir, b"version.json"), version.as_bytes());
    if linked > 0 {
        entries.push((join(&parent, b"src"), true, real_name.to_vec()));
    }
    if let Some(n) = chain {
        entries.push((join(&real, b"l.py"), true, {
            let up = "../".repeat(real.split(|b| *b == b'/').count());
            format!("{up}chain/l{n}").into_bytes()
        }));
        entries.push((b"chain/f".to_vec(), false, b"CHAIN = 1\n".to_vec()));
        for i in 1..=n {
            let target = if i == 1 {
                "f".to_string()
            } else {
                format!("l{}", i - 1)
            };
            entries.push((
                format!("chain/l{i}").into_bytes(),
                true,
                target.into_bytes(),
            ));
        }
    }
    // Attributes in the top, each directory above the root and the root.
    let mut dirs: Vec<Vec<u8>> = vec![Vec::new()];
    for i in 1..=parents.len() {
        dirs.push(parents[..i].join(&b'/'));
    }
    dirs.push(real.clone());
    let mut texts: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (at, line) in attributes {
        let dir = at.get(&dirs).clone();
        texts
            .entry(join(&dir, b".gitattributes"))
            .or_default()
            .extend_from_slice(LINES[*line]);
    }
    for (path, text) in texts {
        entries.push((path, false, text));
    }
    // Byte-identical copies of one directory above the root (its
    // `.gitattributes` included) beside it, sorted before and after it:
    // the same tree id at the same depth.
    if let Some(which) = copy {
        if dirs.len() > 2 {
            let original = which.get(&dirs[1..dirs.len() - 1]).clone();
            let beside = match original.iter().rposition(|b| *b == b'/') {
                Some(i) => original[..i].to_vec(),
                None => Vec::new(),
            };
            for name in [&b"a"[..], b"zz"] {
                let copy = join(&beside, name);
                let copied: Vec<Entry> = entries
                    .iter()
                    .filter_map(|(p, link, c)| {
                        let rest = p.strip_prefix(&original[..])?.strip_prefix(b"/")?;
                        Some((join(&copy, rest), *link, c.clone()))
                    })
                    .collect();
                entries.extend(copied);
            }
        }
    }
    CheckoutCase { root, entries }
}

/// Writes the case as a commit on `main` through the index (raw paths and
/// bytes, no attribute applied on the way in).
fn commit_case(repo: &TestRepo, case: &CheckoutCase) {
    let g = gix::open(repo.path()).unwrap();
    let mut info = Vec::new();
    for (path, link, content) in &case.entries {
        let id = g.write_blob(content).unwrap().detach();
        let mode = if *link { "120000" } else { "100644" };
        info.extend_from_slice(format!("{mode} {id}\t").as_bytes());
        info.extend_from_slice(path);
        info.push(0);
    }
    let mut child = crate::support::git_cmd(repo.path())
        .args(["update-index", "-z", "--index-info"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&info).unwrap();
    assert!(child.wait().unwrap().success());
    let tree = git_in(repo.path(), &["write-tree"]);
    let commit = git_in(repo.path(), &["commit-tree", &tree, "-m", "generated"]);
    git_in(repo.path(), &["update-ref", "refs/heads/main", &commit]);
}

/// What the gate reads of a release: its version, `force_restart`, and
/// whether a version file could not be read.
fn release_of(source: &dyn fpcheck::Source) -> (String, bool, bool) {
    let r = fpcheck::release::read(source).unwrap();
    (r.version_key(), r.force_restart, !r.unreadable.is_empty())
}

fn check_checkout(case: &CheckoutCase) -> Result<(), TestCaseError> {
    let repo = TestRepo::new();
    commit_case(&repo, case);
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
    let git = Session::open(Some(repo.path())).unwrap();
    let rev = Revision::parse(&git, "main").unwrap();
    let source = GitSource::new(git, rev, &case.root).unwrap();
    let tree = fpcheck::compute(&source, &Rules::default()).unwrap();
    let root = checkout.join(OsStr::from_bytes(case.root.as_bytes()));
    let dir_source = DirSource::new(&root);
    let dir = fpcheck::compute(&dir_source, &Rules::default()).unwrap();
    let py = trees_python(&root);
    let shown = format!(
        "\n  tree: {:?} {:?}\n  dir:  {:?} {:?}\n  python: {py:?}\n",
        tree.as_gate_str(),
        tree.unavailable_reason,
        dir.as_gate_str(),
        dir.unavailable_reason
    );
    prop_assert_eq!(
        dir.as_gate_str(),
        py.as_str(),
        "directory != python{}",
        shown
    );
    prop_assert_eq!(
        tree.as_gate_str(),
        py.as_str(),
        "tree != git's checkout{}",
        shown
    );
    prop_assert_eq!(
        release_of(&source),
        release_of(&dir_source),
        "the release read from the tree != from git's checkout"
    );
    Ok(())
}

/// The reference's digest of `root` (`""`: unavailable).
fn trees_python(root: &Path) -> String {
    let out = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference_fingerprint.py"))
        .arg(root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn checkouts_of_nested_linked_and_converted_trees_agree_with_git() {
    let mut runner = TestRunner::new(ProptestConfig {
        cases: env_or("PROPTEST_CASES", 16),
        max_shrink_iters: env_or("PROPTEST_MAX_SHRINK_ITERS", 200),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    if let Err(e) = runner.run(&checkout_case(), |case| check_checkout(&case)) {
        panic!("{e}");
    }
}

//! Hostile trees: raw tree objects no git command would write, fed to
//! `fingerprint` and to the range.

use super::*;

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

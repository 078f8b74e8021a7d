//! Each case through fingerprint (tree and directory) and the Python
//! reference, and the properties that tie them.

use super::*;

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

    let git = Session::open(Some(repo.path())).unwrap();
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
    let doc: Value = serde_json::from_str(include_str!("../../../data/vectors.json")).unwrap();
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

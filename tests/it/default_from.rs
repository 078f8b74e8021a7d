//! The default FROM of a range without one: the highest release version
//! among the release tags reachable from TO through every parent, TO's own
//! tags left out; the same for the range, a runtime's `tag_pattern`,
//! `--tag-match` and `--resolve-only` (the Action's resolve step), checked
//! against `git tag --merged TO` sorted by fpcheck's version precedence.

use fpcheck::version::TagVersion;

use crate::support::TestRepo;

fn version_json(version: &str) -> String {
    format!("{{\"version\": \"{version}\"}}\n")
}

/// main: v1.0.0, then v1.1.0 (the server rewritten); a maintenance branch
/// from v1.0.0 tagged v1.0.1 (a fix), not an ancestor of v1.1.0; then, on
/// main, a pull request that merges the maintenance branch and takes its
/// server back (the merge's runtime is v1.0.1's), version 1.1.1.
fn maintenance_merged() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): return 1\n")
        .write("version.json", version_json("1.0.0"));
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.git(&["branch", "maint"]);
    repo.write("src/server.py", "def main(): return 2\n")
        .write("version.json", version_json("1.1.0"));
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    repo.git(&["checkout", "-q", "maint"]);
    repo.write("src/server.py", "def main(): return 1  # fixed\n")
        .write("version.json", version_json("1.0.1"));
    repo.commit("1.0.1");
    repo.tag("v1.0.1");
    repo.git(&["checkout", "-q", "-"]);
    repo.git(&["checkout", "-q", "-b", "pr", "v1.1.0"]);
    repo.git(&["merge", "-q", "--no-commit", "-s", "ours", "maint"]);
    repo.git(&["checkout", "v1.0.1", "--", "src/server.py"]);
    repo.write("version.json", version_json("1.1.1"));
    repo.commit("merge maint, its server back");
    repo
}

/// `fpcheck --resolve-only ARGS`: the FROM line's tag and commit.
fn resolved_from(repo: &TestRepo, args: &[&str]) -> (String, String) {
    let mut all = vec!["--resolve-only"];
    all.extend_from_slice(args);
    let run = repo.fpcheck(&all);
    assert_eq!(run.code, 0, "{all:?}: {}", run.stderr);
    let line = run.stdout.lines().next().unwrap().to_string();
    let mut words = line.split(' ').skip(1);
    (
        words.next().unwrap().to_string(),
        words.next().unwrap().to_string(),
    )
}

#[test]
fn a_merged_maintenance_release_is_not_the_default_from() {
    let repo = maintenance_merged();
    let v110 = repo.git(&["rev-parse", "v1.1.0^{commit}"]);
    // The range: v1.1.0, and the server runs other bytes than v1.1.0's.
    let run = repo.fpcheck(&["--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["from"]["ref"], "v1.1.0");
    assert_eq!(j["restart_required"], true, "{j}");
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(
        j["notes"][0],
        "no range given: comparing v1.1.0, the highest version of the tags reachable from HEAD, with HEAD"
    );
    // Every way of naming the releases, and the Action's resolve step.
    for args in [
        &[][..],
        &["--tag-pattern", "v*"],
        &["--tag-match", "v*"],
        &["..HEAD"],
    ] {
        assert_eq!(
            resolved_from(&repo, args),
            ("v1.1.0".to_string(), v110.clone()),
            "{args:?}"
        );
    }
    // A tagged TO whose first parent is the maintenance branch: its own
    // tag left out, the highest below it through every parent.
    repo.git(&["checkout", "-q", "maint"]);
    repo.git(&["merge", "-q", "--no-commit", "-s", "ours", "v1.1.0"]);
    repo.write("version.json", version_json("1.0.2"));
    repo.commit("maint takes main's history");
    repo.tag("v1.0.2");
    for args in [&["..v1.0.2"][..], &["--tag-pattern", "v*", "..v1.0.2"]] {
        assert_eq!(
            resolved_from(&repo, args),
            ("v1.1.0".to_string(), v110.clone()),
            "{args:?}"
        );
    }
    let j = repo.fpcheck(&["--format", "json", "..v1.0.2"]).json();
    assert_eq!(j["from"]["ref"], "v1.1.0");
    assert_eq!(
        j["notes"][0],
        "no range given: v1.0.2 is tagged v1.0.2, so comparing the release before it, v1.1.0, with v1.0.2"
    );
}

/// A small deterministic generator (xorshift), so a failure repeats.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A tag name for release `n`: semver, PEP 440, prefixed (`server-v`),
/// a pre-release, or a name that is no version.
fn tag_name(dice: &mut Dice, n: u64) -> String {
    let (major, minor) = (dice.below(3), dice.below(4));
    match dice.below(7) {
        0 => format!("v{major}.{minor}.{n}"),
        1 => format!("{major}.{minor}.{n}"),
        2 => format!("v{major}.{minor}.{n}rc1"),
        3 => format!("{major}.{minor}.{n}-rc.1"),
        4 => format!("server-v{major}.{minor}.{n}"),
        5 => format!("deploy-{n}"),
        _ => format!("v{major}.{minor}"),
    }
}

/// A history of `steps` commits on three branches, merged into each other
/// at random, tags on some commits (two on some); returns every commit.
fn generated_history(seed: u64, steps: u64) -> (TestRepo, Vec<String>) {
    let mut dice = Dice(seed);
    let repo = TestRepo::new();
    repo.write("src/app.py", "A = 0\n");
    let mut commits = vec![repo.commit("root")];
    for branch in ["b1", "b2"] {
        repo.git(&["branch", branch]);
    }
    let trunk = repo.git(&["symbolic-ref", "--short", "HEAD"]);
    let branches = [trunk.as_str(), "b1", "b2"];
    let mut tags = 0;
    for step in 0..steps {
        let branch = branches[dice.below(3) as usize];
        repo.git(&["checkout", "-q", branch]);
        if dice.below(4) == 0 {
            let other = branches[dice.below(3) as usize];
            if other != branch {
                repo.git(&["merge", "-q", "--no-commit", "-s", "ours", other]);
            }
        }
        repo.write("src/app.py", format!("A = {step}\n"));
        commits.push(repo.commit(&format!("step {step}")));
        for _ in 0..dice.below(3) {
            if dice.below(2) == 0 {
                tags += 1;
                let name = tag_name(&mut dice, tags);
                let _ = crate::support::git_cmd(repo.path())
                    .args(["tag", &name])
                    .output();
            }
        }
    }
    (repo, commits)
}

/// What git says the default FROM is: the tags `git tag --merged TO` lists
/// (less those `--points-at TO`), read as versions by `version_of`, the
/// highest by fpcheck's precedence (then by name).
fn git_default_from(
    repo: &TestRepo,
    to: &str,
    version_of: &dyn Fn(&str) -> Option<TagVersion>,
) -> Option<String> {
    let merged = repo.git(&["tag", "--merged", to]);
    let own = repo.git(&["tag", "--points-at", to]);
    let own: Vec<&str> = own.lines().collect();
    (merged.lines())
        .filter(|name| !own.contains(name))
        .filter_map(|name| version_of(name).map(|v| (v, name.to_string())))
        .max_by(|(a, an), (b, bn)| a.cmp_precedence(b).then_with(|| an.cmp(bn)))
        .map(|(_, name)| name)
}

#[test]
fn the_default_from_is_the_highest_version_git_tag_merged_lists() {
    type Reader = Box<dyn Fn(&str) -> Option<TagVersion>>;
    let plain: Reader = Box::new(fpcheck::version::parse_tag);
    let server: Reader = Box::new(|name| {
        gix_free_match(name, "server-v")
            .then(|| fpcheck::version::of_glob(name, "server-v*"))
            .flatten()
    });
    let mut checked = 0;
    for seed in [0x9e37_79b9_7f4a_7c15_u64, 7, 1 << 40, 12345] {
        let (repo, commits) = generated_history(seed, 24);
        for (i, commit) in commits.iter().enumerate() {
            if i % 2 == 1 && commits.len() - i > 3 {
                continue;
            }
            for (args, reader) in [
                (&[][..], &plain),
                (&["--tag-pattern", "server-v*"][..], &server),
            ] {
                let expected = git_default_from(&repo, commit, reader.as_ref());
                let mut all = vec!["--resolve-only"];
                all.extend_from_slice(args);
                let to = format!("..{commit}");
                all.push(&to);
                let run = repo.fpcheck(&all);
                match &expected {
                    None => assert_eq!(run.code, 4, "seed {seed} {all:?}: {}", run.stdout),
                    Some(tag) => {
                        assert_eq!(run.code, 0, "seed {seed} {all:?}: {}", run.stderr);
                        let line = run.stdout.lines().next().unwrap();
                        let id = repo.git(&["rev-parse", &format!("{tag}^{{commit}}")]);
                        assert_eq!(line, format!("from {tag} {id}"), "seed {seed} {all:?}");
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
}

/// Whether `name` starts with `prefix` (the glob `prefix*`).
fn gix_free_match(name: &str, prefix: &str) -> bool {
    name.starts_with(prefix)
}

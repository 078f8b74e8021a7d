//! The persistent memo of small objects (`.git/fpcheck/objects-v1`): a warm
//! range reads its ends' commits, top trees and settings from it instead of
//! the pack. It must never change an answer: a forged or damaged entry is a
//! miss, `git replace` keeps it out, and `--no-cache` neither reads nor
//! writes it.

use std::io::Write as _;
use std::os::unix::fs::MetadataExt;

use crate::support::TestRepo;

const MEMO: &str = ".git/fpcheck/objects-v1";

/// v1, then v2 changing the runtime's only module, then v3 changing docs.
fn three_releases() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): pass\n")
        .write("README.md", "# readme\n")
        .write("fpcheck.toml", "[runtime]\nroot = \"src\"\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1");
    repo.write("src/server.py", "def main(): return 1\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("1.1.0", "v2");
    repo.write("README.md", "# docs only\n");
    repo.commit_and_tag("docs", "v3");
    repo
}

/// One memo record: id (raw), kind (1 commit), length, bytes.
fn record(id_hex: &str, kind: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = crate::support::hex_decode(id_hex);
    out.push(kind);
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

/// A warm range answers as a cold one, and once the memo holds what it
/// reads, a warm run does not rewrite it.
#[test]
fn a_warm_range_answers_as_a_cold_one_and_leaves_the_memo_alone() {
    let repo = three_releases();
    let colds = ["v1..v2", "v2..v3"].map(|range| repo.verdict_json(&[range, "--no-cache"]));
    assert!(!repo.join(MEMO).exists(), "--no-cache wrote the memo");
    for (range, cold) in ["v1..v2", "v2..v3"].into_iter().zip(colds) {
        let first = repo.verdict_json(&[range]);
        let second = repo.verdict_json(&[range]);
        assert_eq!(first, second, "{range}");
        assert_eq!(first["restart_required"], cold["restart_required"]);
        assert_eq!(first["reason"], cold["reason"]);
        assert_eq!(first["changes"], cold["changes"]);
        assert_eq!(first["from"]["commit"], cold["from"]["commit"]);
        assert_eq!(first["to"]["version"], cold["to"]["version"]);
    }
    let before = std::fs::metadata(repo.join(MEMO)).expect("the memo was written");
    let bytes = std::fs::read(repo.join(MEMO)).unwrap();
    assert!(bytes.starts_with(b"fpcheck-objects-v1\n"));
    let again = repo.verdict_json(&["v2..v3"]);
    assert_eq!(again["restart_required"], false);
    let after = std::fs::metadata(repo.join(MEMO)).unwrap();
    assert_eq!(before.ino(), after.ino(), "a warm run replaced the memo");
    assert_eq!(std::fs::read(repo.join(MEMO)).unwrap(), bytes);
}

/// An entry whose bytes do not hash to its id is never used: here v2's
/// commit id with v1's commit bytes, which, believed, would make the code
/// change vanish (both ends the same tree).
#[test]
fn a_forged_memo_entry_is_a_miss_not_another_object() {
    let repo = three_releases();
    let cold = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(cold["restart_required"], true);
    let v2 = repo.git(&["rev-parse", "v2^{commit}"]).trim().to_string();
    let v1_body = crate::support::git_cmd(repo.path())
        .args(["cat-file", "commit", "v1"])
        .output()
        .unwrap()
        .stdout;
    std::fs::create_dir_all(repo.join(".git/fpcheck")).unwrap();
    let mut memo = b"fpcheck-objects-v1\n".to_vec();
    memo.extend(record(&v2, 1, &v1_body));
    // A truncated record after it: dropped, not misread.
    memo.extend_from_slice(&crate::support::hex_decode(&v2)[..7]);
    std::fs::File::create(repo.join(MEMO))
        .unwrap()
        .write_all(&memo)
        .unwrap();
    let warm = repo.verdict_json(&["v1..v2"]);
    assert_eq!(warm["restart_required"], true);
    assert_eq!(warm["to"]["commit"], v2.as_str());
    assert_eq!(warm["to"]["fingerprint"], cold["to"]["fingerprint"]);
    assert_ne!(warm["to"]["fingerprint"], warm["from"]["fingerprint"]);
    assert_eq!(warm["changes"], cold["changes"]);
    // The forged entry is dropped when the memo is rewritten, and the
    // store's copy of v2's commit is kept instead.
    let rewritten = std::fs::read(repo.join(MEMO)).unwrap();
    let forged = record(&v2, 1, &v1_body);
    assert!(!rewritten.windows(forged.len()).any(|w| w == forged));
    let v2_body = crate::support::git_cmd(repo.path())
        .args(["cat-file", "commit", "v2"])
        .output()
        .unwrap()
        .stdout;
    let real = record(&v2, 1, &v2_body);
    assert!(rewritten.windows(real.len()).any(|w| w == real));
    // And a third run, from the rewritten memo, still agrees.
    assert_eq!(
        repo.verdict_json(&["v1..v2"])["to"]["fingerprint"],
        cold["to"]["fingerprint"]
    );
}

/// `git replace` is never read (an installer's clone has no replace refs),
/// so ids name their own bytes and the memo serves a repository with
/// replace refs as any other: its answers are the cold ones, and those of
/// the repository without the replacement.
#[test]
fn replace_refs_change_no_answer_cached_or_cold() {
    let repo = three_releases();
    let before = repo.verdict_json(&["v1..v2", "--no-cache"]);
    let v1 = repo.git(&["rev-parse", "v1^{commit}"]).trim().to_string();
    let v2 = repo.git(&["rev-parse", "v2^{commit}"]).trim().to_string();
    repo.git(&["replace", &v2, &v1]);
    let with_cache = repo.verdict_json(&["v1..v2"]);
    let again = repo.verdict_json(&["v1..v2"]);
    let cold = repo.verdict_json(&["v1..v2", "--no-cache"]);
    for j in [&with_cache, &again, &cold] {
        assert_eq!(j["restart_required"], before["restart_required"]);
        assert_eq!(j["to"]["fingerprint"], before["to"]["fingerprint"]);
        assert_eq!(j["changes"], before["changes"]);
    }
}

/// A memo that is a FIFO, a link or garbage is ignored (and replaced, not
/// written through): the answer is the cold one, with no hang.
#[test]
fn a_hostile_memo_file_is_ignored() {
    let repo = three_releases();
    let cold = repo.verdict_json(&["v1..v2", "--no-cache"]);
    std::fs::create_dir_all(repo.join(".git/fpcheck")).unwrap();
    let outside = repo.join("outside");
    std::fs::write(&outside, b"keep").unwrap();
    let setups: [&dyn Fn(); 3] = [
        &|| crate::support::mkfifo(&repo.join(MEMO), 0o600),
        &|| std::os::unix::fs::symlink(&outside, repo.join(MEMO)).unwrap(),
        &|| std::fs::write(repo.join(MEMO), b"fpcheck-objects-v1\n\xff\xff garbage").unwrap(),
    ];
    for setup in setups {
        let _ = std::fs::remove_file(repo.join(MEMO));
        setup();
        let warm = repo.verdict_json(&["v1..v2"]);
        assert_eq!(warm["restart_required"], cold["restart_required"]);
        assert_eq!(warm["to"]["fingerprint"], cold["to"]["fingerprint"]);
        assert_eq!(warm["changes"], cold["changes"]);
        let meta = std::fs::symlink_metadata(repo.join(MEMO)).unwrap();
        assert!(meta.file_type().is_file(), "not replaced by a regular file");
        assert_eq!(std::fs::read(&outside).unwrap(), b"keep");
    }
}

/// Two sessions on two repositories, used from eight threads at once (as
/// the Python package may), give each repository its own answers, those of
/// a lone cold run; and each repository's memo holds only its own objects.
#[test]
fn sessions_on_two_repositories_at_once_keep_to_their_own() {
    use fpcheck::range::{self, Digests, RangeOptions, RangeSpec};
    use fpcheck::source::git::Session;

    let a = three_releases();
    let b = TestRepo::new();
    b.write("app/main.py", "print('b')\n")
        .write("fpcheck.toml", "[runtime]\nroot = \"app\"\n")
        .write("version.json", "{\"version\": \"7.0.0\"}\n");
    b.commit_and_tag("7.0.0", "v1");
    b.write("app/main.py", "print('b', 2)\n")
        .write("version.json", "{\"version\": \"7.1.0\"}\n");
    b.commit_and_tag("7.1.0", "v2");
    b.write("README.md", "# b\n");
    b.commit_and_tag("docs", "v3");
    let options = |range: &str, persistent_cache: bool| {
        let (from, to) = range.split_once("..").unwrap();
        RangeOptions {
            range: RangeSpec {
                from: Some(from.into()),
                to: Some(to.into()),
                tags: Default::default(),
            },
            worktree: false,
            settings: fpcheck::config::SettingsRequest {
                origin: fpcheck::config::SettingsOrigin::Committed,
                overrides: Default::default(),
                fallback_rule: Default::default(),
                fallback: None,
                fallback_end: None,
            },
            persistent_cache,
            digests: Digests::Always,
            witness: fpcheck::witness::Mode::Auto,
        }
    };
    let answer = |session: &Session, range: &str, persistent: bool| {
        serde_json::to_value(range::analyse(session, &options(range, persistent)).unwrap()).unwrap()
    };
    let ranges = ["v1..v2", "v2..v3", "v1..v3"];
    let sessions = [a.path(), b.path()].map(|p| Session::open(Some(p)).unwrap());
    let alone: Vec<Vec<serde_json::Value>> = sessions
        .iter()
        .map(|s| ranges.iter().map(|r| answer(s, r, false)).collect())
        .collect();
    assert_ne!(alone[0], alone[1]);
    std::thread::scope(|scope| {
        for i in 0..8 {
            let (session, expected) = (sessions[i % 2].for_thread(), &alone[i % 2]);
            scope.spawn(move || {
                for round in 0..6 {
                    let r = (i + round) % ranges.len();
                    assert_eq!(
                        answer(&session, ranges[r], true),
                        expected[r],
                        "{}",
                        ranges[r]
                    );
                }
            });
        }
    });
    let own_commit = |repo: &TestRepo| {
        crate::support::hex_decode(repo.git(&["rev-parse", "v2^{commit}"]).trim())
    };
    for (repo, other) in [(&a, &b), (&b, &a)] {
        let memo = std::fs::read(repo.join(MEMO)).expect("the memo was written");
        let (own, theirs) = (own_commit(repo), own_commit(other));
        assert!(memo.windows(own.len()).any(|w| w == own));
        assert!(!memo.windows(theirs.len()).any(|w| w == theirs));
    }
}

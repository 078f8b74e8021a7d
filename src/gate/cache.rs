//! The `status --cache` file: the installed fingerprint, valid only while
//! every selected file is provably unchanged.
//!
//! `status` runs on every tool call, and re-reading the whole runtime each
//! time is its whole cost. The fingerprint hashes a stream of all files, so
//! one changed file means reading them all again; what the cache saves is
//! the reads when *nothing* changed. It must never answer with a stale
//! fingerprint, so it trusts a file only when all of these hold:
//!
//! - the walk selects exactly the same paths, in the same order (an added,
//!   removed or renamed file is a miss: the reference's cache keys on count,
//!   total size and newest mtime, and misses a rename);
//! - size, mtime and ctime in nanoseconds, inode and device are all equal,
//!   read through symbolic links (a re-pointed link changes the inode; a
//!   write changes ctime, which no one can set back, even when `touch -d`
//!   restores mtime);
//! - the file was last changed at least [`RACY_MARGIN_NS`] before the stats
//!   behind the cache were taken. Otherwise a write in the same timestamp
//!   tick as the recorded one would leave every stat equal (git's "racy
//!   clean" problem; the margin covers file systems with 1 s and 2 s
//!   timestamps).
//!
//! Anything else (another root or rules, a corrupt or foreign file) is a
//! miss, and the file is rewritten after a fresh hash.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::atomic;
use crate::select::{Rules, SelectedFile};
use crate::source::Node;

/// Names the file kind, so a foreign file is never trusted.
pub(crate) const KIND: &str = "fpcheck-status-cache";

/// The cache schema.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// A file changed this close to (or after) the stats behind the cache is
/// re-hashed: two seconds, the coarsest common timestamp granularity (FAT).
pub(crate) const RACY_MARGIN_NS: i128 = 2_000_000_000;

/// What identifies a file's bytes without reading them: `(size, mtime s,
/// mtime ns, ctime s, ctime ns, inode, device)`, as a JSON array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat(u64, i64, i64, i64, i64, u64, u64);

impl Stat {
    /// The later of mtime and ctime, in nanoseconds since the epoch.
    fn changed_ns(&self) -> i128 {
        let m = i128::from(self.1) * 1_000_000_000 + i128::from(self.2);
        let c = i128::from(self.3) * 1_000_000_000 + i128::from(self.4);
        m.max(c)
    }
}

/// Stats every selected file, following links; `None` if any cannot be
/// stat'ed (the cache is then neither trusted nor written).
pub(crate) fn stat_all(files: &[SelectedFile]) -> Option<Vec<Stat>> {
    files.iter().map(|f| stat(&f.content)).collect()
}

#[cfg(unix)]
fn stat(node: &Node) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let Node::Path(path) = node else { return None };
    let m = std::fs::metadata(path).ok()?;
    Some(Stat(
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.ino(),
        m.dev(),
    ))
}

// Without inode and ctime the safety argument above does not hold: never
// trust a cache there.
#[cfg(not(unix))]
fn stat(_node: &Node) -> Option<Stat> {
    None
}

/// Now, in nanoseconds since the epoch: the stamp to take *before* the
/// stats that a cache will be written from.
pub(crate) fn now_ns() -> i128 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    kind: String,
    schema_version: u32,
    root: PathBuf,
    extensions: Vec<String>,
    exclude: Vec<String>,
    /// When the stats below were about to be taken, in ns since the epoch
    /// (as a string: JSON numbers lose precision past 2^53).
    stamp_ns: String,
    fingerprint: String,
    files: Vec<(String, Stat)>,
}

/// What the cache said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Every file is provably unchanged: this is the fingerprint.
    Hit(String),
    /// No cache, or it does not vouch for the current files.
    Miss,
    /// Not a cache file this fpcheck wrote: ignored.
    Corrupt,
}

/// Checks the cache at `path` against the current selection and stats.
pub fn lookup(
    path: &Path,
    root: &Path,
    rules: &Rules,
    files: &[SelectedFile],
    stats: &[Stat],
) -> Lookup {
    // Bounded and non-blocking: a FIFO or device planted as the cache must
    // not hang `status` (anything unreadable is a miss, then rewritten).
    let limit = crate::safe_io::JSON_LIMIT;
    let bytes = match crate::safe_io::read_regular(path, crate::safe_io::Links::Follow, limit) {
        Ok(b) => b,
        Err(_) => return Lookup::Miss,
    };
    let cache: CacheFile = match serde_json::from_slice(&bytes) {
        Ok(c) => c,
        Err(_) => return Lookup::Corrupt,
    };
    let stamp: Option<i128> = cache.stamp_ns.parse().ok();
    let valid_fp =
        cache.fingerprint.len() == 64 && cache.fingerprint.bytes().all(|b| b.is_ascii_hexdigit());
    let (Some(stamp), true, true, true) = (
        stamp,
        valid_fp,
        cache.kind == KIND,
        cache.schema_version == SCHEMA_VERSION,
    ) else {
        return Lookup::Corrupt;
    };
    let same_settings = absolute(root).is_some_and(|r| r == cache.root)
        && cache.extensions == rules.extensions
        && cache.exclude == rules.exclude;
    let trusted = same_settings
        && cache.files.len() == files.len()
        && files
            .iter()
            .zip(stats)
            .zip(&cache.files)
            .all(|((f, now), (path, then))| {
                f.path == *path && now == then && then.changed_ns() < stamp - RACY_MARGIN_NS
            });
    if trusted {
        Lookup::Hit(cache.fingerprint)
    } else {
        Lookup::Miss
    }
}

/// Writes the cache for `fingerprint`, computed from `files` whose `stats`
/// were taken after `stamp_ns`. Atomic, so concurrent `status` calls never
/// read a torn cache; the last writer wins.
pub fn store(
    path: &Path,
    root: &Path,
    rules: &Rules,
    files: &[SelectedFile],
    stats: &[Stat],
    stamp_ns: i128,
    fingerprint: &str,
) -> std::io::Result<()> {
    let Some(root) = absolute(root) else {
        return Err(std::io::Error::other(
            "the runtime root has no absolute path",
        ));
    };
    let cache = CacheFile {
        kind: KIND.into(),
        schema_version: SCHEMA_VERSION,
        root,
        extensions: rules.extensions.clone(),
        exclude: rules.exclude.clone(),
        stamp_ns: stamp_ns.to_string(),
        fingerprint: fingerprint.into(),
        files: files
            .iter()
            .zip(stats)
            .map(|(f, s)| (f.path.clone(), *s))
            .collect(),
    };
    let bytes = serde_json::to_vec(&cache).expect("plain data serialises");
    // The user named the file: anything there but a regular file (a FIFO,
    // `/dev/null`, a link) is left alone (see `replace_private`).
    atomic::replace_private(path, &bytes, atomic::Occupied::Refuse)
}

fn absolute(root: &Path) -> Option<PathBuf> {
    std::path::absolute(root).ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::select::select;
    use crate::source::DirSource;

    struct Fixture {
        dir: tempfile::TempDir,
        cache: PathBuf,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("src")).unwrap();
            let cache = dir.path().join("cache.json");
            Fixture { dir, cache }
        }
        fn root(&self) -> PathBuf {
            self.dir.path().join("src")
        }
        fn write(&self, rel: &str, body: &str) {
            std::fs::write(self.root().join(rel), body).unwrap();
        }
        fn files(&self) -> (Vec<SelectedFile>, Vec<Stat>) {
            let sel = select(&DirSource::new(self.root()), &Rules::default()).unwrap();
            let stats = stat_all(&sel.files).unwrap();
            (sel.files, stats)
        }
        fn store(&self, stamp: i128, fp: &str) {
            let (files, stats) = self.files();
            store(
                &self.cache,
                &self.root(),
                &Rules::default(),
                &files,
                &stats,
                stamp,
                fp,
            )
            .unwrap();
        }
        fn lookup(&self) -> Lookup {
            let (files, stats) = self.files();
            lookup(&self.cache, &self.root(), &Rules::default(), &files, &stats)
        }
    }

    const FP: &str = "0000000000000000000000000000000000000000000000000000000000000000";
    const LATER: i128 = i128::MAX / 2;

    #[test]
    fn hit_only_when_nothing_changed_and_nothing_is_racy() {
        let f = Fixture::new();
        f.write("a.py", "a");
        f.write("b.py", "b");
        assert_eq!(f.lookup(), Lookup::Miss);
        // Stats taken "now": the files are racy, never trusted.
        f.store(now_ns(), FP);
        assert_eq!(f.lookup(), Lookup::Miss);
        // Long after the last change: trusted.
        f.store(LATER, FP);
        assert_eq!(f.lookup(), Lookup::Hit(FP.into()));
    }

    #[test]
    fn a_rename_with_the_same_bytes_and_inode_is_a_miss() {
        let f = Fixture::new();
        f.write("a.py", "same");
        f.store(LATER, FP);
        std::fs::rename(f.root().join("a.py"), f.root().join("b.py")).unwrap();
        assert_eq!(f.lookup(), Lookup::Miss);
    }

    #[test]
    fn added_removed_and_rewritten_files_are_misses() {
        let f = Fixture::new();
        f.write("a.py", "a");
        f.store(LATER, FP);
        f.write("b.py", "b");
        assert_eq!(f.lookup(), Lookup::Miss);
        f.store(LATER, FP);
        std::fs::remove_file(f.root().join("b.py")).unwrap();
        assert_eq!(f.lookup(), Lookup::Miss);
        f.store(LATER, FP);
        // Same size, mtime put back: ctime still moves.
        let before = std::fs::metadata(f.root().join("a.py")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        f.write("a.py", "z");
        let file = std::fs::File::options()
            .write(true)
            .open(f.root().join("a.py"))
            .unwrap();
        file.set_modified(before.modified().unwrap()).unwrap();
        assert_eq!(f.lookup(), Lookup::Miss);
    }

    #[test]
    fn other_settings_and_broken_files_are_never_trusted() {
        let f = Fixture::new();
        f.write("a.py", "a");
        f.store(LATER, FP);
        let (files, stats) = f.files();
        let other = Rules {
            exclude: vec![],
            ..Rules::default()
        };
        assert_eq!(
            lookup(&f.cache, &f.root(), &other, &files, &stats),
            Lookup::Miss
        );
        let elsewhere = f.dir.path().join("elsewhere");
        assert_eq!(
            lookup(&f.cache, &elsewhere, &Rules::default(), &files, &stats),
            Lookup::Miss
        );
        for junk in ["", "{", "[]", "{\"kind\": \"x\"}"] {
            std::fs::write(&f.cache, junk).unwrap();
            assert_eq!(f.lookup(), Lookup::Corrupt, "{junk}");
        }
        f.store(LATER, "not-a-digest");
        assert_eq!(f.lookup(), Lookup::Corrupt);
    }
}

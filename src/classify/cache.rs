//! Change kinds remembered across runs, beside the fingerprint cache
//! (`fpcheck/change-kinds-v1` in the git directory).
//!
//! A change's kind is a function of the two versions' bytes and of the
//! classification rules: two blob ids name the bytes, and [`VERSION`] names
//! the rules, so (version, older blob, newer blob) → kind never goes stale.
//! The file is kept exactly as the fingerprint cache is (see `crate::cache`):
//! one line per entry with a checksum over key and value, a line that fails
//! it (or a file that is not a regular file, or is too large) is a miss, and
//! the file is replaced atomically. A damaged file costs parsing time, never
//! an answer. As for fingerprints, the checksum is not a signature: whoever
//! can write `.git` can write a line calling a code change `layout`, and is
//! out of scope; they could do worse with the fingerprint cache (a line
//! there turns a restart into none), while a kind only ever changes the
//! advice (`avoidable`), never the verdict.
//!
//! What is remembered is the comparison of the two blobs' bytes. Whether the
//! blobs are the path's own at both ends (not a link's target) depends on
//! the trees, so it is checked again on every run.

use sha2::{Digest, Sha256};

use gix::ObjectId;

use super::ChangeKind;
use crate::cache::FingerprintCache;

/// Bumped whenever a classification rule changes (what a stream compares,
/// what counts as a docstring, when a file does not parse, which parser;
/// 3 is Ruff's parser, 4 adds `version` and makes an MCP tool's docstring
/// `code`): answers remembered under another version are
/// never looked up.
pub(crate) const VERSION: u32 = 4;

/// The file, relative to the git directory.
const FILE: &str = "fpcheck/change-kinds-v1";

/// Change kinds by (older blob, newer blob).
#[derive(Debug, Default)]
pub(crate) struct KindCache {
    store: FingerprintCache,
}

impl KindCache {
    /// Loads the kinds remembered in `repo` (none when the file is absent,
    /// unreadable or not a regular file).
    pub(crate) fn open(repo: &gix::Repository) -> Self {
        KindCache {
            store: FingerprintCache::open_file(repo, FILE),
        }
    }

    /// A cache that remembers nothing between runs (`--no-cache`): it is
    /// neither read nor written.
    pub(crate) fn none() -> Self {
        KindCache::default()
    }

    /// The kind remembered for the change `old` → `new`.
    pub(crate) fn get(&self, old: ObjectId, new: ObjectId) -> Option<ChangeKind> {
        self.get_at(VERSION, old, new)
    }

    /// Remembers the kind of the change `old` → `new` (for the next run:
    /// nothing is written without a persistent file).
    pub(crate) fn put(&mut self, old: ObjectId, new: ObjectId, kind: ChangeKind) {
        self.put_at(VERSION, old, new, kind);
    }

    fn get_at(&self, version: u32, old: ObjectId, new: ObjectId) -> Option<ChangeKind> {
        if !self.store.is_persistent() || self.store.is_empty() {
            return None;
        }
        decode(self.store.get(&key(version, old, new))?)
    }

    fn put_at(&mut self, version: u32, old: ObjectId, new: ObjectId, kind: ChangeKind) {
        if self.store.is_persistent() {
            self.store.put(key(version, old, new), encode(kind));
        }
    }

    /// Writes the file back when anything was put (atomically). Failing to
    /// write only costs the next run some time.
    pub(crate) fn save(&mut self) -> std::io::Result<()> {
        self.store.save()
    }
}

/// The key of a change under the rules of `version`.
fn key(version: u32, old: ObjectId, new: ObjectId) -> String {
    let mut h = Sha256::new();
    h.update(b"fpcheck-change-kind\0");
    h.update(version.to_le_bytes());
    for id in [old, new] {
        h.update((id.as_bytes().len() as u64).to_le_bytes());
        h.update(id.as_bytes());
    }
    hex::encode(h.finalize())
}

/// A kind as the 64 hex digits the store keeps.
fn encode(kind: ChangeKind) -> String {
    let n: u8 = match kind {
        ChangeKind::Layout => 1,
        ChangeKind::Docstrings => 2,
        ChangeKind::Code => 3,
        ChangeKind::Version => 4,
    };
    format!("{n:064x}")
}

/// The kind a stored value names; anything else is a miss.
fn decode(value: &str) -> Option<ChangeKind> {
    [
        ChangeKind::Layout,
        ChangeKind::Docstrings,
        ChangeKind::Version,
        ChangeKind::Code,
    ]
    .into_iter()
    .find(|k| encode(*k) == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(hex: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[hex; 20])
    }

    #[test]
    fn kinds_round_trip_and_other_values_are_misses() {
        for kind in [
            ChangeKind::Layout,
            ChangeKind::Docstrings,
            ChangeKind::Version,
            ChangeKind::Code,
        ] {
            assert_eq!(decode(&encode(kind)), Some(kind));
        }
        for other in [
            "0".repeat(64),
            format!("{:064x}", 5),
            format!("1{}", "0".repeat(63)),
            "1".to_string(),
        ] {
            assert_eq!(decode(&other), None, "{other}");
        }
    }

    /// The key names the version and both blobs, in order.
    #[test]
    fn keys_differ_by_version_and_direction() {
        let (a, b) = (id(1), id(2));
        let k = key(VERSION, a, b);
        assert_eq!(k.len(), 64);
        assert_ne!(k, key(VERSION + 1, a, b));
        assert_ne!(k, key(VERSION, b, a));
        assert_ne!(k, key(VERSION, a, a));
    }

    /// A file written under another version of the rules is read back
    /// under that version only: after a bump, every change is a miss (and
    /// is classified again), even one whose old answer was `layout`.
    #[test]
    fn answers_of_another_version_are_never_read() {
        let dir = std::env::temp_dir().join(format!("fpcheck-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let repo = gix::init(&dir).expect("a repository in a temp dir");
        let (a, b, c) = (id(1), id(2), id(3));
        let mut cache = KindCache::open(&repo);
        assert_eq!(cache.get(a, b), None);
        cache.put_at(VERSION + 1, a, b, ChangeKind::Layout);
        cache.put(a, c, ChangeKind::Docstrings);
        cache.save().expect("the cache is written");
        let path = repo.common_dir().join(FILE);
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        let cache = KindCache::open(&repo);
        assert_eq!(cache.get(a, b), None);
        assert_eq!(cache.get_at(VERSION + 1, a, b), Some(ChangeKind::Layout));
        assert_eq!(cache.get(a, c), Some(ChangeKind::Docstrings));
        assert_eq!(cache.get(c, a), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Without a file nothing is remembered, not even within the run.
    #[test]
    fn no_cache_remembers_nothing() {
        let mut cache = KindCache::none();
        cache.put(id(1), id(2), ChangeKind::Layout);
        assert_eq!(cache.get(id(1), id(2)), None);
        assert!(cache.save().is_ok());
    }
}

//! A persistent cache of fingerprints by selection, inside the repository's
//! git directory (`fpcheck/fingerprints-v1`).
//!
//! A fingerprint is a function of the selected paths and their bytes, and a
//! blob id names the bytes, so (paths, blob ids) → fingerprint never goes
//! stale: no invalidation is needed. A line that does not parse is skipped
//! and a cache that cannot be read is treated as empty, so a corrupt cache
//! costs time, never a wrong answer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::select::Selection;
use crate::source::Node;

/// Bumped whenever the fingerprint's definition changes.
const SPEC_VERSION: &str = "fpcheck-fingerprint-v1";

/// The cache file, relative to the git directory.
const FILE: &str = "fpcheck/fingerprints-v1";

/// Fingerprints by selection key.
#[derive(Debug, Default)]
pub struct FingerprintCache {
    path: Option<PathBuf>,
    entries: HashMap<String, String>,
    dirty: bool,
}

impl FingerprintCache {
    /// A cache that remembers nothing between runs.
    pub fn in_memory() -> Self {
        FingerprintCache::default()
    }

    /// Loads the cache of `repo` (empty when absent or unreadable).
    pub fn open(repo: &gix::Repository) -> Self {
        let path = repo.common_dir().join(FILE);
        let entries = std::fs::read_to_string(&path)
            .map(|text| parse(&text))
            .unwrap_or_default();
        FingerprintCache {
            path: Some(path),
            entries,
            dirty: false,
        }
    }

    /// The key of a selection whose contents are blob ids; `None` when a
    /// file is read from disk (a directory's bytes have no id).
    pub fn key(selection: &Selection) -> Option<String> {
        let mut hasher = Sha256::new();
        hasher.update(SPEC_VERSION.as_bytes());
        hasher.update(b"\n");
        for f in &selection.files {
            let Node::Object(id) = &f.content else {
                return None;
            };
            hasher.update(f.path.as_bytes());
            hasher.update([0]);
            hasher.update(id.as_bytes());
            hasher.update(b"\n");
        }
        Some(hex::encode(hasher.finalize()))
    }

    /// The fingerprint remembered for `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    /// Remembers a fingerprint.
    pub fn put(&mut self, key: String, fingerprint: String) {
        if self.entries.get(&key) != Some(&fingerprint) {
            self.entries.insert(key, fingerprint);
            self.dirty = true;
        }
    }

    /// Writes the cache back (atomically: a reader sees the old file or the
    /// new one). Failing to write a cache is not an error worth stopping
    /// for, so the caller may ignore the result.
    pub fn save(&mut self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !self.dirty {
            return Ok(());
        }
        let mut text = String::with_capacity(self.entries.len() * 130);
        let mut keys: Vec<&String> = self.entries.keys().collect();
        keys.sort();
        for k in keys {
            let _ = writeln!(text, "{k} {}", self.entries[k]);
        }
        let dir = path.parent().expect("the cache file has a directory");
        std::fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".fingerprints-v1.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)?;
        self.dirty = false;
        Ok(())
    }
}

fn parse(text: &str) -> HashMap<String, String> {
    let is_hex64 = |s: &str| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(k, v)| is_hex64(k) && is_hex64(v))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_lines_are_skipped() {
        let good = format!("{} {}\n", "a".repeat(64), "b".repeat(64));
        let text = format!("garbage\n{good}{} short\n\u{0}\u{1}\n", "c".repeat(64));
        let map = parse(&text);
        assert_eq!(map.len(), 1);
        assert_eq!(map["a".repeat(64).as_str()], "b".repeat(64));
    }
}

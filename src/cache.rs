//! A persistent cache of fingerprints by selection, inside the repository's
//! git directory (`fpcheck/fingerprints-v3`).
//!
//! A fingerprint is a function of the selected paths and their bytes, and a
//! blob id names the bytes, so (paths, blob ids) → fingerprint never goes
//! stale: no invalidation is needed. Each line carries a checksum of its
//! key and fingerprint: a line whose checksum does not match (a flipped
//! digit, a torn write, a line from another version), that does not parse,
//! or a file that is not a regular file or is too large, is a miss, so a
//! damaged cache costs time, never a wrong answer. The checksum is not a
//! signature: whoever can write `.git` can also write a matching line, and
//! is out of scope (they can rewrite the refs and objects themselves).
//!
//! The same lines also summarise walks of runtime root trees (see
//! [`FingerprintCache::tree_key`]): a tree id names every entry below it,
//! so a summary never goes stale either.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use gix::ObjectId;

use crate::own_files::{private_dir, read_bytes_in, write_in, Opened};
use crate::select::{Rules, Selection};
use crate::source::Node;

/// Bumped whenever the fingerprint's definition changes.
const SPEC_VERSION: &str = "fpcheck-fingerprint-v1";

/// The cache file, relative to the git directory. Version 1 had no
/// checksums; its files are left alone and never read.
const FILE: &str = "fpcheck/fingerprints-v3";

/// The largest cache file read: about 190 bytes a line, so over 300,000
/// fingerprints. A larger file is ignored (and rewritten on the next save).
const MAX_FILE: u64 = 64 << 20;

/// The most a save writes: a quarter of [`MAX_FILE`] (about 80,000
/// fingerprints). Past it, the entries this run looked up or added are
/// kept first, then the others in key order up to the bound, so a range or
/// history run again finds what it used, and the file never grows past
/// what is read (a file over [`MAX_FILE`] would be ignored whole).
const MAX_SAVED: usize = 16 << 20;

/// Hex digits of the per-line checksum.
const CHECK_LEN: usize = 16;

/// Fingerprints by selection key.
///
/// The file is parsed into a map only when it is needed: a range asks for
/// one or two keys, and scanning the text for them costs less than parsing
/// a file that holds every fingerprint a history ever computed (measured in
/// bench/: parsing 230 entries was ~7% of the instructions of an
/// `fpcheck A..B` answered from the cache). From the third lookup on, or on
/// the first `put`, the map is built, so a history's hundreds of lookups
/// stay O(1).
#[derive(Debug, Default)]
pub(crate) struct FingerprintCache {
    /// Where the cache is kept between runs; `None`: in memory only.
    store: Option<Store>,
    /// The file as read (empty when absent or unreadable).
    text: String,
    /// `text` parsed, plus what was put since.
    entries: OnceLock<HashMap<String, String>>,
    /// Lookups answered by scanning `text`.
    scans: AtomicUsize,
    /// Keys looked up with an answer, or put, this run (kept first when a
    /// save is over [`MAX_SAVED`]).
    used: std::sync::Mutex<Used>,
    dirty: bool,
}

/// Keys in the order first used, each once: a process that keeps a cache
/// and looks the same keys up again and again (the Python package's
/// callers) must not grow it.
#[derive(Debug, Default)]
struct Used {
    order: Vec<String>,
    seen: std::collections::HashSet<String>,
}

impl Used {
    fn note(&mut self, key: &str) {
        if !self.seen.contains(key) {
            self.seen.insert(key.to_string());
            self.order.push(key.to_string());
        }
    }
}

/// Lookups answered by scanning the text before the map is built (a tree
/// summary, its file count and a digest).
const SCANS: usize = 3;

impl FingerprintCache {
    /// A cache that remembers nothing between runs.
    pub(crate) fn in_memory() -> Self {
        FingerprintCache::default()
    }

    /// Loads the cache of `repo` (empty when absent or unreadable).
    pub(crate) fn open(repo: &gix::Repository) -> Self {
        FingerprintCache::open_file(repo, FILE)
    }

    /// Loads another store kept the same way, at `file` relative to the git
    /// directory (the same lines, checks and atomic writes; see
    /// `classify::cache`). `file` is `DIR/NAME`, `DIR` a directory fpcheck
    /// keeps for itself: a link or anything but a directory there (a link
    /// out of the repository) makes the cache an in-memory one, never read
    /// or written through it.
    pub(crate) fn open_file(repo: &gix::Repository, file: &str) -> Self {
        let (dir, name) = file.rsplit_once('/').expect("a cache file is DIR/NAME");
        let common = repo.common_dir().to_path_buf();
        let Ok(opened) = private_dir(&common, dir, false) else {
            return FingerprintCache::in_memory();
        };
        let text = opened
            .as_ref()
            .and_then(|d| read_in(d, name))
            .unwrap_or_default();
        FingerprintCache {
            store: Some(Store {
                common,
                dir: dir.to_string(),
                name: name.to_string(),
                opened,
            }),
            text,
            ..FingerprintCache::default()
        }
    }

    /// The key of a selection whose contents are blob ids; `None` when a
    /// file is read from disk (a directory's bytes have no id).
    pub(crate) fn key(selection: &Selection) -> Option<String> {
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

    /// Whether the cache is kept between runs.
    pub(crate) fn is_persistent(&self) -> bool {
        self.store.is_some()
    }

    /// The key under which a walk of a runtime root's tree is summarised:
    /// its path from the top, tree id and depth, and the rules. The same
    /// key at both ends of a range means the same selection as long as no
    /// selected link looked above the root, which is the only kind of walk
    /// [`FingerprintCache::put_tree`] is told about.
    pub(crate) fn tree_key(
        root: &str,
        tree: ObjectId,
        (depth, links): (usize, usize),
        rules: &Rules,
    ) -> String {
        let mut h = Sha256::new();
        h.update(SPEC_VERSION.as_bytes());
        h.update(b"\0tree\0");
        h.update(root.as_bytes());
        h.update(b"\0");
        h.update(tree.as_bytes());
        h.update(depth.to_le_bytes());
        // The links on the root's path count towards the kernel's limit on
        // each selected link's lookup (a root without any keeps the key it
        // always had).
        if links > 0 {
            h.update(b"\0links\0");
            h.update(links.to_le_bytes());
        }
        for list in [&rules.extensions, &rules.exclude] {
            h.update((list.len() as u64).to_le_bytes());
            for item in list {
                h.update((item.len() as u64).to_le_bytes());
                h.update(item.as_bytes());
            }
        }
        hex::encode(h.finalize())
    }

    /// The selection key of a tree summary made by a scan (see
    /// [`crate::select::plain_selection`]), which counts the files
    /// but builds no selection: no digest is stored under it.
    pub(crate) const UNWALKED: &'static str =
        "0000000000000000000000000000000000000000000000000000000000000000";

    /// What a walk of the tree of `tree_key` found, when remembered: the
    /// selection's key and its number of files.
    pub(crate) fn tree(&self, tree_key: &str) -> Option<(String, usize)> {
        let selection = self.get(tree_key)?.to_string();
        let files = self.get(&files_key(tree_key))?;
        // The count is stored as 64 hex digits: only the last 16 may be set.
        if !files[..48].bytes().all(|b| b == b'0') {
            return None;
        }
        let files = usize::from_str_radix(&files[48..], 16).ok()?;
        Some((selection, files))
    }

    /// Remembers a walk of the tree of `tree_key` that was available, saw
    /// no `.gitattributes` below the root, and whose selected links never
    /// looked above the root: its selection's key and number of files.
    pub(crate) fn put_tree(&mut self, tree_key: String, selection_key: String, files: usize) {
        self.put(files_key(&tree_key), format!("{files:064x}"));
        self.put(tree_key, selection_key);
    }

    /// Nothing remembered (no file, and nothing put): no lookup can hit.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty() && self.entries.get().is_none_or(HashMap::is_empty)
    }

    /// The fingerprint remembered for `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        let found =
            if self.entries.get().is_none() && self.scans.fetch_add(1, Ordering::Relaxed) < SCANS {
                scan(&self.text, key)
            } else {
                self.entries().get(key).map(String::as_str)
            };
        if found.is_some() {
            self.used_now(key);
        }
        found
    }

    fn used_now(&self, key: &str) {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        used.note(key);
    }

    /// Remembers a fingerprint.
    pub(crate) fn put(&mut self, key: String, fingerprint: String) {
        self.entries();
        let entries = self.entries.get_mut().expect("parsed just above");
        if entries.get(&key) != Some(&fingerprint) {
            let used = self.used.get_mut().unwrap_or_else(|e| e.into_inner());
            used.note(&key);
            entries.insert(key, fingerprint);
            self.dirty = true;
        }
    }

    fn entries(&self) -> &HashMap<String, String> {
        self.entries.get_or_init(|| parse(&self.text))
    }

    /// Writes the cache back (atomically: a reader sees the old file or the
    /// new one). Failing to write a cache is not an error worth stopping
    /// for, so the caller may ignore the result.
    pub(crate) fn save(&mut self) -> std::io::Result<()> {
        if self.store.is_none() {
            return Ok(());
        }
        if !self.dirty {
            return Ok(());
        }
        let text = self.text_to_save(MAX_SAVED);
        let store = self.store.as_mut().expect("checked above");
        if store.opened.is_none() {
            // Made now, with mkdir (never through a link): a link planted
            // since the open is refused like one found then.
            store.opened = private_dir(&store.common, &store.dir, true)?;
        }
        let dir = store.opened.as_ref().expect("made just above");
        // `.git/fpcheck` is fpcheck's own: whatever is planted at the name
        // is replaced, never written through (see `replace_private`), and
        // the write is relative to the directory opened without following
        // a link, so it cannot leave it.
        write_in(dir, &store.name, text.as_bytes())?;
        self.dirty = false;
        Ok(())
    }
}

impl FingerprintCache {
    /// The lines to write: every entry in key order, or, past `limit`
    /// bytes, the entries used this run first (see [`MAX_SAVED`]).
    fn text_to_save(&self, limit: usize) -> String {
        let entries = self.entries();
        let line = |k: &str| {
            let v = &entries[k];
            format!("{k} {v} {}\n", checksum(k, v))
        };
        let mut keys: Vec<&String> = entries.keys().collect();
        keys.sort();
        let whole: usize = keys
            .iter()
            .map(|k| k.len() + entries[*k].len() + 3 + CHECK_LEN)
            .sum();
        let mut text = String::with_capacity(whole.min(limit));
        if whole <= limit {
            keys.iter().for_each(|k| text.push_str(&line(k)));
            return text;
        }
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        let mut written = std::collections::HashSet::new();
        let used = used
            .order
            .iter()
            .filter(|k| entries.contains_key(k.as_str()));
        for k in used
            .map(String::as_str)
            .chain(keys.iter().map(|k| k.as_str()))
        {
            let l = line(k);
            if text.len() + l.len() > limit {
                break;
            }
            if written.insert(k) {
                text.push_str(&l);
            }
        }
        text
    }
}

/// Where a persistent cache lives: `NAME` in `COMMON/DIR`.
#[derive(Debug)]
struct Store {
    /// The repository's common git directory.
    common: PathBuf,
    dir: String,
    name: String,
    /// `COMMON/DIR`, opened without following a link; `None` until it
    /// exists.
    opened: Option<Opened>,
}

/// The cache file `name` in the opened directory, if it is a regular file
/// of at most [`MAX_FILE`] bytes of UTF-8.
fn read_in(dir: &Opened, name: &str) -> Option<String> {
    String::from_utf8(read_bytes_in(dir, name, MAX_FILE as usize)?).ok()
}

/// The key of a tree summary's file count.
fn files_key(tree_key: &str) -> String {
    let mut h = Sha256::new();
    h.update(SPEC_VERSION.as_bytes());
    h.update(b"\0files\0");
    h.update(tree_key.as_bytes());
    hex::encode(h.finalize())
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The checksum of one line: the start of SHA-256 over the spec version,
/// the key and the fingerprint.
fn checksum(key: &str, fingerprint: &str) -> String {
    let mut h = Sha256::new();
    h.update(SPEC_VERSION.as_bytes());
    h.update(b"\0");
    h.update(key.as_bytes());
    h.update(b" ");
    h.update(fingerprint.as_bytes());
    let mut hex = hex::encode(h.finalize());
    hex.truncate(CHECK_LEN);
    hex
}

/// A line's key and fingerprint, when it is whole and its checksum holds.
fn entry(line: &str) -> Option<(&str, &str)> {
    let mut parts = line.split(' ');
    let (k, v, check) = (parts.next()?, parts.next()?, parts.next()?);
    (parts.next().is_none() && is_hex64(k) && is_hex64(v) && check == checksum(k, v))
        .then_some((k, v))
}

fn parse(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(entry)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What [`parse`]'s map would hold for `key` (the last valid line wins),
/// without building the map.
fn scan<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines()
        // Only lines for this key pay for a checksum.
        .filter(|line| line.starts_with(key) && line.as_bytes().get(key.len()) == Some(&b' '))
        .filter_map(entry)
        .map(|(_, v)| v)
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(k: &str, v: &str) -> String {
        format!("{k} {v} {}\n", checksum(k, v))
    }

    /// A tree summary comes back as put, under a key that names the root,
    /// the tree, its depth and the rules; a count whose high digits are
    /// set (not one `put_tree` writes) is a miss.
    #[test]
    fn tree_summaries_round_trip_under_their_exact_key() {
        let tree = ObjectId::from_hex(b"4b825dc642cb6eb9a060e54bf8d69288fbee4904").unwrap();
        let rules = Rules::default();
        let key = FingerprintCache::tree_key("src", tree, (1, 0), &rules);
        let mut others = vec![
            FingerprintCache::tree_key("lib", tree, (1, 0), &rules),
            FingerprintCache::tree_key("src", tree, (2, 0), &rules),
            FingerprintCache::tree_key("src", tree, (1, 1), &rules),
            FingerprintCache::tree_key("src", ObjectId::null(tree.kind()), (1, 0), &rules),
        ];
        let mut more = rules.clone();
        more.exclude.push("docs".into());
        others.push(FingerprintCache::tree_key("src", tree, (1, 0), &more));
        let mut cache = FingerprintCache::in_memory();
        assert!(cache.is_empty());
        cache.put_tree(key.clone(), "a".repeat(64), 40_000);
        assert!(!cache.is_empty());
        assert_eq!(cache.tree(&key), Some(("a".repeat(64), 40_000)));
        for other in &others {
            assert_ne!(*other, key);
            assert_eq!(cache.tree(other), None);
        }
        cache.put(files_key(&key), format!("1{}", "0".repeat(63)));
        assert_eq!(cache.tree(&key), None);
    }

    /// Past the bound, what this run used survives a save (looked up or
    /// put), the rest fills up to the bound, and the file stays readable.
    #[test]
    fn a_save_past_the_bound_keeps_what_the_run_used() {
        let keys: Vec<String> = (0..100).map(|i| format!("{i:064x}")).collect();
        let text: String = keys.iter().map(|k| line(k, &"e".repeat(64))).collect();
        let one = line(&keys[0], &"e".repeat(64)).len();
        let mut cache = FingerprintCache {
            text,
            ..FingerprintCache::default()
        };
        // Used this run: the last key (looked up) and a new one (put).
        assert!(cache.get(&keys[99]).is_some());
        assert!(cache.get(&"f".repeat(64)).is_none());
        cache.put("a".repeat(64), "b".repeat(64));
        let whole = cache.text_to_save(usize::MAX);
        assert_eq!(parse(&whole).len(), 101);
        let bounded = cache.text_to_save(10 * one);
        assert!(bounded.len() <= 10 * one);
        let kept = parse(&bounded);
        assert_eq!(kept.len(), 10);
        assert_eq!(kept.get(&keys[99]), Some(&"e".repeat(64)));
        assert_eq!(kept.get(&"a".repeat(64)), Some(&"b".repeat(64)));
        // The rest in key order.
        for k in &keys[..8] {
            assert!(kept.contains_key(k), "{k}");
        }
    }

    /// A key looked up again and again is noted once: a long-lived cache
    /// does not grow with its lookups.
    #[test]
    fn repeated_lookups_are_noted_once() {
        let key = "a".repeat(64);
        let mut cache = FingerprintCache::default();
        cache.put(key.clone(), "b".repeat(64));
        for _ in 0..1000 {
            assert!(cache.get(&key).is_some());
        }
        let used = cache.used.lock().unwrap();
        assert_eq!(used.order, [key]);
    }

    #[test]
    fn corrupt_lines_are_skipped() {
        let (a, b, c) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
        let text = format!(
            "garbage\n{}{c} short\n\u{0}\u{1}\n{a} {b}\n{c} {b} {}x\n",
            line(&a, &b),
            checksum(&c, &b)
        );
        let map = parse(&text);
        assert_eq!(map.len(), 1);
        assert_eq!(map[a.as_str()], b);
    }

    /// Any one changed character of a line makes it a miss.
    #[test]
    fn a_flipped_digit_is_a_miss() {
        let (k, v) = ("0123456789abcdef".repeat(4), "fedcba9876543210".repeat(4));
        let good = line(&k, &v);
        assert_eq!(parse(&good).get(&k), Some(&v));
        for i in 0..good.len() - 1 {
            let mut bytes = good.clone().into_bytes();
            bytes[i] = if bytes[i] == b'0' { b'1' } else { b'0' };
            let text = String::from_utf8(bytes).unwrap();
            assert_eq!(parse(&text).len(), 0, "flip at {i} still parses: {text}");
            assert_eq!(scan(&text, &k), None);
        }
    }

    #[test]
    fn scanning_answers_as_the_map_does() {
        let (a, b, c, d) = (
            "a".repeat(64),
            "b".repeat(64),
            "c".repeat(64),
            "d".repeat(64),
        );
        // Duplicates (the last valid line wins), corrupt lines, a short value.
        let text = format!(
            "{}{c} short\n{}garbage\n{}{a} x{} 0000000000000000\n",
            line(&a, &b),
            line(&a, &d),
            line(&c, &a),
            "y".repeat(63)
        );
        let map = parse(&text);
        for key in [&a, &b, &c, &d, &"e".repeat(64), &"short".to_string()] {
            assert_eq!(
                scan(&text, key),
                map.get(key.as_str()).map(String::as_str),
                "{key}"
            );
        }
        let mut cache = FingerprintCache {
            text,
            ..FingerprintCache::default()
        };
        for _ in 0..SCANS + 2 {
            assert_eq!(cache.get(&a), Some(d.as_str()));
            assert_eq!(cache.get(&c), Some(a.as_str()));
            assert_eq!(cache.get(&b), None);
        }
        cache.put(b.clone(), c.clone());
        assert_eq!(cache.get(&b), Some(c.as_str()));
        assert_eq!(cache.get(&a), Some(d.as_str()));
    }
}

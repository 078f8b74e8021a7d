//! A persistent memo of the few small objects a range reads before it
//! knows that nothing changed: the commits (and tags) of its ends, the
//! trees from the top down to each runtime root, `fpcheck.toml`, the
//! version file (`.git/fpcheck/objects-v1`).
//!
//! Why: with the fingerprint cache warm, a range over an unchanged root
//! reads a dozen objects of a few hundred bytes each, yet looking up the
//! first one loads the pack index, and gix checks every offset of it on
//! load (1.1 M instructions and ~200 page faults for a 200,000-object
//! pack: a fifth of a warm run, and work `git diff --quiet` never does).
//! Served from this memo, a warm run opens no pack at all.
//!
//! Sound without any trust in the file: an object id is the hash of the
//! object's kind, size and bytes, so an entry is used only once its bytes
//! hash to its id (checked on first use, each entry at most once per run).
//! A damaged, truncated or forged entry is a miss, never a different
//! object. Nothing is keyed on a ref name, and `git replace` is never read
//! (see `open_options`), so an id served is always its own object's.
//!
//! Bounded: objects over [`MAX_OBJECT`] bytes are never kept, a run
//! records at most [`MAX_NEW`] bytes of new objects (the first it reads:
//! the ends' commits, trees and settings come before any walk), and the
//! file holds at most [`MAX_FILE`] bytes: on a save, objects this run used
//! or read come first, then the others in their previous order, until the
//! bound. The file is rewritten only when a run read an object it did not
//! hold, so a warm run writes nothing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use gix::object::Kind;
use gix::ObjectId;

/// The memo file, relative to the git directory.
const FILE: &str = "fpcheck/objects-v1";

/// The first line of the file.
const MAGIC: &[u8] = b"fpcheck-objects-v1\n";

/// The largest object kept: commits, tags, the trees above a root and
/// settings files are far smaller.
const MAX_OBJECT: usize = 64 << 10;

/// The most bytes of new objects one run records.
const MAX_NEW: usize = 256 << 10;

/// The largest file read or written: what one run records. Every warm
/// run reads the whole file, and reading 1 MiB costs about as many page
/// faults (some 250) as loading the pack index it spares.
const MAX_FILE: usize = MAX_NEW;

/// Not checked yet / its bytes hash to its id / they do not.
const UNCHECKED: u8 = 0;
const SOUND: u8 = 1;
const FORGED: u8 = 2;

/// One object held by the file.
struct Held {
    kind: Kind,
    /// Its bytes within [`Memo::data`].
    start: usize,
    len: usize,
    check: AtomicU8,
    used: AtomicBool,
}

/// Objects read from the store this run, to be kept.
#[derive(Default)]
struct Recorded {
    order: Vec<ObjectId>,
    objects: HashMap<ObjectId, (Kind, Vec<u8>)>,
    bytes: usize,
}

/// The memo of one repository's object store for one run.
pub(crate) struct Memo {
    /// The repository's common git directory, which holds [`FILE`].
    common: PathBuf,
    hash: gix::hash::Kind,
    data: Vec<u8>,
    /// The file's objects in file order (for the order of a rewrite).
    order: Vec<ObjectId>,
    held: HashMap<ObjectId, Held>,
    recorded: Mutex<Recorded>,
    /// Something was recorded (the file is worth rewriting).
    dirty: AtomicBool,
}

/// While alive, the memo is in use (see [`super::Session::with_memo`]);
/// dropped, it is saved.
pub(crate) struct Installed {
    memo: Arc<Memo>,
}

impl Installed {
    pub(super) fn new(memo: Arc<Memo>) -> Self {
        Installed { memo }
    }
}

/// The object cache `open_repo` gives gix (4 MiB, in memory), with the
/// memo in front of it.
pub(super) fn set_cache(repo: &mut gix::Repository, memo: &Arc<Memo>) {
    let shared = Arc::clone(memo);
    repo.objects.set_object_cache(move || {
        Box::new(MemoCache {
            memo: Arc::clone(&shared),
            inner: gix::odb::pack::cache::object::MemoryCappedHashmap::new(4 << 20),
        })
    });
}

impl Drop for Installed {
    fn drop(&mut self) {
        // A memo that cannot be written costs the next run time, nothing else.
        let _ = self.memo.save();
    }
}

impl Memo {
    /// Reads the file of the git directory `common` (an absent, unreadable
    /// or malformed file is empty; a malformed tail is dropped).
    pub(super) fn open(common: PathBuf, hash: gix::hash::Kind) -> Self {
        // Kept as the fingerprint cache is (`.git/fpcheck`, no link
        // followed, a regular file only, size capped).
        let data = crate::own_files::read_private(&common, FILE, MAX_FILE).unwrap_or_default();
        let (order, held) = index(&data, hash);
        Memo {
            common,
            hash,
            data,
            order,
            held,
            recorded: Mutex::new(Recorded::default()),
            dirty: AtomicBool::new(false),
        }
    }

    /// The kind and size of object `id` when the file holds it, without
    /// touching the store (gix reads headers from the pack, past the object
    /// cache).
    pub(super) fn header(&self, id: &ObjectId) -> Option<(Kind, u64)> {
        self.sound(id)
            .map(|(kind, bytes)| (kind, bytes.len() as u64))
    }

    /// The bytes of an object of the file.
    fn bytes(&self, held: &Held) -> &[u8] {
        &self.data[held.start..held.start + held.len]
    }

    /// Object `id` from the file, once its bytes are checked against it.
    fn sound(&self, id: &ObjectId) -> Option<(Kind, &[u8])> {
        let held = self.held.get(id)?;
        let bytes = self.bytes(held);
        match held.check.load(Ordering::Relaxed) {
            SOUND => {}
            FORGED => return None,
            _ => {
                let ok = gix::objs::compute_hash(self.hash, held.kind, bytes)
                    .is_ok_and(|computed| computed == *id);
                held.check
                    .store(if ok { SOUND } else { FORGED }, Ordering::Relaxed);
                if !ok {
                    return None;
                }
            }
        }
        held.used.store(true, Ordering::Relaxed);
        Some((held.kind, bytes))
    }

    fn get(&self, id: &ObjectId, out: &mut Vec<u8>) -> Option<Kind> {
        if let Some((kind, bytes)) = self.sound(id) {
            out.clear();
            out.extend_from_slice(bytes);
            return Some(kind);
        }
        if !self.dirty.load(Ordering::Relaxed) {
            return None;
        }
        let recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        let (kind, bytes) = recorded.objects.get(id)?;
        out.clear();
        out.extend_from_slice(bytes);
        Some(*kind)
    }

    /// Keeps an object read from the store, within the bounds.
    fn record(&self, id: ObjectId, kind: Kind, bytes: &[u8]) {
        if bytes.len() > MAX_OBJECT {
            return;
        }
        // A held object is read from the store only when its entry failed
        // the check: the store's copy then replaces it.
        if self
            .held
            .get(&id)
            .is_some_and(|h| h.check.load(Ordering::Relaxed) != FORGED)
        {
            return;
        }
        let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        if recorded.bytes + bytes.len() > MAX_NEW || recorded.objects.contains_key(&id) {
            return;
        }
        recorded.bytes += bytes.len();
        recorded.order.push(id);
        recorded.objects.insert(id, (kind, bytes.to_vec()));
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Rewrites the file when this run recorded objects: the objects used
    /// or recorded first, then the rest as they were, up to [`MAX_FILE`].
    fn save(&self) -> std::io::Result<()> {
        if !self.dirty.load(Ordering::Relaxed) {
            return Ok(());
        }
        let recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = MAGIC.to_vec();
        let mut push = |id: &ObjectId, kind: Kind, bytes: &[u8]| {
            let len = id.as_bytes().len() + 5 + bytes.len();
            if out.len() + len > MAX_FILE {
                return;
            }
            out.extend_from_slice(id.as_bytes());
            out.push(kind_byte(kind));
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        };
        // The file's sound objects this run used (or not), in file order.
        let from_file = |used: bool| {
            self.order.iter().filter_map(move |id| {
                let held = &self.held[id];
                (held.check.load(Ordering::Relaxed) != FORGED
                    && held.used.load(Ordering::Relaxed) == used)
                    .then(|| (id, held.kind, self.bytes(held)))
            })
        };
        for (id, kind, bytes) in from_file(true) {
            push(id, kind, bytes);
        }
        for id in &recorded.order {
            let (kind, bytes) = &recorded.objects[id];
            push(id, *kind, bytes);
        }
        for (id, kind, bytes) in from_file(false) {
            push(id, kind, bytes);
        }
        crate::own_files::write_private(&self.common, FILE, &out)
    }
}

/// The objects of a memo file, in file order, as far as it is well formed.
fn index(data: &[u8], hash: gix::hash::Kind) -> (Vec<ObjectId>, HashMap<ObjectId, Held>) {
    let mut order = Vec::new();
    let mut held = HashMap::new();
    let Some(mut rest) = data.strip_prefix(MAGIC) else {
        return (order, held);
    };
    let id_len = hash.len_in_bytes();
    while rest.len() >= id_len + 5 {
        let (id, tail) = rest.split_at(id_len);
        let Some(kind) = byte_kind(tail[0]) else {
            break;
        };
        let len = u32::from_le_bytes([tail[1], tail[2], tail[3], tail[4]]) as usize;
        let body = &tail[5..];
        if len > body.len() || len > MAX_OBJECT {
            break;
        }
        let Ok(id) = ObjectId::try_from(id) else {
            break;
        };
        let start = data.len() - body.len();
        if held
            .insert(
                id,
                Held {
                    kind,
                    start,
                    len,
                    check: AtomicU8::new(UNCHECKED),
                    used: AtomicBool::new(false),
                },
            )
            .is_none()
        {
            order.push(id);
        }
        rest = &body[len..];
    }
    (order, held)
}

fn kind_byte(kind: Kind) -> u8 {
    match kind {
        Kind::Commit => 1,
        Kind::Tree => 2,
        Kind::Blob => 3,
        Kind::Tag => 4,
    }
}

fn byte_kind(byte: u8) -> Option<Kind> {
    Some(match byte {
        1 => Kind::Commit,
        2 => Kind::Tree,
        3 => Kind::Blob,
        4 => Kind::Tag,
        _ => return None,
    })
}

/// gix's object cache for a repository with a memo: the memo first, then
/// an ordinary in-memory cache; objects read from the store go to both.
struct MemoCache {
    memo: Arc<Memo>,
    inner: gix::odb::pack::cache::object::MemoryCappedHashmap,
}

impl gix::odb::pack::cache::Object for MemoCache {
    fn put(&mut self, id: ObjectId, kind: Kind, data: &[u8]) {
        self.memo.record(id, kind, data);
        self.inner.put(id, kind, data);
    }

    fn get(&mut self, id: &ObjectId, out: &mut Vec<u8>) -> Option<Kind> {
        self.memo.get(id, out).or_else(|| self.inner.get(id, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA1: gix::hash::Kind = gix::hash::Kind::Sha1;

    fn blob(bytes: &[u8]) -> (ObjectId, Vec<u8>) {
        let id = gix::objs::compute_hash(SHA1, Kind::Blob, bytes).unwrap();
        let mut rec = id.as_bytes().to_vec();
        rec.push(kind_byte(Kind::Blob));
        rec.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        rec.extend_from_slice(bytes);
        (id, rec)
    }

    /// Sound entries are served, forged ones are not and are dropped on the
    /// next save, a torn tail is ignored, and a save puts what the run used
    /// or read first.
    #[test]
    fn entries_are_checked_and_saves_keep_what_was_used_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("fpcheck")).unwrap();
        let path = dir.path().join(FILE);
        let (a, rec_a) = blob(b"a = 1\n");
        let (b, rec_b) = blob(b"b = 2\n");
        let (c, _) = blob(b"c = 3\n");
        // `c`'s id over other bytes: forged.
        let mut forged = c.as_bytes().to_vec();
        forged.push(kind_byte(Kind::Blob));
        forged.extend_from_slice(&6u32.to_le_bytes());
        forged.extend_from_slice(b"x = 9\n");
        let mut file = MAGIC.to_vec();
        for rec in [&rec_a, &forged, &rec_b] {
            file.extend_from_slice(rec);
        }
        file.extend_from_slice(&rec_a[..30]);
        std::fs::write(&path, &file).unwrap();

        let memo = Memo::open(dir.path().into(), SHA1);
        assert_eq!(memo.order, vec![a, c, b]);
        let mut out = Vec::new();
        assert_eq!(memo.get(&b, &mut out), Some(Kind::Blob));
        assert_eq!(out, b"b = 2\n");
        assert_eq!(memo.get(&c, &mut out), None);
        // Read from the store: kept, and served from then on.
        let (d, _) = blob(b"d = 4\n");
        memo.record(d, Kind::Blob, b"d = 4\n");
        memo.record(c, Kind::Blob, b"c = 3\n");
        assert_eq!(memo.get(&d, &mut out), Some(Kind::Blob));
        memo.save().unwrap();

        let again = Memo::open(dir.path().into(), SHA1);
        assert_eq!(again.order, vec![b, d, c, a]);
        for id in [a, b, c, d] {
            assert!(again.sound(&id).is_some(), "{id}");
        }
        // Nothing new read: nothing to write.
        assert!(!again.dirty.load(Ordering::Relaxed));
    }

    /// A run records at most MAX_NEW bytes and no object over MAX_OBJECT.
    #[test]
    fn recording_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let memo = Memo::open(dir.path().into(), SHA1);
        let big = vec![b'x'; MAX_OBJECT + 1];
        let (id, _) = blob(&big);
        memo.record(id, Kind::Blob, &big);
        assert!(!memo.dirty.load(Ordering::Relaxed));
        let piece = vec![b'y'; MAX_OBJECT];
        for i in 0..(MAX_NEW / MAX_OBJECT + 2) {
            let mut bytes = piece.clone();
            bytes[0] = i as u8;
            let (id, _) = blob(&bytes);
            memo.record(id, Kind::Blob, &bytes);
        }
        let recorded = memo.recorded.lock().unwrap();
        assert_eq!(recorded.order.len(), MAX_NEW / MAX_OBJECT);
        assert!(recorded.bytes <= MAX_NEW);
    }
}

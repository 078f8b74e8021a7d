//! Section 2's digest of many files read on two threads: a directory's
//! files split between a reading and a hashing thread, and the pipe for
//! any other source.

use super::*;
use crate::buf_pool::BufPool;
use crate::source::{FileReader, Whole};

/// Fewer files than this are read on one thread: starting another costs
/// more than it saves.
pub(super) const SPLIT_MIN_FILES: usize = 16;

/// Of every `SPLIT_OF` runs of files, the reading thread of [`hash_split`]
/// reads all but one; the hashing thread reads that one. See [`read_ahead`].
pub(super) const SPLIT_OF: usize = 4;

/// The most files in one run of [`read_ahead`].
pub(super) const RUN: usize = 8;

/// Which of `files` (in hash order) the reading thread of [`hash_split`]
/// reads: they are cut into runs of at most [`RUN`] files of one directory,
/// and it reads all runs but every `SPLIT_OF`th. A run's files share their
/// directory, so each thread opens a directory once per run it reads, not
/// once per file (as three in four files by index did: ~60 more opens).
pub(super) fn read_ahead(files: &[SelectedFile]) -> Vec<bool> {
    let (mut run, mut len) = (0usize, 0usize);
    let mut last: Option<&str> = None;
    files
        .iter()
        .map(|f| {
            let dir = f.path.rfind('/').map_or("", |i| &f.path[..i]);
            if last != Some(dir) || len == RUN {
                if last.is_some() {
                    run += 1;
                }
                len = 0;
                last = Some(dir);
            }
            len += 1;
            !run.is_multiple_of(SPLIT_OF)
        })
        .collect()
}

/// The largest file the reading thread of [`hash_split`] holds whole;
/// the hashing thread streams bigger ones itself.
pub(super) const SPLIT_CAP: usize = 256 << 10;

/// The reading thread of [`hash_split`] hands its files over in batches
/// of at least this many bytes (or the last ones): one hand-over (a futex
/// wake and wait, ~5 µs of CPU) per ~16 runtime files, not per file.
pub(super) const BATCH: usize = 256 << 10;

/// Batches queued for the hashing thread. Memory in flight is bounded by
/// `BATCHES_AHEAD + 2` batches of at most [`BATCH`] + [`SPLIT_CAP`] bytes
/// (2 MiB), whatever the files.
pub(super) const BATCHES_AHEAD: usize = 2;

/// Files read by the reading thread of [`hash_split`], in hash order.
pub(super) struct Batch {
    /// Their bytes, one after the other.
    bytes: Vec<u8>,
    /// Each one's index among the files, and what was read.
    items: Vec<(usize, Item)>,
}

/// A file of a [`Batch`].
pub(super) enum Item {
    /// Its next `n` bytes of the batch are the whole file.
    Bytes(usize),
    /// Over [`SPLIT_CAP`]: the hashing thread streams it.
    TooBig,
    /// Unreadable: the reading thread stopped there.
    Failed(SourceError),
}

/// Batch buffers kept between fingerprints, at most `BATCHES_AHEAD + 2`.
static BATCH_BUFS: BufPool = BufPool::new(BATCH + SPLIT_CAP + 1, BATCHES_AHEAD + 2);

fn take_batch() -> Batch {
    Batch {
        bytes: BATCH_BUFS.take(),
        items: Vec::new(),
    }
}

/// Section 2's digest of a directory's files on two threads. Reading
/// (open, the kernel's copy, close) costs about what SHA-256 does, and
/// SHA-256 is one stream that cannot be split: a second thread reads
/// three runs of files in four ahead ([`read_ahead`]), whole (bounded: [`SPLIT_CAP`], [`BATCH`]), handing
/// them over in batches, while this one reads the fourth run and hashes
/// everything in order. The stream hashed is the one [`hash_inline`]
/// hashes; the first error in hash order is the one returned.
pub(super) fn hash_split(
    mut mine: Box<dyn FileReader + Send>,
    mut theirs: Box<dyn FileReader + Send>,
    files: &[SelectedFile],
) -> Result<String, SourceError> {
    let plan = read_ahead(files);
    let ahead = |i: usize| plan[i];
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(BATCHES_AHEAD);
        scope.spawn(move || {
            let mut batch = take_batch();
            for (i, f) in files.iter().enumerate().filter(|(i, _)| ahead(*i)) {
                let item = match theirs.read_whole(&f.path, &f.content, &mut batch.bytes, SPLIT_CAP)
                {
                    Ok(Whole::Read(n)) => Item::Bytes(n),
                    Ok(Whole::TooBig) => Item::TooBig,
                    Err(e) => Item::Failed(e),
                };
                let failed = matches!(item, Item::Failed(_));
                batch.items.push((i, item));
                if failed || batch.bytes.len() >= BATCH {
                    // A closed channel: the hashing thread stopped at an error.
                    if tx.send(batch).is_err() || failed {
                        return;
                    }
                    batch = take_batch();
                }
            }
            // Fails only if the hashing thread stopped at an error.
            let _ = tx.send(batch);
        });
        let mut hasher = Sha256::new();
        let mut batch: Option<Batch> = None;
        let (mut item, mut at) = (0, 0);
        for (i, f) in files.iter().enumerate() {
            hasher.begin_file(f.path.as_bytes());
            let mut own = !ahead(i);
            if !own {
                while batch.as_ref().is_none_or(|b| item == b.items.len()) {
                    if let Some(done) = batch.take() {
                        BATCH_BUFS.give(done.bytes);
                    }
                    // `None`: the reading thread is gone (it panicked).
                    batch = rx.recv().ok();
                    (item, at) = (0, 0);
                    if batch.is_none() {
                        break;
                    }
                }
                match batch.as_mut() {
                    Some(b) => {
                        let (j, got) = std::mem::replace(&mut b.items[item], (i, Item::TooBig));
                        item += 1;
                        match got {
                            Item::Bytes(n) if j == i => {
                                hasher.put(&b.bytes[at..at + n]);
                                at += n;
                            }
                            Item::Failed(e) if j == i => return Err(e),
                            // Too big: read it here.
                            _ => own = true,
                        }
                    }
                    // The reading thread is gone: read it here.
                    None => own = true,
                }
            }
            if own {
                mine.read(&f.path, &f.content, &mut |b| hasher.put(b))?;
            }
            hasher.end_file();
        }
        if let Some(done) = batch {
            BATCH_BUFS.give(done.bytes);
        }
        Ok(hex::encode(hasher.finalize()))
    })
}

/// Section 2's digest of a directory's files on this thread: each file
/// is read into the reader's buffer and hashed from there, no copy.
pub(super) fn hash_inline(
    reader: &mut dyn FileReader,
    files: &[SelectedFile],
) -> Result<String, SourceError> {
    let mut hasher = Sha256::new();
    for f in files {
        hasher.begin_file(f.path.as_bytes());
        reader.read(&f.path, &f.content, &mut |b| hasher.put(b))?;
        hasher.end_file();
    }
    Ok(hex::encode(hasher.finalize()))
}

/// Section 2's digest with reading on this thread and SHA-256 on another,
/// for sources that cannot be read from two (git objects).
pub(super) fn hash_piped(
    source: &dyn Source,
    files: &[SelectedFile],
) -> Result<String, SourceError> {
    // Reading (inflating blobs, or read(2)) takes about two thirds of the
    // time and SHA-256 the rest; SHA-256 is a stream that cannot be split,
    // so running the two side by side is what is left to win. See [`Pipe`].
    std::thread::scope(|scope| {
        let mut pipe = Pipe::new(scope);
        feed(source, files, &mut |piece| match piece {
            Piece::Path(path) => pipe.begin_file(path),
            Piece::Bytes(bytes) => pipe.put(bytes),
            Piece::End => pipe.end_file(),
        })?;
        Ok(pipe.finish())
    })
}

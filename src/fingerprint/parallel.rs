//! Section 2's digest of many files read on two threads: a directory's
//! files split between a reading and a hashing thread, and the pipe for
//! any other source.

use super::*;
use crate::source::{FileReader, OpenFile};

/// Whether a second thread can run beside this one.
pub(super) fn parallel() -> bool {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())) >= 2
}

/// Fewer files than this are read on one thread: starting another costs
/// more than it saves.
pub(super) const SPLIT_MIN_FILES: usize = 16;

/// Files the opening thread of [`hash_split`] hands over at once: one
/// hand-over (a futex wake and wait) per batch, not per file.
pub(super) const OPEN_BATCH: usize = 8;

/// Batches queued. With the batch being read and the one going back to be
/// closed, at most `(OPEN_AHEAD + 2) * OPEN_BATCH` (32) descriptors are
/// open at once, whatever the number of files: a server near its
/// descriptor limit is not pushed over it.
pub(super) const OPEN_AHEAD: usize = 2;

/// Files opened by the opening thread of [`hash_split`], in hash order:
/// each one's index, and the opened file or why it cannot be read.
type Opened = Vec<(usize, Result<OpenFile, SourceError>)>;

/// Section 2's digest of a directory's files on two threads. Per file,
/// the kernel's work splits in two: finding and opening it (the dentry and
/// inode lookups, the `fstat` that checks it is a regular file, and later
/// the `close`), and copying its bytes out, which SHA-256 then reads. The
/// second thread opens each file and closes it once read; this one reads
/// and hashes, from a buffer that stays in its own cache. No file bytes
/// cross between cores (handing over whole files cost more CPU than it
/// saved), only descriptors, in batches. The stream hashed is the one
/// [`hash_inline`] hashes; the first error in hash order is the one
/// returned.
pub(super) fn hash_split(
    mut mine: Box<dyn FileReader + Send>,
    mut theirs: Box<dyn FileReader + Send>,
    files: &[SelectedFile],
) -> Result<String, SourceError> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Opened>(OPEN_AHEAD);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Opened>();
        scope.spawn(move || {
            let mut batch = Opened::with_capacity(OPEN_BATCH);
            for (i, f) in files.iter().enumerate() {
                let opened = theirs.open(&f.path, &f.content);
                let failed = opened.is_err();
                batch.push((i, opened));
                if failed || batch.len() == OPEN_BATCH || i + 1 == files.len() {
                    // A closed channel: the hashing thread stopped at an error.
                    if tx.send(batch).is_err() || failed {
                        return;
                    }
                    // Close what was read meanwhile.
                    done_rx.try_iter().for_each(drop);
                    batch = Opened::with_capacity(OPEN_BATCH);
                }
            }
        });
        let mut hasher = Sha256::new();
        let mut batch = Opened::new().into_iter();
        // Files read, going back to the opening thread to be closed.
        let mut read = Opened::new();
        for (i, f) in files.iter().enumerate() {
            hasher.update(f.path.as_bytes());
            hasher.update([0u8]);
            let mut next = batch.next();
            if next.is_none() {
                // Fails once the opening thread is done: closed here then.
                let _ = done_tx.send(std::mem::take(&mut read));
                // `Err`: the opening thread is gone (it panicked).
                if let Ok(more) = rx.recv() {
                    batch = more.into_iter();
                    next = batch.next();
                }
            }
            let file = match next {
                Some((j, opened)) if j == i => opened?,
                // The opening thread is gone: open it here.
                _ => mine.open(&f.path, &f.content)?,
            };
            mine.read(&f.path, &file, &mut |b| hasher.update(b))?;
            read.push((i, Ok(file)));
            hasher.update([b'\n']);
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
        hasher.update(f.path.as_bytes());
        hasher.update([0u8]);
        let file = reader.open(&f.path, &f.content)?;
        reader.read(&f.path, &file, &mut |b| hasher.update(b))?;
        hasher.update([b'\n']);
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
            Piece::Path(path) => {
                pipe.write(path);
                pipe.write(&[0]);
            }
            Piece::Bytes(bytes) => pipe.write(bytes),
            Piece::End => pipe.write(b"\n"),
        })?;
        Ok(pipe.finish())
    })
}

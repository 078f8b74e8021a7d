//! Section 2's digest of many files read on two threads: a directory's
//! files split between a reading and a hashing thread, and the pipe for
//! any other source.

use super::*;

/// Whether a second thread can run beside this one.
pub(crate) fn parallel() -> bool {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())) >= 2
}

/// Fewer files than this are read on one thread: starting another costs
/// more than it saves.
pub(super) const SPLIT_MIN_FILES: usize = 16;

/// Of every `SPLIT_OF` files, the reading thread of [`hash_split`] reads
/// all but one; the hashing thread reads that one.
pub(super) const SPLIT_OF: usize = 4;

/// The largest file the reading thread of [`hash_split`] holds whole;
/// the hashing thread streams bigger ones itself.
pub(super) const SPLIT_CAP: u64 = 1 << 20;

/// Files read ahead at most: with [`SPLIT_CAP`], 8 MiB at most in flight.
pub(super) const SPLIT_AHEAD: usize = 8;

/// A file as the reading thread of [`hash_split`] hands it over.
pub(super) enum Ahead {
    Bytes(Vec<u8>),
    /// Over [`SPLIT_CAP`]: the hashing thread streams it.
    TooBig,
    Failed(SourceError),
}

/// Section 2's digest of a directory's files on two threads. Measured on a
/// 300-file runtime (bench/python_bench.py, `perf`): reading (open, the
/// kernel's copy, close) costs about twice what SHA-256 does, so with
/// [`Pipe`] the reading thread is the critical path and the hashing one
/// idles. Here a second thread reads three files in four ahead, whole
/// (bounded: [`SPLIT_CAP`], [`SPLIT_AHEAD`]), while this one reads the
/// fourth and hashes everything in order. The stream hashed is the one
/// [`feed`] gives; the first error in hash order is the one returned.
pub(super) fn hash_split(
    source: &dyn Source,
    reader: &crate::source::SharedReader,
    files: &[SelectedFile],
) -> Result<String, SourceError> {
    let ahead = |i: usize| !i.is_multiple_of(SPLIT_OF);
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Ahead)>(SPLIT_AHEAD);
        let (spare_tx, spare_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = reader.clone();
        scope.spawn(move || {
            for (i, f) in files.iter().enumerate().filter(|(i, _)| ahead(*i)) {
                let item = read_whole(&reader, f, spare_rx.try_recv().unwrap_or_default());
                let failed = matches!(item, Ahead::Failed(_));
                // A closed channel: the hashing thread stopped at an error.
                if tx.send((i, item)).is_err() || failed {
                    break;
                }
            }
        });
        let mut hasher = Sha256::new();
        for (i, f) in files.iter().enumerate() {
            hasher.update(f.path.as_bytes());
            hasher.update([0u8]);
            let item = if ahead(i) { rx.recv().ok() } else { None };
            match item {
                Some((j, Ahead::Bytes(bytes))) if j == i => {
                    hasher.update(&bytes);
                    let _ = spare_tx.send(bytes);
                }
                Some((j, Ahead::Failed(e))) if j == i => return Err(e),
                // Too big, or the reading thread is gone: read it here.
                _ => source.read(&f.path, &f.content, &mut |b| hasher.update(b))?,
            }
            hasher.update([b'\n']);
        }
        Ok(hex::encode(hasher.finalize()))
    })
}

/// Reads `f` whole into `bytes` (reused), unless it is over [`SPLIT_CAP`],
/// before or while it is read (a file growing meanwhile stays bounded).
pub(super) fn read_whole(
    reader: &crate::source::SharedReader,
    f: &SelectedFile,
    mut bytes: Vec<u8>,
) -> Ahead {
    if let Node::Path(path) = &f.content {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > SPLIT_CAP) {
            return Ahead::TooBig;
        }
    }
    bytes.clear();
    let mut too_big = false;
    let read = reader(&f.path, &f.content, &mut |b| {
        if too_big || (bytes.len() + b.len()) as u64 > SPLIT_CAP {
            too_big = true;
            return;
        }
        bytes.extend_from_slice(b);
    });
    match read {
        Err(e) => Ahead::Failed(e),
        Ok(()) if too_big => Ahead::TooBig,
        Ok(()) => Ahead::Bytes(bytes),
    }
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

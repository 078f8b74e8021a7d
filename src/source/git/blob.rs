//! Blobs, read with memory that does not grow with their size: a large
//! blob stored whole (loose, or a pack entry that is not a delta) is
//! inflated piece by piece by a small reader of git's formats; anything
//! else is inflated whole only up to a bound, since a hostile object of a
//! few megabytes may claim gigabytes.

use std::path::Path;

use gix::prelude::FindExt;
use gix::ObjectId;

use super::tree::MAX_LINK_TARGET;
use super::GitSource;
use crate::source::SourceError;

/// Runtime files at least this large are streamed into the hash in pieces
/// when git stores them whole (a loose object, or a pack entry that is not a
/// delta), so that memory stays flat in the size of the largest file; below
/// it, inflating in one piece is faster. A delta needs its base whole, in
/// git as here, and is always inflated whole.
const STREAM_AT: u64 = 8 << 20;

/// The pieces a large file is read and inflated in.
const PIECE: usize = 1 << 20;

/// The largest blob inflated whole (a delta, or an object outside the
/// repository's own object store). Git itself never stores a file above
/// `core.bigFileThreshold` (512 MiB) as a delta, and no runtime file comes
/// near this; a larger one is unreadable, which makes the fingerprint
/// unavailable rather than the process abort.
pub(super) const WHOLE_LIMIT: u64 = 64 << 20;

/// Whether [`GitSource::stream_large`] sent the blob.
pub(super) enum Streamed {
    Yes,
    /// Not sent; the blob's size when its header could be read.
    No(Option<u64>),
}

impl GitSource {
    /// The object database the runtime files are read through: a handle of
    /// its own, without the object cache and the pack cache that trees, links
    /// and version files keep (a tree is read again on each walk from the
    /// top, and its delta chain is long). The runtime files of a tree are
    /// each read once: the object cache would copy every blob into itself
    /// (heap to fault in; a 200 MB blob copied whole and kept), and the pack
    /// cache would keep delta bases that no other file of the tree shares.
    /// Measured in bench/ (300-file fingerprint, one process): 15.9 ms with
    /// both caches, 12.9 ms without the object cache, 11.0 ms without either,
    /// at the newest tag and at the oldest alike. Made on first use, so that
    /// an answer from tree objects alone does not pay for the handle.
    pub(super) fn runtime_objects(&self) -> &gix::OdbHandle {
        self.blobs.get_or_init(|| {
            let mut odb = self.repo.objects().clone();
            odb.unset_object_cache();
            odb.unset_pack_cache();
            odb
        })
    }

    /// Streams blob `id` into `sink` through `odb`, in pieces when it is
    /// large and stored whole; `what` names it in messages. A blob that
    /// would have to be inflated whole beyond [`WHOLE_LIMIT`] is
    /// [`SourceError::Unreadable`].
    pub(crate) fn read_blob(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        #[cfg(debug_assertions)]
        let mut faulty = test_fault::Flip::new(self.stored_blob(id), sink);
        #[cfg(debug_assertions)]
        let sink: &mut dyn FnMut(&[u8]) = &mut |b: &[u8]| faulty.write(b);
        if let Some(bytes) = self.converted_bytes(id, what)? {
            sink(&bytes);
            return Ok(());
        }
        let size = match self.stream_large(odb, id, what, sink)? {
            Streamed::Yes => return Ok(()),
            Streamed::No(Some(size)) => size,
            Streamed::No(None) => self.blob_size(odb, id, what)?,
        };
        if size > WHOLE_LIMIT {
            return Err(SourceError::Unreadable {
                path: what.to_string(),
                why: format!(
                    "its blob ({id}) is {size} bytes stored where it cannot be streamed (as a \
                     delta, or outside this repository's object store), and fpcheck inflates \
                     at most {WHOLE_LIMIT} bytes whole"
                ),
            });
        }
        self.inflate_whole(odb, id, what, sink)
    }

    /// [`GitSource::read_blob`] through the handle of `session` (a clone
    /// of this source's own, whose pack cache outlives this source: a
    /// history's worker reads one release after another through it).
    pub(crate) fn read_blob_through(
        &self,
        session: &super::Session,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        self.read_blob(session.objects(), id, what, sink)
    }

    /// Inflates blob `id` whole into `sink`, whatever its size: the caller
    /// has checked it.
    pub(super) fn inflate_whole(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), SourceError> {
        let mut buf = self.buf.borrow_mut();
        let blob = odb.find_blob(&id, &mut buf).map_err(|e| {
            if e.is_not_found() {
                self.missing(id, format!("the blob of {what}"))
            } else {
                SourceError::Git {
                    message: format!("cannot read the blob of {what} ({id})").into(),
                    source: Box::new(e),
                }
            }
        })?;
        sink(blob.data);
        Ok(())
    }

    /// The size of blob `id`, from its header alone.
    pub(super) fn blob_size(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
    ) -> Result<u64, SourceError> {
        match header(&self.repo, odb, id) {
            Ok(Some(header)) => Ok(header.size()),
            Ok(None) => Err(self.missing(id, format!("the blob of {what}"))),
            Err(e) => Err(SourceError::Git {
                message: format!("cannot read the blob of {what} ({id})").into(),
                source: Box::new(e),
            }),
        }
    }

    /// A small blob (a version file, a link target) read whole, or its size
    /// when it is larger than `limit`.
    pub(super) fn small_blob(
        &self,
        id: ObjectId,
        what: &str,
        limit: u64,
    ) -> Result<Result<Vec<u8>, u64>, SourceError> {
        let size = self.blob_size(self.repo.objects(), id, what)?;
        if size > limit {
            return Ok(Err(size));
        }
        let mut out = Vec::new();
        let mut sink = |b: &[u8]| out.extend_from_slice(b);
        if size < STREAM_AT {
            // Its header is read: inflate it, rather than let `read_blob`
            // read the header again to decide whether to stream.
            self.inflate_whole(self.repo.objects(), id, what, &mut sink)?;
        } else {
            self.read_blob(self.repo.objects(), id, what, &mut sink)?;
        }
        Ok(Ok(out))
    }

    /// A symbolic link's target, or why it cannot be one.
    pub(super) fn link_target(
        &self,
        id: ObjectId,
        what: &str,
    ) -> Result<Result<Vec<u8>, String>, SourceError> {
        Ok(self.small_blob(id, what, MAX_LINK_TARGET)?.map_err(|size| {
            format!(
                "target is {size} bytes, longer than any path a checkout can hold \
                 ({MAX_LINK_TARGET})"
            )
        }))
    }

    /// Streams the blob `id` into `sink` in pieces when it is large and
    /// stored whole; [`Streamed::No`] (nothing sent) when it is not, or cannot be
    /// found where it should be (an alternate object store): the caller then
    /// inflates it whole. Measured in bench/: a 177 MB runtime file added
    /// 221 MiB to the peak RSS of a fingerprint when inflated whole, and
    /// 2 MiB when streamed; a header lookup per file costs nothing measurable.
    pub(super) fn stream_large(
        &self,
        odb: &gix::OdbHandle,
        id: ObjectId,
        what: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<Streamed, SourceError> {
        // Errors here are left to the whole read, which reports them.
        let Ok(Some(header)) = header(&self.repo, odb, id) else {
            return Ok(Streamed::No(None));
        };
        let not = Ok(Streamed::No(Some(header.size())));
        if header.kind() != gix::object::Kind::Blob
            || header.size() < STREAM_AT
            || header.num_deltas().unwrap_or(0) > 0
        {
            return not;
        }
        let objects = odb.store_ref().path();
        let mut sent = false;
        let mut counting = |bytes: &[u8]| {
            sent = true;
            sink(bytes)
        };
        let streamed = match header.num_deltas() {
            Some(_) => stream_packed(objects, id, header.size(), &mut counting),
            None => stream_loose(objects, id, header.size(), &mut counting),
        };
        match streamed {
            Ok(true) => Ok(Streamed::Yes),
            // Nothing reached the hash yet: the whole read may still work.
            Ok(false) => not,
            Err(_) if !sent => not,
            Err(e) => Err(SourceError::Git {
                message: format!("cannot read the blob of {what} ({id})").into(),
                source: Box::new(e),
            }),
        }
    }
}

/// The header of object `id` (kind, size, deltas), without inflating it.
fn header(
    session: &super::Session,
    odb: &gix::OdbHandle,
    id: ObjectId,
) -> gix::error::Result<Option<gix::odb::find::Header>> {
    #[cfg(test)]
    tests::HEADER_READS.with(|n| n.set(n.get() + 1));
    if let Some((kind, size)) = session.memo_header(odb, &id) {
        return Ok(Some(gix::odb::find::Header::Loose { kind, size }));
    }
    gix::odb::Header::try_header(odb, &id)
}

/// Streams a blob stored whole in one of the packs under `objects`.
fn stream_packed(
    objects: &Path,
    id: ObjectId,
    size: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<bool> {
    use std::io::{Seek, SeekFrom};
    let pack_dir = objects.join("pack");
    for entry in std::fs::read_dir(&pack_dir)? {
        let idx = entry?.path();
        if idx.extension().is_none_or(|e| e != "idx") {
            continue;
        }
        let Ok(index) = gix::odb::pack::index::File::at(&idx, id.kind()) else {
            continue;
        };
        let Some(i) = index.lookup(id) else {
            continue;
        };
        let offset = index.pack_offset_at_index(i);
        // Not necessarily the pack gix read the header from: a FIFO or a
        // device planted beside a copied index must not block or stream.
        let Some(mut pack) = open_object_file(&idx.with_extension("pack")) else {
            return Ok(false);
        };
        pack.seek(SeekFrom::Start(offset))?;
        let head = gix::odb::pack::data::Entry::from_read(
            &mut std::io::BufReader::with_capacity(64, &mut pack),
            offset,
            id.kind().len_in_bytes(),
        )?;
        if head.header != gix::odb::pack::data::entry::Header::Blob
            || head.decompressed_size != size
        {
            return Ok(false);
        }
        pack.seek(SeekFrom::Start(head.data_offset))?;
        inflate_stream(&mut pack, size, b"", sink)?;
        return Ok(true);
    }
    Ok(false)
}

/// Streams a loose blob: a zlib stream of `blob SIZE NUL bytes`.
fn stream_loose(
    objects: &Path,
    id: ObjectId,
    size: u64,
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<bool> {
    let hex = id.to_hex().to_string();
    let Some(mut file) = open_object_file(&objects.join(&hex[..2]).join(&hex[2..])) else {
        return Ok(false);
    };
    let header = format!("blob {size}\0");
    inflate_stream(&mut file, size, header.as_bytes(), sink)?;
    Ok(true)
}

/// Opens a pack or loose object file only when it is a regular file, without
/// blocking on a FIFO; `None` leaves the blob to gix's whole read.
fn open_object_file(path: &Path) -> Option<std::fs::File> {
    crate::safe_io::open_regular(path, crate::safe_io::Links::Follow).ok()
}

/// Inflates the zlib stream in `input` piece by piece into `sink`, after
/// checking that it starts with `prefix` (a loose object's header, left out),
/// and that `size` bytes follow.
fn inflate_stream(
    input: &mut dyn std::io::Read,
    size: u64,
    prefix: &[u8],
    sink: &mut dyn FnMut(&[u8]),
) -> std::io::Result<()> {
    use gix::zlib::{Decompress, FlushDecompress, Status};
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_string());
    let mut z = Decompress::new();
    let (mut inbuf, mut out) = (vec![0u8; PIECE], vec![0u8; PIECE]);
    let (mut start, mut end) = (0, 0);
    let (mut matched, mut sent) = (0, 0u64);
    loop {
        if start == end {
            end = input.read(&mut inbuf)?;
            start = 0;
            if end == 0 {
                return Err(bad("the object ends early"));
            }
        }
        let (read, written) = (z.total_in(), z.total_out());
        let status = z
            .decompress(&inbuf[start..end], &mut out, FlushDecompress::None)
            .map_err(|e| bad(&e.to_string()))?;
        start += usize::try_from(z.total_in() - read).expect("at most a piece");
        let mut produced =
            &out[..usize::try_from(z.total_out() - written).expect("at most a piece")];
        let n = (prefix.len() - matched).min(produced.len());
        if produced[..n] != prefix[matched..matched + n] {
            return Err(bad("the object's header is not the one expected"));
        }
        matched += n;
        produced = &produced[n..];
        if !produced.is_empty() {
            sent += produced.len() as u64;
            if sent > size {
                return Err(bad("the object is longer than its header says"));
            }
            sink(produced);
        }
        match status {
            Status::StreamEnd => break,
            Status::Ok => {}
            Status::BufError if start == end => {} // more input needed
            Status::BufError => return Err(bad("the object is corrupt")),
        }
    }
    if matched != prefix.len() || sent != size {
        return Err(bad("the object is shorter than its header says"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::git::test_git as git;
    use crate::source::git::{GitSource, Revision, Session};
    use sha2::{Digest, Sha256};
    use std::path::Path;

    thread_local! {
        /// Object headers read on this thread (see [`header`]).
        pub(super) static HEADER_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A version file (a small blob read whole) costs one header read, not
    /// two (`small_blob` checked the size, then `read_blob` read the header
    /// again to decide whether to stream).
    #[test]
    fn a_small_blob_reads_its_header_once() {
        use crate::source::Source;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/version.json"), b"{\"version\": \"1.0.0\"}\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "one"]);
        let src = source(root, "HEAD");
        let before = HEADER_READS.with(|n| n.get());
        let meta = src.read_meta("version.json", false).unwrap().unwrap();
        assert_eq!(meta.bytes, b"{\"version\": \"1.0.0\"}\n");
        assert_eq!(HEADER_READS.with(|n| n.get()) - before, 1);
    }

    #[test]
    fn a_fifo_or_a_link_to_one_is_never_opened_as_an_object_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pack-x.pack");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let link = dir.path().join("ab");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let plain = dir.path().join("plain.pack");
        std::fs::write(&plain, b"PACK").unwrap();
        // Before the fix, opening the FIFO blocked here for ever.
        assert!(open_object_file(&fifo).is_none());
        assert!(open_object_file(&link).is_none());
        assert!(open_object_file(dir.path()).is_none());
        assert!(open_object_file(&plain).is_some());
    }

    fn expected(files: &[(&str, &[u8])]) -> String {
        let mut h = Sha256::new();
        for (path, bytes) in files {
            h.update(path.as_bytes());
            h.update([0]);
            h.update(bytes);
            h.update([b'\n']);
        }
        hex::encode(h.finalize())
    }

    /// The source of `rev:src` in the repository at `repo`.
    fn source(repo: &Path, rev: &str) -> GitSource {
        let repo = Session::open(Some(repo)).unwrap();
        let rev = Revision::parse(&repo, rev).unwrap();
        GitSource::new(repo, rev, "src").unwrap()
    }

    fn fingerprint(repo: &Path, rev: &str) -> Option<String> {
        let src = source(repo, rev);
        crate::fingerprint::compute(&src, &crate::select::Rules::default())
            .unwrap()
            .digest
    }

    /// Whether `rev:src/big.py` is streamed rather than read whole.
    fn streamed(repo: &Path, rev: &str) -> bool {
        let src = source(repo, rev);
        let id = src
            .repo
            .repo()
            .rev_parse_single(format!("{rev}:src/big.py").as_str())
            .unwrap()
            .detach();
        matches!(
            src.stream_large(src.runtime_objects(), id, "big.py", &mut |_| {})
                .unwrap(),
            Streamed::Yes
        )
    }

    /// Files above STREAM_AT are streamed when stored whole (loose, or a
    /// pack base) and read whole as deltas: the digest is the same.
    #[test]
    fn large_files_stream_from_loose_objects_and_packs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir(root.join("src")).unwrap();
        let size = usize::try_from(STREAM_AT).unwrap() + 3 * PIECE + 17;
        let mut big: Vec<u8> = (0..size).map(|i| b"abcdefghij\n"[i * 7 % 11]).collect();
        big[size / 2] = b'#';
        std::fs::write(root.join("src/big.py"), &big).unwrap();
        std::fs::write(root.join("src/a.py"), b"a = 1\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "one"]);
        let one = expected(&[("a.py", b"a = 1\n"), ("big.py", &big)]);
        assert_eq!(
            fingerprint(root, "HEAD").as_deref(),
            Some(one.as_str()),
            "loose"
        );
        assert!(streamed(root, "HEAD"), "a large loose blob is streamed");
        let mut big2 = big.clone();
        big2[size - 5] = b'!';
        std::fs::write(root.join("src/big.py"), &big2).unwrap();
        git(root, &["commit", "-q", "-a", "-m", "two"]);
        git(root, &["repack", "-a", "-d", "-q"]);
        let two = expected(&[("a.py", b"a = 1\n"), ("big.py", &big2)]);
        // One version is a pack base (streamed), the other a delta on it.
        assert_eq!(
            fingerprint(root, "HEAD~1").as_deref(),
            Some(one.as_str()),
            "packed, first"
        );
        assert_eq!(
            fingerprint(root, "HEAD").as_deref(),
            Some(two.as_str()),
            "packed, second"
        );
        assert!(
            streamed(root, "HEAD~1") != streamed(root, "HEAD"),
            "the pack base is streamed, the delta read whole"
        );
    }

    #[test]
    fn a_truncated_stream_is_an_error_not_a_short_file() {
        let data: Vec<u8> = (0..3 * PIECE).map(|i| (i % 251) as u8).collect();
        let mut z = Vec::new();
        {
            use std::io::Write;
            let mut w = gix::zlib::stream::deflate::Write::new(
                &mut z,
                gix::zlib::Compression::new(1).unwrap(),
            );
            w.write_all(&data).unwrap();
            w.flush().unwrap();
        }
        let mut got = Vec::new();
        inflate_stream(&mut z.as_slice(), data.len() as u64, b"", &mut |b| {
            got.extend_from_slice(b)
        })
        .unwrap();
        assert_eq!(got, data);
        let cut = &z[..z.len() - 10];
        assert!(inflate_stream(&mut &cut[..], data.len() as u64, b"", &mut |_| {}).is_err());
        assert!(
            inflate_stream(&mut z.as_slice(), data.len() as u64 + 1, b"", &mut |_| {}).is_err()
        );
        assert!(
            inflate_stream(&mut z.as_slice(), data.len() as u64 - 3, b"x", &mut |_| {}).is_err()
        );
    }
}

/// A test-only fault in the fast path, so that tests can show git's own
/// checkout (the witness) catching a wrong byte: with
/// `FPCHECK_TEST_FAULT_STREAM=<blob id>` (the stored blob's), the first byte of that blob's
/// bytes (its checkout's, when attributes convert it) is flipped as it is
/// streamed into a fingerprint. Debug builds only: a release build has no
/// such code, so no environment can reach it.
#[cfg(debug_assertions)]
mod test_fault {
    use gix::ObjectId;

    /// The variable naming the blob whose first byte is flipped.
    const VARIABLE: &str = "FPCHECK_TEST_FAULT_STREAM";

    pub(super) struct Flip<'s> {
        sink: &'s mut dyn FnMut(&[u8]),
        armed: bool,
    }

    impl<'s> Flip<'s> {
        pub(super) fn new(id: ObjectId, sink: &'s mut dyn FnMut(&[u8])) -> Self {
            let armed = std::env::var(VARIABLE)
                .ok()
                .and_then(|v| ObjectId::from_hex(v.as_bytes()).ok())
                == Some(id);
            Flip { sink, armed }
        }

        pub(super) fn write(&mut self, bytes: &[u8]) {
            match bytes.split_first() {
                Some((first, rest)) if self.armed => {
                    self.armed = false;
                    (self.sink)(&[first ^ 1]);
                    (self.sink)(rest);
                }
                _ => (self.sink)(bytes),
            }
        }
    }
}

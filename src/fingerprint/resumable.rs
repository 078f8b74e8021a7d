//! The pieces of section 2's byte stream for a selection ([`feed`]: each
//! distinct content read once), and the hasher that resumes the stream
//! across the releases of a history. The framing of the pieces is
//! [`StreamSink`]'s.

use super::*;

/// Section 2's hash over a series of selections (the releases of a
/// history), resumed after the files a selection shares with the one hashed
/// before it: the SHA-256 state after each file is kept, so a release that
/// changes its last files hashes only those. Only files read from git
/// objects are shared: a blob id names its bytes, a path on disk does not.
/// The bytes come from [`feed`] and are framed by [`StreamSink`], as for
/// every other fingerprint.
#[derive(Clone)]
pub struct Resumable {
    /// The files hashed last, in hash order.
    prev: Vec<SelectedFile>,
    /// `states[k]`: the state after the first `k` files of `prev`.
    states: Vec<Sha256>,
}

impl Default for Resumable {
    fn default() -> Self {
        Resumable {
            prev: Vec::new(),
            states: vec![Sha256::new()],
        }
    }
}

impl Resumable {
    /// A hasher that has hashed nothing yet.
    pub fn new() -> Self {
        Resumable::default()
    }

    /// The digest of section 2 over `files` (in hash order).
    pub fn hash(
        &mut self,
        source: &dyn Source,
        files: &[SelectedFile],
    ) -> Result<String, SourceError> {
        let common = files
            .iter()
            .zip(&self.prev)
            // Only a blob id names bytes: a path on disk may hold others now.
            .take_while(|(a, b)| a == b && matches!(a.content, Node::Object(_)))
            .count();
        // Until this hash succeeds, only the shared prefix is known good.
        self.prev.truncate(common);
        self.states.truncate(common + 1);
        let mut hasher = self.states[common].clone();
        let states = &mut self.states;
        feed(source, &files[common..], &mut |piece| match piece {
            Piece::Path(path) => hasher.begin_file(path),
            Piece::Bytes(bytes) => hasher.put(bytes),
            Piece::End => {
                hasher.end_file();
                states.push(hasher.clone());
            }
        })?;
        self.prev = files.to_vec();
        Ok(hex::encode(hasher.finalize()))
    }
}

/// One piece of the stream of section 2, as [`feed`] produces it.
pub(super) enum Piece<'a> {
    /// A selected file's path (the NUL after it is the consumer's).
    Path(&'a [u8]),
    /// Some of its bytes.
    Bytes(&'a [u8]),
    /// The end of the file (the LF is the consumer's).
    End,
}

/// Produces the stream of section 2 for `files`, which must be in hash
/// order.
///
/// Each distinct content is read once: bytes shared by several paths (empty
/// `__init__.py` files, links to one file) are kept until their last use, so
/// memory holds only those and the file being read. Contents above
/// [`KEEP_LIMIT`] are streamed, never kept: they are read again for each
/// path, so that memory does not grow with the size of a file. So are
/// contents that would take the bytes kept at once over [`KEEP_TOTAL`]:
/// many large shared contents (cheap to push, as they compress well) are
/// then read once per path, as if unshared, and memory does not grow with
/// their number either.
///
/// Returns the most bytes kept at once, at most [`KEEP_TOTAL`].
pub(super) fn feed(
    source: &dyn Source,
    files: &[SelectedFile],
    out: &mut dyn FnMut(Piece<'_>),
) -> Result<usize, SourceError> {
    let mut uses: NodeMap<usize> = NodeMap::default();
    for f in files {
        *uses.entry(&f.content).or_default() += 1;
    }
    let mut kept: NodeMap<Vec<u8>> = NodeMap::default();
    // The bytes in `kept`, and their most so far.
    let (mut total, mut peak) = (0usize, 0usize);
    for f in files {
        out(Piece::Path(f.path.as_bytes()));
        let left = uses.get_mut(&f.content).expect("counted above");
        *left -= 1;
        if let Some(bytes) = kept.get(&f.content) {
            out(Piece::Bytes(bytes));
            if *left == 0 {
                total -= bytes.len();
                kept.remove(&f.content);
            }
        } else if *left > 0 {
            // Checked per piece, not after the read: a content is never
            // held past its room, even for a moment.
            let room = KEEP_LIMIT.min(KEEP_TOTAL - total);
            let mut bytes = Some(Vec::new());
            source.read(&f.path, &f.content, &mut |b| {
                out(Piece::Bytes(b));
                if let Some(kept) = &mut bytes {
                    if kept.len() + b.len() <= room {
                        kept.extend_from_slice(b);
                    } else {
                        bytes = None;
                    }
                }
            })?;
            if let Some(bytes) = bytes {
                total += bytes.len();
                peak = peak.max(total);
                kept.insert(&f.content, bytes);
            }
        } else {
            source.read(&f.path, &f.content, &mut |b| out(Piece::Bytes(b)))?;
        }
        out(Piece::End);
    }
    Ok(peak)
}

/// The largest content [`feed`] keeps for a later path with the same bytes.
pub(super) const KEEP_LIMIT: usize = 8 << 20;

/// The most bytes [`feed`] keeps at once, whatever the number of shared
/// contents.
pub(super) const KEEP_TOTAL: usize = 64 << 20;

/// The maps of [`feed`], keyed by every selected file's content: FxHash
/// instead of SipHash, which cost ~1% of a 45,000-file fingerprint. The keys
/// are blob ids (uniform already) or paths of one's own runtime.
type NodeMap<'a, V> = HashMap<&'a Node, V, std::hash::BuildHasherDefault<FxHasher>>;

//! The framing of section 2's byte stream, written once: each selected
//! file is its path, a NUL, its bytes, then a LF. Every hasher of a
//! fingerprint (inline, split across threads, piped, resumed, or one pass
//! over several runtimes) writes through [`StreamSink`], so a change to the
//! framing is a change here and nowhere else.

use sha2::{Digest, Sha256};

/// Where section 2's stream goes: anything that takes bytes in order.
pub(crate) trait StreamSink {
    /// Takes the next bytes of the stream.
    fn put(&mut self, bytes: &[u8]);

    /// Starts a file: its path (from the runtime root), then the NUL.
    #[inline]
    fn begin_file(&mut self, path: &[u8]) {
        self.put(path);
        self.put(&[0]);
    }

    /// Ends the file whose bytes were just put.
    #[inline]
    fn end_file(&mut self) {
        self.put(b"\n");
    }
}

impl StreamSink for Sha256 {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

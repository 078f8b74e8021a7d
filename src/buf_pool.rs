//! Byte buffers kept between fingerprints.
//!
//! A long-running process (the Python package's server) fingerprints again
//! and again: fresh buffers each time cost a `malloc` that consolidates the
//! heap, or page faults and `munmap`s for the large ones (~8% of a
//! 300-file fingerprint on the reading thread). A [`BufPool`] keeps a few
//! empty buffers of one size for the next use instead.

use std::sync::Mutex;

/// Empty buffers of `size` bytes' capacity, at most `keep` of them (so the
/// memory kept is bounded: `size * keep`).
pub(crate) struct BufPool {
    spare: Mutex<Vec<Vec<u8>>>,
    size: usize,
    keep: usize,
}

impl BufPool {
    /// A pool of buffers of `size` bytes' capacity, keeping at most `keep`.
    pub(crate) const fn new(size: usize, keep: usize) -> Self {
        BufPool {
            spare: Mutex::new(Vec::new()),
            size,
            keep,
        }
    }

    /// An empty buffer with room for the pool's size in bytes: a kept one
    /// when there is one, else a fresh one (never zeroed).
    pub(crate) fn take(&self) -> Vec<u8> {
        let spare = self.spare.lock().ok().and_then(|mut s| s.pop());
        spare.unwrap_or_else(|| Vec::with_capacity(self.size))
    }

    /// Keeps `buf` (cleared) for a later [`BufPool::take`], unless the pool
    /// is full or `buf` is not of this pool's size (one that grew, or an
    /// empty `Vec::new()`): that one is dropped.
    pub(crate) fn give(&self, buf: Vec<u8>) {
        self.give_all([buf]);
    }

    /// [`BufPool::give`] of each of `bufs`, with one lock.
    pub(crate) fn give_all(&self, bufs: impl IntoIterator<Item = Vec<u8>>) {
        let Ok(mut spare) = self.spare.lock() else {
            return;
        };
        for mut buf in bufs {
            if spare.len() >= self.keep {
                break;
            }
            if buf.capacity() == self.size {
                buf.clear();
                spare.push(buf);
            }
        }
    }

    /// The kept buffers' lengths and capacities.
    #[cfg(test)]
    pub(crate) fn spare(&self) -> Vec<(usize, usize)> {
        let spare = self.spare.lock().unwrap();
        spare.iter().map(|b| (b.len(), b.capacity())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_its_count_of_its_own_size_cleared() {
        let pool = BufPool::new(64, 2);
        let mut a = pool.take();
        assert_eq!((a.len(), a.capacity()), (0, 64));
        a.extend_from_slice(b"bytes");
        let ptr = a.as_ptr();
        pool.give(a);
        let again = pool.take();
        assert_eq!(
            (again.as_ptr(), again.len()),
            (ptr, 0),
            "the same buffer, cleared"
        );
        // Not kept: an empty Vec, one that grew; and past the count.
        let mut grown = Vec::with_capacity(64);
        grown.resize(65, 0);
        pool.give_all([Vec::new(), grown, again, pool.take(), pool.take()]);
        assert_eq!(pool.spare(), [(0, 64), (0, 64)]);
    }
}

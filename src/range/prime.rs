//! One pass over the blobs of several runtimes: each end's selections are
//! merged by full path, every blob is read (inflated) once however many
//! runtimes (or ends) select it, and its bytes feed each runtime's hasher.
//! The digests go into the run's fingerprint cache, where each runtime's
//! own analysis then finds them, so the analysis itself reads no blob.
//!
//! Memory does not grow with the number of runtimes beyond their union:
//! each distinct (full path, blob) is kept once, a runtime holds only the
//! indices of its files, and only one runtime's selections (its two ends)
//! are materialised at a time.
//!
//! Purely an optimisation: anything this pass cannot do (a file that
//! cannot be read, a selection that is unavailable) is left to the
//! analysis, which reports it as it always does.

use std::collections::HashMap;
use std::rc::Rc;

use sha2::{Digest, Sha256};

use crate::cache::FingerprintCache;
use crate::fingerprint::StreamSink;
use crate::select::Selection;
use crate::source::{GitSource, Node, Source};

/// The fingerprints to compute, merged by (full path, blob).
#[derive(Default)]
pub(super) struct Merged {
    sources: Vec<GitSource>,
    /// Each distinct (full path, content) once.
    files: Vec<(Rc<str>, Node)>,
    index: HashMap<(Rc<str>, Node), u32>,
    jobs: Vec<Job>,
}

/// One fingerprint to compute.
struct Job {
    /// Its source in `Merged::sources`.
    source: usize,
    /// Bytes of a full path before the path below the root (`root/`).
    prefix: usize,
    /// Its files in hash order, as indices into `Merged::files`.
    files: Vec<u32>,
    key: String,
}

impl Merged {
    /// Adds the fingerprint of `selection` (of `source`, whose runtime root
    /// is `root` from the top) unless the cache or an earlier job has it.
    pub(super) fn add(
        &mut self,
        source: GitSource,
        root: &str,
        selection: Selection,
        cache: &FingerprintCache,
    ) {
        if !selection.is_available() {
            return;
        }
        let Some(key) = FingerprintCache::key(&selection) else {
            return;
        };
        if cache.get(&key).is_some() || self.jobs.iter().any(|j| j.key == key) {
            return;
        }
        let prefix = if root.is_empty() { 0 } else { root.len() + 1 };
        let mut files = Vec::with_capacity(selection.files.len());
        for f in selection.files {
            let full: Rc<str> = if root.is_empty() {
                f.path.into()
            } else {
                format!("{root}/{}", f.path).into()
            };
            let next = self.files.len() as u32;
            let i = *self
                .index
                .entry((full.clone(), f.content.clone()))
                .or_insert(next);
            if i == next {
                self.files.push((full, f.content));
            }
            files.push(i);
        }
        self.sources.push(source);
        self.jobs.push(Job {
            source: self.sources.len() - 1,
            prefix,
            files,
            key,
        });
    }

    /// Computes every job's fingerprint, reading each (path, blob) once,
    /// and puts them in `cache`. Nothing is put if a file cannot be read.
    pub(super) fn hash_into(mut self, cache: &mut FingerprintCache) {
        if self.jobs.len() < 2 {
            // One fingerprint gains nothing from merging: the analysis
            // hashes it on its own (with its hashing thread).
            return;
        }
        self.index = HashMap::new();
        // Full-path order: each job's own order too, as its paths share
        // its root prefix.
        let mut order: Vec<u32> = (0..self.files.len() as u32).collect();
        order.sort_by(|a, b| self.files[*a as usize].0.cmp(&self.files[*b as usize].0));
        let mut rank = vec![0u32; order.len()];
        for (pos, i) in order.iter().enumerate() {
            rank[*i as usize] = pos as u32;
        }
        for job in &mut self.jobs {
            for f in &mut job.files {
                *f = rank[*f as usize];
            }
        }
        drop(rank);
        // A job whose order is not the table's (never expected) is left
        // to its analysis.
        self.jobs
            .retain(|j| j.files.windows(2).all(|w| w[0] < w[1]));
        let mut hashers: Vec<Sha256> = self.jobs.iter().map(|_| Sha256::new()).collect();
        let mut cursors = vec![0usize; self.jobs.len()];
        let mut readers = Vec::new();
        for (pos, i) in order.iter().enumerate() {
            let (full, node) = &self.files[*i as usize];
            // The jobs that hash this file, each after its own path.
            readers.clear();
            for (j, job) in self.jobs.iter().enumerate() {
                if job.files.get(cursors[j]) == Some(&(pos as u32)) {
                    cursors[j] += 1;
                    let h = &mut hashers[j];
                    h.begin_file(full[job.prefix..].as_bytes());
                    readers.push(j);
                }
            }
            let Some(&first) = readers.first() else {
                continue;
            };
            // Streamed into every such hasher at once: the blob is never
            // held whole (a 200 MB blob stays a few stream buffers).
            let job = &self.jobs[first];
            let ok = self.sources[job.source]
                .read(&full[job.prefix..], node, &mut |b| {
                    for &j in &readers {
                        hashers[j].put(b);
                    }
                })
                .is_ok();
            if !ok {
                return;
            }
            for &j in &readers {
                hashers[j].end_file();
            }
        }
        for (job, h) in self.jobs.into_iter().zip(hashers) {
            cache.put(job.key, hex::encode(h.finalize()));
        }
    }
}

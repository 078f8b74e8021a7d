//! One pass over the blobs of several runtimes: each end's selections are
//! merged by full path, every blob is read (inflated) once however many
//! runtimes (or ends) select it, and its bytes feed each runtime's hasher.
//! The digests go into the run's fingerprint cache, where each runtime's
//! own analysis then finds them, so the analysis itself reads no blob.
//!
//! Purely an optimisation: anything this pass cannot do (a file that
//! cannot be read, a selection that is unavailable) is left to the
//! analysis, which reports it as it always does.

use sha2::{Digest, Sha256};

use crate::cache::FingerprintCache;
use crate::select::{SelectedFile, Selection};
use crate::source::{Node, Source};

/// One fingerprint to compute: a source, its root (from the top of the
/// repository), and its selection.
pub(super) struct Job<'a> {
    pub(super) source: &'a dyn Source,
    pub(super) root: &'a str,
    pub(super) selection: Selection,
}

/// Computes the fingerprint of every job whose key the cache does not hold
/// yet, reading each (path, blob) once, and puts them in `cache`.
pub(super) fn prime(jobs: Vec<Job<'_>>, cache: &mut FingerprintCache) {
    let mut todo: Vec<(Job<'_>, String)> = Vec::new();
    for job in jobs {
        if !job.selection.is_available() {
            continue;
        }
        let Some(key) = FingerprintCache::key(&job.selection) else {
            continue;
        };
        if cache.get(&key).is_some() || todo.iter().any(|(_, k)| *k == key) {
            continue;
        }
        todo.push((job, key));
    }
    if todo.len() < 2 {
        // One fingerprint gains nothing from merging: the analysis hashes
        // it on its own (with its hashing thread).
        return;
    }
    let jobs: Vec<&Job<'_>> = todo.iter().map(|(j, _)| j).collect();
    if let Some(digests) = hash_merged(&jobs) {
        for ((_, key), digest) in todo.into_iter().zip(digests) {
            cache.put(key, digest);
        }
    }
}

/// The digests of `jobs`, `None` if any file cannot be read.
fn hash_merged(jobs: &[&Job<'_>]) -> Option<Vec<String>> {
    // (full path, job, file): a stable sort by full path keeps each job's
    // own order (its paths share the root prefix) and brings the runtimes
    // and ends selecting one path together.
    let mut order: Vec<(String, usize, &SelectedFile)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(j, job)| {
            job.selection.files.iter().map(move |f| {
                let full = if job.root.is_empty() {
                    f.path.clone()
                } else {
                    format!("{}/{}", job.root, f.path)
                };
                (full, j, f)
            })
        })
        .collect();
    order.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hashers: Vec<Sha256> = jobs.iter().map(|_| Sha256::new()).collect();
    let mut held: Option<(&str, &Node, Vec<u8>)> = None;
    for (full, j, f) in &order {
        let same = held
            .as_ref()
            .is_some_and(|(p, n, _)| *p == full.as_str() && *n == &f.content);
        if !same {
            let mut bytes = Vec::new();
            jobs[*j]
                .source
                .read(&f.path, &f.content, &mut |b| bytes.extend_from_slice(b))
                .ok()?;
            held = Some((full.as_str(), &f.content, bytes));
        }
        let bytes = &held.as_ref().expect("read above").2;
        let h = &mut hashers[*j];
        h.update(f.path.as_bytes());
        h.update([0u8]);
        h.update(bytes);
        h.update([b'\n']);
    }
    Some(
        hashers
            .into_iter()
            .map(|h| hex::encode(h.finalize()))
            .collect(),
    )
}

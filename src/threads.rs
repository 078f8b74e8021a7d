//! How many worker threads a job gets.

/// The worker threads for `work` items: `requested` (0: one per core), at
/// least one and no more than the items.
pub(crate) fn worker_threads(requested: usize, work: usize) -> usize {
    match requested {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, work.max(1))
}

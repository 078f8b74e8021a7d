//! How many threads a job gets: the cores this process may use, whether
//! one is idle, and the workers of a job.

/// The worker threads for `work` items: `requested` (0: one per core), at
/// least one and no more than the items.
pub(crate) fn worker_threads(requested: usize, work: usize) -> usize {
    match requested {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, work.max(1))
}

/// Whether a second thread can run beside this one.
pub(crate) fn parallel() -> bool {
    cpus() >= 2
}

/// The CPUs this process may use, asked once (std reads the cgroup's
/// quota files for it).
fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether a core is free for a second thread (hashing's, a tree scan's): the load
/// average over the last minute is below the CPU count (it counts the
/// caller itself when it is busy, as in a loop of calls: requiring a
/// whole CPU idle beside it chose one thread on an otherwise idle
/// machine), or this thread
/// runs at a real-time priority (`chrt`), ahead of every ordinary task,
/// as the second thread then does. Measured on the 2-core machine
/// (bench/python_bench.py, 300 files): with a core free, two threads take
/// a fingerprint from ~7 ms to ~6 ms of wall time; on a loaded
/// machine the two threads cost ~60% more CPU than one (the same SHA-256
/// and copies, run slower beside each other and beside the other loads),
/// and with no core to spare that is wall time too: one thread was then
/// 3.5x to 4.8x faster than the reference, two 2.3x to 4.3x. Two system
/// calls (~1 µs).
pub(crate) fn idle_core() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: an all-zero `sysinfo` is a valid value of that C struct.
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        // SAFETY: sysinfo(2) fills the struct it is given.
        if unsafe { libc::sysinfo(&mut info) } != 0 {
            return true;
        }
        let load = info.loads[0] as f64 / f64::from(1u32 << libc::SI_LOAD_SHIFT);
        // SAFETY: sched_getscheduler(2) on this thread only reads.
        let policy = unsafe { libc::sched_getscheduler(0) };
        load < cpus() as f64 || matches!(policy, libc::SCHED_FIFO | libc::SCHED_RR)
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

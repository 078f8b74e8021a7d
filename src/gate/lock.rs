//! Serialising writers of one marker: an exclusive `flock` on a lock file
//! beside it.
//!
//! Gates and `ack`s may run on the same marker at once; `ack` reads the
//! marker, marks its client and replaces it, so without a lock a gate's new
//! marker could be overwritten by an ack's stale read. `flock` (via
//! `fs4`, a maintained cross-platform wrapper already built on the `rustix`
//! this crate's git stack uses) is released by the kernel when the process
//! dies, so a `kill -9` never leaves a stale lock behind, unlike a lock made
//! by creating a file exclusively. The lock file itself is never deleted:
//! deleting it would let a waiter lock an unlinked inode while a newcomer
//! locks a fresh one.
//!
//! Readers (`fpcheck status`) take no lock: the marker is replaced by
//! rename, so they always see a whole file.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::GateError;

/// How long a gate waits for another before giving up (conservatively).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct Lock {
    // Held for its `flock`; closing the file releases it.
    _file: File,
    path: PathBuf,
}

impl Lock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock file serialising writers of `target`: `TARGET.lock`.
pub(crate) fn lock_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    target.with_file_name(name)
}

/// Takes the exclusive lock for `target`, waiting at most `timeout`.
pub(crate) fn acquire(target: &Path, timeout: Duration) -> Result<Lock, GateError> {
    let path = lock_path(target);
    let fail = |why: String| GateError::Lock {
        path: path.display().to_string(),
        why,
    };
    let file = open_lock_file(&path).map_err(fail)?;
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        // Called through the trait: `File::lock` of newer std has the same
        // name and would need a newer compiler than this crate's minimum.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => return Ok(Lock { _file: file, path }),
            Err(fs4::TryLockError::WouldBlock) if start.elapsed() < timeout => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(fs4::TryLockError::WouldBlock) => {
                return Err(fail(format!(
                    "another fpcheck still holds it after {}s",
                    timeout.as_secs()
                )))
            }
            Err(fs4::TryLockError::Error(e)) => return Err(fail(super::io_reason(&e))),
        }
    }
}

/// Checks that `target`'s lock could be taken (the lock file opens, or is
/// created, as a regular file) without taking it: for a gate with nothing
/// to write, which reads and replaces nothing, so needs no turn, but must
/// still fail closed on a marker directory that a later gate could not use.
pub(crate) fn probe(target: &Path) -> Result<(), GateError> {
    let path = lock_path(target);
    open_lock_file(&path)
        .map(drop)
        .map_err(|why| GateError::Lock {
            path: path.display().to_string(),
            why,
        })
}

/// Opens (creating if needed) the lock file itself, never what a planted
/// link points at: a root gate must not create or truncate files elsewhere.
/// Non-blocking, so a FIFO planted there cannot hang the open; anything but
/// a regular file is refused.
fn open_lock_file(path: &Path) -> Result<File, String> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
            .mode(0o644);
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return "it is a symbolic link, which fpcheck does not follow for a lock: remove it"
                .to_string();
        }
        super::io_reason(&e)
    })?;
    let meta = file.metadata().map_err(|e| super::io_reason(&e))?;
    if !meta.is_file() {
        return Err(format!(
            "it is a {}, not a regular file: remove it",
            crate::safe_io::kind_name(&meta.file_type())
        ));
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("m.json");
        let held = acquire(&target, DEFAULT_TIMEOUT).unwrap();
        assert_eq!(held.path(), dir.path().join("m.json.lock"));
        let err = acquire(&target, Duration::from_millis(30)).unwrap_err();
        assert!(err.to_string().contains("another fpcheck"), "{err}");
        drop(held);
        acquire(&target, Duration::from_millis(30)).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = acquire(&dir.path().join("no/m.json"), DEFAULT_TIMEOUT).unwrap_err();
        assert!(err.to_string().starts_with("cannot lock "), "{err}");
    }
}

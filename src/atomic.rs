//! Atomic, durable file replacement.
//!
//! A reader of the file (a running server checking its restart marker, a
//! release tool reading `version.json`) must see either the old bytes or the
//! new ones, never a half-written file, whatever happens to the writer: a
//! crash, `kill -9`, a full disk, power loss. So the new bytes go to a
//! temporary file in the *same directory* (a rename is atomic only within
//! one file system), which is flushed to disk before it is renamed over the
//! target, and the directory is flushed after the rename so that the rename
//! itself survives a power loss.
//!
//! Atomic replacement is for regular files only. A target that is a device
//! or a FIFO (`-o /dev/null`, `-o /dev/stdout`, a named pipe a tool reads
//! from) is written in place, as a shell redirection would: renaming a file
//! over it would destroy the device node (as root, the machine's own
//! `/dev/null`) and leave every later reader with a plain file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Replaces `path` with `bytes` atomically and durably.
///
/// The file's permissions are kept when it exists. On error the target is
/// untouched and the temporary file is removed; a crash can leave a
/// temporary file named `.NAME.tmp-*` beside the target, never a torn
/// target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`], calling `before_rename` with the temporary file's path
/// once it is written and flushed, just before the rename. An error from it
/// aborts the write, leaving the target untouched. Useful to validate the
/// new file in place, and to inject faults in tests. A target that is a
/// device or a FIFO is written in place (see the module's comment), with
/// no temporary file and so no call to `before_rename`.
pub fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    if is_special(path)? {
        return write_in_place(path, bytes);
    }
    let dir = parent_dir(path);
    let (tmp, mut file) = create_temp(&dir, path)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Ok(meta) = fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        // The data must be on disk before the rename makes it visible:
        // otherwise a power loss can leave the new name on empty blocks.
        file.sync_all()?;
        drop(file);
        before_rename(&tmp)?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(&dir)
}

/// Removes `path` and flushes its directory, so the removal survives a
/// power loss. A file already gone is not an error.
pub fn remove_durable(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => sync_dir(&parent_dir(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes temporary files that writers of `path` killed mid-write left
/// behind; returns how many. Only call it while holding a lock that every
/// writer of `path` takes: otherwise it could delete a live writer's file.
pub fn remove_leftovers(path: &Path) -> io::Result<usize> {
    let prefix = format!(".{}.tmp-", file_name(path));
    let mut removed = 0;
    for entry in fs::read_dir(parent_dir(path))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// True when `path` (links followed, as a write would) is a device, FIFO or
/// socket: something a rename must not replace.
fn is_special(path: &Path) -> io::Result<bool> {
    match fs::metadata(path) {
        Ok(meta) => {
            let t = meta.file_type();
            Ok(!t.is_file() && !t.is_dir())
        }
        // Nothing there (or a broken link): the rename creates the file.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Writes into an existing special file without creating or truncating
/// anything; a FIFO blocks until a reader opens it, as with `> fifo`.
fn write_in_place(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A terminal device must not become our controlling terminal.
        options.custom_flags(libc::O_NOCTTY);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.flush()
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Creates a fresh temporary file beside `target`. The name is unique per
/// process and call, and `create_new` refuses to reuse a leftover.
fn create_temp(dir: &Path, target: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = file_name(target);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into())
}

/// Flushes a directory's entries (the rename) to disk.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    // Windows cannot open a directory as a file; its rename is flushed with
    // the file system's journal.
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_and_creates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        write_atomic(&path, b"one").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_failure_before_the_rename_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        write_atomic(&path, b"old").unwrap();
        let mut seen = None;
        let err = write_atomic_with(&path, b"new", |tmp| {
            // The new bytes are complete in the temporary file...
            seen = Some(fs::read(tmp).unwrap());
            Err(io::Error::other("injected"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "injected");
        assert_eq!(seen.as_deref(), Some(&b"new"[..]));
        // ...and the target still holds the old ones, with nothing left over.
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn leftovers_of_this_target_only_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        for name in [
            ".m.json.tmp-1-0",
            ".m.json.tmp-2-5",
            ".other.json.tmp-1-0",
            "m.json",
        ] {
            fs::write(dir.path().join(name), b"x").unwrap();
        }
        assert_eq!(remove_leftovers(&path).unwrap(), 2);
        assert_eq!(leftovers(dir.path()), [".other.json.tmp-1-0"]);
        assert!(path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn permissions_are_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        fs::write(&path, b"{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"{\"a\":1}").unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write_atomic(&fifo, b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nope/m.json");
        assert_eq!(
            write_atomic(&path, b"x").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}

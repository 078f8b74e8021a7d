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
//! `/dev/null`) and leave every later reader with a plain file. Only when
//! root or the user running fpcheck owns it (and every link of the chain
//! to it, if the target is a link), though: another user's FIFO or link to a device in a
//! marker directory they can write is replaced (see `special_node`).
//! A name for one of fpcheck's own descriptors (`/dev/stdout`,
//! `/dev/fd/N`, `/proc/self/fd/N`) is written through that descriptor, as
//! a shell does, whatever it leads to: with stdout redirected to a file,
//! a rename would replace root's `/dev/stdout` link itself.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

mod special;
#[cfg(test)]
mod tests;

use special::*;

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
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    #[cfg(unix)]
    if let Some(fd) = own_descriptor(path) {
        return write_descriptor(fd, bytes);
    }
    if let Some(node) = special_node(path)? {
        return write_in_place(path, &node, bytes);
    }
    let mode = fs::metadata(path).ok().map(|meta| meta.permissions());
    replace_with_temp(path, bytes, mode, before_rename)
}

/// Writes `bytes` to a new temporary file beside `path` with the
/// permissions `mode` (if any), flushes it, calls `before_rename` and
/// renames it over `path`, then flushes the directory.
fn replace_with_temp(
    path: &Path,
    bytes: &[u8],
    mode: Option<fs::Permissions>,
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let dir = parent_dir(path);
    let (tmp, mut file) = create_temp(&dir, path)?;
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(mode)?;
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

/// Replaces fpcheck's own file `path` (a restart marker) atomically,
/// never writing through what is at the name: unlike [`write_atomic`],
/// which writes a device or FIFO in place as a shell redirection would,
/// the marker is fpcheck's to own, not a stream the user redirects. A
/// link, FIFO or socket there is replaced by the new file (a rename
/// replaces the directory entry and never opens the node, so a link's
/// target is untouched); a device or a directory cannot be replaced
/// without destroying something (`--marker /dev/null` names the machine's
/// own), so it is refused with an error naming what is there, for the
/// caller to answer conservatively. Calls `before_rename` as
/// [`write_atomic_with`] does.
pub(crate) fn replace_own_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let mode = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Some(meta.permissions()),
        // A link's target is someone else's file: its mode (setuid, world
        // writable) is not taken over by the marker that replaces the link.
        Ok(meta) if meta.file_type().is_symlink() => None,
        Ok(meta) if meta.is_dir() || is_device(&meta.file_type()) => {
            return Err(io::Error::other(format!(
                "it is a {}, not a regular file, and is never written through or replaced",
                crate::safe_io::kind_name(&meta.file_type())
            )))
        }
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    replace_with_temp(path, bytes, mode, before_rename)
}

/// [`replace_own_with`] with nothing to do before the rename.
pub(crate) fn replace_own(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace_own_with(path, bytes, |_| Ok(()))
}

/// What [`replace_private`] may find at the name of a file that is
/// fpcheck's own data (a cache), and only ever a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Occupied {
    /// The name is in a directory fpcheck keeps for itself
    /// (`.git/fpcheck`): a link, FIFO, socket or device there is a planted
    /// name and is replaced like a stale file.
    Replace,
    /// The name is one the user gave (`status --cache FILE`): it may be
    /// `/dev/null`, `/dev/stdout` or a system link, which the rename would
    /// destroy, so anything there but a regular file is left alone and the
    /// write refused.
    Refuse,
}

/// Writes fpcheck's own data file `path` (a cache): always a new
/// temporary file beside it, renamed over the name, never written in place
/// and never through what is at the name. A rename replaces only the
/// directory entry: a link there is replaced, not followed, and a FIFO or
/// device is never opened, so nothing outside the file's directory is
/// touched. What a name may hold besides a regular file is `occupied`'s to
/// say (a directory is never replaced). The mode of a regular file
/// replaced is kept. The policy is in docs/security.md ("fpcheck's own
/// files").
pub(crate) fn replace_private(path: &Path, bytes: &[u8], occupied: Occupied) -> io::Result<()> {
    let mode = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Some(meta.permissions()),
        Ok(meta) if meta.is_dir() || occupied == Occupied::Refuse => {
            return Err(io::Error::other(format!(
                "it is a {}, not a regular file, and is left alone",
                crate::safe_io::kind_name(&meta.file_type())
            )))
        }
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    replace_with_temp(path, bytes, mode, |_| Ok(()))
}

/// [`write_atomic`] of `top/dir/name`, where no directory below `top` is
/// followed through a symbolic link: each one is opened with `O_NOFOLLOW`
/// from the one above, and the temporary file is created and renamed
/// relative to the last one. A directory swapped for a link after the
/// caller checked the path (to lead the write out of a working tree) makes
/// the write fail instead; so does anything but a regular file at `name`.
/// `top` itself is trusted (the caller's real path of it).
#[cfg(unix)]
pub(crate) fn write_atomic_beneath(
    top: &Path,
    dir: &Path,
    name: &std::ffi::OsStr,
    bytes: &[u8],
) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut current = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(top)?;
    for part in dir.components() {
        let std::path::Component::Normal(part) = part else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is not a plain path below {}",
                    dir.display(),
                    top.display()
                ),
            ));
        };
        current = beneath::open_dir(&current, part)?;
    }
    replace_in(&current, name, bytes, Occupied::Refuse)
}

/// [`replace_private`] of `name` in the directory opened as `dir` (opened
/// by the caller without following a link: `.git/fpcheck`), the temporary
/// file created and renamed relative to it, so the write cannot leave that
/// directory whatever is swapped in above it.
#[cfg(unix)]
pub(crate) fn replace_private_in(
    dir: &File,
    name: &std::ffi::OsStr,
    bytes: &[u8],
) -> io::Result<()> {
    replace_in(dir, name, bytes, Occupied::Replace)
}

/// Writes `bytes` to a new file in `current` and renames it over `name`;
/// what may be at `name` besides a regular file is `occupied`'s to say (a
/// directory never is replaced).
#[cfg(unix)]
fn replace_in(
    current: &File,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    occupied: Occupied,
) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // `mode_t` is u16 on some systems: the casts are not always no-ops.
    #[allow(clippy::unnecessary_cast)]
    let mode = match beneath::mode_nofollow(current, name)? {
        Some(mode) if mode & libc::S_IFMT as u32 == libc::S_IFREG as u32 => Some(mode & 0o7777),
        #[allow(clippy::unnecessary_cast)]
        Some(mode)
            if occupied == Occupied::Replace
                && mode & libc::S_IFMT as u32 != libc::S_IFDIR as u32 =>
        {
            None
        }
        Some(_) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                match occupied {
                    Occupied::Replace => "a directory, which is never replaced",
                    Occupied::Refuse => {
                        "not a regular file (a link, directory or device is never replaced)"
                    }
                },
            ))
        }
        None => None,
    };
    let (tmp, mut file) = loop {
        let tmp = std::ffi::OsString::from(temp_name(&name.to_string_lossy()));
        match beneath::create_new(current, &tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        beneath::rename(current, &tmp, name)
    })();
    if let Err(e) = result {
        beneath::unlink(current, &tmp);
        return Err(e);
    }
    current.sync_all()
}

/// The `*at` calls of [`write_atomic_beneath`], relative to an open directory.
#[cfg(unix)]
mod beneath {
    use std::ffi::{CString, OsStr};
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;

    fn c_name(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name holds a NUL byte"))
    }

    fn checked(fd: libc::c_int) -> io::Result<File> {
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just returned by openat, owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The directory `name` in `dir`; a link there is ELOOP, not followed.
    pub(super) fn open_dir(dir: &File, name: &OsStr) -> io::Result<File> {
        let c = c_name(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid descriptor and NUL-terminated name.
        checked(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) })
    }

    /// A new file `name` in `dir` (O_EXCL: never an existing file or link).
    pub(super) fn create_new(dir: &File, name: &OsStr) -> io::Result<File> {
        let c = c_name(name)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid descriptor and NUL-terminated name; mode as for File::create.
        checked(unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags, 0o666 as libc::c_uint) })
    }

    /// The mode of what is at `name` in `dir`, a link not followed;
    /// `None` when nothing is there.
    pub(super) fn mode_nofollow(dir: &File, name: &OsStr) -> io::Result<Option<u32>> {
        // `mode_t` is u16 on some systems: the cast is not always a no-op.
        #[allow(clippy::unnecessary_cast)]
        Ok(stat_nofollow(dir, name)?.map(|st| st.st_mode as u32))
    }

    /// What is at `name` in `dir`, a link not followed; `None` when
    /// nothing is there.
    pub(super) fn stat_nofollow(dir: &File, name: &OsStr) -> io::Result<Option<libc::stat>> {
        let c = c_name(name)?;
        // SAFETY: `stat` is plain data, written by fstatat before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor, NUL-terminated name and out pointer.
        let r = unsafe {
            libc::fstatat(
                dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::NotFound {
                Ok(None)
            } else {
                Err(e)
            };
        }
        Ok(Some(st))
    }

    /// The names in the directory opened as `dir` (`.` and `..` left
    /// out), read through a duplicate of its descriptor.
    pub(super) fn names(dir: &File) -> io::Result<Vec<std::ffi::OsString>> {
        use std::os::unix::ffi::OsStringExt;
        // SAFETY: dup(2) of a valid descriptor; fdopendir owns the copy.
        let fd = unsafe { libc::dup(dir.as_raw_fd()) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor, owned by the stream from here on.
        let stream = unsafe { libc::fdopendir(fd) };
        if stream.is_null() {
            let e = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so the descriptor is still ours.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // The copy shares the original's offset: read from the start.
        // SAFETY: a valid stream.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        loop {
            // SAFETY: a valid stream; the entry is read before the next call.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                break;
            }
            // SAFETY: d_name is NUL-terminated within the entry.
            let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
            let bytes = name.to_bytes();
            if bytes != b"." && bytes != b".." {
                names.push(std::ffi::OsString::from_vec(bytes.to_vec()));
            }
        }
        // SAFETY: a valid stream, closed once (with its descriptor).
        unsafe { libc::closedir(stream) };
        Ok(names)
    }

    /// Removes the file or link `name` in `dir` (never a directory).
    pub(super) fn unlink_checked(dir: &File, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: a valid descriptor and NUL-terminated name.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub(super) fn rename(dir: &File, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let fd = dir.as_raw_fd();
        // SAFETY: valid descriptors and NUL-terminated names.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub(super) fn unlink(dir: &File, name: &OsStr) {
        if let Ok(c) = c_name(name) {
            // SAFETY: a valid descriptor and NUL-terminated name.
            unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) };
        }
    }
}

/// Removes `path` and flushes its directory, so the removal survives a
/// power loss. A file already gone is not an error.
pub(crate) fn remove_durable(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => sync_dir(&parent_dir(path)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Removes temporary files that writers of `path` killed mid-write left
/// behind; returns how many. Only call it while holding a lock that every
/// writer of `path` takes: otherwise it could delete a live writer's file.
/// Only a regular file or a link (the link itself, never what it leads
/// to) is removed; an entry that is neither, or cannot be removed, is left
/// and the sweep goes on.
pub(crate) fn remove_leftovers(path: &Path) -> io::Result<usize> {
    let prefix = format!(".{}.tmp-", file_name(path));
    let mut removed = 0;
    for entry in fs::read_dir(parent_dir(path))? {
        let Ok(entry) = entry else { continue };
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        if (kind.is_file() || kind.is_symlink()) && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// How old a temporary file must be for [`sweep_temps_in`] to remove it
/// even though the process its name gives is alive (a reused pid): no
/// save takes a day.
const STALE_AFTER_SECS: i64 = 24 * 60 * 60;

/// Removes, from fpcheck's own directory opened as `dir` (`.git/fpcheck`,
/// opened without following a link), the temporary files of fpcheck's
/// naming (`.NAME.tmp-PID-N`, see [`temp_name`]) that a run killed
/// mid-save left: those whose process is gone, and those older than
/// [`STALE_AFTER_SECS`]. Writers of that directory take no common lock,
/// so a fresh file of a live process is another run's save in progress
/// and stays. Only a regular file or a link is removed (the link itself,
/// never what it leads to); nothing is descended into, and an entry that
/// cannot be examined or removed is left while the sweep goes on. Returns
/// how many were removed.
#[cfg(unix)]
pub(crate) fn sweep_temps_in(dir: &File) -> usize {
    let Ok(names) = beneath::names(dir) else {
        return 0;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let mut removed = 0;
    for name in names {
        let Some(pid) = temp_pid(name.as_encoded_bytes()) else {
            continue;
        };
        let Ok(Some(st)) = beneath::stat_nofollow(dir, &name) else {
            continue;
        };
        // `mode_t` is u16 on some systems: the casts are not always no-ops.
        #[allow(clippy::unnecessary_cast)]
        let kind = st.st_mode as u32 & libc::S_IFMT as u32;
        #[allow(clippy::unnecessary_cast)]
        if kind != libc::S_IFREG as u32 && kind != libc::S_IFLNK as u32 {
            continue;
        }
        #[allow(clippy::unnecessary_cast)]
        let old = now.saturating_sub(st.st_mtime as i64) > STALE_AFTER_SECS;
        if (old || !process_alive(pid)) && beneath::unlink_checked(dir, &name).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Elsewhere, by path, and by age only (whether a process is alive is not
/// asked there).
#[cfg(not(unix))]
pub(crate) fn sweep_temps_in(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if temp_pid(entry.file_name().as_encoded_bytes()).is_none() {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let kind = meta.file_type();
        if !(kind.is_file() || kind.is_symlink()) {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age.as_secs() as i64 > STALE_AFTER_SECS);
        if old && fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The process id in a name [`temp_name`] makes (`.NAME.tmp-PID-N`, both
/// numbers in plain decimal, PID above zero); `None` for any other name.
fn temp_pid(name: &[u8]) -> Option<i32> {
    const MARK: &[u8] = b".tmp-";
    let rest = name.strip_prefix(b".")?;
    let at = rest.windows(MARK.len()).rposition(|w| w == MARK)?;
    if at == 0 {
        return None;
    }
    let tail = std::str::from_utf8(&rest[at + MARK.len()..]).ok()?;
    let (pid, n) = tail.split_once('-')?;
    let plain = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    if !plain(pid) || !plain(n) || n.parse::<u32>().is_err() {
        return None;
    }
    pid.parse::<i32>().ok().filter(|&p| p > 0)
}

/// Whether process `pid` exists (a zombie does; one of another user's,
/// which `kill` may not signal, does too).
#[cfg(unix)]
fn process_alive(pid: i32) -> bool {
    if u32::try_from(pid).ok() == Some(std::process::id()) {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists; pid > 0, so
    // no process group is addressed.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
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
    let name = file_name(target);
    loop {
        let tmp = dir.join(temp_name(&name));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A fresh name for a temporary file beside the file `name`: unique per
/// process and call, and starting with the prefix [`remove_leftovers`] removes.
fn temp_name(name: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.tmp-{}-{n}", std::process::id())
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

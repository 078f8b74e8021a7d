//! The warm `status` path: a watcher held by the long-running process.
//!
//! `status` runs on every tool call. Re-hashing the runtime each time is its
//! whole cost, and even a stat of every file (the CLI's `--cache`) costs
//! about a millisecond on 300 files. A process that stays up can do better:
//! it asks the kernel to tell it about every change (inotify on Linux), and
//! keeps the fingerprint it computed while nothing was reported.
//!
//! It must never answer with a stale fingerprint:
//!
//! - the watches are placed *before* the walk and the hash that produce the
//!   fingerprint, so a change during the hash is queued and seen next time;
//! - the kernel queues an event inside the writer's own system call, so a
//!   write, rename or delete that returned before `status` was called is in
//!   the queue; every call drains the queue, without blocking, *before* it
//!   answers;
//! - every directory the walk can select from is watched (created, deleted,
//!   moved, attribute and content changes of its entries), and every
//!   selected file is watched itself, so a change through another hard link
//!   is seen too;
//! - the root is stat'ed on each call: a root that now resolves to another
//!   directory (a re-pointed symbolic link, a directory moved into place)
//!   means a rescan;
//! - any event that could change the selection or the bytes, a queue
//!   overflow, a removed watch, or an error reading the queue means a full
//!   rescan. Only events about a non-directory entry whose name no runtime
//!   extension selects (a `.pyc`, a log) are ignored: they cannot change the
//!   fingerprint;
//! - a forked child never uses its parent's watcher: the two would drain
//!   one shared queue, each losing the other's events;
//! - where it cannot vouch for what it saw, it does not watch at all and
//!   every call is a full check: another OS, a watch limit reached, a
//!   selected file that is a symbolic link (its target's own path could be
//!   re-pointed outside the watched tree), an unavailable fingerprint, and
//!   a root, directory or file on a file system outside [`LOCAL_FS`]
//!   (NFS, CIFS, FUSE, virtiofs, overlayfs...: a change made by another
//!   machine, a daemon or another layer produces no event here);
//! - the mount table is polled (zero timeout) on every call: inotify says
//!   nothing when a file system is mounted over a directory of the root,
//!   so any change of this process's mount table drops the watch and
//!   rescans;
//! - what inotify never reports (a write through a memory mapping, made by
//!   any process) is bounded in time instead: the caller re-verifies the
//!   watched fingerprint by a full one when its last full verification is
//!   older than its interval (`crate::warm`), so such a change is seen by
//!   every call that starts at least that interval after it.

use std::path::{Path, PathBuf};

use fpcheck::select::Rules;

/// What identifies a directory: (device, inode).
type DirId = (u64, u64);

/// The file systems whose inotify events the watcher trusts (`statfs`'s
/// `f_type`): local disks and memory, where every change to a watched
/// inode goes through this kernel's VFS and is reported. Network and
/// user-space file systems (NFS, CIFS, FUSE, virtiofs, 9p) report only
/// the changes made through this machine's own mount, and overlayfs none
/// made to its layers directly: on those every call is a full check.
pub const LOCAL_FS: &[(u32, &str)] = &[
    (0xEF53, "ext2/ext3/ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0x0102_1994, "tmpfs"),
    (0x8584_58F6, "ramfs"),
    (0xF2F5_2010, "f2fs"),
];

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use inotify::{EventMask, Inotify, WatchMask};
    use std::collections::BTreeSet;
    use std::fs::File;
    use std::io::ErrorKind;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    use std::time::Instant;

    /// A runtime under watch, with the fingerprint computed after the
    /// watches were placed.
    pub struct Watched {
        inotify: Inotify,
        pid: u32,
        root: PathBuf,
        root_id: DirId,
        rules: Rules,
        /// `/proc/self/mountinfo`, opened before the watches were placed:
        /// readable with priority once the mount table has changed.
        mounts: File,
        /// When the fingerprint was last verified by a full one: the start
        /// of that full check.
        pub verified_at: Instant,
        /// The installed fingerprint (never empty).
        pub fingerprint: String,
        /// The selection's warnings (skipped directories), repeated on
        /// every answer as the full check would.
        pub warnings: Vec<fpcheck::warning::Warning>,
    }

    const DIR_EVENTS: WatchMask = WatchMask::MODIFY
        .union(WatchMask::ATTRIB)
        .union(WatchMask::CLOSE_WRITE)
        .union(WatchMask::CREATE)
        .union(WatchMask::DELETE)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF)
        .union(WatchMask::MOVED_FROM)
        .union(WatchMask::MOVED_TO)
        .union(WatchMask::ONLYDIR)
        .union(WatchMask::DONT_FOLLOW);

    const FILE_EVENTS: WatchMask = WatchMask::MODIFY
        .union(WatchMask::ATTRIB)
        .union(WatchMask::CLOSE_WRITE)
        .union(WatchMask::DELETE_SELF)
        .union(WatchMask::MOVE_SELF);

    /// Places the watches on `root` for `rules`; `None` when it cannot
    /// vouch for the tree (see the module's doc). Call before hashing.
    pub fn start(root: &Path, rules: &Rules) -> Option<Pending> {
        // First: a mount made while the watches are placed is reported.
        let mounts = File::open("/proc/self/mountinfo").ok()?;
        let root_id = dir_id(root)?;
        let mut local = LocalDevices::default();
        local.check(root, root_id.0)?;
        let inotify = Inotify::init().ok()?;
        // The root itself may be a link (a deploy's `current`): followed,
        // and re-checked by its identity on every call.
        inotify
            .watches()
            .add(root, DIR_EVENTS.difference(WatchMask::DONT_FOLLOW))
            .ok()?;
        watch_below(&inotify, root, rules, &mut local)?;
        Some(Pending {
            inotify,
            root: root.to_path_buf(),
            root_id,
            rules: rules.clone(),
            mounts,
            local,
        })
    }

    /// Watches placed, fingerprint not yet known.
    pub struct Pending {
        inotify: Inotify,
        root: PathBuf,
        root_id: DirId,
        rules: Rules,
        mounts: File,
        local: LocalDevices,
    }

    /// The devices already found on a file system of [`LOCAL_FS`] (one
    /// `statfs` per device, not per directory).
    #[derive(Default)]
    struct LocalDevices(BTreeSet<u64>);

    impl LocalDevices {
        /// `Some` when `path` (on device `dev`) is on a trusted file system.
        fn check(&mut self, path: &Path, dev: u64) -> Option<()> {
            if self.0.contains(&dev) {
                return Some(());
            }
            fs_type(path).filter(|t| is_local(*t))?;
            self.0.insert(dev);
            Some(())
        }
    }

    impl Pending {
        /// Watches each selected file itself (hard links), then keeps the
        /// fingerprint computed after this call. `files` are the selected
        /// paths below the root.
        pub fn watch_files(&mut self, files: &[&str]) -> Option<()> {
            for rel in files {
                let path = self.root.join(rel);
                let meta = std::fs::symlink_metadata(&path).ok()?;
                // A link's target could be re-pointed outside the tree.
                if meta.file_type().is_symlink() {
                    return None;
                }
                // A file bind-mounted from another file system.
                self.local.check(&path, meta.dev())?;
                self.inotify
                    .watches()
                    .add(&path, FILE_EVENTS | WatchMask::DONT_FOLLOW)
                    .ok()?;
            }
            Some(())
        }

        /// The runtime under watch, answering with `fingerprint`.
        /// `verified_at`: when the full check that computed `fingerprint`
        /// started (after the watches were placed).
        pub fn finish(
            self,
            fingerprint: String,
            warnings: Vec<fpcheck::warning::Warning>,
            verified_at: Instant,
        ) -> Watched {
            Watched {
                inotify: self.inotify,
                pid: std::process::id(),
                root: self.root,
                root_id: self.root_id,
                rules: self.rules,
                mounts: self.mounts,
                verified_at,
                fingerprint,
                warnings,
            }
        }
    }

    impl Watched {
        /// Is the fingerprint still the runtime's? Drains the queue.
        pub fn still_valid(&mut self) -> bool {
            if self.pid != std::process::id()
                || dir_id(&self.root) != Some(self.root_id)
                || mounts_changed(&self.mounts)
            {
                return false;
            }
            let mut buffer = [0u8; 4096];
            loop {
                match self.inotify.read_events(&mut buffer) {
                    Ok(events) => {
                        let mut any = false;
                        for e in events {
                            any = true;
                            if matters(&e.mask, e.name, &self.rules) {
                                return false;
                            }
                        }
                        if !any {
                            return true;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => return false,
                }
            }
        }
    }

    /// Can this event change the fingerprint?
    fn matters(mask: &EventMask, name: Option<&std::ffi::OsStr>, rules: &Rules) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let harmless_entry = !mask.contains(EventMask::ISDIR)
            && !mask.intersects(
                EventMask::Q_OVERFLOW
                    | EventMask::IGNORED
                    | EventMask::UNMOUNT
                    | EventMask::DELETE_SELF
                    | EventMask::MOVE_SELF,
            )
            && name.is_some_and(|n| !rules.selects_name(n.as_bytes()));
        !harmless_entry
    }

    /// Watches every real directory below the watched `dir` that the
    /// selection could descend into (excluded names and links to
    /// directories are not descended, as the reference's `rglob` does not).
    /// Each directory is watched before it is listed: an entry created
    /// after the listing is an event; one created before is listed.
    fn watch_below(
        inotify: &Inotify,
        dir: &Path,
        rules: &Rules,
        local: &mut LocalDevices,
    ) -> Option<()> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            // The full check reports (or skips) what it cannot read.
            Err(_) => return Some(()),
        };
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let excluded = rules
                .exclude
                .iter()
                .any(|x| std::ffi::OsStr::new(x) == name);
            if kind.is_dir() && !excluded {
                let path = entry.path();
                // A file system mounted on a directory below the root.
                local.check(&path, std::fs::symlink_metadata(&path).ok()?.dev())?;
                inotify.watches().add(&path, DIR_EVENTS).ok()?;
                watch_below(inotify, &path, rules, local)?;
            }
        }
        Some(())
    }

    fn dir_id(path: &Path) -> Option<DirId> {
        let m = std::fs::metadata(path).ok()?;
        m.is_dir().then(|| (m.dev(), m.ino()))
    }

    /// Has this process's mount table changed since `mounts` was opened?
    /// The kernel marks an open mount table priority-readable (and in
    /// error) once any mount or unmount has happened in its namespace; a
    /// failed poll counts as a change.
    fn mounts_changed(mounts: &File) -> bool {
        let mut fd = libc::pollfd {
            fd: mounts.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, for a descriptor `mounts` owns.
            let n = unsafe { libc::poll(&mut fd, 1, 0) };
            if n < 0 && std::io::Error::last_os_error().kind() == ErrorKind::Interrupted {
                continue;
            }
            return n != 0 && (n < 0 || fd.revents & (libc::POLLPRI | libc::POLLERR) != 0);
        }
    }

    /// The file system type (`statfs`'s `f_type`) of `path`.
    fn fs_type(path: &Path) -> Option<u32> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut buf = std::mem::MaybeUninit::<libc::statfs>::zeroed();
        // SAFETY: a NUL-terminated path and a buffer of the right type.
        if unsafe { libc::statfs(c.as_ptr(), buf.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: statfs succeeded, so it filled the buffer. Every magic
        // number fits in 32 bits, whatever the width of `f_type`.
        #[allow(clippy::unnecessary_cast)]
        Some(unsafe { buf.assume_init() }.f_type as u32)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    /// Never constructed: no watcher on this OS, every call is a full check.
    pub struct Watched {
        pub verified_at: std::time::Instant,
        pub fingerprint: String,
        pub warnings: Vec<fpcheck::warning::Warning>,
    }

    pub struct Pending;

    pub fn start(_root: &Path, _rules: &Rules) -> Option<Pending> {
        None
    }

    impl Pending {
        pub fn watch_files(&mut self, _files: &[&str]) -> Option<()> {
            None
        }
        pub fn finish(
            self,
            fingerprint: String,
            warnings: Vec<fpcheck::warning::Warning>,
            verified_at: std::time::Instant,
        ) -> Watched {
            Watched {
                verified_at,
                fingerprint,
                warnings,
            }
        }
    }

    impl Watched {
        pub fn still_valid(&mut self) -> bool {
            false
        }
    }
}

pub use imp::{start, Pending, Watched};

/// Is a file system of this `statfs` type one the watcher trusts?
pub fn is_local(fs_type: u32) -> bool {
    LOCAL_FS.iter().any(|(t, _)| *t == fs_type)
}

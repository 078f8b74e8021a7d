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
//!   re-pointed outside the watched tree), an unavailable fingerprint.

use std::path::{Path, PathBuf};

use fpcheck::select::Rules;

/// What identifies a directory: (device, inode).
type DirId = (u64, u64);

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use inotify::{EventMask, Inotify, WatchMask};
    use std::io::ErrorKind;

    /// A runtime under watch, with the fingerprint computed after the
    /// watches were placed.
    pub struct Watched {
        inotify: Inotify,
        pid: u32,
        root: PathBuf,
        root_id: DirId,
        rules: Rules,
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
        let root_id = dir_id(root)?;
        let inotify = Inotify::init().ok()?;
        // The root itself may be a link (a deploy's `current`): followed,
        // and re-checked by its identity on every call.
        inotify
            .watches()
            .add(root, DIR_EVENTS.difference(WatchMask::DONT_FOLLOW))
            .ok()?;
        watch_below(&inotify, root, rules)?;
        Some(Pending {
            inotify,
            root: root.to_path_buf(),
            root_id,
            rules: rules.clone(),
        })
    }

    /// Watches placed, fingerprint not yet known.
    pub struct Pending {
        inotify: Inotify,
        root: PathBuf,
        root_id: DirId,
        rules: Rules,
    }

    impl Pending {
        /// Watches each selected file itself (hard links), then keeps the
        /// fingerprint computed after this call. `files` are the selected
        /// paths below the root.
        pub fn watch_files(&self, files: &[&str]) -> Option<()> {
            for rel in files {
                let path = self.root.join(rel);
                // A link's target could be re-pointed outside the tree.
                if std::fs::symlink_metadata(&path)
                    .ok()?
                    .file_type()
                    .is_symlink()
                {
                    return None;
                }
                self.inotify
                    .watches()
                    .add(&path, FILE_EVENTS | WatchMask::DONT_FOLLOW)
                    .ok()?;
            }
            Some(())
        }

        /// The runtime under watch, answering with `fingerprint`.
        pub fn finish(
            self,
            fingerprint: String,
            warnings: Vec<fpcheck::warning::Warning>,
        ) -> Watched {
            Watched {
                inotify: self.inotify,
                pid: std::process::id(),
                root: self.root,
                root_id: self.root_id,
                rules: self.rules,
                fingerprint,
                warnings,
            }
        }
    }

    impl Watched {
        /// Is the fingerprint still the runtime's? Drains the queue.
        pub fn still_valid(&mut self) -> bool {
            if self.pid != std::process::id() || dir_id(&self.root) != Some(self.root_id) {
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
    fn watch_below(inotify: &Inotify, dir: &Path, rules: &Rules) -> Option<()> {
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
                inotify.watches().add(&path, DIR_EVENTS).ok()?;
                watch_below(inotify, &path, rules)?;
            }
        }
        Some(())
    }

    fn dir_id(path: &Path) -> Option<DirId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        m.is_dir().then(|| (m.dev(), m.ino()))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    /// Never constructed: no watcher on this OS, every call is a full check.
    pub struct Watched {
        pub fingerprint: String,
        pub warnings: Vec<fpcheck::warning::Warning>,
    }

    pub struct Pending;

    pub fn start(_root: &Path, _rules: &Rules) -> Option<Pending> {
        None
    }

    impl Pending {
        pub fn watch_files(&self, _files: &[&str]) -> Option<()> {
            None
        }
        pub fn finish(
            self,
            fingerprint: String,
            warnings: Vec<fpcheck::warning::Warning>,
        ) -> Watched {
            Watched {
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

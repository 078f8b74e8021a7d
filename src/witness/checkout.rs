//! git's own checkout of a tree into a temporary directory, through a
//! throwaway repository that borrows the user's objects and nothing else.
//!
//! The throwaway repository (`git init --bare`'s files, written here) has
//! the user's object directory as its only alternate (git follows that
//! directory's own alternates), no configuration beyond its format, no
//! hooks, no `info/attributes`, no refs. Every `git` runs with an
//! environment of its own: the caller's `GIT_*` variables removed, no
//! system or global configuration (`GIT_CONFIG_NOSYSTEM`, an empty
//! `GIT_CONFIG_GLOBAL`, `HOME` and `XDG_CONFIG_HOME` in the temporary
//! directory, so neither `~/.gitconfig` nor `~/.config/git/attributes` is
//! read), no system attributes (`GIT_ATTR_NOSYSTEM`), no lazy fetch, and
//! pathspecs taken literally. So no filter driver is configured, none can
//! run, and git writes what a fresh clone with its defaults writes.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::select::Rules;

/// The oldest git the witness trusts to check out as it is asked.
const OLDEST: (u32, u32) = (2, 20);

/// Rounds of following link targets into the checkout: the kernel follows
/// at most 40 links in one look-up.
const MAX_ROUNDS: usize = 41;

/// Why git could not check out a tree.
#[derive(Debug)]
pub(super) enum GitError {
    /// No `git` on `PATH`.
    Missing,
    /// Anything else: a sentence.
    Failed(String),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::Missing => write!(f, "no `git` on PATH"),
            GitError::Failed(why) => write!(f, "{why}"),
        }
    }
}

/// The throwaway repository and its private temporary directory (removed
/// when dropped).
pub(super) struct Git {
    dir: tempfile::TempDir,
    /// Checkouts made so far, to name each one's directory and index.
    made: usize,
    /// `git version`'s answer.
    pub(super) version: String,
}

/// One runtime root to check out, with the rules that say which of its
/// entries the selection can reach.
pub(super) struct Wanted<'a> {
    pub(super) root: &'a str,
    pub(super) rules: &'a Rules,
}

/// One entry of the checkout's index.
struct IndexEntry {
    path: Vec<u8>,
    link: bool,
}

impl Git {
    /// The throwaway repository over the object directory `objects`.
    pub(super) fn new(objects: &Path, hash: gix::hash::Kind) -> Result<Git, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("fpcheck-witness")
            .tempdir()
            .map_err(|e| failed("cannot make a temporary directory", e))?;
        let repo = dir.path().join("repo.git");
        let objects = std::fs::canonicalize(objects)
            .map_err(|e| failed(&format!("cannot read {}", objects.display()), e))?;
        // One line of `objects/info/alternates` names it.
        if objects.as_os_str().as_bytes().contains(&b'\n') {
            return Err(GitError::Failed(format!(
                "the object directory {} has a line break in its path",
                objects.display()
            )));
        }
        let config = match hash {
            gix::hash::Kind::Sha1 => "[core]\n\trepositoryformatversion = 0\n\tbare = true\n",
            _ => "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n",
        };
        let made = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(repo.join("objects/info"))?;
            std::fs::create_dir_all(repo.join("refs/heads"))?;
            std::fs::create_dir(dir.path().join("home"))?;
            std::fs::create_dir(dir.path().join("worktree"))?;
            std::fs::write(repo.join("HEAD"), "ref: refs/heads/main\n")?;
            std::fs::write(repo.join("config"), config)?;
            std::fs::write(dir.path().join("global-config"), "")?;
            let mut alternates = objects.as_os_str().as_bytes().to_vec();
            alternates.push(b'\n');
            std::fs::write(repo.join("objects/info/alternates"), alternates)
        })();
        made.map_err(|e| failed("cannot make the throwaway repository", e))?;
        let mut git = Git {
            dir,
            made: 0,
            version: String::new(),
        };
        git.version = git.check_version()?;
        Ok(git)
    }

    /// `git version`, refused when older than [`OLDEST`].
    fn check_version(&self) -> Result<String, GitError> {
        let out = self.run(
            &self.dir.path().join("index"),
            &[OsStr::new("version")],
            None,
        )?;
        let text = String::from_utf8_lossy(&out).trim().to_string();
        let number = text.strip_prefix("git version ").unwrap_or("");
        let mut parts = number.split(['.', ' ']).map(|p| p.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(major), Some(minor)) if (major, minor) >= OLDEST => Ok(text),
            _ => Err(GitError::Failed(format!(
                "`{text}` is older than git {}.{}, or not git",
                OLDEST.0, OLDEST.1
            ))),
        }
    }

    /// A `git` command in the throwaway repository with index `index`.
    fn command(&self, index: &Path) -> Command {
        let top = self.dir.path();
        let mut cmd = Command::new("git");
        cmd.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("HOME", top.join("home"))
            .env("XDG_CONFIG_HOME", top.join("home"))
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", top.join("global-config"))
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_DIR", top.join("repo.git"))
            .env("GIT_WORK_TREE", top.join("worktree"))
            .env("GIT_INDEX_FILE", index)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(top.join("worktree"));
        cmd
    }

    /// Runs `git args` (with `input` on its standard input), its output.
    fn run(
        &self,
        index: &Path,
        args: &[&OsStr],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, GitError> {
        let mut cmd = self.command(index);
        cmd.args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(GitError::Missing),
            Err(e) => return Err(failed("cannot run git", e)),
        };
        // Written from a thread: git may fill its output pipe first.
        let writer = match (input, child.stdin.take()) {
            (Some(bytes), Some(mut stdin)) => {
                let bytes = bytes.to_vec();
                Some(std::thread::spawn(move || stdin.write_all(&bytes)))
            }
            _ => None,
        };
        let out = child
            .wait_with_output()
            .map_err(|e| failed("cannot run git", e))?;
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let first = said.lines().next().unwrap_or("").trim();
            return Err(GitError::Failed(format!(
                "`git {}` failed ({}){}",
                args.first()
                    .map_or(std::borrow::Cow::Borrowed(""), |a| a.to_string_lossy()),
                out.status,
                if first.is_empty() {
                    String::new()
                } else {
                    format!(": {first}")
                }
            )));
        }
        Ok(out.stdout)
    }

    /// Checks tree `tree` (hex id) out into a fresh directory: every entry
    /// under each root of `wanted` that the selection can reach (no
    /// excluded name on its way), the version files beside and above each
    /// root, every link on a root's path, and, round after round, what
    /// each link checked out leads to inside the tree. Its top directory.
    pub(super) fn checkout(
        &mut self,
        tree: &str,
        wanted: &[Wanted<'_>],
    ) -> Result<PathBuf, GitError> {
        self.made += 1;
        let index = self.dir.path().join(format!("index-{}", self.made));
        // `end/tree` is the checkout: the parent of a root at the top is
        // `end`, which holds nothing else.
        let top = self
            .dir
            .path()
            .join(format!("end-{}", self.made))
            .join("tree");
        std::fs::create_dir_all(&top).map_err(|e| failed("cannot make a checkout directory", e))?;
        let mut read_tree: Vec<&OsStr> = args(&["read-tree"]);
        read_tree.push(OsStr::new(tree));
        self.run(&index, &read_tree, None)?;
        let entries = listing(&self.run(&index, &args(&["ls-files", "-z", "-s"]), None)?);
        let paths: BTreeSet<&[u8]> = entries.iter().map(|e| e.path.as_slice()).collect();
        let links: BTreeSet<&[u8]> = entries
            .iter()
            .filter(|e| e.link)
            .map(|e| e.path.as_slice())
            .collect();
        let mut want: BTreeSet<Vec<u8>> = BTreeSet::new();
        for w in wanted {
            want.extend(under_root(&paths, w));
        }
        let mut done: BTreeSet<Vec<u8>> = BTreeSet::new();
        for _ in 0..MAX_ROUNDS {
            let new: Vec<Vec<u8>> = want.difference(&done).cloned().collect();
            if new.is_empty() {
                break;
            }
            let mut input = Vec::new();
            for p in &new {
                input.extend_from_slice(p);
                input.push(0);
            }
            let mut prefix = std::ffi::OsString::from("--prefix=");
            prefix.push(top.as_os_str());
            prefix.push("/");
            let mut checkout: Vec<&OsStr> = args(&["checkout-index", "-z", "--stdin"]);
            checkout.push(&prefix);
            self.run(&index, &checkout, Some(&input))?;
            for p in &new {
                if links.contains(p.as_slice()) {
                    if let Some(target) = link_target(&top, p) {
                        want.extend(leading_to(&paths, &target));
                    }
                }
            }
            done.extend(new);
        }
        confine_links(&top, done.iter().filter(|p| links.contains(p.as_slice())))?;
        Ok(top)
    }
}

fn failed(what: &str, e: std::io::Error) -> GitError {
    GitError::Failed(format!("{what}: {e}"))
}

/// `words` as the arguments of a command.
fn args(words: &[&'static str]) -> Vec<&'static OsStr> {
    words.iter().map(|w| OsStr::new(*w)).collect()
}

/// `git ls-files -z -s`'s entries.
fn listing(out: &[u8]) -> Vec<IndexEntry> {
    out.split(|b| *b == 0)
        .filter_map(|line| {
            let tab = line.iter().position(|b| *b == b'\t')?;
            let mode = line.split(|b| *b == b' ').next()?;
            Some(IndexEntry {
                path: line[tab + 1..].to_vec(),
                link: mode == b"120000",
            })
        })
        .collect()
}

/// The paths of one root: its entries with no excluded name below the
/// root, the version files in it and in its parent, and the entries on
/// its path (a link or a submodule standing for a directory of it).
fn under_root(paths: &BTreeSet<&[u8]>, wanted: &Wanted<'_>) -> Vec<Vec<u8>> {
    let root = wanted.root.as_bytes();
    let mut out: Vec<Vec<u8>> = prefixes(root)
        .filter(|p| paths.contains(p))
        .map(<[u8]>::to_vec)
        .collect();
    for path in below(paths, root) {
        let rel = if root.is_empty() {
            path
        } else {
            &path[root.len() + 1..]
        };
        if !rel
            .split(|b| *b == b'/')
            .any(|s| wanted.rules.excluded_name(s).is_some())
        {
            out.push(path.to_vec());
        }
    }
    for in_parent in [false, true] {
        for name in crate::release::VERSION_FILES {
            if let Some(p) = crate::source::meta_path(wanted.root, name, in_parent) {
                out.extend(leading_to(paths, p.as_bytes()));
            }
        }
    }
    out
}

/// Every entry a look-up of `target` (a path from the top) may pass
/// through or end in: the entries on its way (links among them) and, when
/// it is a directory, everything in it.
fn leading_to(paths: &BTreeSet<&[u8]>, target: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = prefixes(target)
        .filter(|p| paths.contains(p))
        .map(<[u8]>::to_vec)
        .collect();
    out.extend(below(paths, target).map(<[u8]>::to_vec));
    out
}

/// `a`, `a/b`, `a/b/c` of `a/b/c` (nothing for the top).
fn prefixes(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    let ends = path
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(|(i, _)| i)
        .chain((!path.is_empty()).then_some(path.len()));
    ends.map(move |i| &path[..i])
}

/// The entries under directory `dir` (every entry for the top).
fn below<'p>(paths: &'p BTreeSet<&[u8]>, dir: &[u8]) -> impl Iterator<Item = &'p [u8]> + 'p {
    let (start, end) = if dir.is_empty() {
        (Vec::new(), None)
    } else {
        // In byte order, `dir/...` runs from `dir/` up to `dir0`.
        let mut start = dir.to_vec();
        start.push(b'/');
        let mut end = dir.to_vec();
        end.push(b'0');
        (start, Some(end))
    };
    paths
        .range::<[u8], _>((
            std::ops::Bound::Included(start.as_slice()),
            std::ops::Bound::Unbounded,
        ))
        .take_while(move |p| end.as_deref().is_none_or(|e| **p < e))
        .copied()
        .collect::<Vec<_>>()
        .into_iter()
}

/// Where the link checked out at `path` leads, as a path from the top,
/// resolved by its text alone (a link on the way is checked out in a
/// later round and followed then); `None` when it leaves the tree.
fn link_target(top: &Path, path: &[u8]) -> Option<Vec<u8>> {
    let target = std::fs::read_link(top.join(OsStr::from_bytes(path))).ok()?;
    let target = target.as_os_str().as_bytes();
    if target.starts_with(b"/") {
        return None;
    }
    let mut parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    parts.pop();
    for part in target.split(|b| *b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join(&b'/'))
}

/// Replaces every checked-out link that leads out of the checkout (an
/// absolute target, or one the kernel resolves outside `top`) with an
/// empty directory: the installed gate would follow it out of the
/// install, where the witness never reads; read from here, a directory
/// makes a selected file and a version file unreadable, both of which
/// lean toward "restart" (as fpcheck's git reading does for such links).
fn confine_links<'p>(top: &Path, links: impl Iterator<Item = &'p Vec<u8>>) -> Result<(), GitError> {
    let real_top = std::fs::canonicalize(top).map_err(|e| failed("cannot read the checkout", e))?;
    let mut outside = Vec::new();
    for link in links {
        let at = top.join(OsStr::from_bytes(link));
        let leaves = match (link_target(top, link), std::fs::canonicalize(&at)) {
            (None, _) => true,
            (Some(_), Ok(real)) => !real.starts_with(&real_top),
            // Broken or looping: read as such, nothing outside is reached.
            (Some(_), Err(_)) => false,
        };
        if leaves {
            outside.push(at);
        }
    }
    for at in outside {
        std::fs::remove_file(&at)
            .and_then(|()| std::fs::create_dir(&at))
            .map_err(|e| failed("cannot confine a link of the checkout", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_entries_below() {
        let got: Vec<&[u8]> = prefixes(b"a/b/c").collect();
        assert_eq!(got, [&b"a"[..], b"a/b", b"a/b/c"]);
        assert_eq!(prefixes(b"").count(), 0);
        let paths: BTreeSet<&[u8]> = [&b"a"[..], b"a.py", b"a/x", b"a/y/z", b"a0", b"b"]
            .into_iter()
            .collect();
        let got: Vec<&[u8]> = below(&paths, b"a").collect();
        assert_eq!(got, [&b"a/x"[..], b"a/y/z"]);
        assert_eq!(below(&paths, b"").count(), 6);
    }
}

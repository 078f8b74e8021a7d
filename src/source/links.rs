//! Symbolic-link resolution inside a repository, the rules of git mode
//! written once over any tree: a path is followed segment by segment from a
//! directory, `..` steps up but never above the top, a link is replaced by
//! its target text (an absolute one is refused: a checkout would read
//! outside the repository), and at most [`MAX_LINK_HOPS`] links are
//! followed in one lookup, counted as the kernel counts them: every link
//! of the path opened, those on the way to the runtime root and the
//! selected entry itself included (see [`walk`]). The working tree ([`super::WorktreeSource`]) walks its
//! directories with it, so that `--worktree` answers what the commit would,
//! and `GitSource::walk` (source/git/tree.rs) walks tree objects with it.

use std::collections::VecDeque;

/// How many symbolic links one lookup may follow, as Linux allows
/// (`MAXSYMLINKS`): the 41st gives ELOOP, "Too many levels of symbolic
/// links", wherever it stands in the path.
pub(crate) const MAX_LINK_HOPS: usize = 40;

/// One entry of a directory, as the walk needs it.
pub(crate) enum Step<D, F> {
    /// A directory.
    Dir(D),
    /// A regular file.
    File(F),
    /// A symbolic link, with its target text.
    Link(Vec<u8>),
    /// Nothing by that name.
    Missing,
    /// Anything else (a FIFO, a device, a submodule).
    Other,
}

/// Where a path leads.
pub(crate) enum Found<D, F> {
    /// A directory, with the directories from the top down to it.
    Dir(Vec<D>),
    /// A regular file.
    File(F),
    /// Nothing (or a file in the middle of the path: ENOTDIR).
    Missing,
    /// Not a file nor a directory.
    Other,
    /// `..` above the top.
    LeavesRepository,
    /// A link with an absolute target.
    Absolute,
    /// More than [`MAX_LINK_HOPS`] links.
    Loop,
}

impl<D, F> Found<D, F> {
    /// Why a link that leads here is no file, in git mode's words.
    pub(crate) fn link_failure(&self) -> &'static str {
        match self {
            Found::Dir(_) => "points at a directory",
            Found::File(_) => "points at a file",
            Found::Missing => "is broken",
            Found::Other => "is not a regular file",
            Found::LeavesRepository => "leaves the repository",
            Found::Absolute => "is absolute (a checkout would read outside the repository)",
            Found::Loop => "loops",
        }
    }
}

/// Follows `path` from the directory at the top of `stack` (the top of the
/// repository first); `step` looks one name up in one directory. `hops`:
/// the links this lookup followed before (the kernel counts a path's
/// links from its first segment: the root's path `src -> lib`, then the
/// selected link `lib/a.py -> b.py`, then each link of its target, all in
/// one count); the walk adds those it follows.
pub(crate) fn walk<D: Clone, F, E>(
    mut stack: Vec<D>,
    path: &[u8],
    hops: &mut usize,
    mut step: impl FnMut(&D, &[u8]) -> Result<Step<D, F>, E>,
) -> Result<Found<D, F>, E> {
    let mut pending: VecDeque<Vec<u8>> = components(path).into();
    while let Some(name) = pending.pop_front() {
        let last = pending.is_empty();
        if name == b"." {
            // The top of the stack is always a directory: `.` stays.
            if last {
                return Ok(Found::Dir(stack));
            }
            continue;
        }
        if name == b".." {
            if stack.len() == 1 {
                return Ok(Found::LeavesRepository);
            }
            stack.pop();
            continue;
        }
        let dir = stack.last().expect("the stack always holds the top");
        match step(dir, &name)? {
            Step::Dir(d) => {
                stack.push(d);
                if last {
                    return Ok(Found::Dir(stack));
                }
            }
            Step::File(f) if last => return Ok(Found::File(f)),
            Step::Other if last => return Ok(Found::Other),
            // A file in the middle of a path is ENOTDIR: as broken as missing.
            Step::File(_) | Step::Other | Step::Missing => return Ok(Found::Missing),
            Step::Link(target) => {
                *hops += 1;
                if *hops > MAX_LINK_HOPS {
                    return Ok(Found::Loop);
                }
                if target.starts_with(b"/") {
                    return Ok(Found::Absolute);
                }
                for part in components(&target).into_iter().rev() {
                    pending.push_front(part);
                }
            }
        }
    }
    Ok(Found::Dir(stack))
}

/// The segments of a link target or path. A trailing `/` becomes a final
/// `.`: like `x/.`, it demands that `x` be a directory (a file there is
/// ENOTDIR on disk), so it must not be dropped.
pub(crate) fn components(path: &[u8]) -> Vec<Vec<u8>> {
    let mut parts: Vec<Vec<u8>> = path
        .split(|b| *b == b'/')
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    if path.ends_with(b"/") && !parts.is_empty() {
        parts.push(b".".to_vec());
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    type Entries = Vec<(&'static str, Step<String, String>)>;

    /// A tree as a map from directory path to its entries.
    fn tree() -> BTreeMap<&'static str, Entries> {
        let mut t = BTreeMap::new();
        t.insert(
            "",
            vec![
                ("src", Step::Dir("src".to_string())),
                ("lib", Step::Dir("lib".to_string())),
                ("top.py", Step::File("top.py".to_string())),
            ],
        );
        t.insert(
            "src",
            vec![
                ("ok.py", Step::Link(b"../lib/x.py".to_vec())),
                ("up.py", Step::Link(b"../../x.py".to_vec())),
                ("abs.py", Step::Link(b"/etc/passwd".to_vec())),
                ("self.py", Step::Link(b"self.py".to_vec())),
                ("dir", Step::Link(b"../lib/".to_vec())),
                ("notdir", Step::Link(b"../top.py/".to_vec())),
            ],
        );
        t.insert("lib", vec![("x.py", Step::File("lib/x.py".to_string()))]);
        t
    }

    fn find(path: &str) -> Found<String, String> {
        let t = tree();
        let step = |dir: &String, name: &[u8]| -> Result<Step<String, String>, ()> {
            let name = std::str::from_utf8(name).unwrap();
            Ok(t[dir.as_str()]
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| match s {
                    Step::Dir(d) => Step::Dir(d.clone()),
                    Step::File(f) => Step::File(f.clone()),
                    Step::Link(l) => Step::Link(l.clone()),
                    Step::Missing => Step::Missing,
                    Step::Other => Step::Other,
                })
                .unwrap_or(Step::Missing))
        };
        walk(vec![String::new()], path.as_bytes(), &mut 0, step).unwrap()
    }

    #[test]
    fn links_resolve_inside_the_top_only() {
        assert!(matches!(find("src/ok.py"), Found::File(f) if f == "lib/x.py"));
        assert_eq!(find("src/up.py").link_failure(), "leaves the repository");
        assert!(matches!(find("src/abs.py"), Found::Absolute));
        assert_eq!(find("src/self.py").link_failure(), "loops");
        assert!(matches!(find("src/dir"), Found::Dir(s) if s == ["", "lib"]));
        assert!(matches!(find("src/notdir"), Found::Missing));
        assert!(matches!(find("src/nothing.py"), Found::Missing));
        assert!(matches!(find("top.py/x"), Found::Missing));
    }
}

//! Which file the patch edits, where its bytes come from, and the checks
//! and the write of `--write`.
//!
//! The target is `--version-file`, else `version_file` from fpcheck.toml,
//! else the first `version.json` the gate's lookup (docs/spec.md section
//! 5: the runtime root, then its parent) finds, else the documented default
//! `version.json` in the root's parent (in the root itself when the root is
//! the top of the repository, whose parent is outside it).

use std::path::{Component, Path, PathBuf};

use crate::range::Analysis;
use crate::release::VERSION_FILES;
use crate::setting::{Message, Setting, Value};
use crate::source::git::repo_display;
use crate::source::normalise_root;
use crate::source::{GitSource, Revision};

use super::PatchError;
use crate::source::git::Session;

/// Where the version files are read from.
pub enum Place<'r> {
    /// The tree of the `to` revision.
    Revision {
        /// The repository.
        repo: &'r Session,
        /// The revision.
        rev: Revision,
        /// Its name in messages.
        name: String,
    },
    /// The working tree (for `--worktree`, and for `--write`, which edits it).
    Worktree(Worktree),
}

/// A working tree, and the git directories inside or beside it that
/// fpcheck must never read or write through it.
#[derive(Clone, Debug)]
pub struct Worktree {
    /// The top, its real path.
    top: PathBuf,
    /// The git directory and the common one (they differ in a linked
    /// worktree), real paths.
    git_dirs: Vec<PathBuf>,
}

impl Worktree {
    /// The working tree of `repo`; an error for a bare repository.
    pub fn of(repo: &Session) -> Result<Worktree, PatchError> {
        let top = workdir(repo)?;
        let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        Ok(Worktree {
            top: real(&top),
            git_dirs: vec![real(repo.repo().git_dir()), real(repo.repo().common_dir())],
        })
    }

    /// The real path of `rel` (from the top): links in every directory of
    /// the path, and a link in its place, are resolved, and the result must
    /// be inside the working tree and outside its git directory, whatever
    /// the links say. `None` when the file's directory does not exist.
    pub fn real_path(&self, rel: &str) -> Result<Option<PathBuf>, PatchError> {
        let path = self.top.join(rel);
        let link = path.is_symlink();
        let real = if link {
            path.canonicalize().map_err(|e| {
                PatchError::BadVersionFile(
                    format!(
                        "{rel} is a symbolic link that cannot be followed ({e}): fix or remove it"
                    )
                    .into(),
                )
            })?
        } else {
            let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(PatchError::BadVersionFile(
                    format!("version file `{rel}` names no file").into(),
                ));
            };
            match dir.canonicalize() {
                Ok(dir) => dir.join(name),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(PatchError::Read {
                        path: rel.to_string(),
                        message: e.to_string(),
                    })
                }
            }
        };
        let Ok(inside) = real.strip_prefix(&self.top) else {
            return Err(PatchError::BadVersionFile(format!(
                "{rel} resolves to {}, outside the working tree {}: fpcheck only reads and writes version files inside it (a symbolic link in its path leads out)",
                real.display(),
                self.top.display()
            ).into()));
        };
        let in_git = self.git_dirs.iter().any(|g| real.starts_with(g))
            // In any case: `.GIT` is the git directory on a case-insensitive
            // disk, and git refuses the name everywhere.
            || inside
                .components()
                .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"));
        if in_git {
            return Err(PatchError::BadVersionFile(format!(
                "{rel} resolves to {}, inside the git directory: fpcheck never reads or writes there; give a version file of the working tree",
                real.display()
            ).into()));
        }
        Ok(Some(real))
    }

    /// Replaces `real` (a path from [`Worktree::real_path`]) atomically,
    /// walking down from the top without following a link: a directory
    /// swapped for a link since `real_path` checked it fails the write
    /// rather than leading it out of the working tree.
    pub fn write(&self, real: &Path, bytes: &[u8]) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            let inside = real.strip_prefix(&self.top).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "outside the working tree")
            })?;
            let (Some(dir), Some(name)) = (inside.parent(), inside.file_name()) else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "names no file",
                ));
            };
            crate::atomic::write_atomic_beneath(&self.top, dir, name, bytes)
        }
        #[cfg(not(unix))]
        {
            crate::atomic::write_atomic(real, bytes)
        }
    }

    /// The bytes of `rel`, `None` when it does not exist; a link to a file
    /// inside the working tree is followed, anything else refused.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, PatchError> {
        let path = self.top.join(rel);
        if path.is_symlink() && !path.exists() {
            // A broken link holds no file, as in git mode.
            return Ok(None);
        }
        let Some(real) = self.real_path(rel)? else {
            return Ok(None);
        };
        match crate::safe_io::read_regular(
            &real,
            crate::safe_io::Links::Refuse,
            crate::safe_io::JSON_LIMIT,
        ) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.is_missing() => Ok(None),
            Err(e) => Err(PatchError::Read {
                path: rel.to_string(),
                message: e.to_string(),
            }),
        }
    }
}

impl<'r> Place<'r> {
    /// The `to` side of `analysis`, or the working tree when `worktree`.
    pub fn to_side(
        repo: &'r Session,
        analysis: &Analysis,
        worktree: bool,
    ) -> Result<Place<'r>, PatchError> {
        if worktree || analysis.to.worktree {
            return Ok(Place::Worktree(Worktree::of(repo)?));
        }
        // The commit id, not the name: a branch may have moved meanwhile.
        let spec = analysis
            .to
            .commit
            .as_ref()
            .unwrap_or(&analysis.to.reference);
        Ok(Place::Revision {
            repo,
            rev: Revision::parse(repo, spec)?,
            name: analysis.to.reference.clone(),
        })
    }

    /// How messages name this place.
    pub fn describe(&self) -> String {
        match self {
            Place::Revision { name, .. } => name.clone(),
            Place::Worktree(_) => "the working tree".into(),
        }
    }

    /// The bytes of `rel` (a path from the top of the repository), links
    /// followed; `None` when there is no such file.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, PatchError> {
        match self {
            Place::Revision { repo, rev, .. } => {
                let (dir, name) = split(rel);
                // A source rooted at the file's directory reads it the way
                // the version lookup does, symbolic links included, as
                // stored: the patch edits the committed text.
                let source = GitSource::new((*repo).clone(), rev.clone(), dir)?;
                Ok(source.stored_meta(name)?.map(|m| m.bytes))
            }
            Place::Worktree(tree) => tree.read(rel),
        }
    }
}

/// How the target was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Chosen {
    /// `--version-file`.
    Flag,
    /// `version_file` in fpcheck.toml.
    Config,
    /// The gate's lookup found it.
    Lookup,
    /// Nothing was found: the documented default.
    Default,
}

/// The target and what the gate reads beside it, at one place.
#[derive(Clone, Debug)]
pub struct VersionFiles {
    /// The file to patch, from the top of the repository.
    pub target: String,
    /// How it was chosen.
    pub chosen: Chosen,
    /// Its bytes; `None` when it does not exist there.
    pub bytes: Option<Vec<u8>>,
    /// The other existing files of the gate's lookup, in its order.
    pub others: Vec<(String, Vec<u8>)>,
    /// Every path of the gate's lookup, in its order.
    pub lookup: Vec<String>,
    /// Where they were read, for messages.
    pub place: String,
}

/// Finds the target at `place`; `explicit` is the flag's or the config's
/// path, already relative to the top (see [`repo_relative`]).
pub(crate) fn locate(
    place: &Place<'_>,
    root: &str,
    explicit: Option<(String, Chosen)>,
) -> Result<VersionFiles, PatchError> {
    let root = normalise_root(root);
    let lookup = gate_lookup(&root);
    let mut existing = Vec::new();
    for path in &lookup {
        if let Some(bytes) = place.read(path)? {
            existing.push((path.clone(), bytes));
        }
    }
    let (target, chosen) = match explicit {
        Some(choice) => choice,
        None => existing
            .iter()
            .find(|(p, _)| split(p).1 == VERSION_FILES[0])
            .map(|(p, _)| (p.clone(), Chosen::Lookup))
            .unwrap_or_else(|| (default_target(&root), Chosen::Default)),
    };
    let bytes = match existing.iter().position(|(p, _)| *p == target) {
        Some(i) => Some(existing.remove(i).1),
        None => place.read(&target)?,
    };
    Ok(VersionFiles {
        target,
        chosen,
        bytes,
        others: existing,
        lookup,
        place: place.describe(),
    })
}

/// The gate's lookup order: each file name in the root, then in its parent
/// (never above the top of the repository).
pub(crate) fn gate_lookup(root: &str) -> Vec<String> {
    let root = normalise_root(root);
    let root = root.as_str();
    let mut out = Vec::new();
    for name in VERSION_FILES {
        out.push(join(root, name));
        if !root.is_empty() {
            out.push(join(parent(root), name));
        }
    }
    out
}

/// Where `--write` creates a missing version file: beside the runtime root.
pub(crate) fn default_target(root: &str) -> String {
    let root = normalise_root(root);
    let dir = if root.is_empty() { "" } else { parent(&root) };
    join(dir, VERSION_FILES[0])
}

/// `path` (relative to the top of the repository, or absolute inside its
/// working tree) as a clean path from the top.
pub(crate) fn repo_relative(repo: &Session, path: &str) -> Result<String, PatchError> {
    let p = Path::new(path);
    let rel = if p.is_absolute() {
        let top = workdir(repo)?;
        let top = top.canonicalize().unwrap_or(top);
        // The file may not exist yet: resolve its directory.
        let dir = p.parent().unwrap_or(p);
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let name = p.file_name().map(PathBuf::from).unwrap_or_default();
        match dir.join(name).strip_prefix(&top) {
            Ok(r) => r.to_string_lossy().into_owned(),
            Err(_) => {
                return Err(PatchError::BadVersionFile(
                    Message::new()
                        .setting(Setting::VersionFile, Value::Given(path.to_string()))
                        .text(format!(" is outside the working tree {}", top.display())),
                ))
            }
        }
    } else {
        path.to_string()
    };
    let mut parts = Vec::new();
    for c in Path::new(&rel).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => {
                return Err(PatchError::BadVersionFile(format!(
                    "version file `{path}` leaves the repository: give a path from its top, such as src/version.json"
                ).into()))
            }
        }
    }
    if parts.is_empty() {
        return Err(PatchError::BadVersionFile(format!(
            "version file `{path}` names no file: give a path from the top of the repository, such as src/version.json"
        ).into()));
    }
    Ok(parts.join("/"))
}

/// `--write` edits the working tree: the `to` side must be what is checked
/// out, or the file would record another commit's fingerprint.
pub fn check_checkout(repo: &Session, analysis: &Analysis) -> Result<(), PatchError> {
    workdir(repo)?;
    if analysis.to.worktree {
        return Ok(());
    }
    let head = repo.repo().head_id().ok().map(|id| id.detach().to_string());
    if head.is_some() && head == analysis.to.commit {
        return Ok(());
    }
    let head = head.map_or_else(|| "no commit".to_string(), |h| h[..12].to_string());
    Err(PatchError::WrongCheckout(
        Message::new()
            .setting(Setting::Write, Value::None)
            .text(format!(
                " edits the working tree, but the `to` side {} is not the checked-out commit ({head}): check it out, compare with the working tree (",
                analysis.to.reference
            ))
            .setting(Setting::Worktree, Value::None)
            .text("), or pass ")
            .setting(Setting::Force, Value::None)
            .text(" to write its values anyway"),
    ))
}

/// The working tree's top.
pub(crate) fn workdir(repo: &Session) -> Result<PathBuf, PatchError> {
    repo.repo().workdir().map(Path::to_path_buf).ok_or_else(|| {
        PatchError::NoWorktree(format!(
            "{} is a bare repository: it has no working tree to read or write version.json in",
            repo_display(repo.repo())
        ))
    })
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_follows_the_gate() {
        assert_eq!(
            gate_lookup("src"),
            [
                "src/version.json",
                "version.json",
                "src/package.json",
                "package.json"
            ]
        );
        assert_eq!(
            gate_lookup("./server/src/"),
            [
                "server/src/version.json",
                "server/version.json",
                "server/src/package.json",
                "server/package.json"
            ]
        );
        assert_eq!(gate_lookup("."), ["version.json", "package.json"]);
    }

    #[test]
    fn default_is_beside_the_root() {
        assert_eq!(default_target("src"), "version.json");
        assert_eq!(default_target("server/src"), "server/version.json");
        assert_eq!(default_target("."), "version.json");
    }
}

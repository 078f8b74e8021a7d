//! Opening a repository and resolving the revisions fpcheck reads.
//!
//! Peeling (tag → tagged object → ... → commit) is done here, bounded and
//! with cycle detection. Object ids are hashes of their content and
//! `git replace` is never read, so no chain can loop; the bound stays as a
//! guard on chains of nested tags.

use crate::setting::{Message, Setting, Value};
use std::collections::HashSet;
use std::path::Path;

use gix::ObjectId;

use super::Session;
use crate::source::SourceError;

/// How many tags a chain may nest before fpcheck gives up: git creates
/// none (`git tag` of a tag makes one level; more takes intent).
const MAX_PEEL: usize = 64;

/// Opens the repository at `path`, or around the current directory,
/// without `git replace` (see [`open_options`]).
///
/// Without `path`, git's environment is honoured as git honours it, so a
/// hook or script that names a repository gets the answer for that one:
/// `GIT_DIR` (and with it `GIT_WORK_TREE`), else discovery upwards under
/// `GIT_CEILING_DIRECTORIES` and `GIT_DISCOVERY_ACROSS_FILESYSTEM`. An
/// explicit `path` (`--repo`, the Python package) is the repository asked
/// about, whatever the environment says.
pub fn open_repo(path: Option<&Path>) -> Result<gix::Repository, SourceError> {
    let mut repo = match path {
        Some(p) => discover_at(p)?,
        None => open_from_environment()?,
    };
    // Tags of one project share most blobs through deltas; a pack cache
    // saves re-inflating their bases.
    repo.object_cache_size_if_unset(4 << 20);
    Ok(repo)
}

fn discover_at(start: &Path) -> Result<gix::Repository, SourceError> {
    if !start.exists() {
        return Err(SourceError::Repository(
            Message::new()
                .text(format!("{} does not exist: pass ", start.display()))
                .setting(Setting::Repo, Value::None)
                .text(" with the path of a git repository"),
        ));
    }
    gix::ThreadSafeRepository::discover_opts(start, Default::default(), open_options())
        .map(gix::Repository::from)
        .map_err(|e| not_in_a_repository(start, Box::new(e)))
}

/// How every repository is opened: without `git replace`. Replace refs are
/// local (a clone or fetch does not copy them), so an installer's fresh
/// clone never sees them; honoured, `git replace` of a changed blob or of
/// a whole release commit by a docs-only one would make fpcheck say "no
/// restart" for bytes the install changes. `GIT_REPLACE_REF_BASE` cannot
/// turn them back on: with this setting no namespace is read.
fn open_options() -> gix::sec::trust::Mapping<gix::open::Options> {
    let without_replacements =
        |o: gix::open::Options| o.config_overrides(["core.useReplaceRefs=false"]);
    let defaults = gix::sec::trust::Mapping::<gix::open::Options>::default();
    gix::sec::trust::Mapping {
        full: without_replacements(defaults.full),
        reduced: without_replacements(defaults.reduced),
    }
}

/// Variables with which git reads objects from elsewhere than the
/// repository's own store; gix does not read them, and objects looked for
/// in the wrong store could only be missing, so fpcheck refuses to start
/// rather than fail halfway.
const OBJECT_STORE_VARIABLES: [&str; 2] =
    ["GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"];

fn open_from_environment() -> Result<gix::Repository, SourceError> {
    let cwd = std::env::current_dir().map_err(|e| {
        SourceError::Repository(format!("cannot read the current directory: {e}").into())
    })?;
    if let Some(name) = OBJECT_STORE_VARIABLES
        .iter()
        .find(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
    {
        return Err(SourceError::Repository(
            Message::new()
                .text(format!(
                    "{name} is set, and fpcheck reads objects only from the repository's own \
                     object directory: unset it, or pass "
                ))
                .setting(Setting::Repo, Value::Placeholder("PATH"))
                .text(" with a repository that holds its objects"),
        ));
    }
    if let Some(git_dir) = std::env::var_os("GIT_DIR").filter(|v| !v.is_empty()) {
        return gix::ThreadSafeRepository::open_with_environment_overrides(&cwd, open_options())
            .map(gix::Repository::from)
            .map_err(|e| SourceError::Git {
                message: Message::new().text(format!(
                    "GIT_DIR={} is not a git repository: unset GIT_DIR, or point it at one",
                    Path::new(&git_dir).display()
                )),
                source: Box::new(e),
            });
    }
    let options = gix::discover::upwards::Options {
        // As git: ceiling directories that do not lie above the current
        // directory are ignored, not an error.
        match_ceiling_dir_or_error: false,
        ..Default::default()
    };
    gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
        &cwd,
        options,
        open_options(),
    )
    .map(gix::Repository::from)
    .map_err(|e| not_in_a_repository(&cwd, Box::new(e)))
}

fn not_in_a_repository(
    start: &Path,
    source: Box<dyn std::error::Error + Send + Sync>,
) -> SourceError {
    SourceError::Git {
        message: Message::new()
            .text(format!(
                "{} is not in a git repository: run fpcheck inside one, or pass ",
                start.display()
            ))
            .setting(Setting::Repo, Value::Placeholder("PATH")),
        source,
    }
}

/// What a revision peels to.
enum Peeled {
    Commit(ObjectId),
    Tree(ObjectId),
    Blob(ObjectId),
}

/// Follows tags from `id` to the first object that is not a tag, with
/// `git replace` applied as gix applies it; a loop or a chain longer than
/// [`MAX_PEEL`] is an error naming the objects and refs that form it.
fn peel(repo: &Session, id: ObjectId, spec: &str) -> Result<Peeled, SourceError> {
    peel_noting(repo, id, spec, &mut None)
}

/// [`peel`], and when `id` is a tag object, its tagger's time (0 without
/// one) in `tagged`.
fn peel_noting(
    repo: &Session,
    id: ObjectId,
    spec: &str,
    tagged: &mut Option<i64>,
) -> Result<Peeled, SourceError> {
    let what = format!("the object `{spec}` points at");
    let mut chain = vec![id];
    let mut seen = HashSet::from([id]);
    let mut current = id;
    loop {
        let object = repo.object(current, &what, spec)?;
        match object.kind {
            gix::object::Kind::Commit => return Ok(Peeled::Commit(current)),
            gix::object::Kind::Tree => return Ok(Peeled::Tree(current)),
            gix::object::Kind::Blob => return Ok(Peeled::Blob(current)),
            gix::object::Kind::Tag => {}
        }
        if current == id {
            *tagged = Some(tagger_time(&object));
        }
        let target = object
            .to_tag_ref_iter()
            .target_id()
            .map_err(|e| SourceError::Git {
                message: format!("the tag object {current} of `{spec}` is corrupt").into(),
                source: Box::new(e),
            })?;
        if !seen.insert(target) {
            let start = chain.iter().position(|c| *c == target).unwrap_or(0);
            return Err(SourceError::Repository(
                cycle_message(repo.repo(), spec, &chain[start..]).into(),
            ));
        }
        chain.push(target);
        if chain.len() > MAX_PEEL {
            return Err(SourceError::Repository(
                format!(
                    "`{spec}` nests more than {MAX_PEEL} tags without reaching a commit: \
                 tag the release's commit directly"
                )
                .into(),
            ));
        }
        current = target;
    }
}

/// Names the objects of a tag loop and the refs that point at them.
fn cycle_message(repo: &gix::Repository, spec: &str, cycle: &[ObjectId]) -> String {
    let mut names: Vec<(ObjectId, String)> = Vec::new();
    if let Ok(refs) = repo.references() {
        if let Ok(all) = refs.all() {
            for r in all.flatten() {
                if let Some(id) = r.target().try_id() {
                    names.push((id.to_owned(), r.name().as_bstr().to_string()));
                }
            }
        }
    }
    let mut replaced = Vec::new();
    let steps: Vec<String> = cycle
        .iter()
        .map(|id| {
            let mut refs: Vec<String> = names
                .iter()
                .filter(|(target, name)| target == id && !name.starts_with("refs/replace/"))
                .map(|(_, name)| name.clone())
                .collect();
            let replace = format!("refs/replace/{id}");
            if names.iter().any(|(_, n)| *n == replace) {
                refs.push(replace);
                replaced.push(id.to_string());
            }
            if refs.is_empty() {
                id.to_string()
            } else {
                format!("{id} ({})", refs.join(", "))
            }
        })
        .collect();
    let undo = replaced
        .iter()
        .map(|id| format!("`git replace -d {id}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    format!(
        "`{spec}` never reaches a commit: its tags form a cycle through `git replace`: {} → {}; \
         remove the replacement ({undo})",
        steps.join(" → "),
        cycle[0]
    )
}

/// A revision resolved to the tree fpcheck reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    /// The revision as the user gave it.
    pub spec: String,
    /// The commit it names; `None` for a tree spec such as `v1.0^{tree}`.
    pub commit: Option<ObjectId>,
    /// The tree at that revision.
    pub tree: ObjectId,
}

impl Revision {
    /// Resolves `spec` (tag, branch, commit id, `HEAD~3`, `v1^{tree}`...)
    /// to a commit or a tree.
    pub fn parse(repo: &Session, spec: &str) -> Result<Revision, SourceError> {
        let id = repo
            .repo()
            .rev_parse_single(spec)
            .map_err(|e| unknown_revision(repo.repo(), spec, e))?
            .detach();
        match peel(repo, id, spec)? {
            Peeled::Tree(tree) => Ok(Revision {
                spec: spec.to_string(),
                commit: None,
                tree,
            }),
            Peeled::Blob(blob) => Err(SourceError::Repository(
                format!(
                    "revision `{spec}` names a file ({blob}), not a commit or tree: \
                 name a tag, branch or commit"
                )
                .into(),
            )),
            Peeled::Commit(commit) => {
                let commit_of = format!("the object `{spec}` points at");
                let tree = repo
                    .commit(commit, &commit_of, spec)?
                    .tree_id()
                    .map_err(|e| SourceError::Git {
                        message: format!("commit {commit} of `{spec}` has no tree").into(),
                        source: Box::new(e),
                    })?
                    .detach();
                Ok(Revision {
                    spec: spec.to_string(),
                    commit: Some(commit),
                    tree,
                })
            }
        }
    }

    /// Resolves `spec` to a commit (or a tag of one): a release is a
    /// commit, and a tree (`main:src`) or a file is not one, whatever it
    /// would hash to.
    pub fn parse_commit(repo: &Session, spec: &str) -> Result<Revision, SourceError> {
        let rev = Revision::parse(repo, spec)?;
        if rev.commit.is_none() {
            return Err(SourceError::Repository(
                format!(
                    "revision `{spec}` names a tree ({}), not a commit: both ends of a range are \
                 releases, so name a tag, branch or commit",
                    rev.tree
                )
                .into(),
            ));
        }
        Ok(rev)
    }
}

/// The commit a tag or other reference leads to, peeled with the same
/// bounds as a revision; `None` when it leads to a tree or a file.
pub fn peel_to_commit(
    repo: &Session,
    id: ObjectId,
    name: &str,
) -> Result<Option<ObjectId>, SourceError> {
    Ok(match peel(repo, id, name)? {
        Peeled::Commit(c) => Some(c),
        Peeled::Tree(_) | Peeled::Blob(_) => None,
    })
}

/// The tagger's time of tag object `tag`; 0 when it has none or it does
/// not parse: the time only orders the tags of one commit, so it is no
/// reason to refuse the tag.
fn tagger_time(tag: &gix::Object<'_>) -> i64 {
    let tagger = tag.to_tag_ref_iter().tagger();
    tagger.ok().flatten().map_or(0, |s| s.seconds())
}

/// One tag of the repository: its name without `refs/tags/` and the
/// object its reference names, symbolic references followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagRef {
    /// The name, without `refs/tags/`.
    pub name: String,
    /// The object the reference names; `None` for a symbolic reference to
    /// a reference that does not exist.
    target: Option<ObjectId>,
    /// A symbolic reference (`refs/tags/latest -> refs/tags/v1.0.0`): an
    /// alias, never annotated itself.
    symbolic: bool,
}

/// Where a tag leads, peeled as a revision is ([`peel`]: bounded, a cycle
/// named).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagTarget {
    /// A commit; `annotated` is the tagger's time (0 without one) when the
    /// reference names a tag object, `None` for a lightweight tag.
    Commit {
        /// The commit.
        id: ObjectId,
        /// The outermost tag object's time, for an annotated tag.
        annotated: Option<i64>,
    },
    /// A tree or a file (or a symbolic reference to nothing): never a
    /// release, whatever its name.
    NotACommit,
    /// An object on the way is not in this repository: a commit beyond a
    /// shallow clone's boundary, a tree or blob a partial clone left out.
    Missing,
}

/// Every tag of the repository, in the order git lists them. A reference
/// that cannot be read is an error naming it: it could be any release.
pub fn tag_refs(repo: &Session) -> Result<Vec<TagRef>, SourceError> {
    let fail = |e: &dyn std::fmt::Display| {
        SourceError::Repository(format!("cannot list the tags: {e}").into())
    };
    let refs = repo.repo().references().map_err(|e| fail(&e))?;
    let mut out = Vec::new();
    for r in refs.tags().map_err(|e| fail(&e))? {
        let mut r = r.map_err(|e| fail(&e))?;
        let name = r.name().shorten().to_string();
        let (target, symbolic) = match r.target().try_id() {
            Some(id) => (Some(id.to_owned()), false),
            None => (r.follow_to_object().ok().map(|id| id.detach()), true),
        };
        out.push(TagRef {
            name,
            target,
            symbolic,
        });
    }
    Ok(out)
}

/// Where `tag` leads. An object missing from the store is
/// [`TagTarget::Missing`]; a chain fpcheck refuses to follow (a cycle,
/// more than [`MAX_PEEL`] tags) or an object that is there but does not
/// read is an error naming the tag, as it is for a revision.
pub fn peel_tag(repo: &Session, tag: &TagRef) -> Result<TagTarget, SourceError> {
    let Some(id) = tag.target else {
        return Ok(TagTarget::NotACommit);
    };
    let mut tagged = None;
    let peeled = match peel_noting(repo, id, &tag.name, &mut tagged) {
        Ok(peeled) => peeled,
        Err(SourceError::MissingObject { .. }) => return Ok(TagTarget::Missing),
        Err(e) => return Err(e),
    };
    Ok(match peeled {
        Peeled::Commit(id) => TagTarget::Commit {
            id,
            annotated: tagged.filter(|_| !tag.symbolic),
        },
        Peeled::Tree(_) | Peeled::Blob(_) => TagTarget::NotACommit,
    })
}

fn unknown_revision(repo: &gix::Repository, spec: &str, err: gix::Error) -> SourceError {
    let unborn = repo.head().map(|h| h.is_unborn()).unwrap_or(false);
    if unborn {
        return SourceError::Repository(
            Message::new()
                .text(format!(
                    "{} has no commits yet, so `{spec}` names nothing: commit first, or use ",
                    repo_display(repo)
                ))
                .setting(Setting::Dir, Value::Placeholder("PATH"))
                .text(" for a directory"),
        );
    }
    let shallow = repo.is_shallow().unwrap_or(false);
    let hint = if shallow {
        format!(
            "this clone is shallow, so it may lack that history: fetch it \
             (`git fetch --depth=1 origin tag {spec}`, or `git fetch --unshallow`)"
        )
    } else {
        "name a tag, branch or commit (`git tag --list` shows the tags)".to_string()
    };
    SourceError::Git {
        message: format!(
            "unknown revision `{spec}` in {}: {hint}",
            repo_display(repo)
        )
        .into(),
        source: Box::new(err),
    }
}

/// The path of the repository as a user would name it.
pub fn repo_display(repo: &gix::Repository) -> String {
    repo.workdir()
        .unwrap_or_else(|| repo.git_dir())
        .display()
        .to_string()
}

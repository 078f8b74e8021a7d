//! The default `from`: the latest tag reachable from `to`.

use gix::ObjectId;

use super::RangeError;
use crate::source::git::repo_display;
use crate::source::{Revision, SourceError};

/// The latest tag reachable from `to`; when `to` is itself tagged (and the
/// working tree is not the `to` end), the tag before it, so that "what did
/// this release do" has an answer.
pub(super) fn latest_tag(
    repo: &gix::Repository,
    to: &str,
    worktree: bool,
) -> Result<(String, String), RangeError> {
    let start = Revision::parse(repo, to)?.commit.ok_or_else(|| {
        RangeError::BadRange(format!(
            "`{to}` is a tree, not a commit: name FROM explicitly"
        ))
    })?;
    let describe = |id: ObjectId| -> Result<Option<(String, u32)>, RangeError> {
        let commit = repo.find_commit(id).map_err(|e| {
            RangeError::Source(SourceError::Repository(format!(
                "cannot read commit {id}: {e}"
            )))
        })?;
        let found = commit
            .describe()
            .names(gix::commit::describe::SelectRef::AllTags)
            .try_resolve()
            .map_err(|e| {
                RangeError::Source(SourceError::Repository(format!("cannot look up tags: {e}")))
            })?;
        Ok(found.and_then(|r| r.outcome.name.map(|n| (n.to_string(), r.outcome.depth))))
    };
    let no_tag = || {
        RangeError::NoTag(format!(
            "no tag is reachable from `{to}` in {}, so there is no previous release to compare with: \
             name the range (e.g. `fpcheck <commit>..{to}`), or tag the last release",
            repo_display(repo)
        ))
    };
    let (tag, depth) = describe(start)?.ok_or_else(no_tag)?;
    if depth > 0 || worktree {
        let target = if worktree { "the working tree" } else { to };
        return Ok((tag.clone(), format!("no range given: comparing {tag}, the latest tag reachable from {to}, with {target}")));
    }
    let parent = repo
        .find_commit(start)
        .ok()
        .and_then(|c| c.parent_ids().next().map(|p| p.detach()));
    let Some(parent) = parent else {
        return Err(RangeError::NoTag(format!(
            "`{to}` is tagged {tag} and has no parent, so there is no previous release: name the range"
        )));
    };
    let (previous, _) = describe(parent)?.ok_or_else(|| {
        RangeError::NoTag(format!(
            "`{to}` is tagged {tag} and no tag comes before it: name the range (e.g. `fpcheck <commit>..{to}`)"
        ))
    })?;
    Ok((
        previous.clone(),
        format!("no range given: {to} is tagged {tag}, so comparing the release before it, {previous}, with {to}"),
    ))
}

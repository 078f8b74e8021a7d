//! The default `from`: the latest release tag reachable from `to`. Which
//! tags are releases: `--tag-match`, `--tag-exclude`, the globs of `git
//! describe --match/--exclude`, else the runtime's `tag_pattern` (one rule
//! for the range without FROM and for the GitHub Action's default `from`).

use std::borrow::Cow;

use gix::bstr::{BStr, ByteSlice};
use gix::glob::wildmatch;
use gix::hashtable::HashMap;
use gix::ObjectId;

use super::RangeError;
use crate::source::git::{repo_display, Session};
use crate::source::{Revision, SourceError};
use crate::tags::{self, Admit};

/// The latest tag reachable from `to`; when `to` is itself tagged (and the
/// working tree is not the `to` end), the tag before it, so that "what did
/// this release do" has an answer.
pub(super) fn latest_tag(
    repo: &Session,
    to: &str,
    worktree: bool,
    tags: &TagFilter,
) -> Result<(String, String), RangeError> {
    let start = Revision::parse(repo, to)?.commit.ok_or_else(|| {
        RangeError::BadRange(format!("`{to}` is a tree, not a commit: name FROM explicitly").into())
    })?;
    if let (Some(pattern), true) = (&tags.pattern, tags.include.is_empty()) {
        return by_version(repo, start, to, worktree, tags, pattern);
    }
    // Listed once: a tagged `to` is described, then its parent.
    let names = release_names(repo, tags)?;
    let describe = |id: ObjectId| -> Result<Option<(String, u32)>, RangeError> {
        let found = nearest(repo, id, names.clone())?;
        Ok(found.map(|(name, depth)| (unambiguous_tag(repo, name), depth)))
    };
    let no_tag = || {
        RangeError::NoTag(format!(
            "no tag{} is reachable from `{to}` in {}, so there is no previous release to compare with: \
             name the range (e.g. `fpcheck <commit>..{to}`), or tag the last release",
            tags.describe(),
            repo_display(repo.repo())
        ))
    };
    let (tag, depth) = describe(start)?.ok_or_else(no_tag)?;
    if depth > 0 || worktree {
        let target = if worktree { "the working tree" } else { to };
        return Ok((tag.clone(), format!("no range given: comparing {tag}, the latest tag reachable from {to}, with {target}")));
    }
    let parent = repo
        .commit(start, &format!("the commit of `{to}`"), to)
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

/// [`latest_tag`] for a runtime's tag pattern: the releases are the tags
/// of the pattern that name a version once its prefix is stripped, and
/// the latest is the highest version reachable from `to` (a monorepo's
/// runtimes tag commits in any order, so the nearest tag of the pattern
/// need not be its last release); when `to` carries one of them (and the
/// working tree is not the `to` end), the highest version below it
/// reachable from its parents.
fn by_version(
    repo: &Session,
    start: ObjectId,
    to: &str,
    worktree: bool,
    tags: &TagFilter,
    pattern: &str,
) -> Result<(String, String), RangeError> {
    let fail = |e: String| RangeError::Source(SourceError::Repository(e.into()));
    let releases = pattern_releases(repo, tags, pattern)?;
    let own = (!worktree)
        .then(|| releases.get(&start))
        .flatten()
        .and_then(|on| on.iter().max_by(|a, b| a.0.cmp_precedence(&b.0)))
        .cloned();
    let tips: Vec<ObjectId> = match &own {
        None => vec![start],
        Some(_) => repo
            .commit(start, &format!("the commit of `{to}`"), to)?
            .parent_ids()
            .map(|p| p.detach())
            .collect(),
    };
    let mut best: Option<(crate::version::TagVersion, String)> = None;
    if !tips.is_empty() {
        let walk = repo
            .walk(tips)
            .all()
            .map_err(|e| fail(format!("cannot walk the history of `{to}`: {e}")))?;
        // Once every release commit is seen, nothing older can change the
        // answer: the walk stops there rather than at the root. A tagged
        // `to` is walked from its parents, so its own commit is never seen.
        // (A release on a branch `to` cannot reach still walks to the root.)
        let mut unseen = releases.len() - usize::from(own.is_some());
        for info in walk {
            if unseen == 0 {
                break;
            }
            let info = info.map_err(|e| fail(format!("cannot walk the history of `{to}`: {e}")))?;
            let here = releases.get(&info.id);
            unseen -= usize::from(here.is_some());
            for (version, name) in here.into_iter().flatten() {
                let below = own
                    .as_ref()
                    .is_none_or(|(top, _)| version.cmp_precedence(top).is_lt());
                let higher = best.as_ref().is_none_or(|(b, n)| {
                    version.cmp_precedence(b).then_with(|| name.cmp(n)).is_gt()
                });
                if below && higher {
                    best = Some((version.clone(), name.clone()));
                }
            }
        }
    }
    let shown = tags.describe();
    match (own, best) {
        (None, Some((_, tag))) => {
            let tag = unambiguous_tag(repo, tag);
            let target = if worktree { "the working tree" } else { to };
            Ok((tag.clone(), format!("no range given: comparing {tag}, the highest version of the tags{shown} reachable from {to}, with {target}")))
        }
        (Some((_, own)), Some((_, previous))) => {
            let (own, previous) = (unambiguous_tag(repo, own), unambiguous_tag(repo, previous));
            Ok((previous.clone(), format!("no range given: {to} is tagged {own}, so comparing the release before it, {previous}, with {to}")))
        }
        (None, None) => Err(RangeError::NoTag(format!(
            "no tag{shown} naming a version is reachable from `{to}` in {}, so there is no previous release to compare with: \
             name the range (e.g. `fpcheck <commit>..{to}`), or tag the last release",
            repo_display(repo.repo())
        ))),
        (Some((_, own)), None) => Err(RangeError::NoTag(format!(
            "`{to}` is tagged {own} and no tag{shown} of a lower version comes before it: name the range (e.g. `fpcheck <commit>..{to}`)"
        ))),
    }
}

/// Commit id → the tags of `pattern` on it (the filter's exclusions
/// applied) that name a version once the pattern's prefix is stripped.
fn pattern_releases(
    repo: &Session,
    filter: &TagFilter,
    pattern: &str,
) -> Result<HashMap<ObjectId, Vec<(crate::version::TagVersion, String)>>, SourceError> {
    let listing = tags::list(repo, |name| match crate::version::of_glob(name, pattern) {
        Some(version) if filter.admits(name.as_bytes().as_bstr()) => Admit::Take(version),
        _ => Admit::Ignore,
    })?;
    let mut out: HashMap<ObjectId, Vec<_>> = HashMap::default();
    for tag in listing.releases {
        out.entry(tag.commit)
            .or_default()
            .push((tag.value, tag.name));
    }
    Ok(out)
}

/// The tag's short name when it reads back as that tag, else its full ref
/// name: a tag called `HEAD`, or named like another commit's id, must not be
/// taken for that.
fn unambiguous_tag(repo: &Session, name: String) -> String {
    let full = format!("refs/tags/{name}");
    let id = |spec: &str| repo.resolve(spec);
    if name.starts_with('-') || id(&name) != id(&full) {
        full
    } else {
        name
    }
}

/// Which tags are releases: every tag by default; with `include`, those
/// matching one of its globs; never one matching an `exclude` glob. Globs
/// match the name without `refs/tags/`, `*` across `/` as in `git describe`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// Globs a release tag must match one of (none: every tag).
    pub include: Vec<String>,
    /// Globs no release tag matches.
    pub exclude: Vec<String>,
    /// The runtime's `tag_pattern` (`server-v*`), when `include` is empty:
    /// only its tags that name a version are releases, the highest
    /// version reachable the latest.
    pub pattern: Option<String>,
    /// The revision whose committed `fpcheck.toml` gives the runtimes'
    /// patterns, instead of the `to` end's (`--tag-pattern-at`: a pull
    /// request's base, which the pull request cannot change).
    pub pattern_at: Option<String>,
}

impl TagFilter {
    /// Whether the tag `name` (without `refs/tags/`) is a release.
    pub fn admits(&self, name: &BStr) -> bool {
        let matches =
            |glob: &String| wildmatch(glob.as_bytes().as_bstr(), name, wildmatch::Mode::empty());
        let included = match (&self.pattern, self.include.is_empty()) {
            (Some(pattern), true) => matches(pattern),
            (_, true) => true,
            (_, false) => self.include.iter().any(matches),
        };
        included && !self.exclude.iter().any(matches)
    }

    /// The filter in words, for messages: `` matching `v*`, not `*-rc*` ``.
    pub fn describe(&self) -> String {
        let list = |globs: &[String]| {
            globs
                .iter()
                .map(|g| format!("`{g}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        };
        let include = match (&self.pattern, self.include.is_empty()) {
            (Some(pattern), true) => vec![pattern.clone()],
            _ => self.include.clone(),
        };
        match (include.is_empty(), self.exclude.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!(" matching {}", list(&include)),
            (true, false) => format!(" not matching {}", list(&self.exclude)),
            (false, false) => format!(
                " matching {} and not {}",
                list(&include),
                list(&self.exclude)
            ),
        }
    }
}

/// The nearest release tag reachable from `commit`: its name (without
/// `refs/tags/`) and how many commits lie between it and `commit` (0: the
/// commit carries it). Among tags of one commit, annotated before
/// lightweight, then the newest, then the first by name: what
/// `describe().names(AllTags)` picks, restricted to the filter.
fn nearest(
    repo: &Session,
    commit: ObjectId,
    names: HashMap<ObjectId, Cow<'static, BStr>>,
) -> Result<Option<(String, u32)>, RangeError> {
    (repo.describe(commit, names))
        .map_err(|e| RangeError::Source(SourceError::Repository(e.into())))
}

/// Commit id → the release tag that names it.
fn release_names(
    repo: &Session,
    filter: &TagFilter,
) -> Result<HashMap<ObjectId, Cow<'static, BStr>>, SourceError> {
    let listing = tags::list(repo, |name| {
        match filter.admits(name.as_bytes().as_bstr()) {
            true => Admit::Take(()),
            false => Admit::Ignore,
        }
    })?;
    let mut found: Vec<(ObjectId, u8, i64, Cow<'static, BStr>)> = (listing.releases.into_iter())
        .map(|t| {
            let (annotated, time) = t.annotated.map_or((0, 0), |time| (1, time));
            (t.commit, annotated, time, Cow::Owned(t.name.into()))
        })
        .collect();
    // Later entries win in the map: the preferred tag of a commit goes last.
    found.sort_by(|a, b| (a.1, a.2).cmp(&(b.1, b.2)).then_with(|| b.3.cmp(&a.3)));
    Ok(found.into_iter().map(|(id, _, _, n)| (id, n)).collect())
}

//! The default `from`: the release with the highest version among the
//! release tags reachable from `to` through every parent, `to`'s own tags
//! left out (one rule for the range without FROM, a runtime's
//! `tag_pattern`, `--resolve-only` and the GitHub Action's default
//! `from`). Which tags are releases: those `--tag-match`/`--tag-exclude`
//! (the globs of `git describe --match/--exclude`), else the runtime's
//! `tag_pattern`, admit, whose name reads as a version (a pattern's or a
//! glob's literal prefix stripped), through the one listing of
//! [`crate::tags`].

use gix::bstr::{BStr, ByteSlice};
use gix::glob::wildmatch;
use gix::hashtable::HashMap;
use gix::ObjectId;

use super::RangeError;
use crate::source::git::{repo_display, Session};
use crate::source::{Revision, SourceError};
use crate::tags::{self, Admit};
use crate::version::TagVersion;

/// A release tag the range may start from.
#[derive(Clone, Debug)]
struct Release {
    version: TagVersion,
    name: String,
    commit: ObjectId,
}

impl Release {
    /// The higher release of two: by version precedence, then by name (so
    /// the choice among tags of one version does not depend on git's
    /// listing order).
    fn ranks_above(&self, other: &Release) -> bool {
        (self.version.cmp_precedence(&other.version))
            .then_with(|| self.name.cmp(&other.name))
            .is_gt()
    }
}

/// FROM for a range without one, and the note saying how it was chosen:
/// the highest version among the release tags reachable from `to`, its own
/// tags left out (a tagged `to` is compared with the release before it, so
/// that "what did this release do" has an answer); when the working tree
/// is the `to` end, the tags of `to` (HEAD) count.
pub(super) fn latest_tag(
    repo: &Session,
    to: &str,
    worktree: bool,
    tags: &TagFilter,
) -> Result<(String, String), RangeError> {
    let start = Revision::parse(repo, to)?.commit.ok_or_else(|| {
        RangeError::BadRange(format!("`{to}` is a tree, not a commit: name FROM explicitly").into())
    })?;
    let (own, others): (Vec<Release>, Vec<Release>) = (releases(repo, tags)?.into_iter())
        .partition(|release| !worktree && release.commit == start);
    let own = own
        .into_iter()
        .reduce(|a, b| if b.ranks_above(&a) { b } else { a });
    let previous = highest_reachable(repo, start, others, to)?;
    let shown = tags.describe();
    match (own, previous) {
        (None, Some(previous)) => {
            let tag = unambiguous_tag(repo, previous.name);
            let target = if worktree { "the working tree" } else { to };
            Ok((tag.clone(), format!("no range given: comparing {tag}, the highest version of the tags{shown} reachable from {to}, with {target}")))
        }
        (Some(own), Some(previous)) => {
            let (own, previous) = (unambiguous_tag(repo, own.name), unambiguous_tag(repo, previous.name));
            Ok((previous.clone(), format!("no range given: {to} is tagged {own}, so comparing the release before it, {previous}, with {to}")))
        }
        (None, None) => Err(RangeError::NoTag(format!(
            "no tag{shown} is reachable from `{to}` in {} whose name is a version (`v1.2.0`, `1.2.0rc1`; \
             `server-v1.2.0` with --tag-pattern 'server-v*'), so there is no previous release to compare with: \
             name the range (e.g. `fpcheck <commit>..{to}`), or tag the last release",
            repo_display(repo.repo())
        ))),
        (Some(own), None) => Err(RangeError::NoTag(format!(
            "`{to}` is tagged {} and no other tag{shown} naming a version is reachable from it, so there is no previous release: name the range (e.g. `fpcheck <commit>..{to}`)",
            unambiguous_tag(repo, own.name)
        ))),
    }
}

/// The release of `candidates` with the highest version whose commit is
/// reachable from `start` (itself included) through every parent.
///
/// The walk goes back from `start` and stops as soon as the answer is
/// known: when the highest candidate is seen, every other is below it. So
/// the usual case (the latest release an ancestor of `to`) reads only the
/// commits since that release; only a higher version that `to` cannot
/// reach (a newer release on another branch) walks the whole history, as
/// `git tag --merged` does.
fn highest_reachable(
    repo: &Session,
    start: ObjectId,
    mut candidates: Vec<Release>,
    to: &str,
) -> Result<Option<Release>, RangeError> {
    let fail = |e: String| {
        RangeError::Source(SourceError::Repository(
            format!("cannot walk the history of `{to}`: {e}").into(),
        ))
    };
    // The highest of a list by one pass: versions of different kinds
    // (semver, PEP 440) need not order totally, and a sort may panic on an
    // order that is not total; a pass only ever keeps one of them.
    let highest = |among: &mut dyn Iterator<Item = usize>| {
        among.fold(None, |best: Option<usize>, i| match best {
            Some(b) if !candidates[i].ranks_above(&candidates[b]) => Some(b),
            _ => Some(i),
        })
    };
    let Some(top) = highest(&mut (0..candidates.len())) else {
        return Ok(None);
    };
    let mut at: HashMap<ObjectId, Vec<usize>> = HashMap::default();
    for (i, release) in candidates.iter().enumerate() {
        at.entry(release.commit).or_default().push(i);
    }
    // Every reachable release, the walk stopping once the highest of all
    // is seen (nothing can rank above it).
    let mut reachable = Vec::new();
    for info in repo
        .walk(vec![start])
        .all()
        .map_err(|e| fail(e.to_string()))?
    {
        let info = info.map_err(|e| fail(e.to_string()))?;
        if let Some(here) = at.get(&info.id) {
            reachable.extend_from_slice(here);
        }
        if info.id == candidates[top].commit {
            break;
        }
    }
    let best = highest(&mut reachable.into_iter());
    Ok(best.map(|i| candidates.swap_remove(i)))
}

/// The release tags of `filter`, each with the version its name reads as.
fn releases(repo: &Session, filter: &TagFilter) -> Result<Vec<Release>, SourceError> {
    let listing = tags::list(repo, |name| match filter.version_of(name) {
        Some(version) => Admit::Take(version),
        None => Admit::Ignore,
    })?;
    Ok((listing.releases.into_iter())
        .map(|tag| Release {
            version: tag.value,
            name: tag.name,
            commit: tag.commit,
        })
        .collect())
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
/// matching one of its globs; never one matching an `exclude` glob; of
/// those, the ones whose name reads as a version ([`TagFilter::version_of`]).
/// Globs match the name without `refs/tags/`, `*` across `/` as in `git
/// describe`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagFilter {
    /// Globs a release tag must match one of (none: every tag).
    pub include: Vec<String>,
    /// Globs no release tag matches.
    pub exclude: Vec<String>,
    /// The runtime's `tag_pattern` (`server-v*`), when `include` is empty:
    /// only its tags are releases, their versions read with its literal
    /// prefix stripped.
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

    /// The version the release tag `name` names: `None` for a tag the
    /// filter does not admit, or whose name is not a version once the
    /// literal prefix of the pattern (or of the first `include` glob it
    /// matches) is stripped.
    pub fn version_of(&self, name: &str) -> Option<TagVersion> {
        if !self.admits(name.as_bytes().as_bstr()) {
            return None;
        }
        let matches = |glob: &&String| {
            wildmatch(
                glob.as_bytes().as_bstr(),
                name.as_bytes().as_bstr(),
                wildmatch::Mode::empty(),
            )
        };
        let glob = match (&self.pattern, self.include.is_empty()) {
            (Some(pattern), true) => Some(pattern),
            (_, true) => None,
            (_, false) => self.include.iter().find(matches),
        };
        match glob {
            Some(glob) => crate::version::of_glob(name, glob),
            None => crate::version::parse_tag(name),
        }
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

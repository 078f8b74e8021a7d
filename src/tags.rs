//! Which tags are releases: one listing of the repository's tags, each
//! peeled once by one rule, for every command that looks for releases (a
//! range's default FROM, the GitHub Action's, `history`). Each caller
//! says which names it takes ([`Admit`]); only those are peeled, so a tag
//! no caller asks about cannot fail it.
//!
//! The rule for where a taken tag leads: a commit is a release; a tree or
//! a file is not (skipped, "does not point at a commit"); an object missing
//! from the store is not one in this repository (skipped: a commit beyond a
//! shallow clone's boundary, which no walk of its history reaches, or a
//! tree or blob a treeless clone left out); a chain fpcheck refuses to
//! follow (more than 64 nested tags, a cycle) or an object that is there
//! but does not read is an error naming the tag, as that revision would
//! be: it could be the latest release.

use gix::ObjectId;
use serde::Serialize;

use crate::source::git::{peel_tag, tag_refs, Session, TagTarget};
use crate::source::SourceError;

/// A tag left out, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SkippedTag {
    /// The tag.
    pub tag: String,
    /// Why.
    pub why: String,
}

/// What a caller makes of a tag's name, before it is peeled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admit<T> {
    /// Not asked about: left out, and not listed as skipped.
    Ignore,
    /// Left out, for this reason (`not a version`).
    Skip(String),
    /// A candidate release, with what the caller read from its name.
    Take(T),
}

/// A tag that leads to a commit, with what its caller read from its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseTag<T> {
    /// The name, without `refs/tags/`.
    pub name: String,
    /// The commit it leads to.
    pub commit: ObjectId,
    /// The outermost tag object's time (0 without a tagger) for an
    /// annotated tag; `None` for a lightweight or symbolic one.
    pub annotated: Option<i64>,
    /// What [`Admit::Take`] carried.
    pub value: T,
}

/// The tags taken that lead to commits, and the tags left out with why,
/// both in the order git lists the tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagListing<T> {
    /// The candidate releases.
    pub releases: Vec<ReleaseTag<T>>,
    /// The tags skipped, by `admit` or by where they lead.
    pub skipped: Vec<SkippedTag>,
}

/// Lists the repository's tags that `admit` takes and that lead to a
/// commit (see the module's rule).
pub fn list<T>(
    repo: &Session,
    mut admit: impl FnMut(&str) -> Admit<T>,
) -> Result<TagListing<T>, SourceError> {
    let mut listing = TagListing {
        releases: Vec::new(),
        skipped: Vec::new(),
    };
    for tag in tag_refs(repo)? {
        let value = match admit(&tag.name) {
            Admit::Ignore => continue,
            Admit::Skip(why) => {
                listing.skip(tag.name, why);
                continue;
            }
            Admit::Take(value) => value,
        };
        match peel_tag(repo, &tag)? {
            TagTarget::Commit { id, annotated } => listing.releases.push(ReleaseTag {
                name: tag.name,
                commit: id,
                annotated,
                value,
            }),
            TagTarget::NotACommit => listing.skip(
                tag.name,
                "does not point at a commit (a tag of a tree or a file)".into(),
            ),
            TagTarget::Missing => listing.skip(
                tag.name,
                "does not point at a commit in this repository (a shallow clone?)".into(),
            ),
        }
    }
    Ok(listing)
}

impl<T> TagListing<T> {
    fn skip(&mut self, tag: String, why: String) {
        self.skipped.push(SkippedTag { tag, why });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::git::test_git;

    /// Names are judged before anything is peeled, skips keep git's order,
    /// and a release says whether it is annotated (and when).
    #[test]
    fn the_listing_takes_skips_and_ignores_by_name_then_by_target() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| test_git(dir.path(), args);
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        git(&["tag", "a"]);
        git(&["tag", "-a", "b", "-m", "b"]);
        git(&["tag", "c", "HEAD^{tree}"]);
        git(&["tag", "d"]);
        git(&["tag", "e"]);
        git(&["symbolic-ref", "refs/tags/f", "refs/tags/b"]);
        let repo = Session::open(Some(dir.path())).unwrap();
        let head = repo.resolve("HEAD").unwrap();
        let listing = list(&repo, |name| match name {
            "d" => Admit::Skip("not wanted".into()),
            "e" => Admit::Ignore,
            _ => Admit::Take(name.len()),
        })
        .unwrap();
        let released: Vec<(&str, ObjectId, bool)> = (listing.releases.iter())
            .map(|t| (t.name.as_str(), t.commit, t.annotated.is_some()))
            .collect();
        assert_eq!(
            released,
            [("a", head, false), ("b", head, true), ("f", head, false)]
        );
        let skipped: Vec<(&str, &str)> = (listing.skipped.iter())
            .map(|s| (s.tag.as_str(), s.why.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [
                (
                    "c",
                    "does not point at a commit (a tag of a tree or a file)"
                ),
                ("d", "not wanted"),
            ]
        );
    }
}

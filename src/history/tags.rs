//! The releases of a history: the tags that parse as versions, in
//! precedence order, tags on one commit folded, tags of equal precedence
//! ordered by commit ancestry.

use std::collections::HashMap;

use gix::ObjectId;

use super::{HistoryError, HistoryOptions, SkippedTag};
use crate::pair::Pair;
use crate::source::git::Session;
use crate::tags::Admit;
use crate::warning::{Code, Warning};

/// A candidate release tag, before it is read.
#[derive(Clone, Debug)]
pub(super) struct Tag {
    pub(super) name: String,
    pub(super) aliases: Vec<String>,
    pub(super) version: crate::version::TagVersion,
    pub(super) commit: ObjectId,
}

/// Parses a tag name as a version: semver with an optional `v`, one or two
/// dotted numbers (`v7.10` is 7.10.0), or PEP 440 (`v2.0.0rc1`).
pub fn tag_version(name: &str) -> Option<crate::version::TagVersion> {
    crate::version::parse_tag(name)
}

/// Lists the release tags in precedence order, folding tags on one commit:
/// the tags of `--tags GLOB` (every tag without it) that name a version,
/// pre-releases left out with `--skip-prereleases`, through the one
/// listing of [`crate::tags`] (which says what a tag that leads to no
/// commit is).
pub(super) fn release_tags(
    repo: &Session,
    opts: &HistoryOptions,
) -> Result<(Vec<Tag>, Vec<SkippedTag>), HistoryError> {
    let listing = crate::tags::list(repo, |name| admit(opts, name))?;
    let mut found: Vec<Tag> = (listing.releases.into_iter())
        .map(|t| Tag {
            name: t.name,
            aliases: Vec::new(),
            version: t.value,
            commit: t.commit,
        })
        .collect();
    found.sort_by(|a, b| {
        a.version
            .cmp_precedence(&b.version)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok((fold_aliases(found), listing.skipped))
}

/// Whether tag `name` is a release of the history, and its version.
fn admit(opts: &HistoryOptions, name: &str) -> Admit<crate::version::TagVersion> {
    if let Some(glob) = &opts.tags {
        if !gix::glob::wildmatch(
            glob.as_str().into(),
            name.into(),
            gix::glob::wildmatch::Mode::empty(),
        ) {
            return Admit::Ignore;
        }
    }
    let version = match &opts.tags {
        Some(glob) => crate::version::of_glob(name, glob),
        None => tag_version(name),
    };
    match version {
        None => Admit::Skip("not a version".into()),
        Some(v) if opts.skip_prereleases && v.is_prerelease() => Admit::Skip("pre-release".into()),
        Some(v) => Admit::Take(v),
    }
}

/// Tags on one commit are one release: the highest precedence names it.
fn fold_aliases(sorted: Vec<Tag>) -> Vec<Tag> {
    let mut by_commit: HashMap<ObjectId, usize> = HashMap::new();
    let mut out: Vec<Tag> = Vec::new();
    for tag in sorted {
        match by_commit.get(&tag.commit) {
            Some(&i) => {
                let older = std::mem::replace(&mut out[i], tag);
                let keep = &mut out[i];
                keep.aliases.extend(older.aliases);
                keep.aliases.push(older.name);
            }
            None => {
                by_commit.insert(tag.commit, out.len());
                out.push(tag);
            }
        }
    }
    // A folded release moves to its newest tag's place in the order.
    out.sort_by(|a, b| {
        a.version
            .cmp_precedence(&b.version)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// Reorders each run of releases whose versions have equal precedence
/// (`v1.0.0` and `1.0.0`, `1.0.0+a` and `1.0.0+b`: semver cannot order
/// them) by commit ancestry, oldest first, and warns: ordered by name, the
/// history could step backwards and compare the wrong pair of trees.
/// Releases on unrelated commits keep their order by name, with a warning
/// that says so.
pub(super) fn order_equal_versions(
    repo: &Session,
    sorted: Vec<Tag>,
    warnings: &mut Vec<Warning>,
) -> Vec<Tag> {
    let mut out: Vec<Tag> = Vec::with_capacity(sorted.len());
    let mut rest = sorted.into_iter().peekable();
    while let Some(first) = rest.next() {
        let mut run = vec![first];
        while let Some(next) = rest.next_if(|t| t.version.cmp_precedence(&run[0].version).is_eq()) {
            run.push(next);
        }
        if run.len() > 1 {
            out.extend(order_by_ancestry(repo, run, warnings));
        } else {
            out.extend(run);
        }
    }
    out
}

/// The most releases of one precedence ordered by ancestry: each order
/// takes a merge base per pair.
const MAX_ORDERED: usize = 32;

/// `run` (in name order, each on its own commit) ordered so that no release
/// comes after a release whose commit descends from its own.
fn order_by_ancestry(repo: &Session, mut run: Vec<Tag>, warnings: &mut Vec<Warning>) -> Vec<Tag> {
    let ancestor = |a: ObjectId, b: ObjectId| a != b && repo.is_ancestor(a, b);
    if run.len() > MAX_ORDERED {
        let names: Vec<String> = run.iter().map(|t| format!("`{}`", t.name)).collect();
        warnings.push(Warning::new(
            Code::EqualVersionTags,
            format!(
                "{} tags ({}) name versions of equal precedence ({}) on different commits, too \
                 many to order by commit ancestry: they keep their order by name, so verdicts \
                 between them may compare releases that do not follow each other; give each \
                 release its own version",
                run.len(),
                names.join(", "),
                run[0].version
            ),
        ));
        return run;
    }
    let mut unrelated: Vec<(String, String)> = Vec::new();
    for (i, a) in run.iter().enumerate() {
        for b in &run[i + 1..] {
            if !ancestor(a.commit, b.commit) && !ancestor(b.commit, a.commit) {
                unrelated.push((a.name.clone(), b.name.clone()));
            }
        }
    }
    let mut ordered = Vec::with_capacity(run.len());
    while !run.is_empty() {
        // The first (by name) release that no other remaining one precedes.
        let i = (0..run.len())
            .find(|&i| !run.iter().any(|o| ancestor(o.commit, run[i].commit)))
            .unwrap_or(0);
        ordered.push(run.remove(i));
    }
    let names: Vec<String> = ordered.iter().map(|t| format!("`{}`", t.name)).collect();
    let mut message = format!(
        "tags {} name versions of equal precedence ({}) on different commits: their versions cannot \
         order them, so they are ordered by commit ancestry, oldest first",
        names.join(", "),
        ordered[0].version
    );
    if !unrelated.is_empty() {
        let pairs: Vec<String> = unrelated
            .iter()
            .map(|(a, b)| format!("`{a}` and `{b}`"))
            .collect();
        message.push_str(&format!(
            "; {} are on unrelated commits and keep their order by name, so the verdict \
             between them compares releases that do not follow each other",
            pairs.join(", ")
        ));
    }
    message.push_str("; give each release its own version");
    warnings.push(Warning::new(Code::EqualVersionTags, message));
    ordered
}

pub(super) fn restrict(tags: Vec<Tag>, span: &Pair<String>) -> Result<Vec<Tag>, HistoryError> {
    let find = |name: &str| {
        tags.iter()
            .find(|t| t.name == name || t.aliases.iter().any(|a| a == name))
            .map(|t| t.version.clone())
            .ok_or_else(|| {
                HistoryError::UnknownTag(format!(
                    "`{name}` is not a release tag of this repository (see `git tag --list`)"
                ))
            })
    };
    let (lo, hi) = (find(&span.from)?, find(&span.to)?);
    if lo.cmp_precedence(&hi).is_gt() {
        return Err(HistoryError::Usage(format!(
            "`{}..{}` runs backwards ({lo} comes after {hi}): write the older release first",
            span.from, span.to
        )));
    }
    Ok(tags
        .into_iter()
        .filter(|t| t.version.cmp_precedence(&lo).is_ge() && t.version.cmp_precedence(&hi).is_le())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_versions() {
        let v = |a, b, c| {
            Some(crate::version::TagVersion::Semver(semver::Version::new(
                a, b, c,
            )))
        };
        assert_eq!(tag_version("v7.10.0"), v(7, 10, 0));
        assert_eq!(tag_version("7.10"), v(7, 10, 0));
        assert_eq!(
            tag_version("v2.0.0-rc.1").map(|v| v.to_string()),
            Some("2.0.0-rc.1".to_string())
        );
        assert_eq!(
            tag_version("v2.0.0rc1").map(|v| v.to_string()),
            Some("2.0.0rc1".to_string())
        );
        assert_eq!(tag_version("release-1"), None);
    }
}

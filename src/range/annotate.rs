//! A range's runtime changes classified ([`crate::classify`]): each gets
//! its kind, and the analysis its `avoidable` flag.

use std::path::Path;

use crate::classify::{self, Bytes, KindCache};
use crate::source::Revision;

use super::Analysis;

/// Classifies the runtime changes of a range report and sets `avoidable`.
/// Each side's bytes come from the commit's tree (or the working tree for
/// `--worktree`), by the path from the top of the repository. Remembers
/// nothing: see [`annotate_with`].
pub fn annotate(repo: &gix::Repository, analysis: &mut Analysis) {
    annotate_with(repo, analysis, &mut KindCache::none());
}

/// [`annotate`], with the kinds remembered in `kinds` and the new ones put
/// there.
pub(crate) fn annotate_with(
    repo: &gix::Repository,
    analysis: &mut Analysis,
    kinds: &mut KindCache,
) {
    // Only a modified Python file is read: with none (the everyday
    // unchanged range, or only data files changed), no end is resolved
    // again, and a warm range opens no pack.
    let compares = classify::compares_files(&analysis.changes.runtime);
    let from = if !compares {
        Bytes::Tree(None)
    } else {
        side_tree(
            repo,
            analysis.from.commit.as_deref(),
            &analysis.from.reference,
        )
    };
    let to = if !compares {
        Bytes::Tree(None)
    } else if analysis.to.worktree {
        Bytes::Worktree(repo.workdir().map(Path::to_path_buf))
    } else {
        side_tree(repo, analysis.to.commit.as_deref(), &analysis.to.reference)
    };
    classify::classify_changes(repo, (&from, &to), &mut analysis.changes.runtime, kinds);
    analysis.avoidable = classify::avoidable(
        analysis.restart_required,
        analysis.reason,
        analysis.to.force_restart,
        classify::settings_changed(analysis.settings_check.is_some(), &analysis.warnings),
        &analysis.changes,
    );
}

/// The bytes of one end: the tree of its commit (by the id the report
/// names, else its reference).
fn side_tree(repo: &gix::Repository, commit: Option<&str>, reference: &str) -> Bytes {
    Bytes::Tree(
        Revision::parse(repo, commit.unwrap_or(reference))
            .ok()
            .map(|r| r.tree),
    )
}

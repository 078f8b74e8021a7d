//! A range's runtime changes classified ([`crate::classify`]): each gets
//! its kind, and the analysis its `avoidable` flag.

use std::path::Path;

use crate::classify::{self, Bytes, KindCache};
use crate::pair::Pair;
use crate::source::git::Session;

use super::Analysis;

/// Classifies the runtime changes of a range report and sets `avoidable`.
/// Each side's bytes come from the commit's tree (or the working tree for
/// `--worktree`), by the path from the top of the repository. Remembers
/// nothing: see [`annotate_with`].
pub fn annotate(repo: &Session, analysis: &mut Analysis) {
    annotate_with(repo, analysis, &mut KindCache::none());
}

/// [`annotate`], with the kinds remembered in `kinds` and the new ones put
/// there.
pub(crate) fn annotate_with(repo: &Session, analysis: &mut Analysis, kinds: &mut KindCache) {
    // Only a modified Python file is read: with none (the everyday
    // unchanged range, or only data files changed), no end is resolved
    // again, and a warm range opens no pack.
    let compares = classify::compares_files(&analysis.changes.runtime);
    // The trees the analysis read, not their names resolved again.
    let from = Bytes::Tree(analysis.from.tree.filter(|_| compares));
    let to = if compares && analysis.to.worktree {
        Bytes::Worktree(repo.repo().workdir().map(Path::to_path_buf))
    } else {
        Bytes::Tree(analysis.to.tree.filter(|_| compares))
    };
    classify::classify_changes(
        repo,
        Pair::new(&from, &to),
        &mut analysis.changes.runtime,
        kinds,
    );
    analysis.avoidable = classify::avoidable(
        analysis.restart_required,
        analysis.reason,
        analysis.to.force_restart,
        classify::settings_changed(analysis.settings_check.is_some(), &analysis.warnings),
        &analysis.changes,
    );
    analysis.advice = advise(repo, analysis);
}

/// The advice of a range between two commits (the working tree's is not
/// read: see docs/advice.md).
fn advise(repo: &Session, analysis: &Analysis) -> Vec<crate::advice::Item> {
    let (Some(from), Some(to)) = (analysis.from.tree, analysis.to.tree) else {
        return Vec::new();
    };
    if analysis.to.worktree {
        return Vec::new();
    }
    let avoidable = classify::avoidable_by(
        analysis.restart_required,
        analysis.reason,
        analysis.to.force_restart,
        classify::settings_changed(analysis.settings_check.is_some(), &analysis.warnings),
        &analysis.changes,
    );
    let version_files = (analysis.changes.runtime.iter())
        .filter(|c| c.change_kind == Some(classify::ChangeKind::Version))
        .map(|c| c.path.clone())
        .collect();
    let update = crate::advice::Update {
        trees: Pair::new(from, to),
        root: &analysis.settings.spec.root,
        runtime: crate::advice::Runtime::Rules(&analysis.settings.spec.rules),
        restart_required: analysis.restart_required,
        avoidable,
        version_files,
        surface: true,
        inflated: &|_| None,
    };
    crate::advice::advise(repo, &update, &mut crate::advice::Memo::default())
}

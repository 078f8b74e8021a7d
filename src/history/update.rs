//! Each update of a history decided as the range decides `from..to`, its
//! cosmetic-change advice, and the summary of them all.

use super::*;

fn release_version(info: &ReleaseInfo) -> ReleaseVersion {
    ReleaseVersion::choose(
        info.version.as_deref(),
        info.pyproject_version.as_deref(),
        Some(&info.tag_version),
    )
    .unwrap_or_else(|| ReleaseVersion::of(None, &info.tag_version))
}

pub(super) fn facts(info: &ReleaseInfo) -> SideFacts {
    info.reading.facts(
        info.force_restart,
        crate::fingerprint::available(&info.fingerprint).map(String::from),
    )
}

/// One update, decided as the range decides `from..to`: each release with
/// its own settings, the older release without a fingerprint when the
/// update declares the runtime (again), and, when the settings changed, the `to` release
/// also read with the `from` release's settings (`cross`), fail-closed.
pub(super) fn step(
    reads: Pair<&Read>,
    plans: Pair<&Plan>,
    cross: Option<(&Read, Option<&Read>)>,
) -> Step {
    let Pair { from, to } = reads;
    let mut warnings = borrowed_warnings(plans);
    // Against the older release's own fingerprint when it was read with
    // other settings for the cross-check (`base`).
    let checked_from = cross
        .and_then(|(_, base)| base)
        .map_or(from.info.fingerprint.as_str(), |b| {
            b.info.fingerprint.as_str()
        });
    let settings_check = cross.map(|(c, _)| {
        SettingsCheck::new(
            available(&c.info.fingerprint),
            c.info.unavailable_reason.clone(),
            available(checked_from).as_deref(),
        )
    });
    let decided = verdict::decide_update(
        &facts(&from.info),
        &facts(&to.info),
        verdict::Policy {
            undeclared: plans.from.borrowed.is_some() || plans.to.borrowed.is_some(),
            settings_check: settings_check.as_ref(),
            release_changed: crate::version::releases_differ_without_version_file(
                Some(&release_version(&from.info)),
                Some(&release_version(&to.info)),
            ),
        },
    );
    warnings.extend(crate::range::settings_warnings(
        Pair::new(from.info.tag.as_str(), to.info.tag.as_str()),
        Pair::new(&plans.from.end, &plans.to.end),
        crate::fingerprint::short(checked_from).unwrap_or("unavailable"),
        (settings_check.as_ref(), &decided),
    ));
    warnings.extend(crate::range::pyproject_backwards(
        Some(&release_version(&from.info)),
        Some(&release_version(&to.info)),
    ));
    let d = decided.decision;
    Step {
        from: from.info.tag.clone(),
        to: to.info.tag.clone(),
        from_version: from.info.version.clone(),
        to_version: to.info.version.clone(),
        release_version_changed: release_version_changed(&from.info, &to.info),
        from_release: release_version(&from.info),
        to_release: release_version(&to.info),
        from_fingerprint: from.info.fingerprint.clone(),
        to_fingerprint: to.info.fingerprint.clone(),
        restart_required: d.restart_required,
        reason: d.reason,
        marker_reason: d.updater.marker_reason.map(|r| r.as_str()),
        version_changed: d.version_changed,
        runtime_files_changed: changes::between_selections(
            &from.ids,
            &to.ids,
            Pair::new(&from.root, &to.root),
        )
        .runtime
        .len(),
        changed_anything: from.tree != to.tree,
        avoidable: None,
        avoidable_by: None,
        advice: Vec::new(),
        settings_check,
        warnings,
        witness: crate::witness::Witness::default(),
    }
}

/// A fingerprint as the settings check records it: none when unavailable.
fn available(fp: &str) -> Option<String> {
    crate::fingerprint::available(fp).map(String::from)
}

/// The warnings of an update with a release that does not declare the
/// runtime: which settings it was read with, so that a reader knows what
/// its fingerprint means.
fn borrowed_warnings(plans: Pair<&Plan>) -> Vec<Warning> {
    let mut warnings = Vec::new();
    let declares_again = Plan::declares_again(plans.from, plans.to);
    if let Some(b) = plans.from.borrowed.as_ref().filter(|_| declares_again) {
        let whose = if b.from_later {
            "the settings of the release that declares it next"
        } else {
            "the settings of the last release that declared it (cross-checked when they differ from the new ones)"
        };
        warnings.push(Warning::new(
            Code::RuntimeNotDeclared,
            format!(
                "{}: that release is read with {whose} and compared as usual (an unavailable fingerprint counts as a restart)",
                b.why
            ),
        ));
    }
    if let Some(b) = &plans.to.borrowed {
        warnings.push(Warning::new(
            Code::RuntimeNotDeclared,
            format!(
                "{}: that release is read with the settings of the last release that declares it, as the installed gate reads it after the update (an unavailable fingerprint counts as a restart)",
                b.why
            ),
        ));
    }
    warnings
}

/// Whether the releases' versions differ: by precedence, or as text when
/// precedence cannot order them.
fn release_version_changed(from: &ReleaseInfo, to: &ReleaseInfo) -> bool {
    release_version(from).differs(&release_version(to))
}

/// Marks the avoidable restarts ([`crate::classify::avoidable_updates`]
/// decides which updates are looked at, and how the work is shared).
pub(super) fn classify_steps(
    repo: &crate::source::git::Session,
    reads: &[Read],
    steps: &mut [Step],
    threads: usize,
    (blobs, kinds, stats): (&Blobs, &mut crate::classify::KindCache, &mut Stats),
) {
    let updates: Vec<crate::classify::Update<'_>> = steps
        .iter()
        .zip(reads.windows(2))
        .map(|(step, w)| crate::classify::Update {
            candidate: crate::classify::may_be_avoidable(
                step.restart_required,
                step.reason,
                w[1].info.force_restart,
                crate::classify::settings_changed(step.settings_check.is_some(), &step.warnings),
            ),
            trees: Pair::new(w[0].tree, w[1].tree),
            ids: Pair::new(&w[0].ids, &w[1].ids),
            // Changes are sorted by the newer release's settings.
            root: w[1].root.as_str(),
        })
        .collect();
    let inflated = |id| blobs.get(id);
    let outcome = crate::classify::avoidable_updates(repo, (&updates, &inflated), threads, kinds);
    stats.classify_parsed = outcome.parsed;
    stats.classify_cached = outcome.cached;
    for (step, a) in steps.iter_mut().zip(outcome.avoidable) {
        step.avoidable = Some(a == Some(crate::classify::Avoidable::Cosmetic));
        step.avoidable_by = a;
    }
    let mut memo = crate::advice::Memo::default();
    for (step, w) in steps.iter_mut().zip(reads.windows(2)) {
        step.advice = step_advice(repo, step, (&w[0], &w[1]), (&inflated, &mut memo));
    }
}

/// The advice of one update: the runtime's dependencies and data files on
/// a free release, the version files of a restart caused by them.
fn step_advice(
    repo: &crate::source::git::Session,
    step: &Step,
    (from, to): (&Read, &Read),
    (inflated, memo): (crate::advice::Inflated<'_>, &mut crate::advice::Memo),
) -> Vec<crate::advice::Item> {
    let version = step.avoidable_by == Some(crate::classify::Avoidable::Version);
    if (step.restart_required && !version) || from.tree == to.tree {
        return Vec::new();
    }
    let version_files = if version {
        changes::between_selections(&from.ids, &to.ids, Pair::new(&from.root, &to.root))
            .runtime
            .into_iter()
            .map(|c| c.path)
            .collect()
    } else {
        Vec::new()
    };
    let update = crate::advice::Update {
        trees: Pair::new(from.tree, to.tree),
        root: &to.root,
        runtime: crate::advice::Runtime::Selection(&to.ids),
        restart_required: step.restart_required,
        avoidable: step.avoidable_by,
        version_files,
        surface: false,
        inflated,
    };
    crate::advice::advise(repo, &update, memo)
}

fn both_fingerprinted(s: &Step) -> bool {
    crate::fingerprint::available(&s.from_fingerprint).is_some()
        && crate::fingerprint::available(&s.to_fingerprint).is_some()
}

/// The warning of a history where most releases have no fingerprint: its
/// verdicts say little, and the likely cause is a root that is not there.
pub(super) fn mostly_unavailable(summary: &Summary, root: &str) -> Option<Warning> {
    let (none, all) = (summary.unavailable_fingerprints, summary.releases);
    (all > 0 && none * 2 > all).then(|| {
        Warning::new(
            Code::FingerprintsMostlyUnavailable,
            format!(
                "{none} of {all} releases have no fingerprint, so their updates say little and none counts as a saved restart: the runtime root `{root}` is likely missing at those releases; pass --root DIR (the directory your server runs from) or run `fpcheck init` to propose one"
            ),
        )
    })
}

pub(super) fn summarise(reads: &[Read], steps: &[Step]) -> Summary {
    let restarts = steps.iter().filter(|s| s.restart_required).count();
    Summary {
        releases: reads.len(),
        updates: steps.len(),
        restarts_forced: restarts,
        free_releases: steps.len() - restarts,
        forced_only_by_force_restart: steps.iter().filter(|s| s.reason == Reason::Forced).count(),
        unavailable_fingerprints: reads
            .iter()
            .filter(|r| crate::fingerprint::available(&r.info.fingerprint).is_none())
            .count(),
        // No fingerprint, no saving: a free update counts only when both
        // ends were fingerprinted.
        restarts_saved: steps
            .iter()
            .filter(|s| s.release_version_changed && !s.restart_required)
            .filter(|s| both_fingerprinted(s))
            .count(),
        versions_from_tags: reads.iter().filter(|r| r.info.version.is_none()).count(),
        avoidable_restarts: steps
            .iter()
            .map(|s| s.avoidable)
            .try_fold(0, |n, a| a.map(|a| n + usize::from(a))),
        avoidable_version_restarts: steps.iter().try_fold(0, |n, s| {
            s.avoidable?;
            Some(n + usize::from(s.avoidable_by == Some(crate::classify::Avoidable::Version)))
        }),
        possible_missed_restarts: steps.iter().try_fold(0, |n, s| {
            s.avoidable?;
            Some(n + usize::from(crate::advice::has_missed_restart(&s.advice)))
        }),
    }
}

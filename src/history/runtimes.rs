//! Several runtimes in one run: one history per runtime
//! declared as `[runtimes.NAME]` in any release, from one pass of the
//! workers, as `fpcheck A..B` does for several runtimes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::HistoryError;
use super::{
    listed, records, run, settings, History, HistoryOptions, Record, Stats, SCHEMA_VERSION,
};
use crate::config;
use crate::source::git::repo_display;
use crate::source::git::Session;

/// What a run answers: one runtime (the single-runtime report) or several.
#[derive(Clone, Debug)]
pub enum HistoryOutcome {
    /// A single runtime: the config declares one, or `--runtime` chose one.
    One(Box<History>),
    /// Several runtimes.
    Many(RuntimesHistory),
}

impl HistoryOutcome {
    /// Any update of any runtime forced a restart (`--exit-code`).
    pub fn restart_required(&self) -> bool {
        match self {
            HistoryOutcome::One(h) => h.record.restart_required(),
            HistoryOutcome::Many(m) => m.restart_required,
        }
    }

    /// git's own checkout disagreed with a free release of any runtime.
    pub fn witness_disagreed(&self) -> bool {
        let record = |r: &super::Record| r.updates.iter().any(|s| s.witness.disagreed());
        match self {
            HistoryOutcome::One(h) => record(&h.record),
            HistoryOutcome::Many(m) => m.runtimes.iter().any(|r| record(&r.record)),
        }
    }
}

/// The history of several runtimes: `--format json` prints exactly this.
#[derive(Clone, Debug, Serialize)]
pub struct RuntimesHistory {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The repository.
    pub repo: String,
    /// The repository's name, fit to publish (see [`super::History::name`]).
    pub name: String,
    /// Any update of any runtime forced a restart.
    pub restart_required: bool,
    /// `server: 2 of 5 updates restarted; worker: 0 of 5 updates restarted`.
    pub summary: String,
    /// One single-runtime history per runtime, in name order.
    pub runtimes: Vec<NamedRecord>,
    /// How the whole run went (blobs shared by the runtimes read once).
    pub stats: Stats,
}

/// One runtime's history with its name.
#[derive(Clone, Debug, Serialize)]
pub struct NamedRecord {
    /// The `NAME` of `[runtimes.NAME]`.
    pub name: String,
    /// Exactly the single-runtime history, less the repository's names.
    #[serde(flatten)]
    pub record: Record,
}

/// Runs the history for the runtimes `chosen` (`--runtime`, repeatable), or
/// every runtime declared in any release when none is chosen. One chosen
/// runtime, or configs declaring at most one, give [`HistoryOutcome::One`]:
/// exactly the single-runtime history. As `fpcheck A..B` does for several
/// runtimes (`crate::range::analyse_runtimes`).
///
/// Without `--tags`, each runtime's releases are the tags of its
/// `tag_pattern` (`--tag-pattern` over the key of the `fpcheck.toml`
/// committed at HEAD, or of `--config`): the tags must be chosen before
/// any release's own file is read, and HEAD's file is the one that names
/// today's tags. Runtimes of one pattern share one pass of the workers.
pub fn run_runtimes(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    chosen: &[String],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<HistoryOutcome, HistoryError> {
    let chosen = config::choose::dedupe(chosen);
    if opts.tags.is_some() {
        return same_tags(repo, request, opts, &chosen, progress);
    }
    let head = head_config(repo, request)?;
    let pattern_of = |name: Option<&String>| {
        let request = request.for_runtime(name.map(String::as_str));
        request.tag_pattern(head.as_ref())
    };
    let with_pattern = |pattern: Option<String>| HistoryOptions {
        tags: pattern,
        ..opts.clone()
    };
    if let [name] = chosen.as_slice() {
        let opts = with_pattern(pattern_of(Some(name)));
        return same_tags(repo, request, &opts, &chosen, progress);
    }
    // Runtimes declared at HEAD with a pattern of their own.
    let declared_at_head = match (&request.origin, &head) {
        (config::SettingsOrigin::File { file, .. }, _) | (_, Some(file)) => Some(file),
        _ => None,
    };
    let patterned: BTreeMap<String, String> = match declared_at_head {
        Some(file) if request.overrides.tag_pattern.is_none() && file.runtimes.len() > 1 => file
            .runtimes
            .keys()
            .filter_map(|n| Some((n.clone(), pattern_of(Some(n))?)))
            .collect(),
        _ => BTreeMap::new(),
    };
    if patterned.is_empty() {
        let opts = with_pattern(pattern_of(None));
        return same_tags(repo, request, &opts, &chosen, progress);
    }
    by_pattern(repo, request, opts, &chosen, &patterned, progress)
}

/// The committed `fpcheck.toml` at HEAD when each release's own file
/// applies (`--config` names its own), `None` when HEAD is unborn or has
/// none.
fn head_config(
    repo: &Session,
    request: &config::SettingsRequest,
) -> Result<Option<config::ConfigFile>, HistoryError> {
    if !matches!(request.origin, config::SettingsOrigin::Committed) {
        return Ok(None);
    }
    let Ok(head) = repo.repo().head_id() else {
        return Ok(None);
    };
    let Ok(commit) = repo.commit(head.detach(), "the commit of HEAD", "HEAD") else {
        return Ok(None);
    };
    let tree = commit.tree_id().map_err(|e| {
        crate::source::SourceError::Repository(format!("cannot read HEAD's tree: {e}").into())
    })?;
    Ok(config::at_revision(repo, tree.detach(), "HEAD")?)
}

/// Several runtimes, some of them with a tag pattern: one listing of the
/// releases per pattern (and one of every version tag for the runtimes
/// without one), each runtime's history from its own.
fn by_pattern(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    chosen: &[String],
    patterned: &BTreeMap<String, String>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<HistoryOutcome, HistoryError> {
    let plain = listed(repo, request, opts)?;
    let mut all = settings::declared_anywhere(request, &plain.committed);
    all.extend(patterned.keys().cloned());
    config::choose::check(
        chosen,
        &all,
        "in any release",
        request.overrides.root.is_some(),
    )
    .map_err(HistoryError::Config)?;
    let wanted = |n: &String| chosen.is_empty() || chosen.contains(n);
    let mut groups: BTreeMap<Option<&String>, Vec<Option<String>>> = BTreeMap::new();
    for name in all.iter().filter(|n| wanted(n)) {
        groups
            .entry(patterned.get(name))
            .or_default()
            .push(Some(name.clone()));
    }
    let mut runtimes = Vec::new();
    let mut blobs_read = 0;
    for (pattern, names) in groups {
        let group = match pattern {
            None => records(repo, request, opts, &names, &plain, progress)?,
            Some(p) => {
                let opts = HistoryOptions {
                    tags: Some(p.clone()),
                    ..opts.clone()
                };
                let listed = listed(repo, request, &opts)?;
                records(repo, request, &opts, &names, &listed, progress)?
            }
        };
        blobs_read += group.first().map_or(0, |(_, r)| r.stats.blobs_read);
        runtimes.extend(group.into_iter().map(|(name, record)| NamedRecord {
            name: name.unwrap_or_default(),
            record,
        }));
    }
    runtimes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(HistoryOutcome::Many(many(repo, runtimes, blobs_read)))
}

/// [`run_runtimes`] with one set of release tags for every runtime.
fn same_tags(
    repo: &Session,
    request: &config::SettingsRequest,
    opts: &HistoryOptions,
    chosen: &[String],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<HistoryOutcome, HistoryError> {
    let one = |name: Option<&String>, listed: Option<&super::Listed>| {
        let request = request.for_runtime(name.map(String::as_str));
        match listed {
            Some(listed) => super::one(repo, &request, opts, listed, progress),
            None => run(repo, &request, opts, progress),
        }
        .map(|h| HistoryOutcome::One(Box::new(h)))
    };
    if chosen.len() == 1 {
        return one(chosen.first(), None);
    }
    let listed = listed(repo, request, opts)?;
    let all = settings::declared_anywhere(request, &listed.committed);
    if chosen.is_empty() && all.len() <= 1 {
        return one(None, Some(&listed));
    }
    config::choose::check(
        chosen,
        &all,
        "in any release",
        request.overrides.root.is_some(),
    )
    .map_err(HistoryError::Config)?;
    let names: Vec<Option<String>> = all
        .into_iter()
        .filter(|n| chosen.is_empty() || chosen.contains(n))
        .map(Some)
        .collect();
    let records = records(repo, request, opts, &names, &listed, progress)?;
    let runtimes: Vec<NamedRecord> = records
        .into_iter()
        .map(|(name, record)| NamedRecord {
            name: name.unwrap_or_default(),
            record,
        })
        .collect();
    let blobs_read = runtimes.first().map_or(0, |r| r.record.stats.blobs_read);
    Ok(HistoryOutcome::Many(many(repo, runtimes, blobs_read)))
}

/// The report of several runtimes' histories; `blobs_read` counts each
/// blob once however many runtimes read it.
fn many(repo: &Session, runtimes: Vec<NamedRecord>, blobs_read: usize) -> RuntimesHistory {
    let mut stats = runtimes.iter().fold(Stats::default(), |mut total, r| {
        total.cached += r.record.stats.cached;
        total.reused += r.record.stats.reused;
        total.hashed += r.record.stats.hashed;
        total.classify_parsed += r.record.stats.classify_parsed;
        total.classify_cached += r.record.stats.classify_cached;
        total
    });
    stats.blobs_read = blobs_read;
    RuntimesHistory {
        schema_version: SCHEMA_VERSION,
        repo: repo_display(repo.repo()),
        name: super::repo_name(repo),
        restart_required: runtimes.iter().any(|r| r.record.restart_required()),
        summary: runtimes_summary(&runtimes),
        runtimes,
        stats,
    }
}

/// `server: 2 of 5 updates restarted; worker: 0 of 5 updates restarted`,
/// names exact (JSON keeps them so); each display escapes the line once.
pub fn runtimes_summary(runtimes: &[NamedRecord]) -> String {
    runtimes
        .iter()
        .map(|r| {
            let s = &r.record.summary;
            format!(
                "{}: {} of {} restarted",
                r.name,
                s.restarts_forced,
                if s.updates == 1 {
                    "1 update".to_string()
                } else {
                    format!("{} updates", s.updates)
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

//! Several runtimes in one run (issue 16): one history per runtime
//! declared as `[runtimes.NAME]` in any release, from one pass of the
//! workers, as `fpcheck A..B` does for several runtimes.

use serde::Serialize;

use super::HistoryError;
use super::{listed, records, run, settings, History, Options, Record, Stats, SCHEMA_VERSION};
use crate::config;
use crate::source::git::repo_display;
use crate::source::git::Session;

/// What a run answers: one runtime (the single-runtime report) or several.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// A single runtime: the config declares one, or `--runtime` chose one.
    One(Box<History>),
    /// Several runtimes.
    Many(RuntimesHistory),
}

impl Outcome {
    /// Any update of any runtime forced a restart (`--exit-code`).
    pub fn restart_required(&self) -> bool {
        match self {
            Outcome::One(h) => h.record.restart_required(),
            Outcome::Many(m) => m.restart_required,
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
/// runtime, or configs declaring at most one, give [`Outcome::One`]:
/// exactly the single-runtime history. As `fpcheck A..B` does for several
/// runtimes (`crate::range::analyse_runtimes`).
pub fn run_runtimes(
    repo: &Session,
    request: &config::Request,
    opts: &Options,
    chosen: &[String],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Outcome, HistoryError> {
    let one = |name: Option<&String>, listed: Option<&super::Listed>| {
        let mut request = request.clone();
        request.flags.runtime = name.cloned();
        match listed {
            Some(listed) => super::one(repo, &request, opts, listed, progress),
            None => run(repo, &request, opts, progress),
        }
        .map(|h| Outcome::One(Box::new(h)))
    };
    let chosen = config::choose::dedupe(chosen);
    if chosen.len() == 1 {
        return one(chosen.first(), None);
    }
    let listed = listed(repo, request, opts)?;
    let all = settings::declared_anywhere(request, &listed.committed);
    if chosen.is_empty() && all.len() <= 1 {
        return one(None, Some(&listed));
    }
    config::choose::check(
        &chosen,
        &all,
        "in any release",
        request.flags.root.is_some(),
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
    let mut stats = runtimes.iter().fold(Stats::default(), |mut total, r| {
        total.cached += r.record.stats.cached;
        total.reused += r.record.stats.reused;
        total.hashed += r.record.stats.hashed;
        total.classify_parsed += r.record.stats.classify_parsed;
        total.classify_cached += r.record.stats.classify_cached;
        total
    });
    stats.blobs_read = runtimes.first().map_or(0, |r| r.record.stats.blobs_read);
    Ok(Outcome::Many(RuntimesHistory {
        schema_version: SCHEMA_VERSION,
        repo: repo_display(repo),
        name: super::repo_name(repo),
        restart_required: runtimes.iter().any(|r| r.record.restart_required()),
        summary: runtimes_summary(&runtimes),
        runtimes,
        stats,
    }))
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

//! Monorepos: every runtime declared as `[runtimes.NAME]` analysed in one
//! run, one verdict each plus the overall answer (any restarts).
//!
//! A runtime declared at one end only (added or removed by the release) is
//! read at both ends with the settings of the end that declares it and
//! compared as usual, said in a warning; should a fingerprint be
//! unavailable there, the update restarts (`fingerprint_unavailable`)
//! whatever the version says. An old end that declares no named runtime
//! (its `[runtime]`, or no file) is the base of the settings cross-check:
//! the new end under the old end's own settings, what its gate computed.

use std::collections::BTreeSet;

use serde::Serialize;

use super::prime;
use super::{
    analyse_with, open_cache, resolve_ends, Absent, Analysis, Digests, RangeError, RangeOptions,
    ToSide, SCHEMA_VERSION,
};
use crate::config::{self, ConfigFile, SettingsOrigin};
use crate::pair::Pair;
use crate::select::select;
use crate::source::git::Session;
use crate::source::{GitSource, Revision};
use crate::warning::{Code, Warning};

/// What a run answers: one runtime (today's report, unchanged) or several.
#[derive(Clone, Debug)]
pub enum RangeOutcome {
    /// A single runtime: the config declares one, or `--runtime` chose one.
    One(Box<Analysis>),
    /// Several runtimes.
    Many(RuntimesAnalysis),
}

impl RangeOutcome {
    /// Any runtime is made to restart.
    pub fn restart_required(&self) -> bool {
        match self {
            RangeOutcome::One(a) => a.restart_required,
            RangeOutcome::Many(m) => m.restart_required,
        }
    }

    /// Each runtime's report.
    pub fn analyses(&self) -> Box<dyn Iterator<Item = &Analysis> + '_> {
        match self {
            RangeOutcome::One(a) => Box::new(std::iter::once(&**a)),
            RangeOutcome::Many(m) => Box::new(m.runtimes.iter().map(|r| &r.analysis)),
        }
    }

    /// Each runtime's report, for what is done to every one alike
    /// (classification, naming the ends).
    pub fn analyses_mut(&mut self) -> Box<dyn Iterator<Item = &mut Analysis> + '_> {
        match self {
            RangeOutcome::One(a) => Box::new(std::iter::once(&mut **a)),
            RangeOutcome::Many(m) => Box::new(m.runtimes.iter_mut().map(|r| &mut r.analysis)),
        }
    }

    /// Classifies every analysis's runtime changes
    /// ([`super::annotate`]), with the change kinds remembered in
    /// the repository unless `persistent_cache` is off (`--no-cache`).
    pub fn classify(&mut self, repo: &Session, persistent_cache: bool) {
        // Not read for a range that compares no file (an unchanged one).
        let compares = self
            .analyses_mut()
            .any(|a| crate::classify::compares_files(&a.changes.runtime));
        let mut kinds = if persistent_cache && compares {
            crate::classify::KindCache::open(repo.repo())
        } else {
            crate::classify::KindCache::none()
        };
        for analysis in self.analyses_mut() {
            super::annotate::annotate_with(repo, analysis, &mut kinds);
        }
        // A cache that cannot be written only costs the next run some time.
        let _ = kinds.save();
    }
}

/// The report of several runtimes: `--format json` prints exactly this.
#[derive(Clone, Debug, Serialize)]
pub struct RuntimesAnalysis {
    /// See [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Any runtime's running clients are made to restart.
    pub restart_required: bool,
    /// `server restarts; worker does not`.
    pub summary: String,
    /// One single-runtime report per runtime, in name order.
    pub runtimes: Vec<NamedAnalysis>,
    /// How the range was chosen, when fpcheck chose it.
    pub notes: Vec<String>,
}

/// One runtime's report with its name.
#[derive(Clone, Debug, Serialize)]
pub struct NamedAnalysis {
    /// The `NAME` of `[runtimes.NAME]`.
    pub name: String,
    /// Exactly the single-runtime report.
    #[serde(flatten)]
    pub analysis: Analysis,
}

/// The runtimes one end declares (`[runtimes.NAME]` keys), with the name
/// of the end for messages.
struct Declared {
    names: BTreeSet<String>,
    shown: String,
}

/// Analyses the range for the runtimes `chosen` (`--runtime`, repeatable),
/// or every runtime declared at either end when none is chosen. One chosen
/// runtime, or a config declaring at most one, gives [`RangeOutcome::One`]:
/// exactly the single-runtime report.
pub fn analyse_runtimes(
    repo: &Session,
    options: &RangeOptions,
    chosen: &[String],
) -> Result<RangeOutcome, RangeError> {
    super::with_memo(repo, options, |repo| runtimes_in(repo, options, chosen))
}

/// [`analyse_runtimes`], the memo installed or not wanted. Without FROM,
/// each runtime's tag pattern chooses its previous release: runtimes that
/// share one share the range, runtimes whose patterns differ are each
/// compared from their own (each report's notes say which).
fn runtimes_in(
    repo: &Session,
    options: &RangeOptions,
    chosen: &[String],
) -> Result<RangeOutcome, RangeError> {
    let chosen = config::choose::dedupe(chosen);
    let mut options = options.clone();
    if let Some(patterns) = super::runtime_patterns(repo, &options, &chosen)? {
        match super::common_pattern(&patterns) {
            Ok(common) => options.range.tags.pattern = common,
            Err(_) => return per_runtime(repo, &options, &patterns),
        }
    }
    runtimes_with(repo, &options, &chosen)
}

/// Runtimes whose tag patterns differ, each compared from the latest
/// release of its own pattern.
fn per_runtime(
    repo: &Session,
    options: &RangeOptions,
    patterns: &std::collections::BTreeMap<String, Option<String>>,
) -> Result<RangeOutcome, RangeError> {
    let mut runtimes = Vec::with_capacity(patterns.len());
    for (name, pattern) in patterns {
        let mut own = options.clone();
        own.range.tags.pattern = pattern.clone();
        match runtimes_with(repo, &own, std::slice::from_ref(name))? {
            RangeOutcome::One(analysis) => runtimes.push(NamedAnalysis {
                name: name.clone(),
                analysis: *analysis,
            }),
            RangeOutcome::Many(many) => runtimes.extend(many.runtimes),
        }
    }
    Ok(RangeOutcome::Many(RuntimesAnalysis {
        schema_version: SCHEMA_VERSION,
        restart_required: runtimes.iter().any(|r| r.analysis.restart_required),
        summary: summary(&runtimes),
        runtimes,
        // Each runtime's own report says how its range was chosen.
        notes: Vec::new(),
    }))
}

/// [`runtimes_in`] once the range is the same for every runtime.
fn runtimes_with(
    repo: &Session,
    options: &RangeOptions,
    chosen: &[String],
) -> Result<RangeOutcome, RangeError> {
    let chosen = config::choose::dedupe(chosen);
    let (from, to, notes) = resolve_ends(repo, options)?;
    let revs = Revs::parse(repo, &from, &to)?;
    let mut options = options.clone();
    options.settings = super::with_fallback(repo, &options.settings, &from, &to)?;
    let options = &options;
    let decls = declared(repo, options, &revs)?;
    let all: BTreeSet<String> = decls.from.names.union(&decls.to.names).cloned().collect();
    if let Some(name) = read_alone(&chosen, decls.as_ref(), &all) {
        let mut options = options.clone();
        options.settings = options.settings.for_runtime(name.map(String::as_str));
        return super::analyse_in(repo, &options).map(|a| RangeOutcome::One(Box::new(a)));
    }
    config::choose::check(
        &chosen,
        &all,
        "at either end",
        options.settings.overrides.root.is_some(),
    )
    .map_err(RangeError::Config)?;
    let names: Vec<String> = if chosen.is_empty() {
        all.into_iter().collect()
    } else {
        all.into_iter().filter(|n| chosen.contains(n)).collect()
    };
    let mut cache = open_cache(repo, options);
    prime_all(
        repo,
        &options.settings,
        &names,
        &revs,
        &mut cache,
        options.digests,
    );
    let mut runtimes = Vec::with_capacity(names.len());
    for name in names {
        let request = options.settings.for_runtime(Some(&name));
        let absent = absent_ends(repo, &request, &name, &revs, decls.as_ref())?;
        let undeclared = absent.from.is_some() || absent.to.is_some();
        let mut analysis = analyse_with(
            repo,
            &from,
            &to,
            &request,
            absent,
            &mut cache,
            options.digests,
        )?;
        super::witnessed::confirm(repo, options.witness, &mut analysis, undeclared);
        analysis
            .warnings
            .extend(undeclared_warnings(&name, decls.as_ref()));
        runtimes.push(NamedAnalysis { name, analysis });
    }
    // A cache that cannot be written costs the next run time, nothing else.
    let _ = cache.save();
    Ok(outcome(&chosen, runtimes, notes))
}

/// The runtime to analyse as a single one, with its range chosen for it
/// (`Some(None)`: the settings' only runtime, or none), when the run
/// reads one runtime that both ends declare, or no more than one is
/// declared at all.
fn read_alone<'c>(
    chosen: &'c [String],
    decls: Pair<&Declared>,
    all: &BTreeSet<String>,
) -> Option<Option<&'c String>> {
    match chosen {
        // Declared at one end only: read as with several runtimes, so that
        // `--runtime X` answers what the multi-runtime report says for X.
        // Declared at neither end while some end declares runtimes: the
        // check after this names the declared ones (one end's file alone
        // would say that no file declares any).
        [name] => {
            let both = decls.from.names.contains(name) && decls.to.names.contains(name);
            (both || all.is_empty()).then_some(Some(name))
        }
        [] if all.len() <= 1 => Some(None),
        _ => None,
    }
}

/// The warnings that runtime `name` is not declared at an end, and how
/// that end is read instead.
fn undeclared_warnings(name: &str, decls: Pair<&Declared>) -> Vec<Warning> {
    [
        (decls.from, "that end is read with the new end's settings and compared as usual (an unavailable fingerprint there counts as a restart)"),
        (decls.to, "that end is read with the old end's settings, as the installed gate reads it after the update (an unavailable fingerprint there counts as a restart)"),
    ]
    .into_iter()
    .filter(|(decl, _)| !decl.names.contains(name))
    .map(|(decl, consequence)| {
        Warning::new(
            Code::RuntimeNotDeclared,
            format!(
                "runtime `{}` is not declared in {}: {consequence}",
                name, decl.shown
            ),
        )
    })
    .collect()
}

/// The answer of a run over the runtimes `runtimes`: one runtime's own
/// report when one was chosen and analysed, else all of them.
fn outcome(
    chosen: &[String],
    mut runtimes: Vec<NamedAnalysis>,
    notes: Vec<String>,
) -> RangeOutcome {
    if let ([_], [_]) = (chosen, runtimes.as_slice()) {
        let mut one = runtimes.pop().expect("one runtime").analysis;
        one.notes = notes;
        return RangeOutcome::One(Box::new(one));
    }
    RangeOutcome::Many(RuntimesAnalysis {
        schema_version: SCHEMA_VERSION,
        restart_required: runtimes.iter().any(|r| r.analysis.restart_required),
        summary: summary(&runtimes),
        runtimes,
        notes,
    })
}

/// The revision ends, resolved once for everything read before the
/// analyses (each analysis resolves its own): `to` is `None` for the
/// working tree. Both must be commits, as the analyses require: a tree
/// is refused here, before any blob is read for it.
struct Revs {
    from: Revision,
    to: Option<Revision>,
}

impl Revs {
    fn parse(repo: &Session, from: &str, to: &ToSide) -> Result<Revs, RangeError> {
        Ok(Revs {
            from: Revision::parse_commit(repo, from)?,
            to: match to {
                ToSide::Rev(spec) => Some(Revision::parse_commit(repo, spec)?),
                ToSide::Worktree => None,
            },
        })
    }
}

/// Reads every blob the runtimes select at the revision ends once, and
/// leaves their fingerprints in `cache` for the analyses (see [`prime`]).
/// The working tree's end is read by each analysis as usual.
fn prime_all(
    repo: &Session,
    request: &config::SettingsRequest,
    names: &[String],
    revs: &Revs,
    cache: &mut crate::cache::FingerprintCache,
    digests: Digests,
) {
    let ends: Vec<&Revision> = std::iter::once(&revs.from).chain(&revs.to).collect();
    let mut merged = prime::Merged::default();
    for name in names {
        let request = request.for_runtime(Some(name));
        let mut pair = Vec::new();
        for rev in &ends {
            // A runtime missing at this end is read by its analysis.
            let Ok(end) = request.at_revision(repo, rev.tree, &rev.spec) else {
                continue;
            };
            if let Ok(src) = GitSource::new(repo.clone(), (*rev).clone(), &end.spec.root) {
                pair.push((src, end.spec));
            }
        }
        // Same settings, same root tree: the analysis finds the selections
        // equal and hashes nothing (or, should a link leave the root, hashes
        // on its own). Either way nothing here needs reading.
        let same_settings = match pair.as_slice() {
            [(_, ra), (_, rb)] => config::differences(ra, rb).is_empty(),
            _ => false,
        };
        if let [(a, _), (b, _)] = pair.as_slice() {
            let same_root = a.root_tree().is_some() && a.root_tree() == b.root_tree();
            if same_settings && same_root && digests == Digests::WhenNeeded {
                continue;
            }
        }
        let selections: Vec<_> = pair
            .iter()
            .map(|(src, rt)| select(src, &rt.rules).ok())
            .collect();
        if let [Some(a), Some(b)] = selections.as_slice() {
            let equal = a.is_available() && b.is_available() && a.files == b.files;
            if equal && same_settings && digests == Digests::WhenNeeded {
                continue;
            }
        }
        for ((src, rt), selection) in pair.into_iter().zip(selections) {
            if let Some(selection) = selection {
                merged.add(src, &rt.root, selection, cache);
            }
        }
    }
    merged.hash_into(cache);
}

/// `server restarts; worker does not` (`a and b restart` when they agree),
/// names exact (JSON keeps them so); each display escapes the line once.
pub(super) fn summary(runtimes: &[NamedAnalysis]) -> String {
    let names = |restart: bool| -> Vec<String> {
        runtimes
            .iter()
            .filter(|r| r.analysis.restart_required == restart)
            .map(|r| r.name.clone())
            .collect()
    };
    let list = |n: &[String]| match n {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let (yes, no) = (names(true), names(false));
    let clause = |n: &[String], restart: bool| {
        let verb = match (n.len(), restart) {
            (1, true) => "restarts",
            (_, true) => "restart",
            (1, false) => "does not",
            (_, false) => "do not",
        };
        format!("{} {verb}", list(n))
    };
    match (yes.is_empty(), no.is_empty()) {
        (false, false) => format!("{}; {}", clause(&yes, true), clause(&no, false)),
        (false, true) => clause(&yes, true),
        (true, false) => format!("{} restart", clause(&no, false)),
        (true, true) => "no runtime".into(),
    }
}

/// The `[runtimes.NAME]` keys each end declares.
fn declared(
    repo: &Session,
    options: &RangeOptions,
    revs: &Revs,
) -> Result<Pair<Declared>, RangeError> {
    let names = |f: Option<&ConfigFile>| -> BTreeSet<String> {
        f.map(|f| f.runtimes.keys().cloned().collect())
            .unwrap_or_default()
    };
    match &options.settings.origin {
        SettingsOrigin::Committed => {
            let at = |rev: &Revision| -> Result<Declared, RangeError> {
                let (f, shown) = options.settings.committed_at(repo, rev.tree, &rev.spec)?;
                Ok(Declared {
                    names: names(f.as_ref()),
                    shown,
                })
            };
            let from_decl = at(&revs.from)?;
            let to_decl = match &revs.to {
                Some(rev) => at(rev)?,
                None => {
                    let top = super::ends::workdir(repo)?;
                    let own = ConfigFile::find_in(&top)?.map(|(_, f)| f);
                    let root_there = own.is_some() || options.settings.own_root_in(&top)?;
                    let (t, shown) = options.settings.or_fallback(
                        own,
                        format!("{} in the working tree", config::FILE_NAME),
                        "the working tree",
                        root_there,
                    );
                    Declared {
                        names: names(t.as_ref()),
                        shown,
                    }
                }
            };
            Ok(Pair::new(from_decl, to_decl))
        }
        SettingsOrigin::File { path, file } => {
            let both = || Declared {
                names: names(Some(file)),
                shown: format!("--config {}", path.display()),
            };
            Ok(Pair::new(both(), both()))
        }
        SettingsOrigin::None => {
            let none = || Declared {
                names: BTreeSet::new(),
                shown: "the settings".into(),
            };
            Ok(Pair::new(none(), none()))
        }
    }
}

/// For a runtime missing at one end: why, and the other end's settings to
/// read it with.
fn absent_ends(
    repo: &Session,
    request: &config::SettingsRequest,
    name: &str,
    revs: &Revs,
    decls: Pair<&Declared>,
) -> Result<Absent, RangeError> {
    let Pair {
        from: from_decl,
        to: to_decl,
    } = decls;
    let at_from = from_decl.names.contains(name);
    let at_to = to_decl.names.contains(name);
    let why = |decl: &Declared| format!("runtime `{}` is not declared in {}", name, decl.shown);
    let to_settings = || -> Result<config::SpecWithOrigin, RangeError> {
        Ok(match &revs.to {
            Some(rev) => request.at_revision(repo, rev.tree, &rev.spec)?,
            None => request.at_worktree(&super::ends::workdir(repo)?)?,
        })
    };
    Ok(match (at_from, at_to) {
        (true, true) | (false, false) => Absent::default(),
        (false, true) => {
            // No named runtime at all at the old end: its gate ran with its
            // `[runtime]` (or the defaults), which the new end is
            // cross-checked with.
            let from_own = if from_decl.names.is_empty() {
                let own = request.for_runtime(None);
                Some(own.at_revision(repo, revs.from.tree, &revs.from.spec)?)
            } else {
                None
            };
            Absent {
                from: Some((why(from_decl), to_settings()?)),
                to: None,
                from_own,
            }
        }
        (true, false) => Absent {
            from: None,
            to: Some((
                why(to_decl),
                request.at_revision(repo, revs.from.tree, &revs.from.spec)?,
            )),
            from_own: None,
        },
    })
}

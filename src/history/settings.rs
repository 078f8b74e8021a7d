//! Each release's settings: the `fpcheck.toml` committed at that release
//! (what that release's gate computed with), flags over all of them, as the
//! range reads each of its ends (issue 11: a release cannot choose the
//! settings the release before it is judged by).
//!
//! A runtime of a monorepo declared in some releases only is read as the
//! range reads a dropped or added declaration: a release that stops
//! declaring it is read with the settings of the last release that did
//! (what the installed gate computes after the update), and the release
//! just before its first declaration is read with the first declaring
//! release's settings and its fingerprint withdrawn (that release had no
//! gate for the runtime). Earlier releases are not part of its history.

use std::collections::BTreeSet;

use gix::ObjectId;

use super::tags::Tag;
use super::HistoryError;
use crate::config::{self, ConfigChoice, ConfigFile, EndSettings, Request, FILE_NAME};
use crate::source::SourceError;

/// One release's committed config, read once for every runtime.
pub(super) struct Committed {
    /// `fpcheck.toml` at the release (`None`: no file, or not read because
    /// `--config` or no repository config applies).
    file: Option<ConfigFile>,
    /// `fpcheck.toml at v1.2.0`, for messages.
    shown: String,
}

/// How one release is read for one runtime.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    /// The settings the release is fingerprinted with.
    pub(super) end: EndSettings,
    /// `None` when the release declares the runtime (its own settings);
    /// else where its settings came from, for the `runtime_not_declared`
    /// warning.
    pub(super) borrowed: Option<Borrowed>,
}

/// A release that does not declare the runtime.
#[derive(Clone, Debug)]
pub(super) struct Borrowed {
    /// `runtime `worker` is not declared in fpcheck.toml at v1.2.0`.
    pub(super) why: String,
    /// The release is read with a later release's settings and its
    /// fingerprint withdrawn (it comes before the first declaration).
    pub(super) withdrawn: bool,
}

/// The tree of `tag`'s commit.
pub(super) fn tree_of(repo: &gix::Repository, tag: &Tag) -> Result<ObjectId, HistoryError> {
    let fail = |what: &str, e: &dyn std::error::Error| {
        SourceError::Repository(format!(
            "cannot read the {what} of {}: {e}",
            crate::term::escape(&tag.name)
        ))
    };
    let commit = repo
        .find_commit(tag.commit)
        .map_err(|e| fail("commit", &e))?;
    Ok(commit.tree_id().map_err(|e| fail("tree", &e))?.detach())
}

/// Reads every release's committed config (only when each release's own
/// file applies).
pub(super) fn committed(
    repo: &gix::Repository,
    request: &Request,
    tags: &[Tag],
) -> Result<Vec<Committed>, HistoryError> {
    tags.iter()
        .map(|tag| {
            let shown = format!("{FILE_NAME} at {}", tag.name);
            let file = match request.choice {
                ConfigChoice::Committed => {
                    config::at_revision(repo, tree_of(repo, tag)?, &tag.name)?
                }
                _ => None,
            };
            Ok(Committed { file, shown })
        })
        .collect()
}

/// The `[runtimes.NAME]` names declared by any release (or by `--config`).
pub(super) fn declared_anywhere(request: &Request, committed: &[Committed]) -> BTreeSet<String> {
    match &request.choice {
        ConfigChoice::File { file, .. } => file.runtimes.keys().cloned().collect(),
        ConfigChoice::Committed => committed
            .iter()
            .filter_map(|c| c.file.as_ref())
            .flat_map(|f| f.runtimes.keys().cloned())
            .collect(),
        ConfigChoice::None => BTreeSet::new(),
    }
}

/// How each release is read for the runtime `name` (`None`: the single
/// runtime, as `request` picks it); `None` for a release before the
/// runtime's history starts.
pub(super) fn plans(
    request: &Request,
    name: Option<&str>,
    committed: &[Committed],
) -> Result<Vec<Option<Plan>>, HistoryError> {
    let mut request = request.clone();
    request.flags.runtime = name.map(str::to_string);
    let declares = |c: &Committed| match (name, &request.choice) {
        (Some(n), ConfigChoice::Committed) => {
            c.file.as_ref().is_some_and(|f| f.runtimes.contains_key(n))
        }
        // `--config`, no file, or no named runtime: every release is read
        // with its settings, and a bad name is an error there.
        _ => true,
    };
    let own: Vec<Option<EndSettings>> = committed
        .iter()
        .map(|c| {
            declares(c)
                .then(|| request.with_committed(c.file.as_ref(), &c.shown))
                .transpose()
        })
        .collect::<Result<_, config::ConfigError>>()?;
    let why = |c: &Committed| {
        format!(
            "runtime `{}` is not declared in {}",
            crate::term::escape(name.unwrap_or_default()),
            crate::term::escape(&c.shown)
        )
    };
    let first = own.iter().position(Option::is_some);
    if let (None, Some(n)) = (first, name) {
        return Err(unknown_runtime(n, &declared_anywhere(&request, committed)));
    }
    let mut last: Option<&EndSettings> = None;
    let mut out = Vec::with_capacity(committed.len());
    for (i, (c, end)) in committed.iter().zip(&own).enumerate() {
        let plan = match (end, last, first) {
            (Some(end), _, _) => {
                last = Some(end);
                Some(Plan {
                    end: end.clone(),
                    borrowed: None,
                })
            }
            (None, Some(prev), _) => Some(Plan {
                end: prev.clone(),
                borrowed: Some(Borrowed {
                    why: why(c),
                    withdrawn: false,
                }),
            }),
            (None, None, Some(f)) if i + 1 == f => Some(Plan {
                end: own[f].clone().expect("the first declaration"),
                borrowed: Some(Borrowed {
                    why: why(c),
                    withdrawn: true,
                }),
            }),
            (None, None, _) => None,
        };
        out.push(plan);
    }
    Ok(out)
}

/// `--runtime NAME` that no release declares.
pub(super) fn unknown_runtime(name: &str, declared: &BTreeSet<String>) -> HistoryError {
    let list: Vec<&str> = declared.iter().map(String::as_str).collect();
    HistoryError::Config(config::ConfigError::Invalid(format!(
        "--runtime {}: no such runtime in any release (declared: {})",
        crate::term::escape(name),
        if list.is_empty() {
            "none".into()
        } else {
            list.join(", ")
        }
    )))
}

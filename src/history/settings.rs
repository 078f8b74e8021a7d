//! Each release's settings: the `fpcheck.toml` committed at that release
//! (what that release's gate computed with), flags over all of them, as the
//! range reads each of its ends (a release cannot choose the
//! settings the release before it is judged by).
//!
//! A runtime of a monorepo declared in some releases only is read as the
//! range reads a dropped or added declaration: a release that stops
//! declaring it is read with the settings of the last release that did
//! (what the installed gate computes after the update), and the release
//! just before its first declaration is read with the first declaring
//! release's settings. Each such update is compared as usual (an update
//! that declares the runtime again is cross-checked with the new settings
//! when they differ from the borrowed ones), and an unavailable fingerprint
//! there is a restart whatever the version says, as in the range. Earlier
//! releases are not part of its history.

use std::collections::BTreeSet;

use gix::ObjectId;

use super::tags::Tag;
use super::HistoryError;
use crate::config::{self, ConfigFile, SettingsOrigin, SettingsRequest, SpecWithOrigin, FILE_NAME};
use crate::source::git::Session;

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
    pub(super) end: SpecWithOrigin,
    /// `None` when the release declares the runtime (its own settings);
    /// else where its settings came from, for the `runtime_not_declared`
    /// warning.
    pub(super) borrowed: Option<Borrowed>,
}

impl Plan {
    /// The update from `from` to `to` declares the runtime again (or for
    /// the first time): the older release was read with borrowed settings.
    pub(super) fn declares_again(from: &Plan, to: &Plan) -> bool {
        from.borrowed.is_some() && to.borrowed.is_none()
    }
}

/// A release that does not declare the runtime.
#[derive(Clone, Debug)]
pub(super) struct Borrowed {
    /// `runtime `worker` is not declared in fpcheck.toml at v1.2.0`.
    pub(super) why: String,
    /// The release is read with a later release's settings (it comes
    /// before the first declaration).
    pub(super) from_later: bool,
    /// A release before the first declaration that declares no named
    /// runtime (its `[runtime]`, or no file): its own settings, what its
    /// gate fingerprinted with. The next release is cross-checked with
    /// them, as the range does.
    pub(super) own: Option<SpecWithOrigin>,
}

/// The tree of `tag`'s commit.
pub(super) fn tree_of(repo: &Session, tag: &Tag) -> Result<ObjectId, HistoryError> {
    let what = format!("the commit of {}", tag.name);
    Ok(repo.commit_tree(tag.commit, &what, &tag.name)?)
}

/// Reads every release's committed config (only when each release's own
/// file applies).
pub(super) fn committed(
    repo: &Session,
    request: &SettingsRequest,
    tags: &[Tag],
) -> Result<Vec<Committed>, HistoryError> {
    let own = tags
        .iter()
        .map(|tag| {
            let shown = format!("{FILE_NAME} at {}", tag.name);
            let file = match request.origin {
                SettingsOrigin::Committed => {
                    config::at_revision(repo, tree_of(repo, tag)?, &tag.name)?
                }
                _ => None,
            };
            Ok(Committed { file, shown })
        })
        .collect::<Result<Vec<_>, HistoryError>>()?;
    with_fallback(repo, request, tags, own)
}

/// Each release that commits no `fpcheck.toml` read with the newest
/// release's file, else the one committed at HEAD (the request's
/// [`config::FallbackRule`]): a config committed today reaches the
/// releases made before it, and the report names where it came from.
fn with_fallback(
    repo: &Session,
    request: &SettingsRequest,
    tags: &[Tag],
    own: Vec<Committed>,
) -> Result<Vec<Committed>, HistoryError> {
    if !matches!(request.origin, SettingsOrigin::Committed)
        || request.fallback_rule != config::FallbackRule::ToThenHead
        || own.iter().all(|c| c.file.is_some())
    {
        return Ok(own);
    }
    let newest = match (tags.last(), own.last().and_then(|c| c.file.clone())) {
        (Some(tag), Some(file)) => Some(config::Fallback {
            file,
            shown: format!("{FILE_NAME} at {}", tag.name),
        }),
        _ => None,
    };
    let fallback = match (newest, &request.fallback) {
        (Some(f), _) => Some(f),
        (None, Some(given)) => Some(given.clone()),
        (None, None) => config::Fallback::at_head(repo)?,
    };
    let request = SettingsRequest {
        fallback,
        ..request.clone()
    };
    let newest = tags.len().saturating_sub(1);
    own.into_iter()
        .zip(tags)
        .enumerate()
        .map(|(i, (c, tag))| {
            // The newest release reads HEAD's file, committed after it,
            // whatever the defaults find; the others only where their own
            // root is missing (a release before the first that declares
            // a runtime is read as `history` reads one).
            let root_there = c.file.is_some()
                || (i != newest && request.own_root_at(repo, tree_of(repo, tag)?, &tag.name)?);
            let (file, shown) = request.or_fallback(c.file, c.shown, &tag.name, root_there);
            Ok(Committed { file, shown })
        })
        .collect()
}

/// The `[runtimes.NAME]` names declared by any release (or by `--config`).
pub(super) fn declared_anywhere(
    request: &SettingsRequest,
    committed: &[Committed],
) -> BTreeSet<String> {
    match &request.origin {
        SettingsOrigin::File { file, .. } => file.runtimes.keys().cloned().collect(),
        SettingsOrigin::Committed => committed
            .iter()
            .filter_map(|c| c.file.as_ref())
            .flat_map(|f| f.runtimes.keys().cloned())
            .collect(),
        SettingsOrigin::None => BTreeSet::new(),
    }
}

/// The settings of a release that declares no named runtime, as its gate
/// read them (`None` when it declares some, or no committed file applies).
fn own_settings(
    request: &SettingsRequest,
    c: &Committed,
) -> Result<Option<SpecWithOrigin>, HistoryError> {
    let declares_none = c.file.as_ref().is_none_or(|f| f.runtimes.is_empty());
    if !declares_none || !matches!(request.origin, SettingsOrigin::Committed) {
        return Ok(None);
    }
    let own = request.for_runtime(None);
    Ok(Some(own.with_committed(c.file.as_ref(), &c.shown)?))
}

/// How each release is read for the runtime `name` (`None`: the single
/// runtime, as `request` picks it); `None` for a release before the
/// runtime's history starts.
pub(super) fn plans(
    request: &SettingsRequest,
    name: Option<&str>,
    committed: &[Committed],
) -> Result<Vec<Option<Plan>>, HistoryError> {
    let request = request.for_runtime(name);
    let declares = |c: &Committed| match (name, &request.origin) {
        (Some(n), SettingsOrigin::Committed) => {
            c.file.as_ref().is_some_and(|f| f.runtimes.contains_key(n))
        }
        // `--config`, no file, or no named runtime: every release is read
        // with its settings, and a bad name is an error there.
        _ => true,
    };
    let own: Vec<Option<SpecWithOrigin>> = committed
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
            name.unwrap_or_default(),
            c.shown
        )
    };
    let first = own.iter().position(Option::is_some);
    if let (None, Some(n)) = (first, name) {
        return Err(unknown_runtime(n, &declared_anywhere(&request, committed)));
    }
    let mut last: Option<&SpecWithOrigin> = None;
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
                    from_later: false,
                    own: None,
                }),
            }),
            (None, None, Some(f)) if i + 1 == f => Some(Plan {
                end: own[f].clone().expect("the first declaration"),
                borrowed: Some(Borrowed {
                    why: why(c),
                    from_later: true,
                    own: own_settings(&request, c)?,
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
    HistoryError::Config(config::choose::unknown(name, declared, "in any release"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Overrides;

    fn committed(declares: &[bool]) -> Vec<Committed> {
        declares
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let root = format!("w{i}");
                let text = if *d {
                    format!("[runtimes.w]\nroot = \"{root}\"\n[runtimes.s]\n")
                } else {
                    "[runtimes.s]\n".to_string()
                };
                Committed {
                    file: Some(ConfigFile::parse(&text, std::path::Path::new("f")).unwrap()),
                    shown: format!("{FILE_NAME} at v{i}"),
                }
            })
            .collect()
    }

    fn request() -> SettingsRequest {
        SettingsRequest {
            origin: SettingsOrigin::Committed,
            overrides: Overrides::default(),
            fallback_rule: Default::default(),
            fallback: None,
            fallback_end: None,
        }
    }

    /// (root read with, borrowed?, from_later?) per release; `None` before
    /// the history starts.
    fn shape(plans: &[Option<Plan>]) -> Vec<Option<(String, bool, bool)>> {
        plans
            .iter()
            .map(|p| {
                p.as_ref().map(|p| {
                    (
                        p.end.spec.root.clone(),
                        p.borrowed.is_some(),
                        p.borrowed.as_ref().is_some_and(|b| b.from_later),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn late_dropped_and_declared_again() {
        let c = committed(&[false, false, true, true, false, true]);
        let plans = plans(&request(), Some("w"), &c).unwrap();
        let s = |root: &str, borrowed, from_later| Some((root.to_string(), borrowed, from_later));
        assert_eq!(
            shape(&plans),
            [
                None,
                s("w2", true, true),
                s("w2", false, false),
                s("w3", false, false),
                s("w3", true, false),
                s("w5", false, false),
            ]
        );
        let p = |i: usize| plans[i].as_ref().unwrap();
        assert!(Plan::declares_again(p(1), p(2)));
        assert!(!Plan::declares_again(p(2), p(3)));
        assert!(!Plan::declares_again(p(3), p(4)));
        assert!(Plan::declares_again(p(4), p(5)));
        assert_eq!(
            p(4).borrowed.as_ref().unwrap().why,
            "runtime `w` is not declared in fpcheck.toml at v4"
        );
    }

    #[test]
    fn a_runtime_no_release_declares_is_an_error_naming_the_others() {
        let c = committed(&[true, false]);
        let err = plans(&request(), Some("x"), &c).unwrap_err().to_string();
        assert_eq!(
            err,
            "--runtime x: no such runtime in any release (declared: s, w)"
        );
        // Without a name every release is read with its own settings.
        let single = committed(&[false, false]);
        let plans = plans(&request(), None, &single).unwrap();
        assert!(plans
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| p.borrowed.is_none())));
    }
}

//! The two ends of a range resolved to commits, the default `from` found by
//! the tag rule ([`super::TagFilter`]), without reading a tree or a blob:
//! what a script needs to know before it fetches the trees (the GitHub
//! Action finds its default `from` this way, so it is the range's own rule).

use serde::Serialize;

use super::{
    common_pattern, resolve_ends, runtime_patterns, RangeError, RangeOptions, ToSide, WORKTREE,
};
use crate::setting::{Message, Setting, Value};
use crate::source::git::Session;
use crate::source::Revision;

/// One end, by name and commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedEnd {
    /// The revision as given, or the tag found (its full ref name when the
    /// short one would read as something else: `HEAD`, an option, an id).
    #[serde(rename = "ref")]
    pub reference: String,
    /// The commit it names; `null` for the working tree.
    pub commit: Option<String>,
}

/// Both ends, and how the range was chosen when fpcheck chose it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedEnds {
    /// The older end.
    pub from: ResolvedEnd,
    /// The newer end.
    pub to: ResolvedEnd,
    /// As in the report's `notes`.
    pub notes: Vec<String>,
}

/// Resolves the range of `options` as [`super::analyse`] would, reading
/// commits and tags only. Both ends must be commits (or tags of commits).
///
/// Without FROM, the runtimes' tag patterns choose it: that of the runtime
/// `chosen` names (`--runtime`), else the one every runtime the `to` end
/// declares shares; runtimes with different patterns have different
/// previous releases, so one must be chosen.
pub fn resolve(
    repo: &Session,
    options: &RangeOptions,
    chosen: &[String],
) -> Result<ResolvedEnds, RangeError> {
    let chosen = crate::config::choose::dedupe(chosen);
    let mut options = options.clone();
    if let Some(patterns) = runtime_patterns(repo, &options, &chosen)? {
        options.range.tags.pattern = common_pattern(&patterns).map_err(|differ| {
            RangeError::BadRange(
                Message::new()
                    .text(format!(
                        "the runtimes name their release tags differently ({differ}), so each has its own previous release: choose one with "
                    ))
                    .setting(Setting::Runtime, Value::Placeholder("NAME"))
                    .text(", or name FROM"),
            )
        })?;
    }
    let options = &options;
    let (from, to, notes) = resolve_ends(repo, options)?;
    let end = |spec: &str| -> Result<ResolvedEnd, RangeError> {
        let rev = Revision::parse_commit(repo, spec)?;
        Ok(ResolvedEnd {
            reference: spec.to_string(),
            commit: rev.commit.map(|c| c.to_string()),
        })
    };
    let to = match to {
        ToSide::Rev(spec) => end(&spec)?,
        ToSide::Worktree => ResolvedEnd {
            reference: WORKTREE.into(),
            commit: None,
        },
    };
    Ok(ResolvedEnds {
        from: end(&from)?,
        to,
        notes,
    })
}

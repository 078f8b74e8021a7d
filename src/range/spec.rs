//! Parsing what the user typed: `A..B`, `A..`, `..B` or nothing.

use super::RangeError;

/// The two ends the user asked for, before resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeSpec {
    /// `None`: the highest release reachable from HEAD.
    pub from: Option<String>,
    /// `None`: HEAD (or the working tree with `worktree`).
    pub to: Option<String>,
    /// Which tags are releases, for the default `from`.
    pub tags: super::TagFilter,
}

impl RangeSpec {
    /// Two ends given apart (Python's `from_rev` and `to_rev`), as
    /// `FROM..TO` would give them (`to: None`: HEAD, or the working tree
    /// with `worktree`).
    pub fn between(from: String, to: Option<String>) -> RangeSpec {
        RangeSpec {
            from: Some(from),
            to,
            // Only used to find a default FROM, which is given here.
            tags: Default::default(),
        }
    }

    /// Parses `A..B`, `A..`, `..B` or nothing.
    pub fn parse(text: Option<&str>) -> Result<RangeSpec, RangeError> {
        let Some(text) = text else {
            return Ok(RangeSpec {
                from: None,
                to: None,
                tags: Default::default(),
            });
        };
        // `--root=x` reaching here came after `--`: still not a revision.
        if text.starts_with('-') {
            return Err(RangeError::BadRange(option_like(text).into()));
        }
        if text.contains("...") {
            return Err(RangeError::BadRange(format!(
                "`{text}`: symmetric ranges (A...B) compare against a merge base; write FROM..TO with two releases"
            ).into()));
        }
        let Some((from, to)) = text.split_once("..") else {
            return Err(RangeError::BadRange(format!(
                "`{text}` is not a range: write FROM..TO (e.g. v7.10.0..v7.11.0), FROM.. for FROM..HEAD, or nothing for the latest tag..HEAD"
            ).into()));
        };
        if to.starts_with('-') {
            return Err(RangeError::BadRange(option_like(to).into()));
        }
        let part = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Ok(RangeSpec {
            from: part(from),
            to: part(to),
            tags: Default::default(),
        })
    }
}

/// A revision that starts with `-` would read as an option to any tool it is
/// passed on to (a tag named `--root=nowhere`), so fpcheck refuses it.
pub fn check_revision(rev: &str) -> Result<(), RangeError> {
    if rev.starts_with('-') {
        return Err(RangeError::BadRange(option_like(rev).into()));
    }
    Ok(())
}

fn option_like(rev: &str) -> String {
    format!(
        "revision `{}` starts with `-`: fpcheck refuses revisions that read as options; name the commit by its id (`git rev-parse`)",
        rev
    )
}

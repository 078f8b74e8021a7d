//! What a front end was given, as the library's nouns: the command line's
//! repeatable flags or the Python package's keyword lists become one
//! [`Overrides`], and `--config` (Python's `config=`) or each end's
//! committed file becomes a [`SettingsRequest`]. The CLI and the Python
//! package both call these, so a list means the same as the flags it
//! stands for, and neither edge knows how the nouns are assembled.

use std::path::Path;

use super::{ConfigError, Overrides, SettingsOrigin, SettingsRequest};

impl Overrides {
    /// The command line's flags as given: `--runtime`, `--root`, and the
    /// values of the repeatable `--ext` and `--exclude` (each may hold a
    /// comma-separated list; none given: the file's or the default list;
    /// `''`: given, empty).
    pub fn from_flags(
        runtime: Option<String>,
        root: Option<String>,
        extensions: Vec<String>,
        exclude: Vec<String>,
    ) -> Overrides {
        Overrides {
            runtime,
            root,
            extensions,
            exclude,
            tag_pattern: None,
        }
    }

    /// Lists of names, one a list item (Python's `extensions=` and
    /// `exclude=`), as the repeatable flags they stand for: `None` is not
    /// given; an empty list is given and empty, as `--exclude ''` (it
    /// excludes nothing; no extensions is refused, as `--ext ''` is). A
    /// name holding a comma is refused: the flag syntax would split it.
    pub fn from_lists(
        runtime: Option<String>,
        root: Option<String>,
        extensions: Option<Vec<String>>,
        exclude: Option<Vec<String>>,
    ) -> Result<Overrides, ConfigError> {
        for (what, list) in [("extension", &extensions), ("excluded name", &exclude)] {
            if let Some(bad) = list.iter().flatten().find(|n| n.contains(',')) {
                // Always a keyword argument's value: never a file's.
                return Err(ConfigError::Flag(
                    format!("{what} `{bad}` contains a comma: give one name per list item").into(),
                ));
            }
        }
        // No flag value means "not given"; one empty value, "given, empty".
        let given = |list: Option<Vec<String>>| match list {
            Some(list) if list.is_empty() => vec![String::new()],
            other => other.unwrap_or_default(),
        };
        Ok(Overrides::from_flags(
            runtime,
            root,
            given(extensions),
            given(exclude),
        ))
    }
}

impl SettingsRequest {
    /// Where the settings come from, as every front end asks it, and the
    /// overrides over them at every end: the file `config` names
    /// (`--config`, Python's `config=`) for both ends, else each end's
    /// committed `fpcheck.toml` when `committed` (a repository is read),
    /// else none.
    pub fn of(
        config: Option<&Path>,
        committed: bool,
        overrides: Overrides,
    ) -> Result<SettingsRequest, ConfigError> {
        Ok(SettingsRequest {
            origin: SettingsOrigin::of(config, committed)?,
            overrides,
            fallback_rule: super::FallbackRule::default(),
            fallback: None,
            fallback_end: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn an_empty_list_is_given_and_empty_and_none_is_not_given() {
        let o = Overrides::from_lists(None, None, None, names(&[])).unwrap();
        assert!(o.extensions.is_empty());
        assert_eq!(o.exclude, [""]);
        let spec = super::super::resolve(None, &o).unwrap();
        assert!(spec.rules.exclude.is_empty());
        assert_eq!(spec.rules.extensions, [".py"]);
        let o = Overrides::from_lists(None, None, names(&[]), None).unwrap();
        assert_eq!(
            super::super::resolve(None, &o).unwrap_err().to_string(),
            "no runtime extensions: pass --ext .py (or the extensions your runtime loads)"
        );
    }

    #[test]
    fn a_list_item_holding_a_comma_is_refused_naming_it() {
        let err = Overrides::from_lists(None, None, None, names(&["tests", "a,b"]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "excluded name `a,b` contains a comma: give one name per list item"
        );
        let err = Overrides::from_lists(None, None, names(&[".py,.pyx"]), None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "extension `.py,.pyx` contains a comma: give one name per list item"
        );
    }

    #[test]
    fn a_config_file_wins_over_the_committed_ones() {
        let r = SettingsRequest::of(None, true, Overrides::default()).unwrap();
        assert!(matches!(r.origin, SettingsOrigin::Committed));
        let r = SettingsRequest::of(None, false, Overrides::default()).unwrap();
        assert!(matches!(r.origin, SettingsOrigin::None));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.toml");
        std::fs::write(&path, "[runtime]\nroot = \"app\"\n").unwrap();
        let r = SettingsRequest::of(Some(&path), true, Overrides::default()).unwrap();
        assert_eq!(r.shared().unwrap().spec.root, "app");
    }
}

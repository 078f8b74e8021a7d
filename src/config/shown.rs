//! How reports show a [`RuntimeSpec`]: the `settings` object of
//! `fingerprint`, of the range (each end's) and of `history`. These are
//! serializer views over the one spec, not types of their own, so a key
//! added to the spec is shown (or left out) here, once. The keys keep one
//! order: `runtime`, `root`, `extensions`, `exclude`, then `config` where
//! a report names the file.

use serde::{Serialize, Serializer};

use super::{RuntimeSpec, SpecWithOrigin};

/// The keys as written; borrowed, so showing a spec copies nothing.
#[derive(Serialize)]
struct Keys<'a> {
    runtime: Option<&'a str>,
    root: &'a str,
    extensions: &'a [String],
    exclude: &'a [String],
    /// Absent from `fingerprint`'s object; `null` where a report names
    /// the file and none applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<Option<&'a str>>,
}

impl<'a> Keys<'a> {
    /// The spec's keys, its root as `root` shows it.
    fn of(spec: &'a RuntimeSpec, root: &'a str) -> Self {
        Keys {
            runtime: spec.name.as_deref(),
            root,
            extensions: &spec.rules.extensions,
            exclude: &spec.rules.exclude,
            config: None,
        }
    }

    /// The spec's keys, the top of the repository shown as `.`.
    fn in_repository(spec: &'a RuntimeSpec) -> Self {
        Keys::of(spec, crate::source::show_root(&spec.root))
    }
}

/// `fingerprint`'s `settings`: the spec, its root shown as `root` says (the
/// directory of `--dir` as given, or the root in the repository).
pub fn at_root<'a>(spec: &'a RuntimeSpec, root: &'a str) -> impl Serialize + 'a {
    Keys::of(spec, root)
}

/// For `#[serde(serialize_with)]`: one end's spec and the file it came
/// from (`config`, `null` when none applied), as the range shows each end.
pub fn with_origin<S: Serializer>(end: &SpecWithOrigin, s: S) -> Result<S::Ok, S::Error> {
    Keys {
        config: Some(end.origin.as_deref()),
        ..Keys::in_repository(&end.spec)
    }
    .serialize(s)
}

/// For `#[serde(serialize_with)]`: a spec whose file is not named
/// (`config` is `null`), as `history` shows its newest release's: each
/// release was read with its own file, which the updates' warnings name.
pub fn without_origin<S: Serializer>(spec: &RuntimeSpec, s: S) -> Result<S::Ok, S::Error> {
    Keys {
        config: Some(None),
        ..Keys::in_repository(spec)
    }
    .serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap()
    }

    #[derive(Serialize)]
    struct Report {
        #[serde(serialize_with = "with_origin")]
        end: SpecWithOrigin,
        #[serde(serialize_with = "without_origin")]
        newest: RuntimeSpec,
    }

    /// The exact keys, in their order, that every report has shown.
    #[test]
    fn each_view_shows_the_keys_in_one_order() {
        let mut spec = RuntimeSpec {
            name: Some("server".into()),
            root: String::new(),
            ..RuntimeSpec::default()
        };
        spec.rules.extensions = vec![".py".into()];
        spec.rules.exclude = vec!["tests".into()];
        spec.version_file = Some("v.json".into()); // never shown
        assert_eq!(
            json_of(&at_root(&spec, "/srv/app")),
            r#"{"runtime":"server","root":"/srv/app","extensions":[".py"],"exclude":["tests"]}"#
        );
        let end = SpecWithOrigin {
            spec: spec.clone(),
            origin: Some("fpcheck.toml at v1".into()),
        };
        assert_eq!(
            json_of(&Report { end, newest: spec }),
            concat!(
                r#"{"end":{"runtime":"server","root":".","extensions":[".py"],"exclude":["tests"],"config":"fpcheck.toml at v1"},"#,
                r#""newest":{"runtime":"server","root":".","extensions":[".py"],"exclude":["tests"],"config":null}}"#
            )
        );
    }
}

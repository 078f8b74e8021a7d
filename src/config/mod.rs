//! Settings: `fpcheck.toml` at the repository root, overridden by flags.
//!
//! ```toml
//! # One runtime (the common case). Every key is optional.
//! [runtime]
//! root = "src"                 # runtime root, from the top of the repository
//! extensions = [".py"]         # replaces the default
//! exclude = ["scripts", "tests", "migrations", "crons",
//!            "__pycache__", "node_modules", ".git", "versions"]  # replaces the default
//! version_file = "src/version.json"  # where `fpcheck patch` writes
//! tag_pattern = "v*"           # which tags are this runtime's releases
//!
//! # Or several runtimes in one repository; pick one with --runtime NAME.
//! [runtimes.server]
//! root = "server/src"
//! tag_pattern = "server-v*"    # `server-v1.2.0`: the prefix is stripped
//! [runtimes.worker]
//! root = "worker/src"
//! exclude = ["tests"]
//! ```
//!
//! Each end of a comparison is fingerprinted with the settings committed at
//! that end ([`at_revision`]; the working tree's own file for the working
//! tree), as that release's gate computes it: a pull request cannot choose
//! the settings its base is judged by. Flags and `--config FILE` apply to
//! both ends. The file is never read through a symbolic link, and an error
//! never quotes its text (see docs/security.md).

use crate::setting::{Message, Setting, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::safe_io::{self, Links, ReadError};
use crate::select::Rules;

pub mod choose;
mod ends;
mod given;
pub mod shown;

pub use ends::{
    at_revision, differences, Fallback, FallbackEnd, FallbackRule, SettingsOrigin, SettingsRequest,
    SpecWithOrigin,
};

/// The file name looked up at the top of the repository.
pub(crate) const FILE_NAME: &str = "fpcheck.toml";

/// The default runtime root.
pub(crate) const DEFAULT_ROOT: &str = "src";

/// One runtime's keys, as written in the file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RuntimeTable {
    /// The runtime root, relative to the top of the repository.
    pub root: Option<String>,
    /// Runtime file extensions (replaces `.py`).
    pub extensions: Option<Vec<String>>,
    /// Excluded names (replaces the default list).
    pub exclude: Option<Vec<String>>,
    /// The version file `fpcheck patch` edits, relative to the top.
    pub version_file: Option<String>,
    /// The glob of the runtime's release tags (`server-v*`): a literal
    /// prefix, stripped before the version is parsed, then one `*`.
    pub tag_pattern: Option<String>,
}

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The single runtime.
    pub runtime: Option<RuntimeTable>,
    /// Named runtimes of a monorepo.
    #[serde(default)]
    pub runtimes: BTreeMap<String, RuntimeTable>,
}

/// A bad configuration: the message names the file or flag and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (a link, a FIFO, too large, unreadable).
    #[error("cannot read the config {path}: {why}")]
    Read {
        /// The file, as the user knows it.
        path: String,
        /// Why, without any of the file's bytes.
        why: String,
    },
    /// The file is not valid TOML or has unknown keys.
    #[error("{path} is not a valid fpcheck config: {message}")]
    Parse {
        /// The file, as the user knows it.
        path: String,
        /// Where and what: line, column and toml's message (never the
        /// offending line itself).
        message: String,
    },
    /// Anything else, already a full sentence.
    #[error("{0}")]
    Invalid(crate::setting::Message),
    /// A flag's (or keyword argument's) value is refused: the message names
    /// the flag, and is never put down to a committed file, which the user
    /// would search in vain.
    #[error("{0}")]
    Flag(crate::setting::Message),
    /// The objects of a committed file cannot be read (missing from a
    /// partial or shallow clone, or corrupt): the repository's fault, not
    /// the file's, so the session's error as it is.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
}

impl crate::error::Classified for ConfigError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            ConfigError::Source(e) => e.kind(),
            _ => crate::error::Kind::Usage,
        }
    }
}

/// One runtime's resolved settings, after the file and the flags: what a
/// fingerprint is computed with ([`resolve`] makes it; reports show it
/// through [`shown`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeSpec {
    /// The runtime's name in a multi-runtime file.
    pub name: Option<String>,
    /// The runtime root from the top of the repository (`""` is the top).
    pub root: String,
    /// Which files count.
    pub rules: Rules,
    /// The version file to edit, if configured.
    pub version_file: Option<String>,
    /// The glob of the runtime's release tags, if configured.
    pub tag_pattern: Option<String>,
}

impl Default for RuntimeSpec {
    fn default() -> Self {
        RuntimeSpec {
            name: None,
            root: DEFAULT_ROOT.to_string(),
            rules: Rules::default(),
            version_file: None,
            tag_pattern: None,
        }
    }
}

/// Flags that override the file, at every end; the edges build them with
/// [`Overrides::from_flags`] or [`Overrides::from_lists`].
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--runtime NAME`.
    pub runtime: Option<String>,
    /// `--root DIR`.
    pub root: Option<String>,
    /// `--ext` values (each may hold a comma-separated list).
    pub extensions: Vec<String>,
    /// `--exclude` values (each may hold a comma-separated list).
    pub exclude: Vec<String>,
    /// `--tag-pattern GLOB`, already checked ([`check_tag_pattern`]).
    pub tag_pattern: Option<String>,
}

impl ConfigFile {
    /// Reads and parses `path`. A symbolic link is refused, never followed:
    /// a repository could point its config at `/proc/self/environ` and have
    /// an error message print it.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        Self::load_optional(path)?.ok_or_else(|| ConfigError::Read {
            path: path.display().to_string(),
            why: ReadError::Missing.to_string(),
        })
    }

    /// [`ConfigFile::load`], `None` when nothing is at `path`.
    fn load_optional(path: &Path) -> Result<Option<ConfigFile>, ConfigError> {
        let shown = path.display().to_string();
        let bytes = match safe_io::read_regular(path, Links::Refuse, safe_io::JSON_LIMIT) {
            Ok(bytes) => bytes,
            Err(ReadError::Missing) => return Ok(None),
            Err(e) => return Err(unreadable_error(&shown, &e)),
        };
        Self::parse_bytes(&bytes, &shown).map(Some)
    }

    /// Parses the bytes of a config; `shown` names it in errors.
    pub fn parse_bytes(bytes: &[u8], shown: &str) -> Result<ConfigFile, ConfigError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ConfigError::Parse {
            path: shown.to_string(),
            message: format!(
                "byte {} is not UTF-8: save the file as UTF-8 text",
                e.valid_up_to() + 1
            ),
        })?;
        Self::parse(text, Path::new(shown))
    }

    /// Parses `text`; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ConfigError> {
        let shown = path.display().to_string();
        let file: ConfigFile = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: shown.clone(),
            message: parse_message(text, &e),
        })?;
        if file.runtime.is_some() && !file.runtimes.is_empty() {
            return Err(ConfigError::Invalid(
                format!("{shown}: use either [runtime] or [runtimes.NAME] tables, not both").into(),
            ));
        }
        // A name that shows as nothing cannot be chosen with --runtime or
        // told apart in a report.
        if let Some(name) = file
            .runtimes
            .keys()
            .find(|n| n.chars().all(crate::term::blank))
        {
            return Err(ConfigError::Invalid(format!(
                "{shown}: [runtimes.\"{}\"] has an empty name (or only spaces or control characters): name the runtime, e.g. [runtimes.server]",
                name
            ).into()));
        }
        let tables = file
            .runtime
            .iter()
            .map(|t| ("[runtime]".to_string(), t))
            .chain(
                file.runtimes
                    .iter()
                    .map(|(n, t)| (format!("[runtimes.{n}]"), t)),
            );
        for (table, t) in tables {
            if let Some(pattern) = &t.tag_pattern {
                check_tag_pattern(pattern).map_err(|why| {
                    ConfigError::Invalid(
                        format!("{shown}: {table} tag_pattern `{pattern}` {why}").into(),
                    )
                })?;
            }
        }
        Ok(file)
    }

    /// Reads `fpcheck.toml` in `dir` (a working tree's top) when it exists,
    /// without following a link.
    pub fn find_in(dir: &Path) -> Result<Option<(PathBuf, ConfigFile)>, ConfigError> {
        let path = dir.join(FILE_NAME);
        Ok(Self::load_optional(&path)?.map(|file| (path, file)))
    }

    /// The runtime chosen by `--runtime`, or the only one declared.
    pub fn runtime(
        &self,
        name: Option<&str>,
    ) -> Result<(Option<String>, RuntimeTable), ConfigError> {
        match (name, &self.runtime) {
            (None, Some(table)) => return Ok((None, table.clone())),
            (Some(n), Some(_)) => {
                return Err(ConfigError::Invalid(
                    Message::new()
                        .setting(Setting::Runtime, Value::Given(n.to_string()))
                        .text(": the config declares a single [runtime]; drop ")
                        .setting(Setting::Runtime, Value::None)
                        .text(format!(" or declare [runtimes.{n}]")),
                ))
            }
            _ => {}
        }
        let names = || self.runtimes.keys().cloned().collect::<Vec<_>>().join(", ");
        match name {
            Some(n) => self
                .runtimes
                .get(n)
                .map(|t| (Some(n.to_string()), t.clone()))
                .ok_or_else(|| {
                    ConfigError::Invalid(
                        Message::new()
                            .setting(Setting::Runtime, Value::Given(n.to_string()))
                            .text(format!(
                                ": no such runtime in the config (declared: {})",
                                if self.runtimes.is_empty() {
                                    "none".into()
                                } else {
                                    names()
                                }
                            )),
                    )
                }),
            None => match self.runtimes.len() {
                0 => Ok((None, RuntimeTable::default())),
                1 => {
                    let (n, t) = self.runtimes.iter().next().expect("one entry");
                    Ok((Some(n.clone()), t.clone()))
                }
                _ => Err(ConfigError::Invalid(
                    Message::new()
                        .text(format!(
                            "the config declares several runtimes ({}): choose one with ",
                            names()
                        ))
                        .setting(Setting::Runtime, Value::Placeholder("NAME")),
                )),
            },
        }
    }
}

/// toml's message with the line and column, but never its excerpt of the
/// text: only the config's own words may reach a log (escaped where the
/// message is shown, as every name is).
fn parse_message(text: &str, e: &toml::de::Error) -> String {
    // Lines joined before escaping: toml's own line breaks are not hostile.
    let what = e.message().trim_end().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            let column = before.len()
                - before
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |i| i + 1)
                + 1;
            format!("line {line}, column {column}: {what}")
        }
        None => what,
    }
}

fn unreadable_error(shown: &str, e: &ReadError) -> ConfigError {
    let why = match e {
        ReadError::Link => "it is a symbolic link, which fpcheck never follows for its config: replace it with the file itself".to_string(),
        other => other.to_string(),
    };
    ConfigError::Read {
        path: shown.to_string(),
        why,
    }
}

/// Combines the file (if any) and the flags into one runtime's settings.
pub fn resolve(file: Option<&ConfigFile>, flags: &Overrides) -> Result<RuntimeSpec, ConfigError> {
    let (name, table) = match file {
        Some(f) => f.runtime(flags.runtime.as_deref())?,
        None if flags.runtime.is_some() => {
            return Err(ConfigError::Invalid(
                Message::new()
                    .setting(
                        Setting::Runtime,
                        Value::Given(flags.runtime.clone().unwrap_or_default()),
                    )
                    .text(format!(": there is no {FILE_NAME} declaring runtimes")),
            ))
        }
        None => (None, RuntimeTable::default()),
    };
    let defaults = Rules::default();
    let extensions = pick_list(&flags.extensions, table.extensions, defaults.extensions);
    let extensions: Vec<String> = extensions.into_iter().map(normalise_extension).collect();
    // Which of the flags and the file gave a list: its error names that one.
    let blame = |given: &[String], m: Message| {
        if given.is_empty() {
            ConfigError::Invalid(m)
        } else {
            ConfigError::Flag(m)
        }
    };
    if extensions.is_empty() {
        return Err(blame(
            &flags.extensions,
            Message::new()
                .text("no runtime extensions: pass ")
                .setting(
                    Setting::Extensions,
                    Value::Example {
                        flag: ".py",
                        keyword: "[\".py\"]",
                    },
                )
                .text(" (or the extensions your runtime loads)"),
        ));
    }
    let exclude = pick_list(&flags.exclude, table.exclude, defaults.exclude);
    if let Some(bad) = exclude.iter().find(|n| n.contains('/')) {
        let mut m = Message::new().text(format!("excluded name `{bad}` contains `/`"));
        if !flags.exclude.is_empty() {
            m = m
                .text(" (given with ")
                .setting(Setting::Exclude, Value::None)
                .text(")");
        }
        return Err(blame(
            &flags.exclude,
            m.text(": exclusions are single path segments (e.g. `tests`), matched at any depth"),
        ));
    }
    let root = flags
        .root
        .clone()
        .or(table.root)
        .unwrap_or_else(|| DEFAULT_ROOT.to_string());
    check_root(&root).map_err(|e| match e {
        ConfigError::Invalid(m) if flags.root.is_some() => ConfigError::Flag(m),
        other => other,
    })?;
    // `./src/` and `src` are one root; `.` is the top of the repository.
    let root = crate::source::normalise_root(&root);
    Ok(RuntimeSpec {
        name,
        root,
        rules: Rules {
            extensions,
            exclude,
        },
        version_file: table.version_file,
        tag_pattern: flags.tag_pattern.clone().or(table.tag_pattern),
    })
}

/// A tag pattern is a literal prefix and one final `*` (`server-v*`,
/// `mcp@*`, `v*`, or `*` for every tag): the prefix is what is stripped
/// before the version is parsed, so a second wildcard would leave nothing
/// to strip. The prefix must be something a tag name can start with.
/// `Err` says what is wrong, to follow the key or the flag and its value.
pub fn check_tag_pattern(pattern: &str) -> Result<(), String> {
    const EXAMPLE: &str = "e.g. `server-v*` or `mcp@*`";
    let Some(prefix) = pattern.strip_suffix('*') else {
        return Err(format!(
            "does not end with `*`: write the tags' literal prefix followed by `*` ({EXAMPLE})"
        ));
    };
    if let Some(c) = prefix.chars().find(|c| matches!(c, '*' | '?' | '[' | '\\')) {
        return Err(format!(
            "has a wildcard `{c}` before its final `*`: only a literal prefix followed by one `*` can be stripped ({EXAMPLE})"
        ));
    }
    if let Some(c) = prefix
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || matches!(c, '~' | '^' | ':'))
    {
        return Err(format!(
            "holds {}, which no git tag name can: write the tags' literal prefix followed by `*` ({EXAMPLE})",
            if c.is_control() || c.is_whitespace() {
                format!("the character U+{:04X}", c as u32)
            } else {
                format!("`{c}`")
            }
        ));
    }
    // Only a digit, or a `.` after one, can sit inside a version: `pkg.*`
    // reads `pkg.10.0.0` whole, `server-v1*` would read `server-v10.0.0`
    // as 0.0.0.
    let before_star = prefix.trim_end_matches('.');
    let inside_version = prefix.ends_with(|c: char| c.is_ascii_digit())
        || (before_star.len() < prefix.len()
            && before_star.ends_with(|c: char| c.is_ascii_digit()));
    if inside_version {
        return Err(format!(
            "ends its prefix inside a version (a digit, or a digit and `.`, before the `*`): the prefix is stripped before the version is read, so `server-v1*` would read `server-v10.0.0` as 0.0.0; write the prefix up to the version ({EXAMPLE})"
        ));
    }
    if prefix.contains("..") || prefix.starts_with(['/', '-', '.']) || prefix.contains("//") {
        return Err(format!(
            "is not the start of a git tag name (`..`, `//`, or a leading `/`, `-` or `.`): {EXAMPLE}"
        ));
    }
    Ok(())
}

/// The runtime root names a directory inside the repository: relative, and
/// never stepping out with `..` (a tree has nothing above its top).
fn check_root(root: &str) -> Result<(), ConfigError> {
    if root.starts_with('/') || root.starts_with('\\') || root.get(1..2) == Some(":") {
        return Err(ConfigError::Invalid(
            format!(
            "runtime root `{root}` is absolute: give it from the top of the repository (e.g. `src`)"
        )
            .into(),
        ));
    }
    if root.split(['/', '\\']).any(|part| part == "..") {
        return Err(ConfigError::Invalid(format!(
            "runtime root `{root}` steps out with `..`: give it from the top of the repository (e.g. `src`)"
        ).into()));
    }
    Ok(())
}

/// Flags win over the file, the file over the default; flags may be given
/// several times or comma-separated, and an empty value means "none".
fn pick_list(flags: &[String], file: Option<Vec<String>>, default: Vec<String>) -> Vec<String> {
    if !flags.is_empty() {
        return flags
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
    }
    file.unwrap_or(default)
}

/// `py` means `.py`: a bare suffix would also match `happy`.
fn normalise_extension(ext: String) -> String {
    if ext.starts_with('.') {
        ext
    } else {
        format!(".{ext}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> Overrides {
        Overrides::default()
    }

    #[test]
    fn defaults_match_the_reference_gate() {
        let rt = resolve(None, &flags()).unwrap();
        assert_eq!(rt.root, "src");
        assert_eq!(rt.rules, Rules::default());
    }

    #[test]
    fn flags_replace_and_split_on_commas() {
        let mut f = flags();
        f.exclude = vec!["tests,vendor".into(), "docs".into()];
        f.extensions = vec!["py".into(), ".pyx".into()];
        let rt = resolve(None, &f).unwrap();
        assert_eq!(rt.rules.exclude, ["tests", "vendor", "docs"]);
        assert_eq!(rt.rules.extensions, [".py", ".pyx"]);
        f.exclude = vec!["".into()];
        assert!(resolve(None, &f).unwrap().rules.exclude.is_empty());
    }

    #[test]
    fn file_then_flags() {
        let file = ConfigFile::parse(
            "[runtime]\nroot = \"app\"\nexclude = [\"x\"]\n",
            Path::new("fpcheck.toml"),
        )
        .unwrap();
        let rt = resolve(Some(&file), &flags()).unwrap();
        assert_eq!(
            (rt.root.as_str(), rt.rules.exclude.clone()),
            ("app", vec!["x".to_string()])
        );
        let mut f = flags();
        f.root = Some("lib".into());
        assert_eq!(resolve(Some(&file), &f).unwrap().root, "lib");
    }

    #[test]
    fn several_runtimes_need_a_name() {
        let text = "[runtimes.a]\nroot = \"a/src\"\n[runtimes.b]\nroot = \"b/src\"\n";
        let file = ConfigFile::parse(text, Path::new("fpcheck.toml")).unwrap();
        let err = resolve(Some(&file), &flags()).unwrap_err().to_string();
        assert_eq!(
            err,
            "the config declares several runtimes (a, b): choose one with --runtime NAME"
        );
        let mut f = flags();
        f.runtime = Some("b".into());
        let rt = resolve(Some(&file), &f).unwrap();
        assert_eq!((rt.name.as_deref(), rt.root.as_str()), (Some("b"), "b/src"));
        f.runtime = Some("c".into());
        assert!(resolve(Some(&file), &f)
            .unwrap_err()
            .to_string()
            .contains("declared: a, b"));
    }

    #[test]
    fn roots_stay_inside_the_repository() {
        for bad in ["/src", "../x", "src/../../y"] {
            let mut f = flags();
            f.root = Some(bad.into());
            assert!(resolve(None, &f).is_err(), "{bad}");
        }
        let mut f = flags();
        f.root = Some("pkg/src".into());
        assert_eq!(resolve(None, &f).unwrap().root, "pkg/src");
    }

    #[test]
    fn a_parse_error_gives_the_place_never_the_line() {
        let text = "[runtime]\nroot = \"src\"\nTOKEN hunter2\n";
        let err = ConfigFile::parse(text, Path::new("fpcheck.toml"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "fpcheck.toml is not a valid fpcheck config: line 3, column 7: expected `.`, `=`"
        );
        let err = ConfigFile::parse_bytes(b"[runtime]\nroot = \"\xff\"\n", "c.toml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "c.toml is not a valid fpcheck config: byte 19 is not UTF-8: save the file as UTF-8 text"
        );
    }

    #[test]
    fn tag_patterns_are_a_literal_prefix_and_one_final_star() {
        for good in ["server-v*", "mcp@*", "v*", "*", "svc/api-v*", "pkg.*"] {
            assert_eq!(check_tag_pattern(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "server-v",
            "server-*-v*",
            "rel?*",
            "r[a]*",
            "a\\*",
            "a b*",
            "a~*",
            "a:*",
            "a..b*",
            "/a*",
            "-a*",
            ".a*",
            "a//b*",
            "a\u{7}*",
            "server-v1*",
            "server-v1.*",
        ] {
            assert!(check_tag_pattern(bad).is_err(), "{bad:?}");
        }
        let err = ConfigFile::parse(
            "[runtimes.server]\ntag_pattern = \"server-v\"\n",
            Path::new("fpcheck.toml"),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "fpcheck.toml: [runtimes.server] tag_pattern `server-v` does not end with `*`: write the tags' literal prefix followed by `*` (e.g. `server-v*` or `mcp@*`)"
        );
        let file = ConfigFile::parse(
            "[runtime]\ntag_pattern = \"mcp@*\"\n",
            Path::new("fpcheck.toml"),
        )
        .unwrap();
        let rt = resolve(Some(&file), &flags()).unwrap();
        assert_eq!(rt.tag_pattern.as_deref(), Some("mcp@*"));
        let mut f = flags();
        f.tag_pattern = Some("v*".into());
        assert_eq!(
            resolve(Some(&file), &f).unwrap().tag_pattern.as_deref(),
            Some("v*")
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = ConfigFile::parse("[runtime]\nrot = \"src\"\n", Path::new("fpcheck.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("fpcheck.toml is not a valid fpcheck config:"),
            "{err}"
        );
        assert!(err.contains("rot"), "{err}");
    }
}

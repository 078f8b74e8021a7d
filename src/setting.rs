//! The settings a message may tell the caller to change, kept typed so that
//! each front end names them its own way: the command line as its flag
//! (`--repo PATH`), the Python package as its keyword argument (`repo=`).
//! The library says what is wrong and which setting to change; it never
//! assumes it was called from a shell.

use std::fmt;

/// A setting the caller chooses, whatever the front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// The repository to read.
    Repo,
    /// A directory read instead of a repository.
    Dir,
    /// The runtime chosen among those the config declares.
    Runtime,
    /// The runtime's root directory.
    Root,
    /// The runtime file extensions.
    Extensions,
    /// The names excluded from the runtime.
    Exclude,
    /// The config file.
    Config,
    /// The working tree as the `to` end.
    Worktree,
    /// Writing the patch into the working tree.
    Write,
    /// Writing even when the `to` side is not the checkout.
    Force,
    /// The version file the patch edits.
    VersionFile,
    /// The fingerprint of the runtime the process loaded.
    ProcessFingerprint,
    /// Releasing even when the runtime changed (the patch's force_restart).
    ForceRestart,
    /// Printing the generated config instead of writing it.
    Stdout,
}

impl Setting {
    /// The command line's flag for the setting.
    pub fn flag(self) -> &'static str {
        match self {
            Setting::Repo => "--repo",
            Setting::Dir => "--dir",
            Setting::Runtime => "--runtime",
            Setting::Root => "--root",
            Setting::Extensions => "--ext",
            Setting::Exclude => "--exclude",
            Setting::Config => "--config",
            Setting::Worktree => "--worktree",
            Setting::Write => "--write",
            Setting::Force => "--force",
            Setting::VersionFile => "--version-file",
            Setting::ProcessFingerprint => "--process-fingerprint",
            Setting::ForceRestart => "--force-restart",
            Setting::Stdout => "--stdout",
        }
    }

    /// The Python package's keyword argument for the setting.
    pub fn keyword(self) -> &'static str {
        match self {
            Setting::Repo => "repo",
            Setting::Dir => "dir",
            Setting::Runtime => "runtime",
            Setting::Root => "root",
            Setting::Extensions => "extensions",
            Setting::Exclude => "exclude",
            Setting::Config => "config",
            Setting::Worktree => "worktree",
            Setting::Write => "write",
            Setting::Force => "force",
            Setting::VersionFile => "version_file",
            Setting::ProcessFingerprint => "process_fingerprint",
            Setting::ForceRestart => "force_restart",
            Setting::Stdout => "stdout",
        }
    }
}

/// What follows a setting's name in a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Nothing: a switch, or the setting itself (`--worktree`).
    None,
    /// A placeholder for a value to choose (`--repo PATH`): the command
    /// line shows it, a keyword argument (`repo=`) says it by itself.
    Placeholder(&'static str),
    /// An example value, as each front end writes it (`--ext .py`,
    /// `extensions=[".py"]`).
    Example {
        /// After the flag.
        flag: &'static str,
        /// After the keyword and its `=`.
        keyword: &'static str,
    },
    /// The value the caller gave (`--runtime web`), raw: a message is
    /// escaped once, where it is shown (the command line's stderr, the
    /// Python package's exception), never in the library.
    Given(String),
}

/// How a front end names settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `--repo PATH`, `--runtime web`.
    Flag,
    /// `repo=`, `runtime='web'`.
    Keyword,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Setting(Setting, Value),
}

/// A message that may name settings; [`fmt::Display`] spells them as
/// flags (the command line), [`Message::spelled`] as any front end does.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Message(Vec<Piece>);

impl Message {
    /// An empty message, to build with [`Message::text`] and
    /// [`Message::setting`].
    pub fn new() -> Self {
        Message::default()
    }

    /// Appends plain text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Piece::Text(text.into()));
        self
    }

    /// Appends a setting's name, with what follows it.
    pub fn setting(mut self, setting: Setting, value: Value) -> Self {
        self.0.push(Piece::Setting(setting, value));
        self
    }

    /// Appends another message.
    pub fn then(mut self, more: Message) -> Self {
        self.0.extend(more.0);
        self
    }

    /// The settings the message names, in order: what to change.
    pub fn settings(&self) -> impl Iterator<Item = Setting> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Setting(s, _) => Some(*s),
            Piece::Text(_) => None,
        })
    }

    /// The message with its settings spelled as `spelling` says.
    pub fn spelled(&self, spelling: Spelling) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match (piece, spelling) {
                (Piece::Text(t), _) => out.push_str(t),
                (Piece::Setting(s, value), Spelling::Flag) => {
                    out.push_str(s.flag());
                    let after = match value {
                        Value::None => None,
                        Value::Placeholder(v) | Value::Example { flag: v, .. } => Some(*v),
                        Value::Given(v) => Some(v.as_str()),
                    };
                    if let Some(v) = after {
                        out.push(' ');
                        out.push_str(v);
                    }
                }
                (Piece::Setting(s, value), Spelling::Keyword) => {
                    out.push_str(s.keyword());
                    match value {
                        Value::None => {}
                        Value::Placeholder(_) => out.push('='),
                        Value::Example { keyword, .. } => {
                            out.push('=');
                            out.push_str(keyword);
                        }
                        Value::Given(v) => {
                            out.push_str("='");
                            out.push_str(v);
                            out.push('\'');
                        }
                    }
                }
            }
        }
        out
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message::new().text(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::new().text(text)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spelled(Spelling::Flag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_spells_its_settings_for_each_front_end() {
        let m = Message::new()
            .setting(Setting::Runtime, Value::Given("web".into()))
            .text(": no such runtime; pass ")
            .setting(Setting::Repo, Value::Placeholder("PATH"))
            .text(" or drop ")
            .setting(Setting::VersionFile, Value::None)
            .text(", ")
            .setting(
                Setting::Extensions,
                Value::Example {
                    flag: ".py",
                    keyword: "[\".py\"]",
                },
            );
        assert_eq!(
            m.to_string(),
            "--runtime web: no such runtime; pass --repo PATH or drop --version-file, --ext .py"
        );
        assert_eq!(
            m.spelled(Spelling::Keyword),
            "runtime='web': no such runtime; pass repo= or drop version_file, extensions=[\".py\"]"
        );
        let named: Vec<Setting> = m.settings().collect();
        assert_eq!(
            named,
            [
                Setting::Runtime,
                Setting::Repo,
                Setting::VersionFile,
                Setting::Extensions
            ]
        );
    }

    #[test]
    fn plain_text_is_kept_as_is() {
        let m = Message::from("--not-a-setting stays text".to_string());
        assert_eq!(m.to_string(), "--not-a-setting stays text");
        assert_eq!(m.spelled(Spelling::Keyword), "--not-a-setting stays text");
        assert_eq!(m.settings().count(), 0);
    }

    #[test]
    fn library_errors_name_settings_for_the_command_line_and_for_python() {
        let dir = std::env::temp_dir().join(format!("fpcheck-setting-{}", std::process::id()));
        let missing = dir.join("missing");
        let err = crate::source::git::open_repo(Some(&missing)).unwrap_err();
        let shown = missing.display();
        assert_eq!(
            err.to_string(),
            format!("{shown} does not exist: pass --repo with the path of a git repository")
        );
        assert_eq!(
            err.spelled(Spelling::Keyword),
            format!("{shown} does not exist: pass repo with the path of a git repository")
        );

        let flags = crate::config::Overrides {
            extensions: vec![String::new()],
            ..Default::default()
        };
        let Err(crate::config::ConfigError::Flag(m)) = crate::config::resolve(None, &flags) else {
            panic!("empty extensions must be refused");
        };
        assert_eq!(
            m.to_string(),
            "no runtime extensions: pass --ext .py (or the extensions your runtime loads)"
        );
        assert_eq!(
            m.spelled(Spelling::Keyword),
            "no runtime extensions: pass extensions=[\".py\"] (or the extensions your runtime loads)"
        );
        assert_eq!(m.settings().collect::<Vec<_>>(), [Setting::Extensions]);
    }
}

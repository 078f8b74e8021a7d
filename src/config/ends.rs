//! Settings per end of a comparison: the `fpcheck.toml` committed at a
//! revision (read through git objects, never through a link), the working
//! tree's own file, or one `--config` file for both; flags over all.

use crate::setting::{Message, Setting, Value};
use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::{resolve, ConfigError, ConfigFile, Overrides, RuntimeSpec, FILE_NAME};
use crate::safe_io::{self, ReadError};
use crate::source::git::Session;

/// The `fpcheck.toml` committed at the top of `tree` (a commit's tree),
/// `None` when there is none. `name` names the revision in messages. A link
/// or a directory in its place is an error, as is a file over the size cap.
pub fn at_revision(
    repo: &Session,
    tree: ObjectId,
    name: &str,
) -> Result<Option<ConfigFile>, ConfigError> {
    let shown = format!("{FILE_NAME} at {name}");
    let fail = |why: String| ConfigError::Read {
        path: shown.clone(),
        why,
    };
    let tree = repo.tree(tree, &format!("the tree of {name}"), name)?;
    let Some(entry) = tree.find_entry(FILE_NAME) else {
        return Ok(None);
    };
    let id = entry.object_id();
    match entry.mode().kind() {
        gix::objs::tree::EntryKind::Blob | gix::objs::tree::EntryKind::BlobExecutable => {
            // Parsed before in this session: a range reads each end's file
            // several times (to list the runtimes, then for each runtime's
            // settings), a history mostly the same one at every release.
            // Only parses that succeeded are kept (an error is reported
            // again, with the name of the revision that shows it).
            if let Some(file) = repo.parsed::<ConfigFile>(id) {
                return Ok(Some(file));
            }
        }
        gix::objs::tree::EntryKind::Link => {
            return Err(fail(
                "it is a symbolic link, which fpcheck never follows for its config: commit the file itself".into(),
            ))
        }
        _ => return Err(fail("it is not a file".into())),
    }
    let what = format!("the blob of {shown}");
    if repo.size(id, &what, name)? > safe_io::JSON_LIMIT {
        return Err(fail(
            ReadError::TooLarge {
                limit: safe_io::JSON_LIMIT,
            }
            .to_string(),
        ));
    }
    let blob = repo.blob(id, &what, name)?;
    let file = ConfigFile::parse_bytes(&blob.data, &shown)?;
    repo.keep_parsed(id, file.clone());
    Ok(Some(file))
}

/// Where each end's settings come from.
#[derive(Clone, Debug)]
pub enum SettingsOrigin {
    /// Each end's own `fpcheck.toml`: committed at a revision, the working
    /// tree's file for the working tree.
    Committed,
    /// One file for both ends (`--config FILE`).
    File {
        /// The file, for messages.
        path: PathBuf,
        /// Its contents.
        file: ConfigFile,
    },
    /// No file at all: defaults and flags (a directory outside a repository).
    None,
}

impl SettingsOrigin {
    /// Where the settings come from, as every front end asks it: the file
    /// `config` names (`--config`, Python's `config=`) for both ends, else
    /// each end's committed `fpcheck.toml` when `committed`, else none.
    pub fn of(config: Option<&Path>, committed: bool) -> Result<SettingsOrigin, ConfigError> {
        Ok(match config {
            Some(path) => SettingsOrigin::File {
                path: path.to_path_buf(),
                file: ConfigFile::load(path)?,
            },
            None if committed => SettingsOrigin::Committed,
            None => SettingsOrigin::None,
        })
    }
}

/// Which committed file applies at an end that commits no `fpcheck.toml`
/// (with [`SettingsOrigin::Committed`]): a config committed today reaches
/// the releases made before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FallbackRule {
    /// The `to` end's file, else the one committed at HEAD (a range); the
    /// newest release's, else HEAD's (`history`).
    #[default]
    ToThenHead,
    /// The `from` end's file, else none: what a pull request's check uses,
    /// so that the pull request cannot choose the base's settings.
    From,
    /// None: such an end reads the defaults (and the flags).
    Off,
}

/// The file an end without its own `fpcheck.toml` reads, and its name.
#[derive(Clone, Debug)]
pub struct Fallback {
    /// The file.
    pub file: ConfigFile,
    /// Where it is committed, for reports (`fpcheck.toml at HEAD`).
    pub shown: String,
}

impl Fallback {
    /// The file committed at `tree` (`name` in messages), if any.
    pub fn at_revision(
        repo: &Session,
        tree: ObjectId,
        name: &str,
    ) -> Result<Option<Fallback>, ConfigError> {
        Ok(at_revision(repo, tree, name)?.map(|file| Fallback {
            file,
            shown: format!("{FILE_NAME} at {name}"),
        }))
    }

    /// The file committed at HEAD, if any (`None` when HEAD is unborn).
    pub fn at_head(repo: &Session) -> Result<Option<Fallback>, ConfigError> {
        let Ok(head) = repo.repo().head_id() else {
            return Ok(None);
        };
        let tree = repo.commit_tree(head.detach(), "the commit of HEAD", "HEAD")?;
        // A treeless clone (a check that fetched only its ends) has none to read.
        if !repo.has(tree) {
            return Ok(None);
        }
        Fallback::at_revision(repo, tree, "HEAD")
    }

    /// How a report names it at an end `name` that commits none.
    fn shown_at(&self, name: &str) -> String {
        format!("{} ({name} has none)", self.shown)
    }
}

/// What the user asked for: a [`SettingsOrigin`] and the [`Overrides`]
/// over it at every end (the edges make one with `SettingsRequest::of`).
#[derive(Clone, Debug)]
pub struct SettingsRequest {
    /// Where the settings come from.
    pub origin: SettingsOrigin,
    /// The flags over them.
    pub overrides: Overrides,
    /// Which file an end without its own reads.
    pub fallback_rule: FallbackRule,
    /// That file, once the command found it (see [`FallbackRule`]).
    pub fallback: Option<Fallback>,
    /// The end that reads the fallback whatever its own settings find:
    /// the `to` end, when the fallback is HEAD's file, committed after it
    /// (the other ends read it only where their own root is missing).
    pub fallback_end: Option<FallbackEnd>,
}

/// The end named by [`SettingsRequest::fallback_end`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FallbackEnd {
    /// The revision whose tree this is.
    Tree(ObjectId),
    /// The working tree.
    Worktree,
}

/// One end's settings and where they came from: a [`RuntimeSpec`] and
/// its origin as that end applied it, named for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecWithOrigin {
    /// The resolved settings.
    pub spec: RuntimeSpec,
    /// The file they came from (`fpcheck.toml at v1.2.0`, `fpcheck.toml in
    /// the working tree`, `--config x.toml`), `None` when no file applied
    /// (defaults and flags).
    pub origin: Option<String>,
}

impl SettingsRequest {
    /// The same request for the runtime `name` (`None`: the file's single
    /// `[runtime]`, or the defaults), the other flags kept: how each
    /// runtime of a repository is read in turn.
    pub fn for_runtime(&self, name: Option<&str>) -> SettingsRequest {
        let mut request = self.clone();
        request.overrides.runtime = name.map(str::to_string);
        request
    }

    /// Settings from overrides only (no file).
    pub fn overrides_only(overrides: Overrides) -> Self {
        SettingsRequest {
            origin: SettingsOrigin::None,
            overrides,
            fallback_rule: FallbackRule::Off,
            fallback: None,
            fallback_end: None,
        }
    }

    /// The committed file that applies at the revision whose tree is
    /// `tree` (`name` in messages): its own, else the fallback; and how a
    /// report names it.
    pub fn committed_at(
        &self,
        repo: &Session,
        tree: ObjectId,
        name: &str,
    ) -> Result<(Option<ConfigFile>, String), ConfigError> {
        let own = at_revision(repo, tree, name)?;
        let shown = format!("{FILE_NAME} at {name}");
        if own.is_some() || self.fallback.is_none() {
            return Ok((own, shown));
        }
        let root_there = self.fallback_end != Some(FallbackEnd::Tree(tree))
            && has_dir(repo, tree, &self.own_root()?, name)?;
        Ok(self.or_fallback(own, shown, name, root_there))
    }

    /// `own` (named `shown`) at the end `name`, else the fallback, unless
    /// the end's own settings (the defaults and flags) find their root
    /// there (`root_there`): those are then what its gate most likely
    /// ran with, and a file from another end must not hide a change they
    /// see. The fallback is for the end whose own settings find nothing.
    pub fn or_fallback(
        &self,
        own: Option<ConfigFile>,
        shown: String,
        name: &str,
        root_there: bool,
    ) -> (Option<ConfigFile>, String) {
        match (own, &self.fallback) {
            (None, Some(fb)) if !root_there => (Some(fb.file.clone()), fb.shown_at(name)),
            (own, _) => (own, shown),
        }
    }

    /// Whether the root of this request's own settings without a file (the
    /// defaults and flags) is a directory of the working tree at `top`.
    pub fn own_root_in(&self, top: &Path) -> Result<bool, ConfigError> {
        let root = self.own_root()?;
        Ok(std::fs::symlink_metadata(top.join(&root)).is_ok_and(|m| m.is_dir()))
    }

    /// Whether the root of this request's own settings without a file is
    /// a directory of the tree `tree` (`name` in messages).
    pub fn own_root_at(
        &self,
        repo: &Session,
        tree: ObjectId,
        name: &str,
    ) -> Result<bool, ConfigError> {
        has_dir(repo, tree, &self.own_root()?, name)
    }

    /// The root of the defaults and flags, without a file (a runtime's
    /// name, which only a file declares, aside).
    fn own_root(&self) -> Result<String, ConfigError> {
        let overrides = Overrides {
            runtime: None,
            ..self.overrides.clone()
        };
        Ok(resolve(None, &overrides)?.root)
    }

    /// This request with its fallback found for a range `from..to` (`to`:
    /// `None` for the working tree, whose own file is read by
    /// `to_worktree`), by its [`FallbackRule`]. Only for
    /// [`SettingsOrigin::Committed`].
    pub fn with_range_fallback(
        mut self,
        repo: &Session,
        from: (ObjectId, &str),
        to: Option<(ObjectId, &str)>,
        to_worktree: Option<&Path>,
    ) -> Result<SettingsRequest, ConfigError> {
        if !matches!(self.origin, SettingsOrigin::Committed) || self.fallback.is_some() {
            return Ok(self);
        }
        self.fallback = match self.fallback_rule {
            FallbackRule::Off => None,
            FallbackRule::From => Fallback::at_revision(repo, from.0, from.1)?,
            FallbackRule::ToThenHead => {
                let to_file = match (to, to_worktree) {
                    (Some((tree, name)), _) => Fallback::at_revision(repo, tree, name)?,
                    (None, Some(top)) => ConfigFile::find_in(top)?.map(|(_, file)| Fallback {
                        file,
                        shown: format!("{FILE_NAME} in the working tree"),
                    }),
                    (None, None) => None,
                };
                match to_file {
                    Some(f) => Some(f),
                    None => {
                        // HEAD's file, committed after the `to` end: it
                        // describes that end whatever the defaults find.
                        self.fallback_end = Some(match to {
                            Some((tree, _)) => FallbackEnd::Tree(tree),
                            None => FallbackEnd::Worktree,
                        });
                        Fallback::at_head(repo)?
                    }
                }
            }
        };
        Ok(self)
    }

    /// The settings of the revision whose tree is `tree` (`name` in messages).
    pub fn at_revision(
        &self,
        repo: &Session,
        tree: ObjectId,
        name: &str,
    ) -> Result<SpecWithOrigin, ConfigError> {
        match &self.origin {
            SettingsOrigin::Committed => {
                let (file, shown) = self.committed_at(repo, tree, name)?;
                self.resolve_end(file.as_ref(), &shown, named(&shown))
            }
            _ => self.shared(),
        }
    }

    /// The settings of the working tree whose top is `top`.
    pub fn at_worktree(&self, top: &Path) -> Result<SpecWithOrigin, ConfigError> {
        match &self.origin {
            SettingsOrigin::Committed => {
                let own = ConfigFile::find_in(top)?.map(|(_, f)| f);
                let root_there = own.is_some()
                    || (self.fallback_end != Some(FallbackEnd::Worktree)
                        && self.own_root_in(top)?);
                let (file, shown) = self.or_fallback(
                    own,
                    format!("{FILE_NAME} in the working tree"),
                    "the working tree",
                    root_there,
                );
                self.resolve_end(file.as_ref(), &shown, named(&shown))
            }
            _ => self.shared(),
        }
    }

    /// The settings when one file (or none) applies everywhere.
    pub fn shared(&self) -> Result<SpecWithOrigin, ConfigError> {
        match &self.origin {
            SettingsOrigin::File { path, file } => {
                let shown = path.display().to_string();
                let prefix = Message::new().setting(Setting::Config, Value::Given(shown.clone()));
                self.resolve_end(Some(file), &format!("--config {shown}"), prefix)
            }
            _ => Ok(SpecWithOrigin {
                spec: resolve(None, &self.overrides)?,
                origin: None,
            }),
        }
    }

    /// The settings of an end whose committed file (already read, `None`
    /// when there is none) is `file`; `shown` names it in messages. With
    /// `--config` or no file at all, the shared settings apply instead, as
    /// in [`SettingsRequest::at_revision`] (for `history`, which reads every
    /// release's file once and resolves it for each runtime).
    pub fn with_committed(
        &self,
        file: Option<&ConfigFile>,
        shown: &str,
    ) -> Result<SpecWithOrigin, ConfigError> {
        match &self.origin {
            SettingsOrigin::Committed => self.resolve_end(file, shown, named(shown)),
            _ => self.shared(),
        }
    }

    /// The tag pattern of the runtime the flags name (the only one
    /// declared when they name none): `--tag-pattern` over the key of the
    /// file that applies, `committed` for [`SettingsOrigin::Committed`] (the
    /// file of the revision whose tags are wanted). `None` when neither
    /// sets one, or the file does not declare that runtime: every tag
    /// that is a version is then a release, as without the key.
    pub fn tag_pattern(&self, committed: Option<&ConfigFile>) -> Option<String> {
        if let Some(flag) = &self.overrides.tag_pattern {
            return Some(flag.clone());
        }
        let file = match &self.origin {
            SettingsOrigin::Committed => committed?,
            SettingsOrigin::File { file, .. } => file,
            SettingsOrigin::None => return None,
        };
        let table = match (&self.overrides.runtime, &file.runtime) {
            (None, Some(table)) => table,
            (Some(_), Some(_)) => return None,
            (Some(name), None) => file.runtimes.get(name)?,
            (None, None) if file.runtimes.len() == 1 => file.runtimes.values().next()?,
            (None, None) => return None,
        };
        table.tag_pattern.clone()
    }

    /// `shown` names the file in reports (as given), `prefix` in the
    /// messages of its errors (its settings typed).
    fn resolve_end(
        &self,
        file: Option<&ConfigFile>,
        shown: &str,
        prefix: Message,
    ) -> Result<SpecWithOrigin, ConfigError> {
        let spec = resolve(file, &self.overrides).map_err(|e| match e {
            ConfigError::Invalid(m) if file.is_some() => {
                ConfigError::Invalid(prefix.text(": ").then(m))
            }
            other => other,
        })?;
        Ok(SpecWithOrigin {
            spec,
            origin: file.map(|_| shown.to_string()),
        })
    }
}

/// Whether `path` (from the top, `""` or `.` the top) is a directory of
/// the tree `tree`; `name` names the revision in messages.
fn has_dir(repo: &Session, tree: ObjectId, path: &str, name: &str) -> Result<bool, ConfigError> {
    let mut id = tree;
    for part in path.split('/').filter(|p| !p.is_empty() && *p != ".") {
        let t = repo.tree(id, &format!("the tree of {name}"), name)?;
        let Some(entry) = t.find_entry(part) else {
            return Ok(false);
        };
        if !entry.mode().is_tree() {
            return Ok(false);
        }
        id = entry.object_id();
    }
    Ok(true)
}

/// `shown` as the start of a message, naming no setting (raw: names are
/// escaped once, where the message is shown).
fn named(shown: &str) -> Message {
    Message::from(shown)
}

/// What differs between two ends' settings, as `key: old → new` clauses;
/// empty when the fingerprints were computed alike.
pub fn differences(from: &RuntimeSpec, to: &RuntimeSpec) -> Vec<String> {
    let list = |v: &[String]| format!("[{}]", v.join(", "));
    let root = |r: &str| crate::source::show_root(r).to_string();
    let mut out = Vec::new();
    if from.root != to.root {
        out.push(format!("root {} → {}", root(&from.root), root(&to.root)));
    }
    if from.rules.extensions != to.rules.extensions {
        out.push(format!(
            "extensions {} → {}",
            list(&from.rules.extensions),
            list(&to.rules.extensions)
        ));
    }
    if from.rules.exclude != to.rules.exclude {
        out.push(format!(
            "exclude {} → {}",
            list(&from.rules.exclude),
            list(&to.rules.exclude)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_each_key_that_moved() {
        let from = RuntimeSpec::default();
        let mut to = RuntimeSpec::default();
        assert!(differences(&from, &to).is_empty());
        to.root = String::new();
        to.rules.exclude = vec!["app.py".into()];
        to.version_file = Some("v.json".into()); // not a fingerprint setting
        assert_eq!(
            differences(&from, &to),
            [
                "root src → .".to_string(),
                "exclude [scripts, tests, migrations, crons, __pycache__, node_modules, .git, versions] → [app.py]".to_string()
            ]
        );
    }

    #[test]
    fn flags_apply_to_both_ends_and_name_the_file_in_errors() {
        let file = ConfigFile::parse(
            "[runtimes.a]\nroot = \"a\"\n[runtimes.b]\nroot = \"b\"\n",
            Path::new("x.toml"),
        )
        .unwrap();
        let request = SettingsRequest {
            origin: SettingsOrigin::File {
                path: PathBuf::from("x.toml"),
                file,
            },
            overrides: Overrides::default(),
            fallback_rule: FallbackRule::Off,
            fallback: None,
            fallback_end: None,
        };
        let err = request.shared().unwrap_err().to_string();
        assert!(
            err.starts_with("--config x.toml: the config declares several runtimes (a, b)"),
            "{err}"
        );
        let mut request = request;
        request.overrides.runtime = Some("b".into());
        let end = request.shared().unwrap();
        assert_eq!(
            (end.spec.root.as_str(), end.origin.as_deref()),
            ("b", Some("--config x.toml"))
        );
    }
}

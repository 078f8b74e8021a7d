//! The witness: git's own checkout confirms a "no restart" before fpcheck
//! says it, on trees whose checkout fpcheck emulates.
//!
//! fpcheck reads a release's bytes from git objects, emulating what a
//! checkout writes (`.gitattributes` conversions, symbolic links, odd
//! names, submodules). On a tree with none of those the checkout writes
//! each blob as stored, and there is nothing to confirm. On one with any of
//! them, a wrong emulation could read as "no restart" for bytes that
//! changed; so before a range or `history` says "no restart" there, `git`
//! itself checks both ends out into a temporary directory ([`checkout`]),
//! those directories are read the way the installed gate reads one
//! (`--dir`: [`DirSource`], [`crate::release::read`]), and the same
//! decision ([`verdict::decide_update`]) is made on what they hold. Agreed,
//! the verdict stands and says it was confirmed; otherwise it turns into a
//! restart (`witness_disagrees`). This module runs `git`, a process: the
//! one place in the library that does.

use std::collections::HashMap;

use gix::ObjectId;
use serde::Serialize;

use crate::config::RuntimeSpec;
use crate::pair::Pair;
use crate::source::git::Session;
use crate::source::DirSource;
use crate::verdict::{self, Reason, SettingsCheck, SideFacts};
use crate::warning::{Code, Warning};

mod checkout;

use checkout::{Git, GitError, Wanted};

/// When the witness runs (`--witness`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Before every "no restart" on a tree whose checkout fpcheck emulates.
    #[default]
    Auto,
    /// Before every "no restart", whatever the trees.
    Always,
    /// Never.
    Never,
}

impl Mode {
    /// The names the command line and the Python package take.
    pub const NAMES: [&'static str; 3] = ["auto", "always", "never"];

    /// The mode named `name`, if any.
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "auto" => Some(Mode::Auto),
            "always" => Some(Mode::Always),
            "never" => Some(Mode::Never),
            _ => None,
        }
    }
}

/// What the witness did for one verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The verdict is a restart, or (`auto`) neither tree calls for it.
    NotNeeded,
    /// `--witness never`.
    Off,
    /// git's checkouts give the same verdict and the same fingerprints.
    Confirmed,
    /// No `git` on `PATH`: the verdict stands, with a warning.
    Unconfirmed,
    /// git is there but could not check out a tree whose checkout fpcheck
    /// emulates (it refused the tree, or failed): nothing confirms the
    /// emulation, so the verdict is a restart.
    Failed,
    /// git's checkouts say otherwise: the verdict is a restart.
    Disagreed,
}

/// The witness of one verdict, as reports show it (`witness` in the JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Witness {
    /// The mode it ran under.
    pub mode: Mode,
    /// What it did.
    pub status: Status,
    /// What called for it (`null` when it did not run).
    pub why: Option<String>,
    /// One sentence for people, when it ran (the table's and Markdown's
    /// `witness:` line); `null` when it did not.
    pub summary: Option<String>,
    /// `git version` of the git that checked the ends out.
    pub git: Option<String>,
    /// The fingerprint of git's checkout of each end (`""` unavailable),
    /// when it got that far.
    pub fingerprints: Option<Pair<String>>,
    /// Whether the decision on git's checkouts restarts, and why.
    pub restart_required: Option<bool>,
    /// Its reason.
    pub reason: Option<Reason>,
}

impl Witness {
    /// A witness that did not run.
    pub fn not_run(mode: Mode) -> Self {
        Witness {
            mode,
            status: if mode == Mode::Never {
                Status::Off
            } else {
                Status::NotNeeded
            },
            why: None,
            summary: None,
            git: None,
            fingerprints: None,
            restart_required: None,
            reason: None,
        }
    }

    /// Whether it did not run (not needed, or off): what a history's
    /// update leaves out.
    pub fn not_run_here(&self) -> bool {
        matches!(self.status, Status::NotNeeded | Status::Off)
    }

    /// Whether the witness turns the verdict into a restart: git's
    /// checkouts contradict it, or git failed on a tree it had to check.
    pub fn disagreed(&self) -> bool {
        matches!(self.status, Status::Disagreed | Status::Failed)
    }
}

impl Default for Witness {
    fn default() -> Self {
        Witness::not_run(Mode::Auto)
    }
}

/// One end of an update, as fpcheck read it.
#[derive(Clone, Debug)]
pub struct ClaimedEnd<'a> {
    /// The name reports give it (`v1.2.0`).
    pub name: &'a str,
    /// Its tree; `None` for an end git cannot check out (the working
    /// tree, whose files are already on disk): its facts are fpcheck's.
    pub tree: Option<ObjectId>,
    /// The settings it was fingerprinted with.
    pub spec: &'a RuntimeSpec,
    /// fpcheck's fingerprint: `None` when not computed, `""` unavailable.
    pub fingerprint: Option<&'a str>,
    /// fpcheck's facts of it, for an end git does not check out.
    pub facts: SideFacts,
    /// Why its tree calls for the witness ([`crate::source::GitSource::unusual`]).
    pub unusual: Option<&'static str>,
}

/// An update to confirm.
#[derive(Clone, Debug)]
pub struct Claim<'a> {
    /// Its two ends.
    pub ends: Pair<ClaimedEnd<'a>>,
    /// When the ends' settings differ, the settings the `to` end is also
    /// read with (the cross-check's: the `from` end's).
    pub cross: Option<&'a RuntimeSpec>,
    /// The runtime is declared at one end only ([`verdict::Policy`]).
    pub undeclared: bool,
    /// The releases' own versions differ where neither end has a version
    /// file ([`verdict::Policy`]): the same rule as the claim's decision.
    pub release_changed: bool,
}

/// What git's checkout of one end says.
#[derive(Clone, Debug)]
struct Checked {
    digest: Option<String>,
    why: Option<String>,
    reading: verdict::Reading,
    force_restart: bool,
}

impl Checked {
    fn facts(&self) -> SideFacts {
        self.reading.facts(self.force_restart, self.digest.clone())
    }

    fn gate_text(&self) -> String {
        crate::fingerprint::gate_text(self.digest.as_deref()).to_string()
    }
}

/// The witness of one run: the throwaway repository, made at the first
/// need, and every end already checked out (a history's release is the
/// end of two updates).
pub struct Witnesser<'r> {
    mode: Mode,
    repo: &'r Session,
    git: Option<Result<Git, String>>,
    info_attributes: Option<bool>,
    checked: HashMap<(ObjectId, String), Result<Checked, String>>,
}

impl<'r> Witnesser<'r> {
    /// The witness of `repo` under `mode`.
    pub fn new(repo: &'r Session, mode: Mode) -> Self {
        Witnesser {
            mode,
            repo,
            git: None,
            info_attributes: None,
            checked: HashMap::new(),
        }
    }

    /// The mode it runs under.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Confirms a verdict on `update` (`restart_required`, as fpcheck
    /// decided it): runs only for a "no restart", and under `auto` only
    /// when an end's tree calls for it.
    pub fn judge(&mut self, restart_required: bool, update: &Claim<'_>) -> Witness {
        if self.mode == Mode::Never || restart_required {
            return Witness::not_run(self.mode);
        }
        let Some(why) = self.why(update) else {
            return Witness::not_run(self.mode);
        };
        let mut witness = Witness {
            why: Some(why),
            ..Witness::not_run(self.mode)
        };
        match self.decide(update) {
            Ok((checked, decided, git)) => {
                witness.git = Some(git);
                let fps = checked.as_ref().map(|c| c.gate_text());
                witness.restart_required = Some(decided.decision.restart_required);
                witness.reason = Some(decided.decision.reason);
                let differs = differing(update, &fps);
                witness.status = if decided.decision.restart_required || !differs.is_empty() {
                    Status::Disagreed
                } else {
                    Status::Confirmed
                };
                witness.summary = Some(match witness.status {
                    Status::Confirmed => {
                        "confirmed: git's own checkout of each end gives the same fingerprint and the same verdict".to_string()
                    }
                    _ => format!(
                        "disagrees: on git's own checkout of each end the verdict is {} ({}){}",
                        if decided.decision.restart_required { "a restart" } else { "no restart" },
                        decided.decision.reason.as_str(),
                        if differs.is_empty() {
                            String::new()
                        } else {
                            format!(", and the fingerprint of {} differs", differs.join(" and "))
                        }
                    ),
                });
                witness.fingerprints = Some(fps);
            }
            Err(why) if why == NO_GIT => {
                witness.status = Status::Unconfirmed;
                witness.summary = Some(format!("unconfirmed: {why}"));
            }
            Err(why) => {
                witness.status = Status::Failed;
                witness.summary = Some(format!("failed: {why}"));
            }
        }
        witness
    }

    /// What calls for the witness on `update`, `None` when nothing does.
    fn why(&mut self, update: &Claim<'_>) -> Option<String> {
        if self.mode == Mode::Always {
            return Some("--witness always".into());
        }
        for end in [&update.ends.from, &update.ends.to] {
            if let Some(what) = end.unusual {
                return Some(format!("{what} at {}", end.name));
            }
        }
        // Written by hand in one clone, never in an installer's: fpcheck
        // does not read it, and neither does the witness, but a user who
        // wrote one may expect otherwise.
        let info = *self.info_attributes.get_or_insert_with(|| {
            self.repo
                .repo()
                .common_dir()
                .join("info/attributes")
                .exists()
        });
        info.then(|| "the repository has an info/attributes file".to_string())
    }

    /// Both ends as git checks them out, the decision on them, and the
    /// git that did it.
    #[allow(clippy::type_complexity)]
    fn decide(
        &mut self,
        update: &Claim<'_>,
    ) -> Result<(Pair<Checked>, verdict::Decided, String), String> {
        let from = self.end(&update.ends.from, update.ends.from.spec)?;
        let to = self.end(&update.ends.to, update.ends.to.spec)?;
        let cross = match update.cross {
            Some(spec) => {
                let c = self.end(&update.ends.to, spec)?;
                Some(SettingsCheck::new(c.digest, c.why, from.digest.as_deref()))
            }
            None => None,
        };
        let decided = verdict::decide_update(
            &from.facts(),
            &to.facts(),
            verdict::Policy {
                undeclared: update.undeclared,
                settings_check: cross.as_ref(),
                release_changed: update.release_changed,
            },
        );
        let git = match &self.git {
            Some(Ok(git)) => git.version.clone(),
            _ => String::new(),
        };
        Ok((Pair::new(from, to), decided, git))
    }

    /// One end read with `spec`: git's checkout of its tree, or fpcheck's
    /// own facts for an end that has no tree.
    fn end(&mut self, end: &ClaimedEnd<'_>, spec: &RuntimeSpec) -> Result<Checked, String> {
        let Some(tree) = end.tree else {
            return Ok(Checked {
                digest: end.facts.fingerprint.clone(),
                why: None,
                reading: verdict::Reading {
                    version_key: end.facts.version.clone(),
                    updater_version: end.facts.updater_version.clone(),
                    version_unreadable: end.facts.version_unreadable,
                },
                force_restart: end.facts.force_restart,
            });
        };
        let key = (tree, format!("{}\0{:?}", spec.root, spec.rules));
        if let Some(done) = self.checked.get(&key) {
            return done.clone();
        }
        let checked = self.check_out(tree, spec);
        self.checked.insert(key, checked.clone());
        checked
    }

    fn check_out(&mut self, tree: ObjectId, spec: &RuntimeSpec) -> Result<Checked, String> {
        let repo = self.repo.repo();
        let git = self.git.get_or_insert_with(|| {
            Git::new(&repo.common_dir().join("objects"), repo.object_hash()).map_err(|e| match e {
                GitError::Missing => NO_GIT.to_string(),
                other => other.to_string(),
            })
        });
        let git = git.as_mut().map_err(|e| e.clone())?;
        let root = crate::source::normalise_root(&spec.root);
        let top = git
            .checkout(
                &tree.to_string(),
                &[Wanted {
                    root: &root,
                    rules: &spec.rules,
                }],
            )
            .map_err(|e| e.to_string())?;
        let dir = if root.is_empty() {
            top
        } else {
            use std::os::unix::ffi::OsStrExt;
            top.join(std::ffi::OsStr::from_bytes(root.as_bytes()))
        };
        let source = DirSource::with_display(dir, crate::source::show_root(&root).to_string());
        let cannot = |e: crate::source::SourceError| format!("git's checkout cannot be read: {e}");
        let fp = crate::fingerprint::compute(&source, &spec.rules).map_err(cannot)?;
        let release = crate::release::read(&source).map_err(cannot)?;
        Ok(Checked {
            digest: fp.digest,
            why: fp.unavailable_reason,
            reading: verdict::Reading::of(&release),
            force_restart: release.force_restart,
        })
    }
}

/// Why the witness could not run when `git` is not on `PATH`: the one
/// failure that leaves the verdict standing.
const NO_GIT: &str = "no `git` on PATH";

/// The ends whose fingerprint fpcheck computed and git's checkout gives
/// otherwise, by name.
fn differing<'a>(update: &'a Claim<'_>, git: &Pair<String>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for (end, theirs) in [(&update.ends.from, &git.from), (&update.ends.to, &git.to)] {
        let ours = end.fingerprint.and_then(crate::fingerprint::available);
        if let Some(ours) = ours {
            if ours != theirs {
                out.push(end.name);
            }
        }
    }
    out
}

/// The witness's summary after its leading word (`failed: …`).
fn detail<'a>(witness: &'a Witness, word: &str) -> &'a str {
    (witness.summary.as_deref())
        .and_then(|s| s.strip_prefix(word))
        .unwrap_or("")
}

/// The warning a witness that did not confirm gives, for an update from
/// `names.from` to `names.to` whose fingerprints fpcheck gave as
/// `ours` (gate text, `None` not computed); `None` for one that did not
/// run or confirmed.
pub fn warning(witness: &Witness, names: Pair<&str>, ours: Pair<Option<&str>>) -> Option<Warning> {
    let shown = |fp: Option<&str>| match fp {
        None => "not computed".to_string(),
        Some(fp) => crate::fingerprint::short(fp)
            .unwrap_or("unavailable")
            .to_string(),
    };
    match witness.status {
        Status::Disagreed => {
            let theirs = witness.fingerprints.as_ref()?;
            Some(Warning::new(
                Code::WitnessDisagrees,
                format!(
                    "git's own checkout of {from} and {to} disagrees with fpcheck's \"no restart\": \
                     {}; fpcheck's fingerprints {} → {}, git's checkout's {} → {}; the verdict is \
                     a restart. fpcheck's reading of this tree is wrong: please report it as a bug \
                     in fpcheck, with this warning",
                    detail(witness, "disagrees: "),
                    shown(ours.from),
                    shown(ours.to),
                    shown(Some(&theirs.from)),
                    shown(Some(&theirs.to)),
                    from = names.from,
                    to = names.to,
                ),
            ))
        }
        Status::Failed => Some(Warning::new(
            Code::WitnessUnconfirmed,
            format!(
                "fpcheck's \"no restart\" from {} to {} could not be confirmed: git failed to \
                 check out a tree whose checkout fpcheck emulates: {} ({}); the verdict is a \
                 restart. Check that `git` works here (`git --version`), or pass --witness never \
                 to take fpcheck's reading alone",
                names.from,
                names.to,
                detail(witness, "failed: "),
                witness.why.as_deref().unwrap_or(""),
            ),
        )),
        Status::Unconfirmed => Some(Warning::new(
            Code::WitnessUnconfirmed,
            format!(
                "fpcheck's \"no restart\" from {} to {} is unconfirmed: {} ({}), so git's own \
                 checkout could not confirm it; the verdict stands on fpcheck's reading alone",
                names.from,
                names.to,
                detail(witness, "unconfirmed: "),
                witness.why.as_deref().unwrap_or(""),
            ),
        )),
        _ => None,
    }
}

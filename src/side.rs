//! One side of a release: where it came from, what it says about itself
//! (version, `force_restart`), and its runtime fingerprint.

use serde::Serialize;
use serde_json::Value;

use crate::fingerprint::Fingerprint;
use crate::release::Release;

/// One end of a comparison, as reports show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    /// The revision as given (`WORKTREE` for the working tree).
    #[serde(rename = "ref")]
    pub reference: String,
    /// The commit it resolved to (`null` for the working tree or a tree spec).
    pub commit: Option<String>,
    /// True when this side is the working tree.
    pub worktree: bool,
    /// The version the gate reads (`null` when none).
    pub version: Option<String>,
    /// The file the version came from.
    pub version_file: Option<String>,
    /// Whether the gate considers `force_restart` on.
    pub force_restart: bool,
    /// Its raw JSON value (`null` when absent).
    pub force_restart_raw: Option<Value>,
    /// The runtime fingerprint, `""` when unavailable.
    pub fingerprint: String,
    /// Why the fingerprint is unavailable.
    pub unavailable_reason: Option<String>,
    /// How many runtime files it hashes (0 when unavailable).
    pub runtime_files: usize,
    /// The updater's own reading of the version (section 6).
    #[serde(skip)]
    pub updater_version: crate::release::UpdaterVersion,
    /// The version as compared (`Release::version_key`).
    #[serde(skip)]
    pub version_key: String,
    /// A version file is there but cannot be read.
    #[serde(skip)]
    pub version_unreadable: bool,
}

impl Side {
    /// Assembles a side from what was read.
    pub fn new(
        reference: String,
        commit: Option<String>,
        worktree: bool,
        release: &Release,
        fp: &Fingerprint,
    ) -> Self {
        Side {
            reference,
            commit,
            worktree,
            version: release.version.clone(),
            version_file: release.version_file.clone(),
            force_restart: release.force_restart,
            force_restart_raw: release.force_restart_raw.clone(),
            fingerprint: fp.as_gate_str().to_string(),
            unavailable_reason: fp.unavailable_reason.clone(),
            runtime_files: fp.files().len(),
            updater_version: release.updater_version.clone(),
            version_key: release.version_key(),
            version_unreadable: !release.unreadable.is_empty(),
        }
    }

    /// What the decision needs of this side.
    pub fn facts(&self) -> crate::verdict::SideFacts {
        crate::verdict::SideFacts {
            version: self.version_key.clone(),
            fingerprint: self.fingerprint.clone(),
            force_restart: self.force_restart,
            updater_version: self.updater_version.clone(),
            version_unreadable: self.version_unreadable,
        }
    }

    /// The fingerprint's first 12 hex digits, or `unavailable`.
    pub fn short_fingerprint(&self) -> &str {
        crate::fingerprint::short(&self.fingerprint).unwrap_or("unavailable")
    }
}

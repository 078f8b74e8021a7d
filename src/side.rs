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
    /// The version reported: the version file's, else the version of the
    /// release tag this side was given as (`source: "tag"`); `null` for
    /// neither. The reference updater reads `version` only.
    pub release_version: Option<crate::version::ReleaseVersion>,
    /// Whether the gate considers `force_restart` on.
    pub force_restart: bool,
    /// Its raw JSON value (`null` when absent).
    pub force_restart_raw: Option<Value>,
    /// The runtime fingerprint, `""` when unavailable, `null` when not
    /// computed (`fingerprint_skipped` says why).
    pub fingerprint: Option<String>,
    /// Why the fingerprint was not computed, when it was not:
    /// `selection_unchanged` (both ends select the same list of (path, blob
    /// id), so their fingerprints are equal whatever they are, and the
    /// verdict needs nothing more). `null` when `fingerprint` is not null.
    pub fingerprint_skipped: Option<Skipped>,
    /// Why the fingerprint is unavailable.
    pub unavailable_reason: Option<String>,
    /// How many runtime files it hashes (0 when unavailable).
    pub runtime_files: usize,
    /// What section 6 reads of the version beside the fingerprint.
    #[serde(skip)]
    pub reading: crate::verdict::Reading,
    /// The tree it was read from (`None` for the working tree), for what
    /// reads the same end again (classification) without resolving its
    /// name anew.
    #[serde(skip)]
    pub tree: Option<gix::ObjectId>,
    /// Why its tree's checkout is more than its blobs (see
    /// [`crate::source::GitSource::unusual`]), for the witness; `None` for
    /// an ordinary tree or the working tree.
    #[serde(skip)]
    pub unusual: Option<&'static str>,
}

/// Why a fingerprint was not computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skipped {
    /// Both ends select the same list of (path, blob id).
    SelectionUnchanged,
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
            release_version: release
                .version
                .as_deref()
                .map(|v| crate::version::ReleaseVersion::of(Some(v), v)),
            force_restart: release.force_restart,
            force_restart_raw: release.force_restart_raw.clone(),
            fingerprint: Some(fp.as_gate_str().to_string()),
            fingerprint_skipped: None,
            unavailable_reason: fp.unavailable_reason.clone(),
            runtime_files: fp.files().len(),
            reading: crate::verdict::Reading::of(release),
            tree: None,
            unusual: None,
        }
    }

    /// This side with its runtime's `pyproject.toml` version and, when it
    /// was given as a release tag, the version the tag names: without a
    /// version file, its reported version is the `pyproject.toml`'s, else
    /// the tag's.
    pub fn with_release_version(
        mut self,
        pyproject: Option<String>,
        tag_version: Option<String>,
    ) -> Self {
        if self.version.is_none() {
            self.release_version = crate::version::ReleaseVersion::choose(
                None,
                pyproject.as_deref(),
                tag_version.as_deref(),
            );
        }
        self
    }

    /// This side with its fingerprint not computed: its selection, of
    /// `files` files, is the other end's.
    pub fn skipped(mut self, files: usize) -> Self {
        self.fingerprint = None;
        self.fingerprint_skipped = Some(Skipped::SelectionUnchanged);
        self.unavailable_reason = None;
        self.runtime_files = files;
        self
    }

    /// The fingerprint as the gate compares it: the digest, `None` when
    /// unavailable. Skipped, it stands as a token both ends share (they
    /// are skipped together, only when their selections are equal): equal
    /// selections, equal fingerprints. Never shown: it is not a digest.
    pub fn gate_fingerprint(&self) -> Option<String> {
        match (&self.fingerprint, self.fingerprint_skipped) {
            (Some(fp), _) => crate::fingerprint::available(fp).map(String::from),
            (None, Some(Skipped::SelectionUnchanged)) => Some("selection-unchanged".into()),
            (None, None) => None,
        }
    }

    /// The fingerprint is unavailable (not merely skipped).
    pub fn unavailable(&self) -> bool {
        // Computed (not skipped), and the gate's text for unavailable.
        self.fingerprint
            .as_deref()
            .is_some_and(|fp| crate::fingerprint::available(fp).is_none())
    }

    /// What the decision needs of this side.
    pub fn facts(&self) -> crate::verdict::SideFacts {
        self.reading
            .facts(self.force_restart, self.gate_fingerprint())
    }

    /// The fingerprint's first 12 hex digits, `unavailable`, or `same (not
    /// computed)` when skipped.
    pub fn short_fingerprint(&self) -> &str {
        match self.fingerprint.as_deref() {
            None => "same (not computed)",
            Some(fp) => crate::fingerprint::short(fp).unwrap_or("unavailable"),
        }
    }
}

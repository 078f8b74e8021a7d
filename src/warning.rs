//! Warnings a releaser must see, and the explanations of `patch`, each with
//! a stable code for tools.
//!
//! Every code fpcheck emits is a variant of [`Code`]: a producer names its
//! code where it knows what happened, and no layer above relabels it. The
//! JSON of the range, `history` and `patch` carries `{code, message}`; the
//! JSON of `fingerprint`, `gate` and `status` carries the messages alone
//! (their schema 1 says strings, see [`messages`]), and the snapshot file
//! its messages with `warning_codes` beside them (see [`split`]).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The stable codes (README "Warnings", docs/patch.md "Explanation codes"),
/// written in snake_case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    // The release (section 5) and the decision (section 6).
    /// `force_restart` is not a JSON boolean.
    ForceRestartNotBoolean,
    /// `force_restart` was on in the previous release and still is.
    ForceRestartCarriedOver,
    /// `force_restart` is on but the version did not change.
    ForcedWithoutVersionChange,
    /// Runtime code changed but the version did not.
    CodeChangedVersionUnchanged,
    /// The version decreased.
    VersionWentBackwards,
    /// A fingerprint is unavailable, and why.
    FingerprintUnavailable,
    /// Unavailable fingerprint and unchanged version.
    RestartUndetectable,
    /// `history`: most releases have no fingerprint (the root is likely
    /// missing there).
    FingerprintsMostlyUnavailable,
    /// A runtime declared at one end only.
    RuntimeNotDeclared,
    /// The ends' committed settings differ.
    SettingsChanged,
    /// The `to` end's settings hide a change the `from` end's see.
    SettingsChangedRuntimeChanged,
    /// `.gitattributes` may make a checkout differ from the hashed blobs.
    GitattributesConversion,
    /// A directory under the root could not be read and was skipped.
    DirectorySkipped,
    /// A version file the gate skips (not JSON for Python, not an object).
    VersionFileInvalid,
    /// A `"version"` that is not a string.
    VersionNotString,
    /// A version file that is there but cannot be read.
    VersionFileUnreadable,
    /// A version file only Python reads.
    VersionFilePythonJson,
    /// `history`: tags of equal version precedence on different commits.
    EqualVersionTags,
    // The gate (docs/gate.md).
    /// A `--client` that is not a known client.
    UnknownClient,
    /// The installed files do not hash to the recorded fingerprint.
    RecordedFingerprintMismatch,
    /// `status --cache`: the cache could not be written.
    CacheNotWritten,
    /// `status`, `ack`: the installed runtime's fingerprint is unavailable
    /// (`--dir` missing, not a directory, or a file in it unreadable), so
    /// it cannot prove the process current or stale.
    InstalledUnavailable,
    // `patch` explanations (docs/patch.md).
    /// `force_restart` turned off: code changed, clients restart anyway.
    ForceRestartRedundant,
    /// `force_restart` kept or set by `--force-restart`.
    ForceRestartRequested,
    /// `force_restart` set by `--force-on-advice`: a possible missed
    /// restart.
    ForceRestartOnAdvice,
    /// `force_restart` is set in another version file.
    ForceRestartElsewhere,
    /// `force_restart` on without a version change.
    ForceRestartWithoutVersionChange,
    /// The version file is to be created.
    VersionFileMissing,
    /// The version copied from another file.
    VersionCopied,
    /// No version anywhere.
    VersionMissing,
    /// The version file is one the gate does not read.
    VersionFileNotReadByGate,
    /// A runtime's record under `runtimes` is replaced whole.
    RuntimesReplaced,
    /// Several runtimes: `force_restart` left as it is.
    ForceRestartUntouched,
    // The witness (docs/spec.md section 4.2).
    /// git's own checkout contradicts a "no restart": now a restart.
    WitnessDisagrees,
    /// git could not confirm a "no restart" (missing, too old, failed).
    WitnessUnconfirmed,
}

impl Code {
    /// Every code, for the test that each is documented.
    pub const ALL: [Code; 35] = [
        Code::ForceRestartNotBoolean,
        Code::ForceRestartCarriedOver,
        Code::ForcedWithoutVersionChange,
        Code::CodeChangedVersionUnchanged,
        Code::VersionWentBackwards,
        Code::FingerprintUnavailable,
        Code::RestartUndetectable,
        Code::FingerprintsMostlyUnavailable,
        Code::RuntimeNotDeclared,
        Code::SettingsChanged,
        Code::SettingsChangedRuntimeChanged,
        Code::GitattributesConversion,
        Code::DirectorySkipped,
        Code::VersionFileInvalid,
        Code::VersionNotString,
        Code::VersionFileUnreadable,
        Code::VersionFilePythonJson,
        Code::EqualVersionTags,
        Code::UnknownClient,
        Code::RecordedFingerprintMismatch,
        Code::CacheNotWritten,
        Code::InstalledUnavailable,
        Code::ForceRestartRedundant,
        Code::ForceRestartRequested,
        Code::ForceRestartOnAdvice,
        Code::ForceRestartElsewhere,
        Code::ForceRestartWithoutVersionChange,
        Code::VersionFileMissing,
        Code::VersionCopied,
        Code::VersionMissing,
        Code::VersionFileNotReadByGate,
        Code::RuntimesReplaced,
        Code::ForceRestartUntouched,
        Code::WitnessDisagrees,
        Code::WitnessUnconfirmed,
    ];

    /// The code as written in JSON and on stderr.
    pub fn as_str(self) -> &'static str {
        use Code::*;
        match self {
            ForceRestartNotBoolean => "force_restart_not_boolean",
            ForceRestartCarriedOver => "force_restart_carried_over",
            ForcedWithoutVersionChange => "forced_without_version_change",
            CodeChangedVersionUnchanged => "code_changed_version_unchanged",
            VersionWentBackwards => "version_went_backwards",
            FingerprintUnavailable => "fingerprint_unavailable",
            RestartUndetectable => "restart_undetectable",
            FingerprintsMostlyUnavailable => "fingerprints_mostly_unavailable",
            RuntimeNotDeclared => "runtime_not_declared",
            SettingsChanged => "settings_changed",
            SettingsChangedRuntimeChanged => "settings_changed_runtime_changed",
            GitattributesConversion => "gitattributes_conversion",
            DirectorySkipped => "directory_skipped",
            VersionFileInvalid => "version_file_invalid",
            VersionNotString => "version_not_string",
            VersionFileUnreadable => "version_file_unreadable",
            VersionFilePythonJson => "version_file_python_json",
            EqualVersionTags => "equal_version_tags",
            UnknownClient => "unknown_client",
            RecordedFingerprintMismatch => "recorded_fingerprint_mismatch",
            CacheNotWritten => "cache_not_written",
            InstalledUnavailable => "installed_unavailable",
            ForceRestartRedundant => "force_restart_redundant",
            ForceRestartRequested => "force_restart_requested",
            ForceRestartOnAdvice => "force_restart_on_advice",
            ForceRestartElsewhere => "force_restart_elsewhere",
            ForceRestartWithoutVersionChange => "force_restart_without_version_change",
            VersionFileMissing => "version_file_missing",
            VersionCopied => "version_copied",
            VersionMissing => "version_missing",
            VersionFileNotReadByGate => "version_file_not_read_by_gate",
            RuntimesReplaced => "runtimes_replaced",
            ForceRestartUntouched => "force_restart_untouched",
            WitnessDisagrees => "witness_disagrees",
            WitnessUnconfirmed => "witness_unconfirmed",
        }
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

// Ordered by the written code, as the `&str` codes were.
impl Ord for Code {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// One warning (or `patch` explanation): a stable `code` and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Warning {
    /// What kind of thing happened.
    pub code: Code,
    /// What happened and what it means.
    pub message: String,
}

impl Warning {
    /// A warning with `code` and `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Warning {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Serialises warnings as their messages alone: the JSON of `fingerprint`,
/// `snapshot`, `gate` and `status` (schema 1) holds strings.
pub fn messages<S: Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(warnings.iter().map(|w| w.message.as_str()))
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Code::ALL
            .into_iter()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown warning code {text:?}")))
    }
}

/// Warnings in a document whose `warnings` are strings (the snapshot
/// file): the messages stay there, and the codes go beside them in
/// `warning_codes`, in the same order. Used with `#[serde(flatten, with)]`.
pub mod split {
    use super::{Code, Warning};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a> {
        #[serde(serialize_with = "super::messages")]
        warnings: &'a [Warning],
        warning_codes: Vec<Code>,
    }

    #[derive(Deserialize)]
    struct In {
        warnings: Vec<String>,
        warning_codes: Option<Vec<Code>>,
    }

    /// Writes `warnings` (messages) and `warning_codes`.
    pub fn serialize<S: Serializer>(warnings: &[Warning], s: S) -> Result<S::Ok, S::Error> {
        let warning_codes = warnings.iter().map(|w| w.code).collect();
        Out {
            warnings,
            warning_codes,
        }
        .serialize(s)
    }

    /// Reads them back. A file written before the codes were kept has
    /// none: its messages are dropped, as nothing reads a loaded snapshot's
    /// warnings (a gate reports those of the state it takes itself).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Warning>, D::Error> {
        let read = In::deserialize(d)?;
        let Some(codes) = read.warning_codes else {
            return Ok(Vec::new());
        };
        if codes.len() != read.warnings.len() {
            return Err(serde::de::Error::custom(
                "warning_codes and warnings differ in length",
            ));
        }
        Ok(codes
            .into_iter()
            .zip(read.warnings)
            .map(|(code, message)| Warning { code, message })
            .collect())
    }
}

/// The first three of `paths` and how many more (`a, b, c and 2 more`):
/// how a warning names the files it is about without growing with them.
pub(crate) fn some_paths(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
    match paths.len() {
        n if n > 3 => format!("{} and {} more", shown.join(", "), n - 3),
        _ => shown.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code is in the documented tables, written as tools read it.
    #[test]
    fn every_code_is_documented() {
        let docs: String = ["README.md", "docs/patch.md", "docs/gate.md"]
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        for code in Code::ALL {
            assert!(
                docs.contains(&format!("`{code}`")),
                "{code} is not documented"
            );
            assert_eq!(serde_json::to_value(code).unwrap(), code.as_str());
        }
    }
}

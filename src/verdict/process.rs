//! The running process's check (docs/spec.md section 7): the one
//! implementation, used by `status`, by the range's `process_check` and by
//! the Python package.
//!
//! ```text
//! usable       = installed_fp != "" and process_fp not in ("", "unknown")
//! acknowledged = client != "" and marker.clients[client] == "ok"
//! restart, reason = false, ""
//! if marker present, required and not acknowledged: true, "marker_required"
//! first that holds:
//!   1. marker unreadable                            -> true, "marker_corrupt"
//!   2. usable and installed_fp != process_fp        -> true, kept or "fingerprint_mismatch"
//!   3. required, not acknowledged, to_fingerprint,
//!      process_fp "" or "unknown"                   -> true, kept or "process_fingerprint_missing"
//!   4. not usable, versions non-empty and different -> true, kept or "version_mismatch"
//!   5. acknowledged                                 -> false, ""
//! ```

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::client::{self, py_strip, Client};
use super::marker::{self, MarkerState};
use crate::fingerprint::{available, gate_text};

/// The process fingerprint a server reports when it could not compute one.
pub(crate) const UNKNOWN: &str = "unknown";

/// Why the process must restart: the reference's codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckReason {
    /// A marker asks for a restart and this client has not acknowledged it.
    MarkerRequired,
    /// The marker cannot be read as a JSON object.
    MarkerCorrupt,
    /// The installed bytes differ from the ones the process loaded.
    FingerprintMismatch,
    /// A marker names the release's fingerprint, and the process cannot
    /// show which one it loaded.
    ProcessFingerprintMissing,
    /// Fingerprints cannot be compared, and the versions differ.
    VersionMismatch,
}

impl CheckReason {
    /// The documented code.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckReason::MarkerRequired => "marker_required",
            CheckReason::MarkerCorrupt => "marker_corrupt",
            CheckReason::FingerprintMismatch => "fingerprint_mismatch",
            CheckReason::ProcessFingerprintMissing => "process_fingerprint_missing",
            CheckReason::VersionMismatch => "version_mismatch",
        }
    }
}

/// The reference prints no reason as `""`.
fn reason_or_empty<S: Serializer>(r: &Option<CheckReason>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.map_or("", CheckReason::as_str))
}

impl std::fmt::Display for CheckReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the check looks at. Text is stripped here, as the reference does.
#[derive(Clone, Copy, Debug)]
pub struct CheckInputs<'a> {
    /// The marker file as read.
    pub marker: &'a MarkerState,
    /// The version on disk now (`""` when none is found).
    pub installed_version: &'a str,
    /// The fingerprint on disk now (`None` when unavailable).
    pub installed_fingerprint: Option<&'a str>,
    /// The version the process started with; `""` means "same as
    /// installed".
    pub process_version: &'a str,
    /// The fingerprint the process started with, as it reported it
    /// (`None`, `"unknown"` or `""`: it could not show one); read once, by
    /// [`Evidence::new`].
    pub process_fingerprint: Option<&'a str>,
    /// The asking client, normalised ([`client::normalise`]); `None` when
    /// no client, or an unknown one, asks.
    pub client: Option<Client>,
}

/// The answer, with the fields the reference's status exposes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CheckStatus {
    /// Must the process restart?
    pub restart_required: bool,
    /// Why (`""` when it need not).
    #[serde(serialize_with = "reason_or_empty")]
    pub reason: Option<CheckReason>,
    /// The fingerprint on disk (`""` when unavailable).
    pub installed_fingerprint: String,
    /// The fingerprint the process reported, stripped.
    pub process_fingerprint: String,
    /// Both fingerprints usable and equal.
    pub fingerprint_match: bool,
    /// The version on disk (`""` when none).
    pub installed_version: String,
    /// The process's version, the installed one when it reported `""`.
    pub process_version: String,
    /// Both versions non-empty and equal.
    pub version_match: bool,
    /// A marker file is (or may be) there.
    pub marker_exists: bool,
    /// It cannot be read as a JSON object.
    pub marker_corrupt: bool,
    /// The asking client, normalised (`null`: none, or not a known client).
    pub client: Option<Client>,
    /// The asking client's entry in the marker's `clients` (`null` when
    /// none).
    pub client_action: Option<Value>,
}

impl CheckStatus {
    /// The installed fingerprint as the library holds it: `None` when
    /// unavailable (the report's `""`).
    pub fn installed(&self) -> Option<&str> {
        available(&self.installed_fingerprint)
    }
}

/// A fingerprint a process reported, stripped, when it is one: not empty
/// and not [`UNKNOWN`] (what a process that could not compute one says).
pub fn known_fingerprint(reported: &str) -> Option<&str> {
    available(py_strip(reported)).filter(|fp| *fp != UNKNOWN)
}

/// One side of what section 7 compares, read: its fingerprint when known,
/// its version stripped (`""` when none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvidenceSide<'a> {
    /// The fingerprint (`None`: unavailable, or not known).
    pub fingerprint: Option<&'a str>,
    /// The version (`""` when none).
    pub version: &'a str,
}

/// What a running process reported, as text from the edge (the command
/// line, the Python call): read by [`Evidence::new`], never compared as is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reported<'a> {
    /// Its fingerprint (`None`, `""` or `"unknown"`: it cannot show it;
    /// padding is stripped).
    pub fingerprint: Option<&'a str>,
    /// Its version (`""`: not given).
    pub version: &'a str,
}

/// Both fingerprints, when both are known: then they decide, and the
/// versions do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprints<'a> {
    /// The installed runtime's.
    pub installed: &'a str,
    /// The process's.
    pub process: &'a str,
}

/// What section 7 compares, stripped as the reference strips it: the
/// fingerprint and version a process started with against the installed
/// ones. The one reading of that evidence, for `status` ([`check`]) and for
/// `ack`, which must not accept what `status` would refuse.
#[derive(Clone, Copy, Debug)]
pub struct Evidence<'a> {
    /// The installed runtime (its fingerprint `None` when unavailable).
    pub installed: EvidenceSide<'a>,
    /// The process (its fingerprint `None` when it reported none it knows,
    /// its version `""` when it reported none).
    pub process: EvidenceSide<'a>,
}

impl<'a> Evidence<'a> {
    /// The evidence, each value stripped, the process's fingerprint read
    /// once ([`known_fingerprint`]).
    pub fn new(installed: EvidenceSide<'a>, process: Reported<'a>) -> Self {
        Evidence {
            installed: EvidenceSide {
                // A blank one, stripped, is as unavailable as the gate's "".
                fingerprint: installed.fingerprint.map(py_strip).and_then(available),
                version: py_strip(installed.version),
            },
            process: EvidenceSide {
                fingerprint: process.fingerprint.and_then(known_fingerprint),
                version: py_strip(process.version),
            },
        }
    }

    /// Both fingerprints, when both are known.
    pub fn fingerprints(&self) -> Option<Fingerprints<'a>> {
        Some(Fingerprints {
            installed: self.installed.fingerprint?,
            process: self.process.fingerprint?,
        })
    }

    /// Both fingerprints are known: they decide, and the versions do not.
    pub fn usable(&self) -> bool {
        self.fingerprints().is_some()
    }

    /// Both fingerprints, when they decide and differ.
    pub fn differing_fingerprints(&self) -> Option<Fingerprints<'a>> {
        self.fingerprints().filter(|f| f.installed != f.process)
    }

    /// The fingerprints decide, and differ.
    pub fn fingerprints_differ(&self) -> bool {
        self.differing_fingerprints().is_some()
    }

    /// The fingerprints decide, and agree.
    pub fn fingerprints_match(&self) -> bool {
        self.fingerprints()
            .is_some_and(|f| f.installed == f.process)
    }

    /// The fingerprints cannot decide, and both versions are known and
    /// differ (the version fallback).
    pub fn versions_differ(&self) -> bool {
        !self.usable() && self.versions_known() && self.installed.version != self.process.version
    }

    /// Both versions are known (a process that reported none has none).
    pub fn versions_known(&self) -> bool {
        !self.installed.version.is_empty() && !self.process.version.is_empty()
    }
}

/// Section 7, exactly.
pub fn check(i: &CheckInputs) -> CheckStatus {
    let evidence = Evidence::new(
        EvidenceSide {
            fingerprint: i.installed_fingerprint,
            version: i.installed_version,
        },
        Reported {
            fingerprint: i.process_fingerprint,
            version: i.process_version,
        },
    );
    let installed_version = evidence.installed.version;
    // A process that reported no version is taken to run the installed one.
    let process_version = match evidence.process.version {
        "" => installed_version,
        v => v,
    };
    let object = i.marker.object();
    let required = object.is_some_and(marker::required);
    let client_action = match (object, i.client) {
        (Some(m), Some(c)) => marker::client_action(m, c.as_str()).cloned(),
        _ => None,
    };
    let acknowledged = client_action.as_ref().and_then(Value::as_str) == Some(client::OK);
    let pending = required && !acknowledged;

    let mut restart = false;
    let mut reason = None;
    if pending {
        restart = true;
        reason = Some(CheckReason::MarkerRequired);
    }
    let mut fire = |own: CheckReason| {
        restart = true;
        reason.get_or_insert(own);
    };
    if matches!(i.marker, MarkerState::Corrupt(_)) {
        restart = true;
        reason = Some(CheckReason::MarkerCorrupt);
    } else if evidence.fingerprints_differ() {
        fire(CheckReason::FingerprintMismatch);
    } else if pending
        && object.is_some_and(marker::has_to_fingerprint)
        && evidence.process.fingerprint.is_none()
    {
        fire(CheckReason::ProcessFingerprintMissing);
    } else if evidence.versions_differ() {
        fire(CheckReason::VersionMismatch);
    } else if acknowledged {
        restart = false;
        reason = None;
    }

    CheckStatus {
        restart_required: restart,
        reason,
        // The report's text: "" when unavailable, the process's as it
        // reported it, stripped ("unknown" too; "" when it reported none).
        installed_fingerprint: gate_text(evidence.installed.fingerprint).into(),
        process_fingerprint: i.process_fingerprint.map_or("", py_strip).into(),
        fingerprint_match: evidence.fingerprints_match(),
        installed_version: installed_version.to_string(),
        process_version: process_version.to_string(),
        version_match: !installed_version.is_empty() && installed_version == process_version,
        marker_exists: i.marker.exists(),
        marker_corrupt: matches!(i.marker, MarkerState::Corrupt(_)),
        client: i.client,
        client_action,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use CheckReason::*;

    const A: &str = "aaaa";
    const B: &str = "bbbb";

    fn present(v: Value) -> MarkerState {
        MarkerState::Present(v.as_object().unwrap().clone())
    }

    /// Every branch of section 7, answers written from the spec's text.
    #[test]
    fn section_7_table() {
        use MarkerState::{Absent, Corrupt};
        // A required marker for B; codex has acknowledged it.
        let m = || {
            present(json!({"required": true, "to_fingerprint": B,
                "clients": {"codex": "ok", "claude_code": "restart_session_required"}}))
        };
        let no_key = || present(json!({"to_fingerprint": B}));
        let no_to = || present(json!({"required": true, "clients": {"codex": "ok"}}));
        let blank_to = || present(json!({"required": true, "to_fingerprint": "  "}));
        let odd_to = || present(json!({"required": true, "to_fingerprint": 7}));
        let not_required =
            || present(json!({"required": false, "to_fingerprint": B, "clients": {"codex": "ok"}}));
        let falsy_required = || present(json!({"required": 0, "to_fingerprint": B}));
        let truthy_required = || present(json!({"required": "no", "to_fingerprint": B}));
        let clients_list = || present(json!({"required": true, "clients": ["codex"]}));
        let ok_not_text = || present(json!({"required": true, "clients": {"codex": true}}));
        let bad = || Corrupt("is not valid JSON".into());
        let codex = Some(Client::Codex);
        let code = Some(Client::ClaudeCode);
        type Row = (
            MarkerState,
            (&'static str, &'static str),
            (&'static str, &'static str),
            Option<Client>,
            Option<CheckReason>,
        );
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // No marker: step 2 when usable, else step 4.
            (Absent, ("1.1", A), ("1.1", A), None, None),
            (Absent, ("1.1", A), ("1.0", B), None, Some(FingerprintMismatch)),
            (Absent, ("1.1", A), ("1.0", A), None, None),
            (Absent, ("1.1", ""), ("1.0", A), None, Some(VersionMismatch)),
            (Absent, ("1.1", A), ("1.0", UNKNOWN), None, Some(VersionMismatch)),
            (Absent, ("1.1", A), ("1.0", ""), None, Some(VersionMismatch)),
            (Absent, ("1.1", A), ("1.0", " unknown "), None, Some(VersionMismatch)),
            (Absent, ("1.1", A), ("1.1", UNKNOWN), None, None),
            (Absent, ("1.1", ""), ("1.1", A), None, None),
            // Text is stripped before any comparison.
            (Absent, ("1.1", A), (" 1.1 ", " aaaa\n"), None, None),
            (Absent, ("1.1", ""), (" 1.1 ", A), None, None),
            // An empty process version means "same as installed".
            (Absent, ("1.1", ""), ("", A), None, None),
            (Absent, ("1.1", A), ("  ", UNKNOWN), None, None),
            // An empty installed version disables step 4.
            (Absent, ("", ""), ("1.0", A), None, None),
            // Step 1: a corrupt marker wins, even for an "ok" client.
            (bad(), ("1.1", A), ("1.1", A), codex, Some(MarkerCorrupt)),
            (bad(), ("1.1", A), ("1.0", B), None, Some(MarkerCorrupt)),
            // A required marker, not acknowledged: its reason is kept.
            (m(), ("1.1", B), ("1.0", A), None, Some(MarkerRequired)),
            (m(), ("1.1", B), ("1.0", A), code, Some(MarkerRequired)),
            (m(), ("1.1", B), ("1.1", B), code, Some(MarkerRequired)),
            (m(), ("1.1", B), ("1.1", B), None, Some(MarkerRequired)),
            (m(), ("1.1", B), ("1.1", UNKNOWN), code, Some(MarkerRequired)),
            // Acknowledged: the marker does not speak; the other steps do.
            (m(), ("1.1", B), ("1.1", B), codex, None),
            (m(), ("1.1", B), ("1.0", A), codex, Some(FingerprintMismatch)),
            (m(), ("1.1", B), ("1.1", UNKNOWN), codex, None),
            (m(), ("1.1", B), ("1.1", ""), codex, None),
            (m(), ("1.1", B), ("1.0", UNKNOWN), codex, Some(VersionMismatch)),
            (m(), ("1.1", ""), ("1.0", A), codex, Some(VersionMismatch)),
            // Step 3 needs a pending marker, which already set
            // marker_required: that reason is kept (section 7).
            (no_key(), ("1.1", B), ("1.1", UNKNOWN), None, Some(MarkerRequired)),
            // Without a to_fingerprint (absent or blank), step 3 does not apply.
            (no_to(), ("1.1", B), ("1.1", UNKNOWN), code, Some(MarkerRequired)),
            (blank_to(), ("1.1", B), ("1.1", UNKNOWN), None, Some(MarkerRequired)),
            (odd_to(), ("1.1", B), ("1.1", UNKNOWN), None, Some(MarkerRequired)),
            (no_to(), ("1.1", B), ("1.1", UNKNOWN), codex, None),
            // A marker without `required` counts as required.
            (no_key(), ("1.1", B), ("1.1", B), None, Some(MarkerRequired)),
            // `required` follows Python's truthiness.
            (falsy_required(), ("1.1", B), ("1.1", B), None, None),
            (truthy_required(), ("1.1", B), ("1.1", B), None, Some(MarkerRequired)),
            // A marker whose `required` is false asks nothing...
            (not_required(), ("1.1", B), ("1.1", B), None, None),
            (not_required(), ("1.1", B), ("1.1", UNKNOWN), code, None),
            // ...but the other signals still apply.
            (not_required(), ("1.1", B), ("1.1", A), None, Some(FingerprintMismatch)),
            (not_required(), ("1.1", ""), ("1.0", A), None, Some(VersionMismatch)),
            // Only the text "ok" in an object acknowledges.
            (clients_list(), ("1.1", B), ("1.1", B), codex, Some(MarkerRequired)),
            (ok_not_text(), ("1.1", B), ("1.1", B), codex, Some(MarkerRequired)),
        ];
        for (n, (marker, (iv, ifp), (pv, pfp), client, want)) in rows.iter().enumerate() {
            let got = check(&CheckInputs {
                marker,
                installed_version: iv,
                installed_fingerprint: available(ifp),
                process_version: pv,
                process_fingerprint: Some(pfp),
                client: *client,
            });
            assert_eq!(
                (got.restart_required, got.reason),
                (want.is_some(), *want),
                "row {n}"
            );
        }
    }

    /// The documented codes (process_fingerprint_missing is what `ack`
    /// reports when a marker stays for want of a proven fingerprint).
    #[test]
    fn every_reason_has_its_documented_code() {
        let all = [
            (MarkerRequired, "marker_required"),
            (MarkerCorrupt, "marker_corrupt"),
            (FingerprintMismatch, "fingerprint_mismatch"),
            (ProcessFingerprintMissing, "process_fingerprint_missing"),
            (VersionMismatch, "version_mismatch"),
        ];
        for (r, code) in all {
            assert_eq!(r.as_str(), code);
            assert_eq!(serde_json::to_value(r).unwrap(), json!(code));
        }
    }

    /// The evidence reads each side once: a blank installed fingerprint
    /// is unavailable, a process's `unknown` or blank one not known, its
    /// padding stripped; the report keeps the stripped text.
    #[test]
    fn the_evidence_reads_each_side_once() {
        let read = |installed: Option<&'static str>, reported: Option<&'static str>| {
            let e = Evidence::new(
                EvidenceSide {
                    fingerprint: installed,
                    version: " 1 ",
                },
                Reported {
                    fingerprint: reported,
                    version: "",
                },
            );
            (
                e.installed.fingerprint,
                e.process.fingerprint,
                e.installed.version,
            )
        };
        assert_eq!(read(Some(" a "), Some(" a\n")), (Some("a"), Some("a"), "1"));
        assert_eq!(read(Some("  "), Some(" unknown ")), (None, None, "1"));
        assert_eq!(read(None, Some("")), (None, None, "1"));
        assert_eq!(read(Some("a"), None), (Some("a"), None, "1"));
        let e = Evidence::new(
            EvidenceSide {
                fingerprint: Some("a"),
                version: "",
            },
            Reported {
                fingerprint: Some("b"),
                version: "",
            },
        );
        let differ = e.differing_fingerprints().unwrap();
        assert_eq!((differ.installed, differ.process), ("a", "b"));

        let s = check(&CheckInputs {
            marker: &MarkerState::Absent,
            installed_version: "1",
            installed_fingerprint: None,
            process_version: "",
            process_fingerprint: Some(" unknown "),
            client: None,
        });
        assert_eq!(s.installed(), None);
        assert_eq!(
            (
                s.installed_fingerprint.as_str(),
                s.process_fingerprint.as_str()
            ),
            ("", "unknown")
        );
        let s = check(&CheckInputs {
            marker: &MarkerState::Absent,
            installed_version: "1",
            installed_fingerprint: Some("a"),
            process_version: "",
            process_fingerprint: None,
            client: None,
        });
        assert_eq!(s.installed(), Some("a"));
        assert_eq!(s.process_fingerprint, "");
    }

    #[test]
    fn no_reason_serialises_as_empty_text() {
        let s = check(&CheckInputs {
            marker: &MarkerState::Absent,
            installed_version: "1",
            installed_fingerprint: Some("a"),
            process_version: "",
            process_fingerprint: Some(" a "),
            client: None,
        });
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["reason"], json!(""));
        assert_eq!(v["process_fingerprint"], json!("a"));
        assert_eq!(v["client"], json!(null));
    }
}

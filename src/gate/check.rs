//! The running process's check (docs/spec.md section 7), as a pure
//! function of the marker and the four strings.
//!
//! ```text
//! usable = installed_fp != "" and process_fp not in ("", "unknown")
//! restart, reason = false, ""
//! if marker present and required: restart, reason = true, "marker_required"
//! first that holds:
//!   1. marker unreadable                      -> true, "marker_corrupt"
//!   2. usable and installed_fp != process_fp  -> true, keep or "fingerprint_mismatch"
//!   3. required, to_fingerprint, process_fp "" or "unknown" -> true, keep
//!   4. not usable, versions non-empty and different -> true, keep or "version_mismatch"
//!   5. the client is "ok" in clients          -> false, ""
//! ```

use serde::Serialize;
use serde_json::Value;

use super::marker::{self, MarkerState, CLIENT_OK};

/// The process fingerprint a server reports when it could not compute one.
pub const UNKNOWN: &str = "unknown";

/// What the check looks at.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The marker file as read.
    pub marker: &'a MarkerState,
    /// The version on disk now (`""` when none is found).
    pub installed_version: &'a str,
    /// The fingerprint on disk now (`""` when unavailable).
    pub installed_fingerprint: &'a str,
    /// The version the process started with; `""` means "same as
    /// installed".
    pub process_version: &'a str,
    /// The fingerprint the process started with; `"unknown"` or `""` when
    /// it could not compute one.
    pub process_fingerprint: &'a str,
    /// The asking client, if any.
    pub client: Option<&'a str>,
}

/// The answer, with the fields the reference's status exposes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Status {
    /// Must the process restart?
    pub restart_required: bool,
    /// `marker_required`, `marker_corrupt`, `fingerprint_mismatch`,
    /// `version_mismatch`, or `""`.
    pub reason: &'static str,
    /// The fingerprint on disk (`""` when unavailable).
    pub installed_fingerprint: String,
    /// The fingerprint the process reported.
    pub process_fingerprint: String,
    /// Both fingerprints usable and equal.
    pub fingerprint_match: bool,
    /// The version on disk (`""` when none).
    pub installed_version: String,
    /// The process's version, the installed one when it reported `""`.
    pub process_version: String,
    /// `installed_version == process_version`.
    pub version_match: bool,
    /// A marker file is (or may be) there.
    pub marker_exists: bool,
    /// It cannot be read as a JSON object.
    pub marker_corrupt: bool,
    /// The asking client's entry in the marker's `clients` (`null` when
    /// none).
    pub client_action: Option<Value>,
}

/// Section 7, exactly.
pub fn check(i: &Inputs) -> Status {
    let process_version = if i.process_version.is_empty() {
        i.installed_version
    } else {
        i.process_version
    };
    let process_fp_known = !i.process_fingerprint.is_empty() && i.process_fingerprint != UNKNOWN;
    let usable = !i.installed_fingerprint.is_empty() && process_fp_known;
    let object = i.marker.object();
    let required = object.is_some_and(marker::required);

    let (mut restart, mut reason) = (false, "");
    if required {
        (restart, reason) = (true, "marker_required");
    }
    let keep_or = |own: &'static str| {
        if reason == "marker_required" {
            "marker_required"
        } else {
            own
        }
    };
    let client_ok = match (object, i.client) {
        (Some(m), Some(c)) => {
            marker::client_action(m, c).and_then(Value::as_str) == Some(CLIENT_OK)
        }
        _ => false,
    };
    if matches!(i.marker, MarkerState::Corrupt(_)) {
        (restart, reason) = (true, "marker_corrupt");
    } else if usable && i.installed_fingerprint != i.process_fingerprint {
        (restart, reason) = (true, keep_or("fingerprint_mismatch"));
    } else if required && object.is_some_and(marker::has_to_fingerprint) && !process_fp_known {
        restart = true;
    } else if !usable
        && !i.installed_version.is_empty()
        && !process_version.is_empty()
        && i.installed_version != process_version
    {
        (restart, reason) = (true, keep_or("version_mismatch"));
    } else if client_ok {
        (restart, reason) = (false, "");
    }

    Status {
        restart_required: restart,
        reason,
        installed_fingerprint: i.installed_fingerprint.to_string(),
        process_fingerprint: i.process_fingerprint.to_string(),
        fingerprint_match: usable && i.installed_fingerprint == i.process_fingerprint,
        installed_version: i.installed_version.to_string(),
        process_version: process_version.to_string(),
        version_match: i.installed_version == process_version,
        marker_exists: i.marker.exists(),
        marker_corrupt: matches!(i.marker, MarkerState::Corrupt(_)),
        client_action: match (object, i.client) {
            (Some(m), Some(c)) => marker::client_action(m, c).cloned(),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const A: &str = "aaaa";
    const B: &str = "bbbb";

    fn present(v: Value) -> MarkerState {
        MarkerState::Present(v.as_object().unwrap().clone())
    }

    /// One row: marker, installed (version, fp), process (version, fp),
    /// client, expected (restart, reason).
    type Row = (
        MarkerState,
        (&'static str, &'static str),
        (&'static str, &'static str),
        Option<&'static str>,
        (bool, &'static str),
    );

    #[test]
    fn section_7_table() {
        use MarkerState::{Absent, Corrupt};
        let m = || {
            present(
                json!({"required": true, "to_fingerprint": B, "clients": {"codex": "ok", "desk": "restart"}}),
            )
        };
        let no_key = || present(json!({"to_fingerprint": B}));
        let no_to = || present(json!({"required": true}));
        let empty_to = || present(json!({"required": true, "to_fingerprint": ""}));
        let not_required =
            || present(json!({"required": false, "to_fingerprint": B, "clients": {"codex": "ok"}}));
        let bad = || Corrupt("is not valid JSON".into());
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // No marker: the fingerprints decide when usable.
            (Absent, ("1.1", A), ("1.1", A), None, (false, "")),
            (Absent, ("1.1", A), ("1.0", B), None, (true, "fingerprint_mismatch")),
            // Same bytes, different version string: no restart (docs-only release).
            (Absent, ("1.1", A), ("1.0", A), None, (false, "")),
            // Fingerprints not usable: the versions decide (rule 4).
            (Absent, ("1.1", ""), ("1.0", A), None, (true, "version_mismatch")),
            (Absent, ("1.1", A), ("1.0", UNKNOWN), None, (true, "version_mismatch")),
            (Absent, ("1.1", A), ("1.0", ""), None, (true, "version_mismatch")),
            (Absent, ("1.1", A), ("1.1", UNKNOWN), None, (false, "")),
            (Absent, ("1.1", ""), ("1.1", A), None, (false, "")),
            // An empty process version means "same as installed".
            (Absent, ("1.1", ""), ("", A), None, (false, "")),
            (Absent, ("1.1", A), ("", UNKNOWN), None, (false, "")),
            // An empty installed version disables rule 4.
            (Absent, ("", ""), ("1.0", A), None, (false, "")),
            // Rule 1: a corrupt marker always wins, even for an "ok" client.
            (bad(), ("1.1", A), ("1.1", A), Some("codex"), (true, "marker_corrupt")),
            (bad(), ("1.1", A), ("1.0", B), None, (true, "marker_corrupt")),
            // A required marker: rules 2-4 keep its reason.
            (m(), ("1.1", B), ("1.0", A), None, (true, "marker_required")),
            (m(), ("1.1", B), ("1.0", A), Some("codex"), (true, "marker_required")),
            (m(), ("1.1", B), ("1.0", UNKNOWN), Some("codex"), (true, "marker_required")),
            (m(), ("1.1", B), ("1.0", ""), Some("codex"), (true, "marker_required")),
            (no_to(), ("1.1", ""), ("1.0", A), Some("codex"), (true, "marker_required")),
            // Rule 5: the client restarted, and nothing above holds.
            (m(), ("1.1", B), ("1.1", B), Some("codex"), (false, "")),
            (m(), ("1.1", B), ("1.1", B), Some("desk"), (true, "marker_required")),
            (m(), ("1.1", B), ("1.1", B), Some("other"), (true, "marker_required")),
            (m(), ("1.1", B), ("1.1", B), None, (true, "marker_required")),
            // Rule 3 keeps an "ok" client restarting while its fingerprint is unproven.
            (m(), ("1.1", B), ("1.1", UNKNOWN), Some("codex"), (true, "marker_required")),
            (m(), ("1.1", B), ("", ""), Some("codex"), (true, "marker_required")),
            // Without a to_fingerprint (absent or empty), rule 3 does not apply.
            (no_to(), ("1.1", B), ("1.1", UNKNOWN), None, (true, "marker_required")),
            (empty_to(), ("1.1", B), ("1.1", UNKNOWN), None, (true, "marker_required")),
            // A marker without `required` counts as required.
            (no_key(), ("1.1", B), ("1.1", B), None, (true, "marker_required")),
            // A marker whose `required` is false asks nothing...
            (not_required(), ("1.1", B), ("1.1", B), None, (false, "")),
            (not_required(), ("1.1", B), ("1.1", UNKNOWN), Some("codex"), (false, "")),
            // ...but the other signals still apply.
            (not_required(), ("1.1", B), ("1.1", A), None, (true, "fingerprint_mismatch")),
            (not_required(), ("1.1", ""), ("1.0", A), None, (true, "version_mismatch")),
        ];
        for (n, (marker, (iv, ifp), (pv, pfp), client, want)) in rows.iter().enumerate() {
            let got = check(&Inputs {
                marker,
                installed_version: iv,
                installed_fingerprint: ifp,
                process_version: pv,
                process_fingerprint: pfp,
                client: *client,
            });
            assert_eq!((got.restart_required, got.reason), *want, "row {n}");
        }
    }

    #[test]
    fn reported_fields() {
        let marker =
            present(json!({"required": true, "to_fingerprint": B, "clients": {"codex": "ok"}}));
        let s = check(&Inputs {
            marker: &marker,
            installed_version: "1.1",
            installed_fingerprint: B,
            process_version: "",
            process_fingerprint: B,
            client: Some("codex"),
        });
        assert_eq!(
            s,
            Status {
                restart_required: false,
                reason: "",
                installed_fingerprint: B.into(),
                process_fingerprint: B.into(),
                fingerprint_match: true,
                installed_version: "1.1".into(),
                process_version: "1.1".into(),
                version_match: true,
                marker_exists: true,
                marker_corrupt: false,
                client_action: Some(json!("ok")),
            }
        );
        let s = check(&Inputs {
            marker: &MarkerState::Absent,
            installed_version: "1.1",
            installed_fingerprint: "",
            process_version: "1.0",
            process_fingerprint: "",
            client: Some("codex"),
        });
        assert!(!s.fingerprint_match && !s.version_match && !s.marker_exists);
        assert_eq!(s.client_action, None);
    }
}

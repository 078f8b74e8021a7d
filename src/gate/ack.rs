//! Acknowledging a restart: a client marks itself `"ok"` in the marker's
//! `clients`, and the marker goes away once nobody needs it.
//!
//! The clearing rule keeps the marker until it is *proven* stale: every
//! listed client is `"ok"` and the acknowledging process shows that it
//! loaded the marker's `to_fingerprint`. A process that cannot show it
//! (no fingerprint, `"unknown"`, or a marker without `to_fingerprint`)
//! only marks itself; the marker stays for the others, and section 7's
//! rule 5 already lets the "ok" client run on.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::check::UNKNOWN;
use super::client::{self, py_strip, Client, OK as CLIENT_OK};
use super::marker::{self, MarkerState};
use super::{lock, GateError};
use crate::atomic;

/// What acknowledging does to the marker.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Write this object back (the client is now `"ok"`).
    Keep {
        /// The updated marker.
        marker: Map<String, Value>,
        /// Why it cannot be removed yet.
        because: String,
    },
    /// Every client is done and the fingerprints agree: delete the file.
    Remove {
        /// The final `clients` (for the report).
        clients: Map<String, Value>,
    },
    /// The process did not load what the marker asks for: nothing changes.
    Refuse(String),
    /// The marker cannot be updated safely (its `clients` is not an
    /// object): nothing changes.
    Invalid(String),
}

/// The report's short name of an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// No marker: nothing to do.
    NoMarker,
    /// The client is marked, the marker kept.
    Acknowledged,
    /// The marker was removed.
    Removed,
    /// The acknowledgement was refused.
    Refused,
}

/// Applies `client`'s acknowledgement to `marker`.
pub fn acknowledge(
    marker: &Map<String, Value>,
    client: Client,
    process_fingerprint: Option<&str>,
) -> Outcome {
    let proven = process_fingerprint
        .map(py_strip)
        .filter(|fp| !fp.is_empty() && *fp != UNKNOWN);
    let to = marker::to_fingerprint(marker);
    if let (Some(p), Some(t)) = (proven, to) {
        if p != t {
            return Outcome::Refuse(format!(
                "the process fingerprint {p} is not the marker's to_fingerprint {t}: \
                 this client has not loaded the release the marker asks for; restart it"
            ));
        }
    }
    let mut updated = marker.clone();
    let clients = match updated
        .entry("clients")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(c) => c,
        other => {
            return Outcome::Invalid(format!(
                "the marker's \"clients\" is {other}, not an object: not touching it"
            ))
        }
    };
    clients.insert(client.as_str().to_string(), Value::String(CLIENT_OK.into()));
    let pending: Vec<&str> = clients
        .iter()
        .filter(|(_, action)| action.as_str() != Some(CLIENT_OK))
        .map(|(name, _)| name.as_str())
        .collect();
    let because = if !pending.is_empty() {
        format!("clients still to restart: {}", pending.join(", "))
    } else if !marker::has_to_fingerprint(marker) || to.is_none() {
        "the marker has no to_fingerprint, so no process can prove it loaded the release".into()
    } else if proven.is_none() {
        "the process has not proven it loaded the marker's to_fingerprint (pass --process-fingerprint)".into()
    } else {
        let clients = clients.clone();
        return Outcome::Remove { clients };
    };
    Outcome::Keep {
        marker: updated,
        because,
    }
}

/// What `fpcheck ack` did.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The marker path.
    pub marker: String,
    /// The acknowledging client, normalised.
    pub client: Client,
    /// What happened.
    pub action: Action,
    /// Whether the marker is gone now.
    pub marker_removed: bool,
    /// The marker's clients after the acknowledgement (`null` when there
    /// is no marker or nothing changed).
    pub clients: Option<Map<String, Value>>,
    /// Why the marker stays, or why the acknowledgement was refused.
    pub because: Option<String>,
    /// The reference's code when the marker stays because the process did
    /// not prove its fingerprint: `process_fingerprint_missing`.
    pub pending_reason: Option<super::check::Reason>,
}

/// Acknowledges `client`'s restart in the marker at `path`, under the same
/// lock as the gate, so an ack and a gate never interleave their
/// read-modify-write.
pub fn run(
    path: &Path,
    client: &str,
    process_fingerprint: Option<&str>,
    lock_timeout: Duration,
) -> Result<Report, GateError> {
    // An unknown name would acknowledge nobody: say so rather than
    // pretend (the reference silently does nothing).
    let client = client::normalise(client).ok_or_else(|| GateError::UnknownClient {
        name: client.to_string(),
    })?;
    let mut report = Report {
        marker: path.display().to_string(),
        client,
        action: Action::NoMarker,
        marker_removed: false,
        clients: None,
        because: None,
        pending_reason: None,
    };
    // No directory, no marker: nothing to acknowledge, and no place to
    // put a lock file either.
    if path
        .parent()
        .is_some_and(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return Ok(report);
    }
    let _held = lock::acquire(path, lock_timeout)?;
    let current = match marker::read(path) {
        MarkerState::Absent => return Ok(report),
        MarkerState::Corrupt(why) => return Err(corrupt(path, why)),
        MarkerState::Present(m) => m,
    };
    let write_err = |e: std::io::Error| GateError::Write {
        path: path.display().to_string(),
        why: super::io_reason(&e),
    };
    match acknowledge(&current, client, process_fingerprint) {
        Outcome::Keep { marker, because } => {
            let bytes = crate::pretty::json_bytes(&marker);
            atomic::write_atomic(path, &bytes).map_err(write_err)?;
            report.action = Action::Acknowledged;
            report.clients = marker.get("clients").and_then(Value::as_object).cloned();
            let all_ok = report
                .clients
                .iter()
                .flat_map(|c| c.values())
                .all(|a| a.as_str() == Some(CLIENT_OK));
            if all_ok && marker::has_to_fingerprint(&marker) {
                report.pending_reason = Some(super::check::Reason::ProcessFingerprintMissing);
            }
            report.because = Some(because);
        }
        Outcome::Remove { clients } => {
            atomic::remove_durable(path).map_err(write_err)?;
            report.action = Action::Removed;
            report.marker_removed = true;
            report.clients = Some(clients);
        }
        Outcome::Refuse(why) => {
            report.action = Action::Refused;
            report.because = Some(why);
        }
        Outcome::Invalid(why) => return Err(corrupt(path, why)),
    }
    Ok(report)
}

fn corrupt(path: &Path, why: String) -> GateError {
    GateError::MarkerCorrupt {
        path: path.display().to_string(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T: &str = "tttt";

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn short(o: &Outcome) -> (&'static str, Option<Value>) {
        match o {
            Outcome::Keep { marker, .. } => ("keep", marker.get("clients").cloned()),
            Outcome::Remove { clients } => ("remove", Some(Value::Object(clients.clone()))),
            Outcome::Refuse(_) => ("refuse", None),
            Outcome::Invalid(_) => ("invalid", None),
        }
    }

    #[test]
    fn clearing_rules() {
        const R: &str = "restart_session_required";
        let two = json!({"to_fingerprint": T, "clients": {"codex": R, "claude_code": "ok"}});
        let both_ok = json!({"codex": "ok", "claude_code": "ok"});
        // (marker, client, process fingerprint, (outcome, clients after))
        type Row = (
            Value,
            &'static str,
            Option<&'static str>,
            (&'static str, Option<Value>),
        );
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // The last client, with proof: removed.
            (two.clone(), "codex", Some(T), ("remove", Some(both_ok.clone()))),
            (two.clone(), " Codex ", Some(" tttt "), ("remove", Some(both_ok.clone()))),
            // The last client without proof: kept, but marked.
            (two.clone(), "codex", None, ("keep", Some(both_ok.clone()))),
            (two.clone(), "codex", Some(UNKNOWN), ("keep", Some(both_ok.clone()))),
            (two.clone(), "codex", Some(""), ("keep", Some(both_ok.clone()))),
            // Another client still pending: kept.
            (json!({"to_fingerprint": T, "clients": {"codex": R, "claude_desktop": R}}), "codex", Some(T), ("keep", Some(json!({"codex": "ok", "claude_desktop": R})))),
            // A client not listed is added, under its normalised name.
            (json!({"to_fingerprint": T, "clients": {}}), "Claude-Code", Some(T), ("remove", Some(json!({"claude_code": "ok"})))),
            (json!({"to_fingerprint": T}), "desktop", Some(T), ("remove", Some(json!({"claude_desktop": "ok"})))),
            // The wrong bytes: refused, nothing changes.
            (two.clone(), "codex", Some("ffff"), ("refuse", None)),
            // No to_fingerprint: nothing can be proven, kept.
            (json!({"to_fingerprint": " ", "clients": {"codex": R}}), "codex", Some(T), ("keep", Some(json!({"codex": "ok"})))),
            (json!({"clients": {"codex": R}}), "codex", Some(T), ("keep", Some(json!({"codex": "ok"})))),
            // A `clients` that is not an object is not rewritten.
            (json!({"to_fingerprint": T, "clients": ["codex"]}), "codex", Some(T), ("invalid", None)),
        ];
        for (n, (m, client, fp, want)) in rows.into_iter().enumerate() {
            let client = client::normalise(client).unwrap();
            let got = acknowledge(&obj(m), client, fp);
            let (kind, clients) = short(&got);
            assert_eq!((kind, clients), (want.0, want.1), "row {n}: {got:?}");
        }
    }

    #[test]
    fn other_keys_are_kept() {
        let m = obj(
            json!({"schema_version": 3, "x": [1], "to_fingerprint": T, "clients": {"codex": "r", "claude_code": "r"}}),
        );
        let Outcome::Keep { marker, because } = acknowledge(&m, Client::Codex, Some(T)) else {
            panic!("kept")
        };
        assert_eq!(because, "clients still to restart: claude_code");
        assert_eq!(marker["x"], json!([1]));
        assert_eq!(marker["schema_version"], json!(3));
    }
}

//! Acknowledging a restart: a client marks itself `"ok"` in the marker's
//! `clients`, and the marker goes away once nobody needs it.
//!
//! Section 7's clearing rule: no client pending and the process proven
//! current, by its fingerprint equal to the installed runtime's when both
//! are usable, else (no `to_fingerprint` in the marker) by its version equal
//! to the installed one. fpcheck also takes the marker's `to_fingerprint` as
//! proof, and is stricter where the reference clears on missing evidence: a
//! process that cannot show it runs the installed code (no fingerprint,
//! `"unknown"`, no installed runtime given, an empty version) only marks
//! itself; the marker stays for the others, and section 7's rule 5 already
//! lets the "ok" client run on. A process shown to run other code than the
//! marker's or the installed one is refused.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{lock, GateError};
use crate::atomic;
use crate::select::Rules;
use crate::setting::{Message, Setting, Spelling, Value as Said};
use crate::source::DirSource;
use crate::verdict::client::{self, Client, OK as CLIENT_OK};
use crate::verdict::marker::{self, MarkerState};
use crate::verdict::process::{self, Evidence, EvidenceSide, Reported};
use crate::warning::{Code, Warning};

/// What acknowledging does to the marker.
#[derive(Clone, Debug, PartialEq)]
pub enum AckOutcome {
    /// Write this object back (the client is now `"ok"`).
    Keep {
        /// The updated marker.
        marker: Map<String, Value>,
        /// Why it cannot be removed yet; it may name a setting to pass.
        because: Message,
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
pub enum AckAction {
    /// No marker: nothing to do.
    NoMarker,
    /// The client is marked, the marker kept.
    Acknowledged,
    /// The marker was removed.
    Removed,
    /// The acknowledgement was refused.
    Refused,
}

/// What the acknowledging process started with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Process<'a> {
    /// Its fingerprint (`None`, `""` or `"unknown"`: it cannot show it).
    pub fingerprint: Option<&'a str>,
    /// Its version (`""`: not given).
    pub version: &'a str,
}

/// The installed runtime as section 7 reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckInstalled {
    /// Its fingerprint (`None` when unavailable).
    pub fingerprint: Option<String>,
    /// Its version (`""` when no version file gives one, or one cannot be
    /// read: then no version can prove anything).
    pub version: String,
    /// What to say of it: `installed_unavailable` when its fingerprint is
    /// unavailable (`--dir` missing, say), which then proves nothing.
    pub warnings: Vec<Warning>,
}

impl AckInstalled {
    /// Reads the runtime at `dir` (the same fingerprint and version files
    /// as `status`).
    pub fn read(dir: &Path, rules: &Rules) -> Result<AckInstalled, GateError> {
        let source = DirSource::new(dir);
        let fp = crate::fingerprint::compute(&source, rules)?;
        let release = crate::release::read(&source)?;
        let version = match release.unreadable.is_empty() {
            true => release.version.unwrap_or_default(),
            false => String::new(),
        };
        let warnings = fp
            .unavailable_reason
            .iter()
            .map(|why| {
                let proof = match version.trim().is_empty() {
                    true => "only the marker's to_fingerprint",
                    false => "only the marker's to_fingerprint or the versions",
                };
                Warning::new(
                    Code::InstalledUnavailable,
                    format!(
                        "the installed runtime's fingerprint is unavailable ({why}), so it \
                         proves nothing; {proof} can show the process current"
                    ),
                )
            })
            .collect();
        Ok(AckInstalled {
            fingerprint: fp.digest,
            version,
            warnings,
        })
    }
}

/// Applies `client`'s acknowledgement to `marker`, given what the process
/// started with and, when known, the installed runtime.
pub(crate) fn acknowledge(
    marker: &Map<String, Value>,
    client: Client,
    process: Process<'_>,
    installed: Option<&AckInstalled>,
) -> AckOutcome {
    let proven = process.fingerprint.and_then(process::known_fingerprint);
    let to = marker::to_fingerprint(marker);
    // What section 7 would compare, when the installed runtime is known.
    let evidence = installed.map(|i| {
        Evidence::new(
            EvidenceSide {
                fingerprint: i.fingerprint.as_deref(),
                version: &i.version,
            },
            Reported {
                fingerprint: process.fingerprint,
                version: process.version,
            },
        )
    });
    if let Some(why) = refusal(proven, to, evidence) {
        return AckOutcome::Refuse(why);
    }
    let mut updated = marker.clone();
    let clients = match updated
        .entry("clients")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(c) => c,
        other => {
            return AckOutcome::Invalid(format!(
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
    let usable = evidence.is_some_and(|e| e.usable());
    let versions_known = evidence.is_some_and(|e| e.versions_known());
    let proven_current = usable
        || (proven.is_some() && to.is_some())
        || (!marker::has_to_fingerprint(marker) && versions_known);
    let because = if !pending.is_empty() {
        format!("clients still to restart: {}", pending.join(", ")).into()
    } else if proven_current {
        let clients = clients.clone();
        return AckOutcome::Remove { clients };
    } else {
        unproven(marker, to, installed)
    };
    AckOutcome::Keep {
        marker: updated,
        because,
    }
}

/// Why the process may not acknowledge at all, if so: it proves it loaded
/// another release than the marker's, or runs other code or another
/// version than is installed.
fn refusal(
    proven: Option<&str>,
    to: Option<&str>,
    evidence: Option<Evidence<'_>>,
) -> Option<String> {
    if let (Some(p), Some(t)) = (proven, to) {
        if p != t {
            return Some(format!(
                "the process fingerprint {p} is not the marker's to_fingerprint {t}: \
                 this client has not loaded the release the marker asks for; restart it"
            ));
        }
    }
    if let Some(f) = evidence.and_then(|e| e.differing_fingerprints()) {
        return Some(format!(
            "the process fingerprint {} is not the installed runtime's {}: \
             this client runs other code than is installed; restart it",
            f.process, f.installed
        ));
    }
    if let Some(e) = evidence.filter(Evidence::versions_differ) {
        return Some(format!(
            "the process version {} is not the installed version {}: \
             this client runs another release than is installed; restart it",
            e.process.version, e.installed.version
        ));
    }
    None
}

/// Why the marker stays although no client is left to restart: the
/// process has not proven that it runs the marker's release.
fn unproven(
    marker: &Map<String, Value>,
    to: Option<&str>,
    installed: Option<&AckInstalled>,
) -> Message {
    if marker::has_to_fingerprint(marker) && to.is_some() {
        Message::new()
            .text("the process has not proven it loaded the marker's to_fingerprint (pass ")
            .setting(Setting::ProcessFingerprint, Said::None)
            .text(")")
    } else if installed.is_none() {
        "the marker has no to_fingerprint, so no process can prove it loaded the release \
         (pass the installed runtime and the process's fingerprint or version)"
            .into()
    } else {
        "the marker has no to_fingerprint, and neither the fingerprints nor the versions \
         show that the process runs the installed release"
            .into()
    }
}

/// What `fpcheck ack` did.
#[derive(Clone, Debug, Serialize)]
pub struct AckReport {
    /// The marker path.
    pub marker: String,
    /// The acknowledging client, normalised.
    pub client: Client,
    /// What happened.
    pub action: AckAction,
    /// Whether the marker is gone now.
    pub marker_removed: bool,
    /// The marker's clients after the acknowledgement (`null` when there
    /// is no marker or nothing changed).
    pub clients: Option<Map<String, Value>>,
    /// Why the marker stays, or why the acknowledgement was refused; a
    /// setting it names is spelled as a flag unless [`AckReport::spelled`]
    /// says otherwise.
    #[serde(serialize_with = "flag_form")]
    pub because: Option<Message>,
    /// The reference's code when the marker stays because the process did
    /// not prove its fingerprint: `process_fingerprint_missing`.
    pub pending_reason: Option<crate::verdict::process::CheckReason>,
    /// The installed runtime's fingerprint (`""`: unavailable; `null`: no
    /// runtime given, or no marker).
    pub installed_fingerprint: Option<String>,
    /// Its version (`""`: none readable; `null` as above).
    pub installed_version: Option<String>,
    /// Things to know (the installed fingerprint unavailable): messages in
    /// `warnings`, their codes in `warning_codes`.
    #[serde(flatten, serialize_with = "crate::warning::split::serialize")]
    pub warnings: Vec<Warning>,
}

impl AckReport {
    /// The report with the settings its reason names spelled for a front
    /// end: the command line shows flags, the Python package keywords.
    pub fn spelled(mut self, spelling: Spelling) -> Self {
        self.because = self.because.map(|m| Message::from(m.spelled(spelling)));
        self
    }
}

/// `because` in the document, as the command line spells it.
fn flag_form<S: serde::Serializer>(m: &Option<Message>, s: S) -> Result<S::Ok, S::Error> {
    m.as_ref().map(Message::to_string).serialize(s)
}

/// What `fpcheck ack` is asked.
#[derive(Clone, Copy, Debug)]
pub struct AckRequest<'a> {
    /// The marker file.
    pub marker: &'a Path,
    /// The client that restarted, as given (normalised here).
    pub client: &'a str,
    /// What the process started with.
    pub process: Process<'a>,
    /// The installed runtime and its rules, read when there is a marker;
    /// `None`: not known, so only the marker's `to_fingerprint` can prove
    /// the process current.
    pub runtime: Option<(&'a Path, &'a Rules)>,
    /// How long to wait for the marker's lock.
    pub lock_timeout: Duration,
}

/// Acknowledges the client's restart in the marker, under the same lock as
/// the gate, so an ack and a gate never interleave their
/// read-modify-write.
pub fn run(req: &AckRequest<'_>) -> Result<AckReport, GateError> {
    let (path, client) = (req.marker, req.client);
    // An unknown name would acknowledge nobody: say so rather than
    // pretend (the reference silently does nothing).
    let client = client::normalise(client).ok_or_else(|| GateError::UnknownClient {
        name: client.to_string(),
    })?;
    let mut report = AckReport {
        marker: path.display().to_string(),
        client,
        action: AckAction::NoMarker,
        marker_removed: false,
        clients: None,
        because: None,
        pending_reason: None,
        installed_fingerprint: None,
        installed_version: None,
        warnings: Vec::new(),
    };
    // No directory, no marker: nothing to acknowledge, and no place to
    // put a lock file either.
    if path
        .parent()
        .is_some_and(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return Ok(report);
    }
    let _held = lock::acquire(path, req.lock_timeout)?;
    let current = match marker::read(path) {
        MarkerState::Absent => return Ok(report),
        MarkerState::Corrupt(why) => return Err(corrupt(path, why)),
        MarkerState::Present(m) => m,
    };
    let installed = match req.runtime {
        Some((dir, rules)) => Some(AckInstalled::read(dir, rules)?),
        None => None,
    };
    if let Some(i) = &installed {
        // The report's text: `""` when unavailable.
        let fingerprint = crate::fingerprint::gate_text(i.fingerprint.as_deref());
        report.installed_fingerprint = Some(fingerprint.to_string());
        report.installed_version = Some(i.version.clone());
        report.warnings.extend(i.warnings.iter().cloned());
    }
    let write_err = |e: std::io::Error| GateError::Write {
        path: path.display().to_string(),
        why: super::io_reason(&e),
    };
    match acknowledge(&current, client, req.process, installed.as_ref()) {
        AckOutcome::Keep { marker, because } => {
            let bytes = crate::pretty::json_bytes(&marker);
            atomic::replace_own(path, &bytes).map_err(write_err)?;
            report.action = AckAction::Acknowledged;
            report.clients = marker.get("clients").and_then(Value::as_object).cloned();
            let all_ok = report
                .clients
                .iter()
                .flat_map(|c| c.values())
                .all(|a| a.as_str() == Some(CLIENT_OK));
            if all_ok && marker::has_to_fingerprint(&marker) {
                report.pending_reason =
                    Some(crate::verdict::process::CheckReason::ProcessFingerprintMissing);
            }
            report.because = Some(because);
        }
        AckOutcome::Remove { clients } => {
            atomic::remove_durable(path).map_err(write_err)?;
            report.action = AckAction::Removed;
            report.marker_removed = true;
            report.clients = Some(clients);
        }
        AckOutcome::Refuse(why) => {
            report.action = AckAction::Refused;
            report.because = Some(why.into());
        }
        AckOutcome::Invalid(why) => return Err(corrupt(path, why)),
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
    use crate::verdict::process::UNKNOWN;
    use serde_json::json;

    const T: &str = "tttt";

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn short(o: &AckOutcome) -> (&'static str, Option<Value>) {
        match o {
            AckOutcome::Keep { marker, .. } => ("keep", marker.get("clients").cloned()),
            AckOutcome::Remove { clients } => ("remove", Some(Value::Object(clients.clone()))),
            AckOutcome::Refuse(_) => ("refuse", None),
            AckOutcome::Invalid(_) => ("invalid", None),
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
            let process = Process {
                fingerprint: fp,
                version: "",
            };
            let got = acknowledge(&obj(m), client, process, None);
            let (kind, clients) = short(&got);
            assert_eq!((kind, clients), (want.0, want.1), "row {n}: {got:?}");
        }
    }

    #[test]
    fn other_keys_are_kept() {
        let m = obj(
            json!({"schema_version": 3, "x": [1], "to_fingerprint": T, "clients": {"codex": "r", "claude_code": "r"}}),
        );
        let process = Process {
            fingerprint: Some(T),
            version: "",
        };
        let AckOutcome::Keep { marker, because } = acknowledge(&m, Client::Codex, process, None)
        else {
            panic!("kept")
        };
        assert_eq!(because.to_string(), "clients still to restart: claude_code");
        assert_eq!(marker["x"], json!([1]));
        assert_eq!(marker["schema_version"], json!(3));
    }

    /// The reason a marker stays names the setting to pass as each front
    /// end spells it: `--process-fingerprint` for the command line (also
    /// in the JSON document), `process_fingerprint` for Python.
    #[test]
    fn the_reason_names_the_setting_for_each_front_end() {
        let m = obj(json!({"to_fingerprint": T, "clients": {"codex": "r"}}));
        let process = Process {
            fingerprint: Some(UNKNOWN),
            version: "",
        };
        let AckOutcome::Keep { because, .. } = acknowledge(&m, Client::Codex, process, None) else {
            panic!("kept")
        };
        assert_eq!(
            because.settings().collect::<Vec<_>>(),
            [Setting::ProcessFingerprint]
        );
        let report = AckReport {
            marker: "m".into(),
            client: Client::Codex,
            action: AckAction::Acknowledged,
            marker_removed: false,
            clients: None,
            because: Some(because),
            pending_reason: None,
            installed_fingerprint: None,
            installed_version: None,
            warnings: Vec::new(),
        };
        let said = "the process has not proven it loaded the marker's to_fingerprint (pass ";
        let flag = serde_json::to_value(&report).unwrap();
        assert_eq!(
            flag["because"],
            json!(format!("{said}--process-fingerprint)"))
        );
        let keyword = serde_json::to_value(report.spelled(Spelling::Keyword)).unwrap();
        assert_eq!(
            keyword["because"],
            json!(format!("{said}process_fingerprint)"))
        );
    }

    /// With the installed runtime known, section 7's clearing: the
    /// fingerprints decide when both are usable, else the versions when the
    /// marker has no to_fingerprint; fpcheck refuses a process shown to run
    /// other code, and keeps the marker on missing evidence.
    #[test]
    fn clearing_with_the_installed_runtime() {
        const I: &str = "iiii";
        let no_to = json!({"clients": {"codex": "restart_session_required"}});
        let with_to = json!({"to_fingerprint": T, "clients": {"codex": "r"}});
        let inst = |fp: &str, v: &str| AckInstalled {
            fingerprint: crate::fingerprint::available(fp).map(String::from),
            version: v.into(),
            ..AckInstalled::default()
        };
        // (marker, process fp, process version, installed, outcome)
        type Row = (
            Value,
            Option<&'static str>,
            &'static str,
            AckInstalled,
            &'static str,
        );
        #[rustfmt::skip]
        let rows: Vec<Row> = vec![
            // Both fingerprints usable and equal: proven, even without to_fingerprint.
            (no_to.clone(), Some(I), "", inst(I, "2.0"), "remove"),
            (no_to.clone(), Some(" iiii "), "1.0", inst(I, "2.0"), "remove"),
            // Usable and different: this process runs other code.
            (no_to.clone(), Some("pppp"), "2.0", inst(I, "2.0"), "refuse"),
            (with_to.clone(), Some(T), "", inst(I, ""), "refuse"),
            // The marker's to_fingerprint, installed unavailable: proven as before.
            (with_to.clone(), Some(T), "", inst("", ""), "remove"),
            (with_to.clone(), Some(T), "", inst(T, "1.0"), "remove"),
            // Fingerprints not usable, a to_fingerprint: kept.
            (with_to.clone(), None, "2.0", inst(T, "2.0"), "keep"),
            (with_to.clone(), Some(UNKNOWN), "2.0", inst("", "2.0"), "keep"),
            // No to_fingerprint, fingerprints not usable: the versions decide.
            (no_to.clone(), None, "2.0", inst(I, " 2.0 "), "remove"),
            (no_to.clone(), Some(UNKNOWN), "2.0", inst("", "2.0"), "remove"),
            (no_to.clone(), None, "1.0", inst(I, "2.0"), "refuse"),
            (with_to.clone(), None, "1.0", inst(T, "2.0"), "refuse"),
            // An empty version proves nothing (the reference clears): kept.
            (no_to.clone(), None, "", inst(I, "2.0"), "keep"),
            (no_to.clone(), None, "2.0", inst(I, ""), "keep"),
        ];
        for (n, (m, fp, version, installed, want)) in rows.into_iter().enumerate() {
            let process = Process {
                fingerprint: fp,
                version,
            };
            let got = acknowledge(&obj(m), Client::Codex, process, Some(&installed));
            assert_eq!(short(&got).0, want, "row {n}: {got:?}");
        }
    }
}

//! The gate commands' answers (`snapshot`, `gate`, `status`, `ack`): as a
//! terminal shows them, or their reports as they are (JSON, with the
//! gate's `schema_version`).

use std::fmt::Write as _;
use std::path::Path;

use super::{to_json, Format, Render, RenderOptions, ReportError};
use crate::gate::ack::{AckAction, AckReport};
use crate::gate::document;
use crate::gate::run::GateReport;
use crate::gate::snapshot::Snapshot;
use crate::gate::status::StatusReport;
use crate::term::escape;

/// What `snapshot` took, and the file it was written to (`--out`): the
/// summary names the file, so it has text only when there is one.
pub struct SnapshotWritten<'a> {
    /// The snapshot taken.
    pub snapshot: &'a Snapshot,
    /// Where it was written; `None`: only printed.
    pub out: Option<&'a Path>,
}

impl Render for SnapshotWritten<'_> {
    const COMMAND: &'static str = "fpcheck snapshot";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        match (format, self.out) {
            // The snapshot file's own bytes: no envelope.
            (Format::Json, _) => Ok(to_json(self.snapshot)),
            (Format::Text, Some(out)) => Ok(snapshot_summary(self.snapshot, out)),
            (Format::Text, None) => Err(ReportError(format!(
                "`{}` has text output only with --out (the summary names the file)",
                Self::COMMAND
            ))),
            (other, _) => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

/// A gate command's report: plain lines, or its JSON with the gate's
/// `schema_version`.
fn text_or_json<T: serde::Serialize>(
    command: &str,
    report: &T,
    format: &Format,
    text: impl FnOnce(&T) -> String,
) -> Result<String, ReportError> {
    match format {
        Format::Text => Ok(text(report)),
        Format::Json => Ok(to_json(&document(report))),
        other => Err(ReportError::unsupported(command, other)),
    }
}

impl Render for GateReport {
    const COMMAND: &'static str = "fpcheck gate";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        text_or_json(Self::COMMAND, self, format, gate_text)
    }
}

impl Render for StatusReport {
    const COMMAND: &'static str = "fpcheck status";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        text_or_json(Self::COMMAND, self, format, status_text)
    }
}

impl Render for AckReport {
    const COMMAND: &'static str = "fpcheck ack";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        text_or_json(Self::COMMAND, self, format, ack_text)
    }
}

/// What `snapshot` took, as a terminal shows it.
fn snapshot_summary(s: &Snapshot, out: &Path) -> String {
    let mut t = format!(
        "snapshot of {} written to {}\n",
        escape(&s.dir),
        escape(&out.display().to_string())
    );
    let _ = writeln!(
        t,
        "  version      {}",
        version_line(&s.version, &s.version_file)
    );
    let _ = writeln!(
        t,
        "  fingerprint  {}",
        fp_line(&s.fingerprint, s.files.len())
    );
    if s.force_restart {
        let raw = s.force_restart_raw.as_ref().map(|v| v.to_string());
        let raw = raw.unwrap_or_default();
        let _ = writeln!(t, "  force_restart on ({})", escape(&raw));
    }
    t
}

/// The gate's answer as a terminal shows it.
fn gate_text(r: &GateReport) -> String {
    let mut t = String::new();
    let reason = r.reason.map(|x| x.as_str()).unwrap_or("");
    let headline = match (&r.error, &r.conservative, r.restart_required) {
        (Some(e), _, _) => format!("restart required: the gate could not decide: {}", escape(e)),
        (None, Some(why), _) => format!("restart required ({reason}): {}", escape(why)),
        (None, None, true) if r.reason == Some(crate::verdict::updater::MarkerReason::BrainUpdateForce) => {
            format!("restart required ({reason}): the release sets force_restart")
        }
        (None, None, true) => format!("restart required ({reason}): the runtime code changed"),
        (None, None, false) if r.version_changed == Some(false) && r.code_changed == Some(true) => {
            "no marker: the version did not change (running processes still see the fingerprint mismatch)".into()
        }
        (None, None, false) if r.version_changed == Some(false) => {
            "no restart: the version did not change".into()
        }
        (None, None, false) => "no restart: the runtime code did not change".into(),
    };
    let _ = writeln!(t, "{headline}");
    let from = escape(r.from_version.as_deref().unwrap_or("(none)"));
    let to = escape(r.to_version.as_deref().unwrap_or("(none)"));
    let _ = writeln!(t, "  version      {from} -> {to}");
    let _ = writeln!(
        t,
        "  fingerprint  {} -> {}",
        escape(short_fp(&r.from_fingerprint)),
        escape(short_fp(&r.to_fingerprint))
    );
    for (side, why) in [
        ("before", &r.from_unavailable_reason),
        ("after", &r.to_unavailable_reason),
    ] {
        if let Some(why) = why {
            let _ = writeln!(t, "  unavailable  {side}: {}", escape(why));
        }
    }
    if r.force_restart {
        let _ = writeln!(t, "  force_restart on");
    }
    if let Some(rec) = &r.recorded_fingerprint {
        let verdict = if rec.matches {
            "matches"
        } else {
            "DOES NOT MATCH"
        };
        let _ = writeln!(
            t,
            "  recorded     {} {verdict} ({})",
            escape(&rec.value.to_string()),
            escape(&rec.file)
        );
    }
    for (i, c) in r.changed_files.iter().flatten().enumerate() {
        let label = if i == 0 { "files" } else { "" };
        let path = escape(&c.path);
        let _ = writeln!(t, "  {label:<12} {:<8} {path}", c.change);
    }
    let marker_path = escape(&r.marker);
    let marker = if r.marker_written {
        let clients: Vec<&str> = r
            .clients
            .iter()
            .flat_map(|c| c.keys())
            .map(String::as_str)
            .collect();
        if clients.is_empty() {
            format!("written: {marker_path}")
        } else {
            format!("written: {marker_path} (clients: {})", clients.join(", "))
        }
    } else if r.restart_required {
        format!("NOT written: {marker_path}")
    } else {
        format!("not needed ({marker_path})")
    };
    let _ = writeln!(t, "  marker       {marker}");
    t
}

/// `status`'s answer as a terminal shows it.
fn status_text(r: &StatusReport) -> String {
    let s = &r.status;
    let mut t = if s.restart_required {
        format!(
            "restart required ({})\n",
            s.reason.map_or("", |r| r.as_str())
        )
    } else {
        "no restart\n".to_string()
    };
    let _ = writeln!(
        t,
        "  installed  {}  {}",
        escape(&super::shown(or_none(&s.installed_version))),
        escape(or_none(&s.installed_fingerprint))
    );
    let _ = writeln!(
        t,
        "  process    {}  {}",
        escape(&super::shown(or_none(&s.process_version))),
        escape(or_none(&s.process_fingerprint))
    );
    if let Some(why) = &r.installed_unavailable_reason {
        let _ = writeln!(t, "  unavailable  {}", escape(why));
    }
    if let Some(why) = &r.conservative {
        let _ = writeln!(t, "  conservative {}", escape(why));
    }
    let marker = match (&r.marker_problem, s.marker_exists) {
        (Some(why), _) => format!("corrupt: {}", escape(why)),
        (None, true) => "present".into(),
        (None, false) => "absent".into(),
    };
    let _ = writeln!(t, "  marker     {marker}");
    if let Some(action) = &s.client_action {
        let action = action
            .as_str()
            .map_or_else(|| action.to_string(), String::from);
        let _ = writeln!(t, "  client     {}", escape(&action));
    }
    for w in &r.warnings {
        let _ = writeln!(t, "  warning    {}: {}", w.code, escape(&w.message));
    }
    t
}

fn version_line(version: &Option<String>, file: &Option<String>) -> String {
    match (version, file) {
        (Some(v), Some(f)) => format!("{} ({})", escape(&super::shown(v)), escape(f)),
        (Some(v), None) => escape(&super::shown(v)).into_owned(),
        _ => "(none found)".into(),
    }
}

fn fp_line(fp: &str, files: usize) -> String {
    match crate::fingerprint::available(fp) {
        None => "unavailable".into(),
        Some(fp) => {
            let s = if files == 1 { "" } else { "s" };
            format!("{fp} ({files} file{s})")
        }
    }
}

fn short_fp(fp: &str) -> &str {
    fpcheck::fingerprint::short(fp).unwrap_or("(unavailable)")
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "(none)"
    } else {
        s
    }
}

/// `ack`'s answer as a terminal shows it.
fn ack_text(report: &AckReport) -> String {
    let because = report.because.as_ref().map(ToString::to_string);
    let because = escape(because.as_deref().unwrap_or(""));
    let marker = escape(&report.marker);
    let line = match report.action {
        AckAction::NoMarker => format!("no marker at {marker}: nothing to acknowledge"),
        AckAction::Acknowledged => {
            format!("{} acknowledged; marker kept: {because}", report.client)
        }
        AckAction::Removed => format!("{} acknowledged; marker removed", report.client),
        AckAction::Refused => format!("{} not acknowledged: {because}", report.client),
    };
    let mut text = format!("{line}\n");
    for w in &report.warnings {
        let _ = writeln!(text, "  warning    {}: {}", w.code, escape(&w.message));
    }
    text
}

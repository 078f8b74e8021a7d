//! The history's table, Markdown and HTML: one section (Markdown) or one
//! timeline (HTML) per runtime, from the same templates whether there is one
//! runtime or several.

use serde::Serialize;

use super::{
    render_template, to_json, Format, Render, RenderOptions, ReportError, HISTORY_HTML,
    HISTORY_MARKDOWN,
};
use comfy_table::{Cell, Color};

use crate::history::{HistoryOutcome, Record, Step, Summary};
use crate::term::{count, escape};
use crate::verdict::Reason;

/// One runtime's section: its name (`null` for a single runtime) and its
/// record.
#[derive(Serialize)]
struct Section<'a> {
    runtime: Option<&'a str>,
    #[serde(flatten)]
    record: &'a Record,
}

/// The HTML page's context: the repository's name, the summary line of
/// several runtimes, and one section per runtime.
#[derive(Serialize)]
struct Page<'a> {
    name: &'a str,
    summary: Option<&'a str>,
    runtimes: Vec<Section<'a>>,
}

fn sections(outcome: &HistoryOutcome) -> Vec<Section<'_>> {
    match outcome {
        HistoryOutcome::One(h) => vec![Section {
            runtime: None,
            record: &h.record,
        }],
        HistoryOutcome::Many(m) => m
            .runtimes
            .iter()
            .map(|r| Section {
                runtime: Some(&r.name),
                record: &r.record,
            })
            .collect(),
    }
}

impl Render for HistoryOutcome {
    const COMMAND: &'static str = "fpcheck history";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        match (format, self) {
            (Format::Json, HistoryOutcome::One(h)) => Ok(to_json(h)),
            (Format::Json, HistoryOutcome::Many(m)) => Ok(to_json(m)),
            (Format::Markdown, _) => markdown(self, opts),
            (Format::Html, _) => html(self, opts),
            (Format::Table, _) => Ok(table(self, opts)),
            (other, _) => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

/// One runtime's table; several as the summary line, then one table per
/// runtime.
fn table(outcome: &HistoryOutcome, opts: &RenderOptions) -> String {
    match outcome {
        HistoryOutcome::One(h) => record_table(&h.record, opts),
        HistoryOutcome::Many(m) => {
            let mut out = format!("{}\n", escape(&m.summary));
            for r in &m.runtimes {
                out.push_str(&format!("\n== runtime {} ==\n", escape(&r.name)));
                out.push_str(&record_table(&r.record, opts));
            }
            out
        }
    }
}

/// The Markdown history: one runtime as it always was; several as the
/// summary line, then one section per runtime.
fn markdown(outcome: &HistoryOutcome, opts: &RenderOptions) -> Result<String, ReportError> {
    let render = |section: &Section| render_template(section, HISTORY_MARKDOWN, "history.md", opts);
    let HistoryOutcome::Many(m) = outcome else {
        return render(&sections(outcome)[0]);
    };
    let mut out = format!(
        "## Release history: restart verdicts\n\n{}\n",
        super::escape_markdown(&m.summary)
    );
    for section in sections(outcome) {
        out.push('\n');
        out.push_str(render(&section)?.trim_end());
        out.push('\n');
    }
    Ok(out)
}

/// The HTML page: one timeline per runtime.
fn html(outcome: &HistoryOutcome, opts: &RenderOptions) -> Result<String, ReportError> {
    let page = match outcome {
        HistoryOutcome::One(h) => Page {
            name: &h.name,
            summary: None,
            runtimes: sections(outcome),
        },
        HistoryOutcome::Many(m) => Page {
            name: &m.name,
            summary: Some(&m.summary),
            runtimes: sections(outcome),
        },
    };
    render_template(&page, HISTORY_HTML, "history.html", opts)
}

/// The reason codes as the table shows them: the long ones abbreviated (the
/// JSON, Markdown and HTML keep the codes), with the legend line they need.
fn short_reason(reason: Reason) -> (&'static str, Option<&'static str>) {
    match reason {
        Reason::FingerprintUnavailable => (
            "fp unavailable",
            Some("fp unavailable = fingerprint_unavailable"),
        ),
        Reason::UnavailableVersionUnchanged => (
            "fp unavail., same version",
            Some("fp unavail., same version = unavailable_version_unchanged"),
        ),
        Reason::NoRuntimeChange => ("no runtime change", None),
        Reason::CodeChanged => ("code changed", None),
        Reason::Forced => ("forced", None),
        Reason::SettingsChangedRuntimeChanged => (
            "settings hid a change",
            Some("settings hid a change = settings_changed_runtime_changed"),
        ),
        Reason::WitnessDisagrees => ("git disagrees", Some("git disagrees = witness_disagrees")),
    }
}

/// A history as a terminal table: one row per update, the summary and the
/// warnings below it; `opts.width` wraps it (`None`: its natural width).
fn record_table(h: &Record, opts: &RenderOptions) -> String {
    let mut t = super::grid::table(
        vec![
            "update",
            "versions",
            "fingerprints",
            "restart",
            "reason",
            "files",
        ],
        opts.color,
        opts.width,
    );
    let mut legend: Vec<&str> = Vec::new();
    for s in &h.updates {
        t.add_row(update_row(s, opts.color, &mut legend));
    }
    // Said first: a history without fingerprints says little.
    let mut out: String = h
        .warnings
        .iter()
        .filter(|w| w.code == crate::warning::Code::FingerprintsMostlyUnavailable)
        .map(|w| format!("warning: {}: {}\n", w.code, escape(&w.message)))
        .collect();
    out.push_str(&t.to_string());
    out.push('\n');
    if !legend.is_empty() {
        out.push_str(&format!("reasons: {}\n", legend.join("; ")));
    }
    out.push_str(&summary_line(&h.summary));
    out.push('\n');
    for s in &h.updates {
        for w in &s.warnings {
            out.push_str(&format!(
                "warning {} → {}: {}: {}\n",
                escape(&s.from),
                escape(&s.to),
                w.code,
                escape(&w.message)
            ));
        }
    }
    for s in &h.skipped {
        out.push_str(&format!(
            "skipped {}: {}\n",
            crate::term::escape(&s.tag),
            crate::term::escape(&s.why)
        ));
    }
    out
}

/// One update's row; the legend gets the abbreviations it uses.
fn update_row(s: &Step, color: bool, legend: &mut Vec<&'static str>) -> Vec<Cell> {
    // Eight digits: the table has a column per end.
    let short = |fp: &str| {
        crate::fingerprint::short_to(fp, 8)
            .unwrap_or("unavailable")
            .to_string()
    };
    let restart = Cell::new(if s.restart_required { "yes" } else { "no" });
    let restart = match (color, s.restart_required) {
        (true, true) => restart.fg(Color::Red),
        (true, false) => restart.fg(Color::Green),
        _ => restart,
    };
    let (reason, note) = short_reason(s.reason);
    if let Some(note) = note {
        if !legend.contains(&note) {
            legend.push(note);
        }
    }
    vec![
        Cell::new(format!(
            "{} → {}",
            crate::term::escape(&s.from),
            crate::term::escape(&s.to)
        )),
        Cell::new(format!(
            "{} → {}",
            crate::term::escape(&super::shown(&s.from_release.shown)),
            crate::term::escape(&super::shown(&s.to_release.shown))
        )),
        Cell::new(format!(
            "{} → {}",
            short(&s.from_fingerprint),
            short(&s.to_fingerprint)
        )),
        restart,
        Cell::new(if s.avoidable == Some(true) {
            format!("{reason} (avoidable)")
        } else if s.avoidable_by == Some(crate::classify::Avoidable::Version) {
            format!("{reason} (avoidable: version)")
        } else if crate::advice::has_missed_restart(&s.advice) {
            format!("{reason} (possible missed restart)")
        } else {
            reason.to_string()
        }),
        Cell::new(if s.changed_anything {
            s.runtime_files_changed.to_string()
        } else {
            "same tree".into()
        }),
    ]
}

/// The summary below the table: releases, restarts forced and saved.
fn summary_line(m: &Summary) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{}, {}: {} forced a restart ({} only by force_restart), {} free; \
         the fingerprint saved {} over restarting on every version bump.",
        count(m.releases, "release", "releases"),
        count(m.updates, "update", "updates"),
        m.restarts_forced,
        m.forced_only_by_force_restart,
        if m.free_releases == 1 {
            "1 was".to_string()
        } else {
            format!("{} were", m.free_releases)
        },
        count(m.restarts_saved, "restart", "restarts"),
    ));
    if let Some(n) = m.avoidable_restarts.filter(|n| *n > 0) {
        out.push_str(&format!(
            " {n} restart{} forced only by comments or docstrings (avoidable).",
            if n == 1 { " was" } else { "s were" }
        ));
    }
    out.push_str(&super::advice::history_sentence(m));
    if m.versions_from_tags > 0 {
        out.push_str(&format!(
            " {} no version file: {} tag's version is shown (tag) and counted; \
             the reference updater reads version.json only and sees none.",
            count(m.versions_from_tags, "release has", "releases have"),
            if m.versions_from_tags == 1 {
                "its"
            } else {
                "their"
            }
        ));
    }
    if m.unavailable_fingerprints > 0 {
        out.push_str(&format!(
            " {} no fingerprint.",
            count(m.unavailable_fingerprints, "release has", "releases have")
        ));
    }
    out
}

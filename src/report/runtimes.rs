//! The report of several runtimes ([`RuntimesAnalysis`]): the overall
//! answer first, then each runtime's own report.

use super::{render_table, render_template, to_json, Format, RenderOptions, ReportError};
use crate::range::RuntimesAnalysis;

/// The embedded Markdown template of several runtimes
/// (`templates/runtimes.md.tera`).
pub const RUNTIMES_MARKDOWN: &str = include_str!("../../templates/runtimes.md.tera");

/// Renders a several-runtime report as `format`.
pub fn render_runtimes(
    many: &RuntimesAnalysis,
    format: Format,
    opts: &RenderOptions,
) -> Result<String, ReportError> {
    match format {
        Format::Json => Ok(to_json(many)),
        Format::Table => Ok(table(many, opts)),
        Format::Markdown => render_template(many, RUNTIMES_MARKDOWN, "runtimes.md", opts),
    }
}

/// The summary line, the notes, then one block per runtime.
fn table(many: &RuntimesAnalysis, opts: &RenderOptions) -> String {
    let mut out = format!("{}\n", super::printable(&many.summary));
    for note in &many.notes {
        out.push_str(&format!("note: {}\n", super::printable(note)));
    }
    for r in &many.runtimes {
        out.push_str(&format!("\n== runtime {} ==\n", super::printable(&r.name)));
        out.push_str(&render_table(&r.analysis, opts));
    }
    out
}

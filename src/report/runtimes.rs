//! The report of several runtimes ([`RuntimesAnalysis`]): the overall
//! answer first, then each runtime's own report.

use super::{
    render_table, render_template, render_user_template, to_json, Format, Render, RenderOptions,
    ReportError,
};
use crate::range::RuntimesAnalysis;

/// The embedded Markdown template of several runtimes
/// (`templates/runtimes.md.tera`).
pub const RUNTIMES_MARKDOWN: &str = include_str!("../../templates/runtimes.md.tera");

impl Render for RuntimesAnalysis {
    const COMMAND: &'static str = "fpcheck RANGE";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        match format {
            Format::Json => Ok(to_json(self)),
            Format::Table => Ok(table(self, opts)),
            Format::Markdown => render_template(self, RUNTIMES_MARKDOWN, "runtimes.md", opts),
            Format::Template(t) => render_user_template(self, &t.text, &t.name, opts),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
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

//! `fpcheck RANGE --resolve-only`: the two ends as the comparison would take
//! them, one line each (`from REF COMMIT`), or their JSON.

use super::{printable, to_json, Format, Render, RenderOptions, ReportError};
use crate::range::{ResolvedEnd, ResolvedEnds};

impl Render for ResolvedEnds {
    const COMMAND: &'static str = "fpcheck RANGE --resolve-only";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        match format {
            Format::Json => Ok(to_json(self)),
            Format::Text => Ok(text(self)),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

fn text(ends: &ResolvedEnds) -> String {
    let line = |name: &str, end: &ResolvedEnd| {
        format!(
            "{name} {} {}\n",
            printable(&end.reference),
            end.commit.as_deref().unwrap_or("-")
        )
    };
    let mut text = line("from", &ends.from) + &line("to", &ends.to);
    for note in &ends.notes {
        text.push_str(&format!("note: {}\n", printable(note)));
    }
    text
}

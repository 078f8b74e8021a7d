//! The history's Markdown and HTML: one section (Markdown) or one timeline
//! (HTML) per runtime, from the same templates whether there is one runtime
//! or several.

use serde::Serialize;

use super::{render_template, RenderOptions, ReportError, HISTORY_HTML, HISTORY_MARKDOWN};
use crate::history::{Outcome, Record};

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

fn sections(outcome: &Outcome) -> Vec<Section<'_>> {
    match outcome {
        Outcome::One(h) => vec![Section {
            runtime: None,
            record: &h.record,
        }],
        Outcome::Many(m) => m
            .runtimes
            .iter()
            .map(|r| Section {
                runtime: Some(&r.name),
                record: &r.record,
            })
            .collect(),
    }
}

/// The Markdown history: one runtime as it always was; several as the
/// summary line, then one section per runtime.
pub fn history_markdown(outcome: &Outcome, opts: &RenderOptions) -> Result<String, ReportError> {
    let render = |section: &Section| render_template(section, HISTORY_MARKDOWN, "history.md", opts);
    let Outcome::Many(m) = outcome else {
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
pub fn history_html(outcome: &Outcome, opts: &RenderOptions) -> Result<String, ReportError> {
    let page = match outcome {
        Outcome::One(h) => Page {
            name: &h.name,
            summary: None,
            runtimes: sections(outcome),
        },
        Outcome::Many(m) => Page {
            name: &m.name,
            summary: Some(&m.summary),
            runtimes: sections(outcome),
        },
    };
    render_template(&page, HISTORY_HTML, "history.html", opts)
}

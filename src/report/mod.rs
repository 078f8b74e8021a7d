//! The report: renderers over the serialisable [`Analysis`]. `json` prints
//! the context itself; `markdown` renders a tera template embedded from
//! `templates/` (or a user's own, with the same context); `table` is for a
//! terminal.

use crate::range::Analysis;

mod fit;
mod gate;
mod history;
mod markdown;
mod names;
mod runtimes;
mod table;

pub use fit::{fit_within, render_within};
pub use gate::{ack_text, gate_text, snapshot_summary, status_text};
pub use history::{history_html, history_markdown, history_table};
pub use markdown::{
    escape_markdown, render_template, DEFAULT_MARKDOWN, HISTORY_HTML, HISTORY_MARKDOWN,
    SECTION_MARKDOWN,
};
pub use names::{name_end, End};
pub use runtimes::{render_runtimes, RUNTIMES_MARKDOWN};
pub use table::render_table;

/// The longest value (in characters) a report shows whole: a version, a
/// `force_restart` or a name from the repository longer than this is
/// shortened for display, so that a hostile `version.json` cannot push the
/// verdict out of a size-limited report. JSON keeps every value exact.
pub const MAX_SHOWN_CHARS: usize = 200;

/// `text` as a report shows it: whole when it has at most
/// [`MAX_SHOWN_CHARS`] characters, else its start, a visible ellipsis and
/// its full length (`1.2.99999… (100002 characters)`).
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    let mut chars = text.char_indices();
    match chars.nth(MAX_SHOWN_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some(_) => {
            let keep = text
                .char_indices()
                .nth(MAX_SHOWN_CHARS / 2)
                .map_or(text.len(), |(i, _)| i);
            let total = text.chars().count();
            std::borrow::Cow::Owned(format!("{}… ({total} characters)", &text[..keep]))
        }
    }
}

/// How many files a list shows before it says "N more".
pub const DEFAULT_MAX_FILES: usize = 200;

/// Output formats of the range report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// comfy-table, for a terminal.
    Table,
    /// The documented, stable JSON context.
    Json,
    /// The embedded Markdown template.
    Markdown,
}

/// A report that cannot be rendered (a user template's error, mostly).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

/// Options for rendering.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Colour the table (never in other formats).
    pub color: bool,
    /// Lists longer than this are cut, with a count.
    pub max_files: usize,
    /// Terminal width for the table.
    pub width: u16,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            max_files: DEFAULT_MAX_FILES,
            width: 80,
        }
    }
}

/// Renders `analysis` as `format`.
pub fn render(
    analysis: &Analysis,
    format: Format,
    opts: &RenderOptions,
) -> Result<String, ReportError> {
    match format {
        Format::Json => Ok(to_json(analysis)),
        Format::Table => Ok(render_table(analysis, opts)),
        Format::Markdown => render_template(analysis, DEFAULT_MARKDOWN, "report.md", opts),
    }
}

/// A path or message made safe for a terminal or a line-based list: control
/// and bidirectional characters written as visible escapes, by the one rule
/// every human-facing line follows ([`crate::term::escape`]).
pub(crate) fn printable(text: &str) -> String {
    crate::term::escape(text).into_owned()
}

/// Pretty JSON with a final newline.
pub use crate::pretty::json as to_json;

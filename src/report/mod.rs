//! The report: every answer fpcheck gives, rendered in one way. Each
//! report value (a range's [`Analysis`], several runtimes, the history, the
//! gate's, `status`'s and `ack`'s reports, the snapshot written, the
//! fingerprint, the patch, the demo, the resolved ends) implements
//! [`Render`], whose one [`Render::render`] takes a [`Format`] and the
//! [`RenderOptions`]. `json` prints the documented value itself; `markdown`
//! and `html` render a tera template embedded from `templates/` (or a
//! user's own, with the JSON's context); `table` and `text` are for a
//! terminal.

use crate::range::{Analysis, RangeOutcome};

mod advice;
mod bounded;
mod demo;
mod fingerprint;
mod fit;
mod gate;
mod grid;
mod history;
mod markdown;
mod names;
mod patch;
mod resolved;
mod runtimes;
mod table;

pub use demo::DemoReport;
pub use fingerprint::FingerprintReport;
use fit::fit_within;
pub use gate::SnapshotWritten;
pub use markdown::{
    escape_markdown, DEFAULT_MARKDOWN, HISTORY_HTML, HISTORY_MARKDOWN, SECTION_MARKDOWN,
};
use markdown::{render_template, render_user_template};
pub use names::{name_end, End};
pub use patch::PatchReport;
pub use runtimes::RUNTIMES_MARKDOWN;
use table::render_table;

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

/// The formats a report is rendered in; each report says which it has
/// ([`Render`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// comfy-table, for a terminal (the range and the history).
    Table,
    /// Plain lines, for a terminal (the gate's commands, `fingerprint`,
    /// `--resolve-only`).
    Text,
    /// The documented, stable JSON.
    Json,
    /// The embedded Markdown template.
    Markdown,
    /// The embedded HTML page.
    Html,
    /// A user's own tera template, with the JSON's context.
    Template(Template),
}

impl Format {
    /// The format's name, as flags and messages spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Template(_) => "template",
        }
    }
}

/// A user's tera template (`--template FILE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// How errors name it (the file's path).
    pub name: String,
    /// The template's text.
    pub text: String,
}

/// A report that cannot be rendered (a user template's error, mostly).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReportError(pub String);

impl ReportError {
    /// The error of a format a report does not have, naming both.
    fn unsupported(command: &str, format: &Format) -> Self {
        ReportError(format!("`{command}` has no {} output", format.name()))
    }
}

/// Options for rendering.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Colour the table (never in other formats).
    pub color: bool,
    /// Lists longer than this are cut, with a count.
    pub max_files: usize,
    /// Terminal width for a table; `None`: the table's natural width.
    pub width: Option<u16>,
    /// The most bytes the report may take: its file lists are shortened
    /// (whole rows, counted) until it fits ([`fit_within`]); `None`: no
    /// limit.
    pub max_bytes: Option<usize>,
    /// The table lists each group of changes not counted up to `max_files`
    /// too (`--max-files` given), not only its first 8.
    pub ignored_in_full: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            max_files: DEFAULT_MAX_FILES,
            width: Some(80),
            max_bytes: None,
            ignored_in_full: false,
        }
    }
}

/// Every report value: one way to render it, in any [`Format`] it has.
/// A format it does not have is an error naming the format and the
/// command.
pub trait Render {
    /// The command whose answer this is, as an unsupported format's error
    /// names it (`fpcheck gate`).
    const COMMAND: &'static str;

    /// This report as `format` with file lists of at most
    /// `opts.max_files` rows, ignoring `opts.max_bytes`: what each report
    /// defines. Callers use [`Render::render`].
    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError>;

    /// This report as `format`, within `opts.max_bytes` when set.
    fn render(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        let at = |max_files: usize| {
            self.render_lists(
                format,
                &RenderOptions {
                    max_files,
                    ..opts.clone()
                },
            )
        };
        match opts.max_bytes {
            Some(limit) => fit_within(opts.max_files, limit, at),
            None => at(opts.max_files),
        }
    }
}

impl Render for Analysis {
    const COMMAND: &'static str = "fpcheck RANGE";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        match format {
            Format::Json => Ok(to_json(self)),
            Format::Table => Ok(render_table(self, opts)),
            Format::Markdown => render_template(self, DEFAULT_MARKDOWN, "report.md", opts),
            Format::Template(t) => render_user_template(self, &t.text, &t.name, opts),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

impl Render for RangeOutcome {
    const COMMAND: &'static str = "fpcheck RANGE";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        match self {
            RangeOutcome::One(analysis) => analysis.render_lists(format, opts),
            RangeOutcome::Many(many) => many.render_lists(format, opts),
        }
    }
}

/// A path or message made safe for a terminal or a line-based list: control
/// and bidirectional characters written as visible escapes, by the one rule
/// every human-facing line follows ([`crate::term::escape`]).
pub(crate) fn printable(text: &str) -> String {
    crate::term::escape(text).into_owned()
}

/// Pretty JSON with a final newline.
pub(crate) use crate::pretty::json as to_json;

#[cfg(test)]
mod tests;

//! `--report FORMAT[:MAX_BYTES]=FILE`: more reports from the same run (the
//! GitHub Action writes the JSON, the job summary and the comment at once,
//! each within its own size limit).

use std::path::PathBuf;

use fpcheck::range::RangeOutcome;
use fpcheck::report::{Format, Render, RenderOptions};

use super::{emit, Failure};

/// One extra report: its format, its size limit, its file.
#[derive(Clone, Debug)]
pub(super) struct ReportOut {
    format: Format,
    max_bytes: Option<usize>,
    path: PathBuf,
}

const FORM: &str =
    "write FORMAT[:MAX_BYTES]=FILE, e.g. json=report.json or markdown:65000=comment.md";

/// Parses `FORMAT[:MAX_BYTES]=FILE` (clap's value parser).
pub(super) fn parse(text: &str) -> Result<ReportOut, String> {
    let (head, path) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: {FORM}"))?;
    if path.is_empty() {
        return Err(format!("`{text}` names no file: {FORM}"));
    }
    let (name, max_bytes) = match head.split_once(':') {
        Some((name, limit)) => match limit.parse::<usize>() {
            Ok(n) if n > 0 => (name, Some(n)),
            _ => return Err(format!("`{limit}` is not a size in bytes: {FORM}")),
        },
        None => (head, None),
    };
    let format = match name {
        "json" => Format::Json,
        "markdown" => Format::Markdown,
        "table" => Format::Table,
        other => {
            return Err(format!(
                "unknown format `{other}` (json, markdown or table): {FORM}"
            ))
        }
    };
    Ok(ReportOut {
        format,
        max_bytes,
        path: PathBuf::from(path),
    })
}

/// Renders every extra report (no colour, 80 columns: they go to files),
/// of one runtime or of several; each on its own (one that cannot be
/// rendered within its limit does not keep the others from being written).
pub(super) fn render_all(
    outcome: &RangeOutcome,
    outs: &[ReportOut],
    opts: &RenderOptions,
) -> Vec<Result<(PathBuf, String), Failure>> {
    outs.iter()
        .map(|out| {
            let opts = RenderOptions {
                color: false,
                width: Some(80),
                max_bytes: out.max_bytes,
                ..opts.clone()
            };
            let text = outcome
                .render(&out.format, &opts)
                // Only the report's own content can overflow a limit (the
                // formats are built in): an input the report cannot hold.
                .map_err(|e| {
                    Failure::new(
                        fpcheck::error::Kind::Input,
                        format!("--report {}: {}", out.path.display(), e.0),
                    )
                })?;
            Ok((out.path.clone(), text))
        })
        .collect()
}

/// Writes each rendered report (atomically) and returns what failed,
/// those that could not be rendered included, in the order given.
pub(super) fn write_all(rendered: Vec<Result<(PathBuf, String), Failure>>) -> Vec<Failure> {
    rendered
        .into_iter()
        .filter_map(|r| r.and_then(|(path, text)| emit(&text, Some(&path))).err())
        .collect()
}

/// The outcome of a run whose outputs were each written or reported on
/// their own: every failure is said, in order; the exit code is the first
/// one's (the output, then each `--report`, then `--patch-out`).
pub(super) fn outcome(failures: Vec<Failure>, ok: u8) -> Result<u8, Failure> {
    let Some(first) = failures.first().map(|f| f.code) else {
        return Ok(ok);
    };
    for f in failures.iter().filter(|f| !f.message.is_empty()) {
        eprintln!("fpcheck: error: {}", fpcheck::term::escape(&f.message));
    }
    Err(Failure {
        code: first,
        message: String::new(),
    })
}

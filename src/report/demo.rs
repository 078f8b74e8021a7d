//! `fpcheck demo`'s answer: the behaviour matrix as fpcheck sees it, as a
//! table with a closing line, or one JSON object per release.

use std::path::Path;

use comfy_table::{Cell, Color, ColumnConstraint, Width};
use serde::Serialize;

use super::{to_json, Format, Render, RenderOptions, ReportError};
use crate::demo::Row;
use crate::term::count;

/// The demo's releases, and the directory the repository was kept in.
pub struct DemoReport<'a> {
    /// One per row of the behaviour matrix.
    pub rows: &'a [Row],
    /// `--keep DIR`; `None`: the repository was thrown away.
    pub kept: Option<&'a Path>,
}

#[derive(Serialize)]
struct JsonRow<'a> {
    row: u8,
    touches: &'a str,
    range: &'a str,
    agrees: bool,
    expected_restart: bool,
    expected_marker: bool,
    analysis: &'a crate::range::Analysis,
}

/// The table's width whatever the terminal's: the matrix is read whole.
const WIDTH: u16 = 100;

impl Render for DemoReport<'_> {
    const COMMAND: &'static str = "fpcheck demo";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        match format {
            Format::Text => Ok(self.text(opts.color)),
            Format::Json => Ok(self.json()),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

impl DemoReport<'_> {
    fn json(&self) -> String {
        let out: Vec<JsonRow> = self
            .rows
            .iter()
            .map(|r| JsonRow {
                row: r.number,
                touches: r.touches,
                range: &r.range,
                agrees: r.agrees(),
                expected_restart: r.expected.restart,
                expected_marker: r.expected.marker,
                analysis: &r.analysis,
            })
            .collect();
        to_json(&out)
    }

    /// The matrix as a table, the tally, and how to explore the repository.
    fn text(&self, color: bool) -> String {
        let rows = self.rows;
        let mut table = matrix_table(color);
        for r in rows {
            table.add_row(release_row(r, color));
        }
        let mut out =
            String::from("The behaviour matrix of docs/spec.md section 8, as fpcheck sees it:\n");
        out.push_str(&table.to_string());
        out.push('\n');
        out.push_str(&tally(rows));
        out.push_str(&where_kept(rows, self.kept));
        out
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The empty matrix, its header and column widths set.
fn matrix_table(color: bool) -> comfy_table::Table {
    let mut table = super::grid::table(
        vec![
            "#",
            "release touches",
            "release",
            "marker",
            "restart",
            "reason",
            "spec",
        ],
        color,
        Some(WIDTH),
    );
    // Reason codes are looked up and grepped: keep them whole (the widths
    // include the padding), and let the
    // prose column ("release touches") wrap instead.
    for (column, width) in [(3, 20), (5, 25)] {
        if let Some(c) = table.column_mut(column) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(width)));
        }
    }
    table
}

/// One release of the matrix: what it touches, what fpcheck decides, and
/// whether that agrees with the spec.
fn release_row(r: &Row, color: bool) -> Vec<Cell> {
    let a = &r.analysis;
    let marker = match a.updater.marker_reason {
        Some(reason) => reason.to_string(),
        None => "no".into(),
    };
    let verdict = Cell::new(yes_no(a.restart_required));
    let verdict = if color {
        verdict.fg(if a.restart_required {
            Color::Red
        } else {
            Color::Green
        })
    } else {
        verdict
    };
    let spec = if r.agrees() {
        "agrees".to_string()
    } else {
        format!("DISAGREES (spec: restart {})", yes_no(r.expected.restart))
    };
    vec![
        Cell::new(r.number),
        Cell::new(r.touches),
        Cell::new(
            r.range
                .split_once("..")
                .map_or(r.range.as_str(), |(_, to)| to),
        ),
        Cell::new(marker),
        verdict,
        Cell::new(a.reason.as_str()),
        Cell::new(spec),
    ]
}

/// How many releases restart, and whether every verdict agrees.
fn tally(rows: &[Row]) -> String {
    let restarts = rows.iter().filter(|r| r.analysis.restart_required).count();
    let free = rows.len() - restarts;
    format!(
        "{}: {} a restart, {}. {}\n",
        count(rows.len(), "release", "releases"),
        count(restarts, "forces", "force"),
        count(free, "is free", "are free"),
        if rows.iter().all(Row::agrees) {
            "Every verdict agrees with the spec."
        } else {
            "SOME VERDICTS DISAGREE WITH THE SPEC."
        }
    )
}

/// Where the repository is kept, or how to keep it.
fn where_kept(rows: &[Row], kept: Option<&Path>) -> String {
    match kept {
        Some(dir) => format!(
            "The repository is kept in {}, with {} checked out: \
             cd there and try `fpcheck v1.0.0..v1.1.0`, `fpcheck history`.\n",
            dir.display(),
            rows.last()
                .and_then(|r| r.range.split_once(".."))
                .map_or("the last release", |(_, to)| to),
        ),
        None => "Keep the repository to explore it: fpcheck demo --keep DIR\n".to_string(),
    }
}

//! `fpcheck demo`: the behaviour matrix as fpcheck sees it.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use comfy_table::{
    presets::UTF8_FULL_CONDENSED, Cell, Color, ColumnConstraint, ContentArrangement, Table, Width,
};
use serde::Serialize;

use fpcheck::demo::{self, Row};

use super::{count, exit, print, Failure};

/// Show the behaviour matrix on a built-in demo repository (no repository of yours needed)
///
/// Builds a throwaway repository with one release per row of the behaviour
/// matrix (a real fix, a new module, README-only, CHANGELOG-only, a new
/// scripts/ file, a migration, force_restart, an unavailable fingerprint),
/// analyses each release against the one before it, and checks every
/// verdict against the behaviour matrix of docs/spec.md (section 8). Exits 1
/// if any row disagrees. With --keep, the repository stays in DIR with the
/// last release checked out.
#[derive(Debug, Args)]
#[command(after_help = "Then try fpcheck on the demo repository yourself:
  fpcheck demo --keep /tmp/fpdemo
  cd /tmp/fpdemo
  fpcheck v1.0.0..v1.1.0
  fpcheck history
  fpcheck v1.7.0.. --worktree")]
pub(super) struct DemoArgs {
    /// Build the repository in DIR (created, must be empty) and keep it.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    // Print JSON: one object per release with the expectation and the
    // full analysis.
    #[command(flatten)]
    json: super::JsonArg,
}

#[derive(Serialize)]
struct JsonRow<'a> {
    row: u8,
    touches: &'a str,
    range: &'a str,
    agrees: bool,
    expected_restart: bool,
    expected_marker: bool,
    analysis: &'a fpcheck::range::Analysis,
}

pub(super) fn run(args: DemoArgs) -> Result<u8, Failure> {
    let temp;
    let dir = match &args.keep {
        Some(dir) => {
            prepare(dir)?;
            dir.clone()
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("fpcheck-demo")
                .tempdir()
                .map_err(|e| {
                    Failure::output(format!("cannot create a temporary directory: {e}"))
                })?;
            temp.path().to_path_buf()
        }
    };
    let rows = demo::run(&dir)?;
    if args.keep.is_some() {
        // A kept repository is for trying the other commands: give it the
        // last release's files, as a clone would have.
        demo::check_out_head(&dir)?;
    }
    let all_agree = rows.iter().all(Row::agrees);
    if args.json.on() {
        let out: Vec<JsonRow> = rows
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
        print(&fpcheck::report::to_json(&out))?;
    } else {
        print(&human(&rows, &args, all_agree))?;
    }
    Ok(if all_agree { exit::OK } else { exit::RESTART })
}

fn prepare(dir: &std::path::Path) -> Result<(), Failure> {
    let not_empty = std::fs::read_dir(dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if not_empty {
        return Err(Failure::usage(format!(
            "{} is not empty: --keep needs a new or empty directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::output(format!("cannot create {}: {e}", dir.display())))
}

/// The demo's report for a person: the matrix as a table, the tally, and
/// how to explore the repository.
fn human(rows: &[Row], args: &DemoArgs, all_agree: bool) -> String {
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut table = matrix_table(color);
    for r in rows {
        table.add_row(release_row(r, color));
    }
    // Reason codes are looked up and grepped: keep them whole (the widths
    // include the padding), and let the
    // prose column ("release touches") wrap instead.
    for (column, width) in [(3, 20), (5, 25)] {
        if let Some(c) = table.column_mut(column) {
            c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(width)));
        }
    }
    let mut out =
        String::from("The behaviour matrix of docs/spec.md section 8, as fpcheck sees it:\n");
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str(&tally(rows, all_agree));
    out.push_str(&where_kept(rows, args));
    out
}

/// The empty matrix table, with its header.
fn matrix_table(color: bool) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(100);
    if color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table.set_header(vec![
        "#",
        "release touches",
        "release",
        "marker",
        "restart",
        "reason",
        "spec",
    ]);
    table
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// One release of the matrix: what it touches, fpcheck's verdict, and
/// whether the spec agrees.
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

/// How many releases restart, how many are free, and whether every
/// verdict agrees with the spec.
fn tally(rows: &[Row], all_agree: bool) -> String {
    let restarts = rows.iter().filter(|r| r.analysis.restart_required).count();
    let free = rows.len() - restarts;
    format!(
        "{}: {} a restart, {}. {}\n",
        count(rows.len(), "release", "releases"),
        count(restarts, "forces", "force"),
        if free == 1 {
            "1 is free".to_string()
        } else {
            format!("{free} are free")
        },
        if all_agree {
            "Every verdict agrees with the spec."
        } else {
            "SOME VERDICTS DISAGREE WITH THE SPEC."
        }
    )
}

/// Where the demo's repository is (with `--keep`), or how to keep it.
fn where_kept(rows: &[Row], args: &DemoArgs) -> String {
    match &args.keep {
        Some(dir) => format!(
            "The repository is kept in {}, with {} checked out: \
             cd there and try `fpcheck v1.0.0..v1.1.0`, `fpcheck history`.\n",
            dir.display(),
            rows.last()
                .and_then(|r| r.range.split_once(".."))
                .map_or("the last release", |(_, to)| to),
        ),
        None => "Keep the repository to explore it: fpcheck demo --keep DIR\n".into(),
    }
}

//! `fpcheck demo`: the behaviour matrix as fpcheck sees it.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use fpcheck::demo::{self, Row};
use fpcheck::report::{DemoReport, RenderOptions};

use super::{exit, print, render_built_in, use_color, ColorWhen, Failure};

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
    let report = DemoReport {
        rows: &rows,
        kept: args.keep.as_deref(),
    };
    let opts = RenderOptions {
        color: use_color(ColorWhen::Auto, std::io::stdout().is_terminal()),
        ..RenderOptions::default()
    };
    print(&render_built_in(&report, &args.json.format(), &opts)?)?;
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

//! `fpcheck init`: propose an `fpcheck.toml` for the repository in front
//! of it.

use std::path::PathBuf;

use clap::Args;

use fpcheck::init::{self, Limits};
use fpcheck::source::git::open_repo;

use super::{exit, print, Failure};

/// Write an fpcheck.toml proposing runtimes from the entry points found
/// (server.py, __main__.py, [project.scripts] in pyproject.toml). Never
/// replaces an existing file; nothing found is executed.
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The repository (default: the one around the current directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// Print the proposal instead of writing the file.
    #[arg(long, alias = "dry-run")]
    stdout: bool,
    /// Directories deeper than this are not scanned.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_depth)]
    max_depth: usize,
    /// Stop scanning after this many entries.
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_entries)]
    max_entries: usize,
}

pub(super) fn run(args: InitArgs) -> Result<u8, Failure> {
    let repo = open_repo(args.repo.as_deref())?;
    let top = repo
        .workdir()
        .map(std::path::Path::to_path_buf)
        .ok_or_else(|| {
            Failure::usage(format!(
                "{} is a bare repository: run fpcheck init in a checkout",
                fpcheck::source::git::repo_display(&repo)
            ))
        })?;
    let scan = init::scan(
        &top,
        Limits {
            max_depth: args.max_depth,
            max_entries: args.max_entries,
        },
    );
    let mut scan = scan;
    let names: Vec<String> = repo
        .references()
        .ok()
        .and_then(|r| {
            r.tags().ok().map(|tags| {
                tags.flatten()
                    .map(|t| t.name().shorten().to_string())
                    .collect()
            })
        })
        .unwrap_or_default();
    scan.tag_patterns = init::tag_patterns(names.iter().map(String::as_str));
    scan.tags_total = names.len();
    for note in &scan.notes {
        eprintln!("fpcheck: {}", fpcheck::term::escape(note));
    }
    if scan.truncated {
        eprintln!(
            "fpcheck: the scan stopped at --max-depth {} / --max-entries {}: deeper runtimes may be missing",
            args.max_depth, args.max_entries
        );
    }
    check_against_history(args.repo.as_deref(), &scan);
    let text = init::render(&scan);
    init::check(&text).map_err(|e| {
        Failure::new(
            fpcheck::error::Kind::Internal,
            format!("internal error, nothing was written: the proposal does not parse: {e}"),
        )
    })?;
    if args.stdout {
        print(&text)?;
        return Ok(exit::OK);
    }
    let path = init::create(&top, &text)?;
    let count = scan.active().count();
    eprintln!(
        "fpcheck: wrote {} with {} runtime{}",
        fpcheck::term::escape(&path.display().to_string()),
        count.max(1),
        if count > 1 { "s" } else { "" }
    );
    Ok(exit::OK)
}

/// Warns, for each runtime proposed, about the releases it would call free
/// that the default root restarts.
fn check_against_history(repo: Option<&std::path::Path>, scan: &init::Scan) {
    let Ok(session) = fpcheck::source::git::Session::open(repo) else {
        return;
    };
    for p in scan.active() {
        let reference = init::reference_root(scan, p);
        let updates = init::free_where_default_restarts(&session, p, &reference);
        if updates.is_empty() {
            continue;
        }
        let shown: Vec<&str> = updates.iter().take(5).map(String::as_str).collect();
        eprintln!(
            "fpcheck: warning: with root `{}`, {} update{} read free that {} restarts ({}{}): the proposed root may leave out code the server runs; check it before relying on it",
            fpcheck::term::escape(fpcheck::source::show_root(&p.root)),
            updates.len(),
            if updates.len() == 1 { "" } else { "s" },
            if scan.active().count() == 1 {
                "the default root `src`".to_string()
            } else {
                format!(
                    "root `{}`",
                    fpcheck::term::escape(fpcheck::source::show_root(&reference))
                )
            },
            fpcheck::term::escape(&shown.join(", ")),
            if updates.len() > 5 { ", ..." } else { "" }
        );
    }
}

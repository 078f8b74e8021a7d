//! `fpcheck history`: every release's restart verdict.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use fpcheck::history::{self, HistoryOptions, HistoryOutcome, Record};
use fpcheck::pair::Pair;
use fpcheck::report::{Format, Render, RenderOptions};
use fpcheck::source::git::Session;
use fpcheck::term::escape;
use fpcheck::warning::Code;

use super::{emit, exit, request, table_width, use_color, ColorWhen, Failure, RuntimeFlags};

/// Show every release's restart verdict, and the restarts the fingerprint saved
///
/// For each pair of consecutive version tags: whether updating forced
/// running clients to restart, and why, with a summary of restarts forced
/// and saved.
///
/// Releases are the tags that parse as versions (a `v` prefix allowed),
/// ordered by semver precedence; tags on one commit are one release. A
/// runtime with `tag_pattern = "server-v*"` in the fpcheck.toml committed
/// at HEAD takes that pattern's tags, the prefix stripped. Each
/// release is fingerprinted with the fpcheck.toml committed at it (flags
/// override them all). With several runtimes declared, one history per
/// runtime (`--runtime NAME`, repeatable, narrows them).
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  fpcheck history
  fpcheck history v7.9.30..v7.11.8
  fpcheck history --tags 'v7.*' --format html --output releases.html")]
pub(super) struct HistoryArgs {
    /// Only the releases from FROM to TO (tags, inclusive).
    #[arg(value_name = "FROM..TO")]
    span: Option<String>,
    /// The repository (default: the one around the current directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// Only tags matching this glob (e.g. 'v7.*'); its literal part before
    /// the first wildcard is stripped before a version is parsed. Replaces
    /// every runtime's tag pattern.
    #[arg(long, value_name = "GLOB")]
    tags: Option<String>,
    /// The runtime's release tags are PREFIX* (e.g. 'server-v*', 'mcp@*'):
    /// PREFIX is stripped before the version is parsed. Replaces the
    /// `tag_pattern` of fpcheck.toml [default: each runtime's
    /// `tag_pattern` in the fpcheck.toml committed at HEAD].
    #[arg(long, value_name = "GLOB", conflicts_with = "tags")]
    tag_pattern: Option<String>,
    /// Leave pre-releases (1.0.0-rc.1) out.
    #[arg(long)]
    skip_prereleases: bool,
    /// The runtime root, from the top of the repository [default: src].
    #[arg(long, value_name = "DIR")]
    root: Option<String>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: HistoryFormat,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Neither read nor write the fingerprint cache in the git directory.
    #[arg(long)]
    no_cache: bool,
    /// When to colour the table: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,
    /// Do not tell restarts caused only by comments or docstrings.
    #[arg(long)]
    no_classify: bool,
    /// Exit with 1 when any update shown forced a restart (of any runtime),
    /// 0 when none did (errors keep their own codes).
    #[arg(long)]
    exit_code: bool,
    /// When git's own checkout of both releases confirms a free release:
    /// auto (trees whose checkout fpcheck emulates: .gitattributes,
    /// symbolic links, submodules, names not UTF-8), always, never. A
    /// disagreement is a restart (witness_disagrees, exit 3).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    witness: super::WitnessWhen,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum HistoryFormat {
    Table,
    Json,
    Markdown,
    Html,
}

pub(super) fn run(mut args: HistoryArgs) -> Result<u8, Failure> {
    if args.json {
        args.format = HistoryFormat::Json;
    }
    let span = parse_span(args.span.as_deref())?;
    let repo = Session::open(args.repo.as_deref())?;
    // `--runtime` (repeatable) narrows the runtimes; the request itself
    // names none. Each release's committed settings apply, flags over all.
    let flags = RuntimeFlags {
        runtime: Vec::new(),
        ..args.runtime.clone()
    };
    let mut settings = request(&flags, args.root.clone(), true)?;
    settings.overrides.tag_pattern = super::tag_pattern_flag(args.tag_pattern.as_deref())?;
    let opts = HistoryOptions {
        span,
        tags: args.tags.clone(),
        skip_prereleases: args.skip_prereleases,
        persistent_cache: !args.no_cache,
        threads: args.threads,
        classify: !args.no_classify,
        witness: args.witness.into(),
    };
    let bar = progress_bar(&args);
    let progress = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let outcome = history::run_runtimes(&repo, &settings, &opts, &args.runtime.runtime, &progress)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let records = warn_records(&outcome);
    if records.iter().all(|(_, r)| r.tags.is_empty()) {
        return Err(Failure::new(
            fpcheck::error::Kind::Input,
            format!(
                "no release tags{} in {}: releases are tags that parse as versions (v1.2.3, 2.0.0rc1; a prefix such as server-v1.2.3 with `tag_pattern = \"server-v*\"` in fpcheck.toml or --tags 'server-v*')",
                args.tags
                    .as_deref()
                    .map(|g| format!(" matching `{g}`"))
                    .unwrap_or_default(),
                match &outcome {
                    HistoryOutcome::One(h) => &h.repo,
                    HistoryOutcome::Many(m) => &m.repo,
                }
            ),
        ));
    }
    let text = render(&args, &outcome)?;
    emit(&text, args.output.as_deref())?;
    // Not one fingerprint: the verdicts are all "unavailable", not a record.
    if records.iter().all(|(_, r)| r.no_fingerprint()) {
        return Ok(exit::UNAVAILABLE);
    }
    Ok(if outcome.witness_disagreed() {
        // As for an unavailable fingerprint: fpcheck's reading failed.
        exit::UNAVAILABLE
    } else if args.exit_code && outcome.restart_required() {
        exit::RESTART
    } else {
        exit::OK
    })
}

/// The table's width: the terminal's, or `COLUMNS`; a file or a pipe gets
/// the table's natural width (no wrapping) unless `COLUMNS` says otherwise.
fn width(terminal: bool) -> Option<u16> {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok());
    match (from_env, terminal) {
        (Some(w), _) => Some(w),
        (None, true) => Some(table_width(true)),
        (None, false) => None,
    }
}

/// `FROM..TO` as two release tags.
fn parse_span(span: Option<&str>) -> Result<Option<Pair<String>>, Failure> {
    let Some(text) = span else {
        return Ok(None);
    };
    match text.split_once("..") {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && !b.starts_with('.') => {
            Ok(Some(Pair::new(a.to_string(), b.to_string())))
        }
        _ => Err(Failure::usage(format!(
            "`{text}`: write the span as FROM..TO with two release tags"
        ))),
    }
}

/// A progress bar on a terminal's stderr, for every format but JSON.
fn progress_bar(args: &HistoryArgs) -> Option<indicatif::ProgressBar> {
    let show_progress =
        std::io::stderr().is_terminal() && !matches!(args.format, HistoryFormat::Json);
    show_progress.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} reading releases {pos}/{len} {wide_bar}",
            )
            .expect("a valid template"),
        );
        bar
    })
}

/// Each runtime's record, its warnings printed on stderr (the order
/// warnings once: they are the same in every record).
fn warn_records(outcome: &HistoryOutcome) -> Vec<(Option<&str>, &Record)> {
    let records: Vec<(Option<&str>, &Record)> = match outcome {
        HistoryOutcome::One(h) => vec![(None, &h.record)],
        HistoryOutcome::Many(m) => m
            .runtimes
            .iter()
            .map(|r| (Some(r.name.as_str()), &r.record))
            .collect(),
    };
    // Each runtime's own: said first, since its verdicts then say little.
    for (name, record) in &records {
        for w in record
            .warnings
            .iter()
            .filter(|w| w.code == Code::FingerprintsMostlyUnavailable)
        {
            say_runtime_warning(*name, w);
        }
    }
    // The order warnings are the same in every runtime's record: once.
    if let Some((_, first)) = records.first() {
        for w in first.warnings.iter().filter(|w| {
            w.code != Code::RuntimeNotDeclared && w.code != Code::FingerprintsMostlyUnavailable
        }) {
            eprintln!("fpcheck: warning: {}: {}", w.code, escape(&w.message));
        }
    }
    for (name, record) in &records {
        let only = record
            .warnings
            .iter()
            .filter(|w| w.code == Code::RuntimeNotDeclared);
        let updates = record.updates.iter().flat_map(|s| &s.warnings);
        for w in only.chain(updates) {
            say_runtime_warning(*name, w);
        }
    }
    records
}

/// One warning of one runtime's record on stderr, naming the runtime when
/// there are several.
fn say_runtime_warning(name: Option<&str>, w: &crate::warning::Warning) {
    let whose = name
        .map(|n| format!("runtime {}: ", escape(n)))
        .unwrap_or_default();
    eprintln!(
        "fpcheck: warning: {whose}{}: {}",
        w.code,
        escape(&w.message)
    );
}

/// The history in the format asked for.
fn render(args: &HistoryArgs, outcome: &HistoryOutcome) -> Result<String, Failure> {
    let format = match args.format {
        HistoryFormat::Table => Format::Table,
        HistoryFormat::Json => Format::Json,
        HistoryFormat::Markdown => Format::Markdown,
        HistoryFormat::Html => Format::Html,
    };
    let terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let opts = RenderOptions {
        color: use_color(args.color, terminal) && args.output.is_none(),
        width: width(terminal),
        ..RenderOptions::default()
    };
    outcome
        .render(&format, &opts)
        .map_err(|e| Failure::usage(e.0))
}

//! The default command: `fpcheck [FROM..TO]`.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use fpcheck::range::{self, RangeOutcome, RangeSpec};
use fpcheck::report::{self, End, Format, Render, RenderOptions, Template};
use fpcheck::source::git::Session;

use super::{emit, exit, request, use_color, ColorWhen, Failure, RuntimeFlags};

#[derive(Debug, Args, Default)]
pub(super) struct RangeArgs {
    /// The releases to compare: FROM..TO (e.g. v7.10.0..v7.11.0), FROM..
    /// (to HEAD), or nothing (the highest release reachable from HEAD..HEAD).
    #[arg(value_name = "RANGE")]
    range: Option<String>,
    /// A second word where the range was expected (`fpcheck A B`): only
    /// caught to suggest `A..B`.
    #[arg(value_name = "TO", hide = true)]
    stray: Option<String>,
    /// The repository (default: the one around the current directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// Name the FROM end NAME in the report; FROM must be a full commit id
    /// (for scripts that resolve names themselves and pass ids).
    #[arg(long, value_name = "NAME")]
    from_name: Option<String>,
    /// Name the TO end NAME in the report; TO must be a full commit id.
    #[arg(long, value_name = "NAME")]
    to_name: Option<String>,
    /// With no FROM: only tags matching GLOB are releases (as `git describe
    /// --match`; repeat for several).
    #[arg(long, value_name = "GLOB")]
    tag_match: Vec<String>,
    /// With no FROM: tags matching GLOB are never releases (as `git describe
    /// --exclude`, e.g. '*-rc*'; repeat for several).
    #[arg(long, value_name = "GLOB")]
    tag_exclude: Vec<String>,
    /// With no FROM: the runtime's release tags are PREFIX* (e.g.
    /// 'server-v*', 'mcp@*'), the latest the highest version once PREFIX
    /// is stripped. Replaces the `tag_pattern` of fpcheck.toml [default:
    /// each runtime's `tag_pattern` in the `to` end's fpcheck.toml].
    #[arg(long, value_name = "GLOB", conflicts_with = "tag_match")]
    tag_pattern: Option<String>,
    /// With no FROM: read the runtimes' `tag_pattern` from the fpcheck.toml
    /// committed at REV instead of the `to` end's (the GitHub Action gives
    /// a pull request's base, which the pull request cannot change).
    #[arg(long, value_name = "REV", conflicts_with_all = ["tag_match", "tag_pattern"])]
    tag_pattern_at: Option<String>,
    /// Only resolve the two ends (a missing FROM by the tag rule) and print
    /// them, `from REF COMMIT` and `to REF COMMIT` (JSON with --format
    /// json), reading commits and tags only: what a script needs to fetch
    /// the trees before the comparison.
    #[arg(long, conflicts_with_all = ["template", "reports", "patch_out", "exit_code", "compute_fingerprints"])]
    resolve_only: bool,
    /// Compare FROM with the working tree instead of a revision, to ask
    /// before committing.
    #[arg(long)]
    worktree: bool,
    /// The runtime root, from the top of the repository [default: src].
    #[arg(long, value_name = "DIR")]
    root: Option<String>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    /// Output format [default: table].
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<FormatArg>,
    /// The same as --format json.
    #[arg(long, conflicts_with_all = ["format", "template"])]
    json: bool,
    /// Render this tera template instead (same context as --format json).
    #[arg(long, value_name = "FILE", conflicts_with = "format")]
    template: Option<PathBuf>,
    /// Write the report to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write the report as FORMAT (json, markdown, table) to FILE;
    /// with MAX_BYTES, its file lists are shortened (whole rows, counted)
    /// until it fits. Repeat for several reports from one run.
    #[arg(long = "report", value_name = "FORMAT[:MAX_BYTES]=FILE", value_parser = super::outputs::parse)]
    reports: Vec<super::outputs::ReportOut>,
    /// Exit with 1 when the release forces a restart, 0 when not (errors
    /// keep their own codes, so a failure never reads as "no restart").
    #[arg(long)]
    exit_code: bool,
    /// Longest file list shown before "N more" (table, markdown), every
    /// list: the runtime files and, when given, each group of "changed but
    /// not counted" (8 each without it) [default: 50].
    #[arg(long, value_name = "N")]
    max_files: Option<usize>,
    /// Neither read nor write the fingerprint cache in the git directory.
    #[arg(long)]
    no_cache: bool,
    /// Compute both ends' fingerprints even when both select the same
    /// files (paths and blob ids), where they are otherwise left out as
    /// `null`, `fingerprint_skipped: "selection_unchanged"`: for scripts
    /// that hand the fingerprints on.
    #[arg(long)]
    compute_fingerprints: bool,
    /// When to colour the table: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    /// Do not tell comment- and docstring-only changes from code (no
    /// `change_kind`, `avoidable` is null).
    #[arg(long)]
    no_classify: bool,
    /// Also write the version.json patch of this release (what `fpcheck
    /// patch RANGE` prints) to FILE; its explanations go to stderr.
    #[arg(long, value_name = "FILE")]
    patch_out: Option<PathBuf>,
    /// When git's own checkout of both ends confirms a "no restart" before
    /// it is said: auto (trees whose checkout fpcheck emulates:
    /// .gitattributes, symbolic links, submodules, names not UTF-8),
    /// always, never. A disagreement is a restart (witness_disagrees, exit 3).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    witness: super::WitnessWhen,
    /// The format of --patch-out: merge (RFC 7396, default) or json-patch
    /// (RFC 6902).
    #[arg(long, value_enum, value_name = "FORMAT", requires = "patch_out")]
    patch_format: Option<super::patch::FormatArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Table,
    Json,
    Markdown,
}

pub(super) fn run(mut args: RangeArgs) -> Result<u8, Failure> {
    if args.json {
        args.format = Some(FormatArg::Json);
    }
    let spec = range_spec(&args)?;
    let repo = Session::open(args.repo.as_deref())?;
    if args.resolve_only {
        return resolve_only(&repo, spec, &args);
    }
    let settings = settings_request(&args)?;
    // Read before the analysis: an unreadable template is a usage error
    // that must not cost a comparison.
    let format = match &args.template {
        Some(path) => Format::Template(Template {
            name: path.display().to_string(),
            text: read_template(path)?,
        }),
        None => match args.format.unwrap_or(FormatArg::Table) {
            FormatArg::Table => Format::Table,
            FormatArg::Json => Format::Json,
            FormatArg::Markdown => Format::Markdown,
        },
    };
    let mut outcome = range::analyse_runtimes(
        &repo,
        &range::RangeOptions {
            persistent_cache: !args.no_cache,
            // --patch-out records the digest: it must be computed.
            digests: if args.patch_out.is_some() || args.compute_fingerprints {
                range::Digests::Always
            } else {
                range::Digests::WhenNeeded
            },
            witness: args.witness.into(),
            ..range::RangeOptions::new(spec, args.worktree, settings)
        },
        &args.runtime.runtime,
    )?;
    // Before the ends are renamed: classification reads them by revision.
    if !args.no_classify {
        outcome.classify(&repo, !args.no_cache);
    }
    name_ends(&mut outcome, &args)?;
    let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let opts = RenderOptions {
        color: use_color(args.color, to_terminal) && args.output.is_none(),
        max_files: args.max_files.unwrap_or(report::DEFAULT_MAX_FILES),
        width: Some(terminal_width(to_terminal)),
        max_bytes: None,
        ignored_in_full: args.max_files.is_some(),
    };
    // Each output on its own: one that fails (a template error, a report
    // over its size limit, a file that cannot be written) is said, and the
    // others are still written.
    let mut failures = Vec::new();
    let text = outcome
        .render(&format, &opts)
        .map_err(|e| Failure::usage(e.0));
    let reports = super::outputs::render_all(&outcome, &args.reports, &opts);
    if let Err(f) = text.and_then(|text| emit(&text, args.output.as_deref())) {
        failures.push(f);
    }
    failures.extend(super::outputs::write_all(reports));
    if let Some(path) = &args.patch_out {
        if let Err(f) =
            super::patch::patch_out(&repo, &outcome, args.worktree, args.patch_format, path)
        {
            failures.push(f);
        }
    }
    let disagreed = outcome.analyses_mut().any(|a| a.witness.disagreed());
    let ok = if disagreed {
        // As for an unavailable fingerprint: fpcheck's reading failed.
        exit::UNAVAILABLE
    } else if args.exit_code && outcome.restart_required() {
        exit::RESTART
    } else {
        exit::OK
    };
    super::outputs::outcome(failures, ok)
}

/// The range the arguments name, with the tags a missing FROM may be.
fn range_spec(args: &RangeArgs) -> Result<RangeSpec, Failure> {
    super::check_range_words(args.range.as_deref(), args.stray.as_deref())?;
    let mut spec = RangeSpec::parse(args.range.as_deref())?;
    spec.tags = range::TagFilter {
        include: args.tag_match.clone(),
        exclude: args.tag_exclude.clone(),
        pattern: None,
        pattern_at: args.tag_pattern_at.clone(),
    };
    Ok(spec)
}

/// The settings the flags ask for. `--runtime` (repeatable) narrows the
/// runtimes analysed; the request itself names none.
fn settings_request(args: &RangeArgs) -> Result<fpcheck::config::SettingsRequest, Failure> {
    let flags = super::RuntimeFlags {
        runtime: Vec::new(),
        ..args.runtime.clone()
    };
    let mut settings = request(&flags, args.root.clone(), true)?;
    settings.overrides.tag_pattern = super::tag_pattern_flag(args.tag_pattern.as_deref())?;
    Ok(settings)
}

/// `--from-name`, `--to-name`: each analysis's end given that name.
fn name_ends(outcome: &mut RangeOutcome, args: &RangeArgs) -> Result<(), Failure> {
    for (end, name) in [(End::From, &args.from_name), (End::To, &args.to_name)] {
        if let Some(name) = name {
            outcome
                .analyses_mut()
                .try_for_each(|analysis| report::name_end(analysis, end, name))
                .map_err(Failure::usage)?;
        }
    }
    Ok(())
}

/// `--resolve-only`: the ends as the comparison would take them, without
/// reading a tree or the settings.
fn resolve_only(repo: &Session, spec: RangeSpec, args: &RangeArgs) -> Result<u8, Failure> {
    // The settings only for the runtimes' tag patterns, read from the `to`
    // end's fpcheck.toml (one blob) when FROM is missing.
    let settings = settings_request(args)?;
    let ends = range::resolve(
        repo,
        &range::RangeOptions {
            persistent_cache: false,
            ..range::RangeOptions::new(spec, args.worktree, settings)
        },
        &args.runtime.runtime,
    )?;
    let format = match args.format {
        Some(FormatArg::Json) => Format::Json,
        // `--resolve-only` has one human output, whatever other format
        // was asked for.
        _ => Format::Text,
    };
    let text = super::render_built_in(&ends, &format, &RenderOptions::default())?;
    emit(&text, args.output.as_deref())?;
    Ok(exit::OK)
}

/// The terminal's width from COLUMNS, else 100 on a terminal, 80 elsewhere.
fn terminal_width(terminal: bool) -> u16 {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(if terminal { 100 } else { 80 })
}

/// A template given with `--template`: a regular file of at most 16 MiB,
/// opened without blocking (a FIFO or a device there must not hang the
/// report), in UTF-8.
fn read_template(path: &std::path::Path) -> Result<String, Failure> {
    let cannot = |why: String| {
        Failure::usage(format!(
            "cannot read the template {}: {why}",
            path.display()
        ))
    };
    let bytes = fpcheck::safe_io::read_regular(
        path,
        fpcheck::safe_io::Links::Follow,
        fpcheck::safe_io::JSON_LIMIT,
    )
    .map_err(|e| cannot(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| cannot("it is not UTF-8 text".into()))
}

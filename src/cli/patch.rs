//! `fpcheck patch [RANGE]`: the version.json patch of a release, printed or
//! written; and `--patch-out` of the range command.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use fpcheck::patch::{self, PatchError, PatchFormat, PatchOptions, Plan};
use fpcheck::range::{self, Analysis, RangeSpec};
use fpcheck::report::{Format, PatchReport, RenderOptions};
use fpcheck::source::git::Session;

use super::{exit, print, render_built_in, request, Failure, RuntimeFlags};

/// Print (or --write) the version.json patch that records a release's
/// runtime identity.
///
/// The patch sets `runtime_fingerprint` (the TO side's fingerprint),
/// `runtime_fingerprint_spec` (algorithm, root, extensions, excluded names)
/// and normalises `force_restart` to a JSON boolean: turned off when it was
/// carried over unchanged from FROM and nothing asks for it now, kept on
/// with --force-restart, turned off as redundant when the runtime code
/// changed. Every force_restart decision is explained on stderr (or in
/// `explanations` with --json). Nothing else in the file changes: key
/// order, indentation and the final newline are kept.
///
/// The file is the version.json that the gate's lookup finds at TO (the
/// runtime root, then its parent), or --version-file, or `version_file` in
/// fpcheck.toml; when there is none, the patch applies to an empty object
/// and --write creates version.json beside the runtime root (its parent
/// directory), taking `version` from package.json.
///
/// --write edits the working tree atomically, only when TO is the checked-out
/// commit or --worktree (else --force); run again, it prints an empty patch
/// ({} or []) and changes no byte. See docs/patch.md.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  fpcheck patch v7.10.0..v7.11.0                  # print the merge patch
  fpcheck patch v7.10.0.. --write                 # apply it to the working tree
  fpcheck patch v7.10.0.. --worktree --write      # before committing the release
  fpcheck patch v7.10.0..v7.11.0 --patch-format json-patch
  fpcheck v7.10.0..v7.11.0 --patch-out version.patch.json")]
pub(super) struct PatchArgs {
    /// The releases: FROM..TO, FROM.. (to HEAD), or nothing (the highest
    /// release reachable from HEAD..HEAD).
    #[arg(value_name = "RANGE")]
    range: Option<String>,
    /// Apply the patch to the file in the working tree (atomically).
    #[arg(long)]
    write: bool,
    /// With --write: write even though TO is not the checked-out commit.
    #[arg(long, requires = "write")]
    force: bool,
    /// merge: RFC 7396 JSON Merge Patch; json-patch: RFC 6902 operations.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "merge")]
    patch_format: FormatArg,
    /// The file to patch, from the top of the repository [default: the
    /// version.json the gate finds at TO].
    #[arg(long, value_name = "PATH")]
    version_file: Option<String>,
    /// Keep (or set) force_restart on although no runtime file changed.
    #[arg(long)]
    force_restart: bool,
    /// Set force_restart on when fpcheck's advice finds a possible missed
    /// restart (a free release that changed the runtime's dependencies or
    /// a data file a module reads: docs/advice.md); said in the
    /// explanations. Without it, advice never changes the patch.
    #[arg(long)]
    force_on_advice: bool,
    /// Use the working tree as TO (give only FROM.. or nothing).
    #[arg(long)]
    worktree: bool,
    // Print one JSON object: the patch, the file, `explanations`, `written`.
    #[command(flatten)]
    json: super::JsonArg,
    /// The repository (default: the one around the current directory).
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// The runtime root, from the top of the repository [default: src].
    #[arg(long, value_name = "DIR")]
    root: Option<String>,
    #[command(flatten)]
    runtime: RuntimeFlags,
}

/// `--patch-format`, shared with the range command's `--patch-out`.
#[derive(Debug, Clone, Copy, ValueEnum, Default)]
pub enum FormatArg {
    /// RFC 7396 JSON Merge Patch.
    #[default]
    Merge,
    /// RFC 6902 JSON Patch.
    JsonPatch,
}

impl From<FormatArg> for PatchFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Merge => PatchFormat::Merge,
            FormatArg::JsonPatch => PatchFormat::JsonPatch,
        }
    }
}

pub(super) fn run(args: PatchArgs) -> Result<u8, Failure> {
    let spec = RangeSpec::parse(args.range.as_deref())?;
    let repo = Session::open(args.repo.as_deref())?;
    // `--runtime` (repeatable) narrows the runtimes; the request names none.
    let flags = RuntimeFlags {
        runtime: Vec::new(),
        ..args.runtime.clone()
    };
    let settings = request(&flags, args.root.clone(), true)?;
    let mut outcome = range::analyse_runtimes(
        &repo,
        &range::RangeOptions {
            digests: range::Digests::Always,
            ..range::RangeOptions::new(spec, args.worktree, settings)
        },
        &args.runtime.runtime,
    )?;
    if args.force_on_advice {
        // The advice comes with classification, as in the range report.
        outcome.classify(&repo, true);
    }
    let analysis = first(&outcome)?;
    if !args.worktree {
        warn_dirty_runtime(
            &repo,
            &outcome,
            &args.runtime.runtime,
            &flags,
            args.root.clone(),
        );
    }
    if args.write && !args.force {
        patch::check_checkout(&repo, analysis).map_err(|e| refused(e, true))?;
    }
    let options = PatchOptions {
        version_file: args.version_file.clone(),
        force_restart: args.force_restart,
        force_on_advice: args.force_on_advice,
        // --write edits the working tree, so it is also what is patched.
        worktree: args.worktree || args.write,
    };
    let plan = match &outcome {
        range::RangeOutcome::One(a) => patch::prepare(&repo, a, &options),
        range::RangeOutcome::Many(many) => patch::prepare_runtimes(&repo, many, &options),
    }
    .map_err(|e| refused(e, args.write))?;
    let written = if args.write {
        patch::write(&repo, &plan).map_err(|e| refused(e, true))?
    } else {
        false
    };
    let text = render(
        &PatchReport {
            from: &analysis.from.reference,
            to: &analysis.to.reference,
            plan: &plan,
            format: PatchFormat::from(args.patch_format),
            written,
        },
        &args.json.format(),
    )?;
    // The JSON carries the explanations; the patch alone has them on stderr.
    if !args.json.on() {
        explain(&plan);
        if args.write {
            eprintln!(
                "fpcheck: {}",
                fpcheck::term::escape(&write_note(&plan, written))
            );
        }
    }
    print(&text)?;
    Ok(exit::OK)
}

/// Says so when the working tree's runtime differs from the `to` end's
/// committed one: the patch records the commit's fingerprint, which an
/// edit not yet committed does not match (`--worktree` records the working
/// tree's). Nothing is said when there is no working tree to compare.
fn warn_dirty_runtime(
    repo: &Session,
    outcome: &range::RangeOutcome,
    runtimes: &[String],
    flags: &RuntimeFlags,
    root: Option<String>,
) {
    let Ok(analysis) = first(outcome) else { return };
    let Some(commit) = analysis.to.commit.clone() else {
        return;
    };
    // Only the checked-out commit's working tree can hold its uncommitted
    // edit (another `to` end is refused or forced by --write anyway).
    let head = repo.repo().head_id().ok().map(|id| id.to_string());
    if head.as_deref() != Some(commit.as_str()) {
        return;
    }
    let Ok(settings) = request(flags, root, true) else {
        return;
    };
    let spec = RangeSpec {
        from: Some(commit),
        to: None,
        tags: Default::default(),
    };
    let options = range::RangeOptions {
        digests: range::Digests::Always,
        // Only the fingerprints are wanted: no git checkout for a warning.
        witness: fpcheck::witness::Mode::Never,
        ..range::RangeOptions::new(spec, true, settings)
    };
    let Ok(now) = range::analyse_runtimes(repo, &options, runtimes) else {
        return;
    };
    let dirty: Vec<&Analysis> = now
        .analyses()
        .filter(|a| a.from.fingerprint != a.to.fingerprint)
        .collect();
    for a in dirty {
        eprintln!(
            "fpcheck: warning: the working tree's runtime differs from {} (fingerprint {} there, {} in the working tree): the patch records {}'s; commit first, or pass --worktree to record the working tree's",
            fpcheck::term::escape(&analysis.to.reference),
            a.from.short_fingerprint(),
            a.to.short_fingerprint(),
            fpcheck::term::escape(&analysis.to.reference),
        );
    }
}

/// The analysis whose ends name the patch: the only one, or the first
/// runtime's (every runtime has the same ends). An outcome of no runtime
/// is never made (a monorepo without runtimes is refused first); should
/// one be, it is fpcheck's bug, not a panic.
fn first(outcome: &range::RangeOutcome) -> Result<&Analysis, Failure> {
    match outcome {
        range::RangeOutcome::One(a) => Ok(a),
        range::RangeOutcome::Many(many) => {
            many.runtimes.first().map(|r| &r.analysis).ok_or_else(|| {
                Failure::new(
                    fpcheck::error::Kind::Internal,
                    "the range analysed no runtime, so there is nothing to patch".to_string(),
                )
            })
        }
    }
}

/// The patch's report as `format`.
fn render(report: &PatchReport, format: &Format) -> Result<String, Failure> {
    render_built_in(report, format, &RenderOptions::default())
}

/// `fpcheck FROM..TO --patch-out FILE`: the patch `fpcheck patch FROM..TO`
/// prints, written to FILE; explanations on stderr.
pub(super) fn patch_out(
    repo: &Session,
    outcome: &range::RangeOutcome,
    worktree: bool,
    format: Option<FormatArg>,
    path: &Path,
) -> Result<(), Failure> {
    let options = PatchOptions {
        worktree,
        ..PatchOptions::default()
    };
    let plan = match outcome {
        range::RangeOutcome::One(a) => patch::prepare(repo, a, &options)?,
        range::RangeOutcome::Many(many) => patch::prepare_runtimes(repo, many, &options)?,
    };
    explain(&plan);
    let analysis = first(outcome)?;
    let text = render(
        &PatchReport {
            from: &analysis.from.reference,
            to: &analysis.to.reference,
            plan: &plan,
            format: PatchFormat::from(format.unwrap_or_default()),
            written: false,
        },
        &Format::Text,
    )?;
    fpcheck::atomic::write_atomic(path, text.as_bytes())
        .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display())))
}

/// Every decision on stderr, so that none is silent.
fn explain(plan: &Plan) {
    for e in &plan.explanations {
        eprintln!("fpcheck: {}", fpcheck::term::escape(&e.message));
    }
}

fn write_note(plan: &Plan, written: bool) -> String {
    match (written, plan.exists) {
        (true, true) => format!("wrote {}", plan.version_file),
        (true, false) => format!("created {}", plan.version_file),
        (false, _) => format!("{} is up to date: nothing written", plan.version_file),
    }
}

/// A refused `--write` says that the file was left alone.
fn refused(e: PatchError, write: bool) -> Failure {
    let mut failure = Failure::from(e);
    if write && !failure.message.contains("nothing was written") {
        failure.message.push_str(" (nothing was written)");
    }
    failure
}

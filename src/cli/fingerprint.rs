//! `fpcheck fingerprint`: the runtime fingerprint of a revision or directory.

use std::path::PathBuf;

use clap::Args;

use fpcheck::report::{FingerprintReport, RenderOptions};
use fpcheck::source::{self, DirSource, GitSource, Revision};
use fpcheck::Source;

use super::{exit, print, render_built_in, request, warn_all, Failure, RuntimeFlags};

/// Print the runtime fingerprint of a revision (default HEAD) or directory.
///
/// From git objects: the tree at --rev in --repo, no checkout (bare clones,
/// linked worktrees and partial clones work). From a directory: --dir is the
/// runtime root itself, e.g. an installed copy of src/.
///
/// Output: the 64-hex digest on one line; --list adds the selected files in
/// hash order; --json prints an object with `fingerprint` ("" when
/// unavailable), `files`, `unavailable_reason`, `warnings`, the source and the
/// settings used. An unavailable fingerprint exits with status 3.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  fpcheck fingerprint                      # HEAD, runtime root src/
  fpcheck fingerprint --rev v7.11.0 --list
  fpcheck fingerprint --rev v7.11.0 --root app --exclude tests,scripts
  fpcheck fingerprint --dir ~/.local/share/server/src --json")]
pub(super) struct FingerprintArgs {
    /// The repository (default: the one around the current directory).
    #[arg(long, value_name = "PATH", conflicts_with = "dir")]
    repo: Option<PathBuf>,
    /// The revision: tag, branch, commit id, HEAD~3, v1.0^{tree}...
    #[arg(
        long,
        value_name = "REV",
        default_value = "HEAD",
        conflicts_with = "dir"
    )]
    rev: String,
    /// The runtime root, from the top of the repository [default: src].
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    root: Option<String>,
    /// Fingerprint this directory (the runtime root itself) instead of git
    /// objects.
    #[arg(long, value_name = "PATH")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    /// Also print the selected files, in hash order.
    #[arg(long)]
    list: bool,
    // Print JSON (documented in the README).
    #[command(flatten)]
    json: super::JsonArg,
}

pub(super) fn run(args: FingerprintArgs) -> Result<u8, Failure> {
    let (source, runtime): (Box<dyn Source>, _) = match &args.dir {
        Some(dir) => {
            let runtime = request(&args.runtime, None, false)?.shared()?.spec;
            (Box::new(DirSource::new(dir.clone())), runtime)
        }
        None => {
            // Only `fingerprint` can read a directory instead: say so here.
            let repo = source::git::Session::open(args.repo.as_deref()).map_err(|e| match e {
                fpcheck::SourceError::Repository(m) if args.repo.is_none() => {
                    Failure::from(fpcheck::SourceError::Repository(
                        m.text(", or use --dir PATH for an installed runtime"),
                    ))
                }
                fpcheck::SourceError::Git { message, source } if args.repo.is_none() => {
                    Failure::from(fpcheck::SourceError::Git {
                        message: message.text(", or use --dir PATH for an installed runtime"),
                        source,
                    })
                }
                e => Failure::from(e),
            })?;
            fpcheck::range::check_revision(&args.rev).map_err(|e| Failure::usage(e.to_string()))?;
            let rev = Revision::parse(&repo, &args.rev)?;
            // The settings committed at that revision, as its gate uses them.
            let mut settings = request(&args.runtime, args.root.clone(), true)?;
            // A config committed today reaches an old revision without one
            // (read only then: an error names the revision's own file).
            if settings.fallback_rule == fpcheck::config::FallbackRule::ToThenHead
                && fpcheck::config::at_revision(&repo, rev.tree, &args.rev)?.is_none()
            {
                settings.fallback = fpcheck::config::Fallback::at_head(&repo)?;
            }
            let runtime = settings.at_revision(&repo, rev.tree, &args.rev)?.spec;
            (Box::new(GitSource::new(repo, rev, &runtime.root)?), runtime)
        }
    };
    let root_missing =
        args.dir.is_none() && matches!(source.root(), Ok(source::RootState::Missing));
    let fp = fpcheck::compute(source.as_ref(), &runtime.rules)?;
    let origin = source.origin();
    let root = match &args.dir {
        Some(d) => d.display().to_string(),
        None => source.root_display(),
    };
    let report = FingerprintReport {
        fingerprint: &fp,
        origin: &origin,
        root: &root,
        spec: &runtime,
        list: args.list,
    };
    let text = render_built_in(&report, &args.json.format(), &RenderOptions::default())?;
    // The JSON carries the warnings and the reason; the text has them on
    // stderr, around it.
    let text_only = !args.json.on();
    if text_only {
        warn_all(&fp.warnings);
    }
    print(&text)?;
    if let Some(reason) = fp.unavailable_reason.as_ref().filter(|_| text_only) {
        eprintln!(
            "fpcheck: fingerprint unavailable: {}",
            fpcheck::term::escape(reason)
        );
    }
    if root_missing {
        eprintln!(
            "fpcheck: hint: the runtime root `{}` is not in {}: pass --root DIR (the directory your server runs from), or set `root` in fpcheck.toml (`fpcheck init` proposes one)",
            fpcheck::term::escape(fpcheck::source::show_root(&runtime.root)),
            fpcheck::term::escape(&args.rev)
        );
    }
    Ok(if fp.digest.is_some() {
        exit::OK
    } else {
        exit::UNAVAILABLE
    })
}

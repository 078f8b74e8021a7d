//! `fpcheck snapshot | gate | status | ack`: the runtime gate for production
//! updaters and the servers they update. Decisions live in `fpcheck::gate`;
//! this file parses flags, prints, and maps outcomes to exit codes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use fpcheck::atomic;
use fpcheck::gate::ack::{self, AckAction};
use fpcheck::gate::run::{self, GateReport};
use fpcheck::gate::snapshot::{self, SnapshotSettings};
use fpcheck::gate::status;
use fpcheck::gate::{io_reason, lock, ErrorKind};
use fpcheck::report::{Format, Render, RenderOptions, SnapshotWritten};
use fpcheck::term::escape;

use super::{exit, print, render_built_in, settings, warn_all, Failure, RuntimeFlags};

/// Test-only, and only in debug builds (the tests'): `pause:MS` sleeps,
/// `fail` fails, between the marker's temporary write and its rename, so
/// tests can kill a gate mid-write. A release build has no such switch.
#[cfg(debug_assertions)]
const TEST_HOOK: &str = "FPCHECK_TEST_BEFORE_RENAME";

/// Record the installed runtime's state before an update.
///
/// Reads the runtime root --dir: the version and force_restart (looked up as
/// the reference gate does: version.json then package.json, in the root then
/// its parent), the runtime fingerprint, and each selected file's own
/// SHA-256 (so `fpcheck gate` can name the files that changed). Writes the
/// state as JSON to --out (atomically) or to stdout. An unavailable
/// fingerprint is recorded as "" with its reason, and warned about: the gate
/// then treats the code as changed.
#[derive(Debug, Args)]
#[command(after_help = "Exit status (docs/gate.md, \"Exit status\"):
  0  the snapshot was written (an unavailable fingerprint is warned about)
  2  usage error: bad flags or configuration; nothing was read or written
  4  the runtime cannot be read (--dir is missing or not a directory): the
     snapshot is still written, with the fingerprint unavailable, so that
     the gate after the update asks for a restart
  5  --out cannot be written

Example:
  fpcheck snapshot --dir /opt/server/src --out /var/lib/server/before.json")]
pub(super) struct SnapshotArgs {
    /// The installed runtime root (e.g. /opt/server/src).
    #[arg(long, value_name = "RUNTIME")]
    dir: PathBuf,
    /// Write the snapshot here instead of stdout; a summary is printed.
    #[arg(long, value_name = "STATE.json")]
    out: Option<PathBuf>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    // With --out, print the snapshot JSON instead of the summary.
    #[command(flatten)]
    json: super::JsonArg,
}

/// After an update: decide whether running processes must restart, and
/// write the restart marker if so.
///
/// Compares the runtime --dir (now holding the new release) with the
/// snapshot --before taken by `fpcheck snapshot`, using the snapshot's
/// settings. The marker (the reference's mcp-restart-required.json, schema 3)
/// is written when the version changed and either the code changed or the
/// release sets force_restart. fpcheck also writes it, conservatively, when
/// a fingerprint is unavailable, and when it cannot decide (an unreadable or
/// foreign snapshot): it never fails open. A release's version.json may
/// record runtime_fingerprint (`fpcheck patch`); installed bytes that do
/// not match it count as changed code, with a warning.
///
/// Writes are atomic (temporary file, fsync, rename, fsync of the
/// directory) and serialised with other gates by a lock file beside the
/// marker (MARKER.json.lock), whose directory is created when missing (a
/// fresh install). The marker lists each --client (normalised: "Claude-Code"
/// is claude_code) with its action; an unknown name counts as none, and
/// with none the marker names claude_code, as the reference does. A new
/// marker replaces the old one whole.
#[derive(Debug, Args)]
#[command(after_help = "Exit status (docs/gate.md, \"Exit status\"):
  0  decided: the marker was written if and only if a restart is required
  2  usage error: bad flags; nothing was read or written
  3  restart required and the marker written, because a fingerprint is
     unavailable
  4  restart required and the marker written, because the gate could not
     decide: the snapshot or the runtime cannot be read or used (foreign,
     other settings), or a version file cannot be read
  5  restart required, and the marker could NOT be written or locked
Only 5 leaves running processes unwarned: treat it as an alert.

Example:
  fpcheck gate --dir /opt/server/src --before before.json \\
      --marker ~/.server/mcp-restart-required.json --client claude_code --client codex")]
pub(super) struct GateArgs {
    /// The installed runtime root, after the update.
    #[arg(long, value_name = "RUNTIME")]
    dir: PathBuf,
    /// The snapshot taken before the update.
    #[arg(long, value_name = "STATE.json")]
    before: PathBuf,
    /// The restart marker to write.
    #[arg(long, value_name = "MARKER.json")]
    marker: PathBuf,
    /// A client that must restart (claude_code, claude_desktop, codex, or
    /// an alias); repeat for several. None: claude_code.
    #[arg(long = "client", value_name = "NAME")]
    clients: Vec<String>,
    /// Settings: only to check they match the snapshot's (which are used).
    #[command(flatten)]
    runtime: RuntimeFlags,
    /// Seconds to wait for another gate holding the marker's lock.
    #[arg(long, value_name = "SECS", default_value_t = lock::DEFAULT_TIMEOUT.as_secs())]
    lock_timeout: u64,
    // Print the decision as JSON.
    #[command(flatten)]
    json: super::JsonArg,
}

/// The running process's question: must I restart?
///
/// Applies the reference's check (docs/spec.md section 7) to the marker,
/// the installed runtime --dir (its version and fingerprint now) and what
/// the process started with. --process-fingerprint may be "unknown" or ""
/// (the comparison is then skipped and the versions decide);
/// --process-version "" means "same as installed". A client marked "ok" in
/// the marker (see `fpcheck ack`) runs on unless something else holds.
///
/// With --cache FILE, a call whose runtime files are all provably unchanged
/// (same paths; same size, mtime, ctime, inode and device; not changed
/// within 2 s of the cached stats) reads no runtime file. Any doubt means a
/// full re-hash; a corrupt cache is ignored and rewritten.
#[derive(Debug, Args)]
#[command(after_help = "Exit status (docs/gate.md, \"Exit status\"):
  0  no restart required
  1  restart required (the reason is printed)
  2  usage error: bad flags or configuration
  4  the runtime cannot be read
Any non-zero status means: restart.

Reasons (the reference's codes): marker_required, marker_corrupt,
fingerprint_mismatch, process_fingerprint_missing, version_mismatch;
\"\" when no restart.

Example:
  fpcheck status --dir /opt/server/src --marker ~/.server/mcp-restart-required.json \\
      --process-fingerprint 3c43...d6 --process-version 7.11.0 \\
      --client codex --cache /tmp/fp.cache --json")]
pub(super) struct StatusArgs {
    /// The installed runtime root.
    #[arg(long, value_name = "RUNTIME")]
    dir: PathBuf,
    /// The restart marker.
    #[arg(long, value_name = "MARKER.json")]
    marker: PathBuf,
    /// The fingerprint the process computed at startup ("unknown" or "" if
    /// it could not).
    #[arg(long, value_name = "FP")]
    process_fingerprint: String,
    /// The version the process started with ("" means same as installed).
    #[arg(long, value_name = "V")]
    process_version: String,
    /// The asking client (normalised; an unknown name counts as none).
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
    /// Reuse the installed fingerprint while no runtime file changed.
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    // Print the answer as JSON.
    #[command(flatten)]
    json: super::JsonArg,
}

/// A client confirms it restarted.
///
/// Marks --client as "ok" in the marker's clients. The marker is removed
/// once every listed client is "ok" and the process proves it runs the
/// installed release: --process-fingerprint equal to the installed
/// runtime's (--dir) or to the marker's to_fingerprint; for a marker
/// without to_fingerprint, --process-version equal to the installed
/// version when the fingerprints cannot tell. Otherwise it stays, so other
/// clients still see it. A process shown to run other code (a fingerprint
/// or version that differs) is refused.
#[derive(Debug, Args)]
#[command(after_help = "Exit status (docs/gate.md, \"Exit status\"):
  0  acknowledged (marker kept or removed), or no marker
  1  refused: the process runs other code than the marker's or the installed; restart it
  2  usage error: bad flags, or --client is not a known client
  4  the marker cannot be read as a JSON object (left untouched), or --dir cannot be read
  5  the marker cannot be locked, written or removed

Example:
  fpcheck ack --marker ~/.server/mcp-restart-required.json --client codex \\
      --dir ~/.server/src --process-fingerprint 7e11...22 --process-version 1.4.0")]
pub(super) struct AckArgs {
    /// The restart marker.
    #[arg(long, value_name = "MARKER.json")]
    marker: PathBuf,
    /// The client that restarted (claude_code, claude_desktop, codex, or
    /// an alias).
    #[arg(long, value_name = "NAME")]
    client: String,
    /// The fingerprint the restarted process computed at startup.
    #[arg(long, value_name = "FP")]
    process_fingerprint: Option<String>,
    /// The version the restarted process started with.
    #[arg(long, value_name = "V", default_value = "")]
    process_version: String,
    /// The installed runtime root, whose fingerprint and version the
    /// process's are compared with.
    #[arg(long, value_name = "RUNTIME")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    runtime: RuntimeFlags,
    /// Seconds to wait for a gate holding the marker's lock.
    #[arg(long, value_name = "SECS", default_value_t = lock::DEFAULT_TIMEOUT.as_secs())]
    lock_timeout: u64,
    // Print the outcome as JSON.
    #[command(flatten)]
    json: super::JsonArg,
}

/// A gate command's report as `format`.
fn render(report: &impl Render, format: &Format) -> Result<String, Failure> {
    render_built_in(report, format, &RenderOptions::default())
}

fn snapshot_settings(flags: &RuntimeFlags) -> Result<SnapshotSettings, Failure> {
    Ok(settings(flags)?.into())
}

pub(super) fn run_snapshot(args: SnapshotArgs) -> Result<u8, Failure> {
    let settings = snapshot_settings(&args.runtime)?;
    let snap = snapshot::take(&args.dir, &settings)?;
    warn_all(&snap.warnings);
    if let Some(reason) = &snap.unavailable_reason {
        eprintln!(
            "fpcheck: warning: the fingerprint is unavailable ({}): the gate will treat the code as changed",
            escape(reason)
        );
    }
    let root_problem = snapshot::root_problem(&args.dir);
    if let Some(out) = &args.out {
        atomic::write_atomic(out, &snap.to_bytes()).map_err(|e| {
            Failure::output(format!("cannot write {}: {}", out.display(), io_reason(&e)))
        })?;
    }
    // Without --out, the snapshot itself is the output.
    let format = match &args.out {
        Some(_) => args.json.format(),
        None => Format::Json,
    };
    let written = SnapshotWritten {
        snapshot: &snap,
        out: args.out.as_deref(),
    };
    print(&render(&written, &format)?)?;
    if let Some(why) = root_problem {
        eprintln!("fpcheck: error: the runtime {}", escape(&why));
        return Ok(exit::INPUT);
    }
    Ok(exit::OK)
}

pub(super) fn run_gate(args: GateArgs) -> Result<u8, Failure> {
    let flags = &args.runtime;
    let given = flags.config.is_some()
        || !flags.runtime.is_empty()
        || !flags.ext.is_empty()
        || !flags.exclude.is_empty();
    let settings = if given {
        Some(snapshot_settings(flags)?)
    } else {
        None
    };
    #[cfg(debug_assertions)]
    let hook = test_hook();
    #[cfg(not(debug_assertions))]
    let hook = |_: &Path| -> std::io::Result<()> { Ok(()) };
    let report = run::gate(&run::GateRequest {
        dir: &args.dir,
        before: &args.before,
        marker: &args.marker,
        clients: &args.clients,
        settings,
        lock_timeout: Duration::from_secs(args.lock_timeout),
        before_rename: &hook,
    });
    warn_all(&report.warnings);
    print(&render(&report, &args.json.format())?)?;
    if let Some(e) = &report.error {
        eprintln!("fpcheck: error: {}", escape(e));
    }
    Ok(gate_exit(&report))
}

/// The gate's exit status: 5 alone means running processes are unwarned;
/// 3 and 4 say why a marker was written conservatively; 2 is clap's
/// (nothing ran).
fn gate_exit(r: &GateReport) -> u8 {
    if r.restart_required && !r.marker_written {
        return exit::OUTPUT;
    }
    match r.error_kind {
        // A gate that met a contradiction in its inputs still failed
        // closed (marker written): 4, as an unreadable input.
        Some(ErrorKind::Usage) => exit::INPUT,
        Some(kind) => exit::of(kind),
        None if r.unavailable() => exit::UNAVAILABLE,
        None if r.conservative.is_some() => exit::INPUT,
        None => exit::OK,
    }
}

/// The fault-injection hook of [`TEST_HOOK`]; a no-op when unset.
#[cfg(debug_assertions)]
fn test_hook() -> impl Fn(&Path) -> std::io::Result<()> {
    let spec = std::env::var(TEST_HOOK).unwrap_or_default();
    move |_tmp: &Path| {
        if let Some(ms) = spec.strip_prefix("pause:") {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap_or(0)));
        } else if spec == "fail" {
            return Err(std::io::Error::other("injected failure before rename"));
        }
        Ok(())
    }
}

pub(super) fn run_status(args: StatusArgs) -> Result<u8, Failure> {
    let rt = settings(&args.runtime)?;
    let report = status::status(&status::StatusRequest {
        dir: &args.dir,
        rules: &rt.rules,
        marker: &args.marker,
        process_fingerprint: &args.process_fingerprint,
        process_version: &args.process_version,
        client: args.client.as_deref(),
        cache: args.cache.as_deref(),
    })?;
    warn_all(&report.warnings);
    print(&render(&report, &args.json.format())?)?;
    Ok(if report.status.restart_required {
        exit::RESTART
    } else {
        exit::OK
    })
}

pub(super) fn run_ack(args: AckArgs) -> Result<u8, Failure> {
    let rt = settings(&args.runtime)?;
    let report = ack::run(&ack::AckRequest {
        marker: &args.marker,
        client: &args.client,
        process: ack::Process {
            fingerprint: args.process_fingerprint.as_deref(),
            version: &args.process_version,
        },
        runtime: args.dir.as_deref().map(|dir| (dir, &rt.rules)),
        lock_timeout: Duration::from_secs(args.lock_timeout),
    })?;
    warn_all(&report.warnings);
    print(&render(&report, &args.json.format())?)?;
    Ok(if report.action == AckAction::Refused {
        exit::RESTART
    } else {
        exit::OK
    })
}

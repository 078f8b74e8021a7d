//! The command line: clap definitions and the mapping of outcomes to exit
//! codes. Every decision lives in the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use fpcheck::config::{self, ConfigError, ConfigFile, Overrides};
use fpcheck::SourceError;

mod demo;
mod fingerprint;
mod gate;
mod history;
mod outputs;
mod patch;
mod range;

/// Exit codes, documented in the README and in `--help`.
pub mod exit {
    /// Success; for `--exit-code`: no restart.
    pub const OK: u8 = 0;
    /// `--exit-code` only: the release forces a restart; `status`: the
    /// process must restart; `ack`: refused, the client must still restart.
    pub const RESTART: u8 = 1;
    /// Bad flags or configuration.
    pub const USAGE: u8 = 2;
    /// The fingerprint is unavailable (the JSON is still printed).
    pub const UNAVAILABLE: u8 = 3;
    /// The input cannot be read: not a repository, unknown revision,
    /// missing objects, unreadable files.
    pub const INPUT: u8 = 4;
    /// Output cannot be written (a file, the marker, stdout).
    pub const OUTPUT: u8 = 5;
}

const EXIT_CODES: &str = "\
Examples:
  fpcheck demo                         # the behaviour matrix on a built-in repository
  fpcheck v7.10.0..v7.11.0             # will v7.11.0 force a restart, and why?
  fpcheck v7.11.0.. --format markdown  # v7.11.0..HEAD, for a pull request
  fpcheck history --format html -o releases.html

Exit status:
  0  success (with --exit-code: no restart)
  1  with --exit-code: a restart would be forced; status: the process must restart
  2  usage error: bad flags or configuration
  3  the fingerprint is unavailable (why is printed; --json still prints)
  4  the input cannot be read: not a repository, unknown revision, missing objects
  5  the output cannot be written";

/// Will this release force running servers to restart, and why?
///
/// fpcheck computes the runtime fingerprint of a long-running server (by
/// default every .py file under src/, minus scripts/, tests/, migrations/,
/// crons/, __pycache__/, node_modules/, .git/ and versions/) from git objects
/// at any revision or from a directory, exactly as the server's restart gate
/// does, and explains what a release changes.
#[derive(Debug, Parser)]
#[command(
    name = "fpcheck",
    version,
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    range: range::RangeArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    Fingerprint(fingerprint::FingerprintArgs),
    Demo(demo::DemoArgs),
    History(history::HistoryArgs),
    Patch(patch::PatchArgs),
    Snapshot(gate::SnapshotArgs),
    Gate(gate::GateArgs),
    Status(gate::StatusArgs),
    Ack(gate::AckArgs),
}

/// Flags shared by every command that reads runtime files.
#[derive(Debug, Args, Clone, Default)]
pub struct RuntimeFlags {
    /// Runtime file extension; repeat or comma-separate. Replaces `.py`.
    #[arg(long = "ext", value_name = "EXT")]
    pub ext: Vec<String>,
    /// Excluded name, matched against every path segment at any depth;
    /// repeat or comma-separate. Replaces the default list (`--exclude ''`
    /// excludes nothing).
    #[arg(long = "exclude", value_name = "NAME")]
    pub exclude: Vec<String>,
    /// Read settings from this file instead of `fpcheck.toml` at the top of
    /// the repository.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The runtime to use when the config declares several.
    #[arg(long, value_name = "NAME")]
    pub runtime: Option<String>,
}

/// A failure with the exit code it maps to; the message is one line.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: exit::USAGE,
            message: message.into(),
        }
    }
}

impl From<SourceError> for Failure {
    fn from(e: SourceError) -> Self {
        Failure {
            code: exit::INPUT,
            message: e.to_string(),
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::usage(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        // A reader that stopped reading (`| head`) needs no message, but the
        // exit code must not read as success: "no restart" or "marker
        // written" would be a lie.
        let message = if e.kind() == std::io::ErrorKind::BrokenPipe {
            String::new()
        } else {
            format!("cannot write the output: {e}")
        };
        Failure {
            code: exit::OUTPUT,
            message,
        }
    }
}

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => range::run(cli.range),
        Some(Command::Fingerprint(args)) => fingerprint::run(args),
        Some(Command::Demo(args)) => demo::run(args),
        Some(Command::History(args)) => history::run(args),
        Some(Command::Patch(args)) => patch::run(args),
        Some(Command::Snapshot(args)) => gate::run_snapshot(args),
        Some(Command::Gate(args)) => gate::run_gate(args),
        Some(Command::Status(args)) => gate::run_status(args),
        Some(Command::Ack(args)) => gate::run_ack(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) if f.message.is_empty() => ExitCode::from(f.code),
        Err(f) => {
            eprintln!("fpcheck: error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// Loads the config (`--config`, or `fpcheck.toml` in `top`) and applies the
/// flags.
pub fn settings(
    flags: &RuntimeFlags,
    root: Option<String>,
    top: Option<&std::path::Path>,
) -> Result<config::Runtime, Failure> {
    let file = match (&flags.config, top) {
        (Some(path), _) => Some(ConfigFile::load(path)?),
        (None, Some(dir)) => ConfigFile::find_in(dir)?.map(|(_, f)| f),
        (None, None) => None,
    };
    let overrides = Overrides {
        runtime: flags.runtime.clone(),
        root,
        extensions: flags.ext.clone(),
        exclude: flags.exclude.clone(),
    };
    Ok(config::resolve(file.as_ref(), &overrides)?)
}

/// Where each end's settings come from: `--config FILE` for both ends, else
/// each end's own committed `fpcheck.toml` (`in_repository`), else defaults;
/// the flags override them all.
pub fn request(
    flags: &RuntimeFlags,
    root: Option<String>,
    in_repository: bool,
) -> Result<config::Request, Failure> {
    let choice = match &flags.config {
        Some(path) => config::ConfigChoice::File {
            path: path.clone(),
            file: ConfigFile::load(path)?,
        },
        None if in_repository => config::ConfigChoice::Committed,
        None => config::ConfigChoice::None,
    };
    Ok(config::Request {
        choice,
        flags: Overrides {
            runtime: flags.runtime.clone(),
            root,
            extensions: flags.ext.clone(),
            exclude: flags.exclude.clone(),
        },
    })
}

/// Writes `text` to `output` (atomically: a reader sees the old file or the
/// new one), or to stdout.
pub fn emit(text: &str, output: Option<&std::path::Path>) -> Result<(), Failure> {
    match output {
        Some(path) => fpcheck::atomic::write_atomic(path, text.as_bytes()).map_err(|e| Failure {
            code: exit::OUTPUT,
            message: format!("cannot write {}: {e}", path.display()),
        }),
        None => print(text),
    }
}

/// Writes `text` to stdout; a closed pipe is an output error (exit 5).
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Prints warnings on stderr, one per line.
pub fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("fpcheck: warning: {w}");
    }
}

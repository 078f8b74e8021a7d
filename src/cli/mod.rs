//! The command line: clap definitions and the mapping of outcomes to exit
//! codes. Every decision lives in the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use lazy::Lazy;

use fpcheck::config::{self, ConfigError, Overrides};
use fpcheck::error::{Classified, Kind};
use fpcheck::SourceError;

mod demo;
mod fingerprint;
mod gate;
mod history;
mod init;
mod lazy;
mod outputs;
mod patch;
mod range;

/// `--json`, or `--format json`: the two spellings every command accepts
/// (`--format text` is the default, human output).
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct JsonArg {
    /// Print JSON (the same as --format json).
    #[arg(long = "json")]
    json: bool,
    /// text (default) or json (the same as --json).
    #[arg(
        long = "format",
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "json"
    )]
    json_format: Option<TextOrJson>,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum TextOrJson {
    Text,
    Json,
}

impl JsonArg {
    /// Whether JSON was asked for, in either spelling.
    pub(crate) fn on(&self) -> bool {
        self.json || self.json_format == Some(TextOrJson::Json)
    }

    /// The report's format: JSON, else text.
    pub(crate) fn format(&self) -> fpcheck::report::Format {
        if self.on() {
            fpcheck::report::Format::Json
        } else {
            fpcheck::report::Format::Text
        }
    }
}

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
    /// A bug in fpcheck, caught before it gave an answer.
    pub const INTERNAL: u8 = 6;

    /// The exit code of a failure of `kind`: the one mapping from the
    /// library's classification ([`fpcheck::error`]) to exit codes.
    pub fn of(kind: fpcheck::error::Kind) -> u8 {
        use fpcheck::error::Kind;
        match kind {
            Kind::Usage => USAGE,
            Kind::Input => INPUT,
            Kind::Output => OUTPUT,
            Kind::Internal => INTERNAL,
        }
    }
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
  3  the fingerprint is unavailable (why is printed; --json still prints);
     history: no release has one
  4  the input cannot be read: not a repository, unknown revision, missing objects
  5  the output cannot be written
  6  internal error: a bug in fpcheck (please report it)";

/// Will this release force running servers to restart, and why?
///
/// fpcheck computes the runtime fingerprint of a long-running server (by
/// default every .py file under src/, minus scripts/, tests/, migrations/,
/// crons/, __pycache__/, node_modules/, .git/ and versions/) from git objects
/// at any revision or from a directory, exactly as the server's restart gate
/// does, and explains what a release changes. The contract, byte for byte:
/// docs/spec.md in fpcheck's repository.
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

/// Each subcommand's arguments are built only when it is used (see
/// [`lazy`]).
#[derive(Debug, Subcommand)]
enum Command {
    Fingerprint(Lazy<fingerprint::FingerprintArgs>),
    Demo(Lazy<demo::DemoArgs>),
    History(Lazy<history::HistoryArgs>),
    Patch(Lazy<patch::PatchArgs>),
    Init(Lazy<init::InitArgs>),
    Snapshot(Lazy<gate::SnapshotArgs>),
    Gate(Lazy<gate::GateArgs>),
    Status(Lazy<gate::StatusArgs>),
    Ack(Lazy<gate::AckArgs>),
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
    /// The runtime to use when the config declares several (`fpcheck
    /// RANGE` and `patch`: repeat to analyse several; none: all of them).
    #[arg(long, value_name = "NAME")]
    pub runtime: Vec<String>,
    /// The settings of an end that commits no fpcheck.toml: `to` (the `to`
    /// end's file, else HEAD's; in `history` the newest release's, else
    /// HEAD's), `from` (the `from` end's file: what a pull request's check
    /// uses, so the pull request cannot choose them), or `none` (the
    /// defaults).
    #[arg(long, value_enum, value_name = "WHICH", default_value = "to")]
    pub config_fallback: ConfigFallback,
}

/// `--config-fallback`'s values.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum ConfigFallback {
    /// The `to` end's file, else HEAD's.
    #[default]
    To,
    /// The `from` end's file, else none.
    From,
    /// None: the defaults.
    None,
}

impl RuntimeFlags {
    /// The one runtime chosen, for commands that read one runtime.
    pub fn one_runtime(&self) -> Result<Option<String>, Failure> {
        match self.runtime.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            several => Err(Failure::usage(format!(
                "--runtime is given {} times: this command reads one runtime; only `fpcheck RANGE` and `patch` take several",
                several.len()
            ))),
        }
    }
}

/// A failure with the exit code it maps to; the message is one line.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// A failure of `kind`, with its exit code.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Failure {
            code: exit::of(kind),
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Kind::Usage, message)
    }

    /// An output that cannot be written.
    pub fn output(message: impl Into<String>) -> Self {
        Failure::new(Kind::Output, message)
    }
}

/// Every library error becomes a failure of its own kind.
macro_rules! classified {
    ($($error:ty),*) => {$(
        impl From<$error> for Failure {
            fn from(e: $error) -> Self {
                Failure::new(e.kind(), e.to_string())
            }
        }
    )*};
}

classified!(
    SourceError,
    ConfigError,
    fpcheck::range::RangeError,
    fpcheck::history::HistoryError,
    fpcheck::patch::PatchError,
    fpcheck::gate::GateError,
    fpcheck::init::InitError,
    fpcheck::demo::DemoError
);

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
        Failure::output(message)
    }
}

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    ExitCode::from(run(std::env::args_os()))
}

/// Runs the command line on `args` (the program name first) and returns
/// the exit code: the binary and the Python package's `fpcheck` command
/// share it.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let cli = match lazy::parse::<Cli>(command_first(args)) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; bad flags exit 2.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(exit::USAGE);
        }
    };
    // A panic is a bug, never a verdict: exit 6 with a request for a bug
    // report, not Rust's 101 (which the exit table does not know).
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(cli)))
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(Failure {
                code: exit::INTERNAL,
                message: format!(
                    "internal error (a bug in fpcheck): {what}; no answer was given: please file a bug report with the command you ran and this message"
                ),
            })
        });
    match result {
        Ok(code) => code,
        Err(f) if f.message.is_empty() => f.code,
        Err(f) => {
            // Messages quote names from the repository (config values, tags,
            // paths): escaped here, once, for every command. A stderr that
            // cannot be written must not turn a failure into a panic.
            let _ = writeln!(
                std::io::stderr(),
                "fpcheck: error: {}",
                fpcheck::term::escape(&f.message)
            );
            f.code
        }
    }
}

/// The command line with a subcommand named after flags moved before them,
/// as `git -C DIR log` takes its global flags: `fpcheck --repo DIR history`
/// is `fpcheck history --repo DIR` (the subcommand then checks the flags).
/// Flags are known by the top-level command's own (the range's), so that a
/// flag's value (`--repo history`) is never taken for a command; anything
/// it does not know (an unknown flag, `--`) leaves the line as it is.
fn command_first(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let takes_value = |arg: &clap::Arg| arg.get_action().takes_values();
    let mut i = 1;
    while let Some(word) = args.get(i).and_then(|a| a.to_str()) {
        if word == "--" {
            return args;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) else {
                return args;
            };
            i += if takes_value(arg) && !inline { 2 } else { 1 };
            continue;
        }
        if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            let first = short.chars().next().unwrap_or_default();
            let Some(arg) = cmd.get_arguments().find(|a| a.get_short() == Some(first)) else {
                return args;
            };
            i += if takes_value(arg) && short.len() == 1 {
                2
            } else {
                1
            };
            continue;
        }
        if i > 1 && cmd.find_subcommand(word).is_some() {
            let command = args.remove(i);
            args.insert(1, command);
        }
        return args;
    }
    args
}

/// Runs the parsed command.
fn dispatch(cli: Cli) -> Result<u8, Failure> {
    // Test builds only: a way for the tests to reach the panic handler.
    #[cfg(debug_assertions)]
    if std::env::var_os("FPCHECK_DEBUG_PANIC").is_some() {
        panic!("FPCHECK_DEBUG_PANIC is set");
    }
    match cli.command {
        None => range::run(cli.range),
        Some(Command::Fingerprint(Lazy(args))) => fingerprint::run(args),
        Some(Command::Demo(Lazy(args))) => demo::run(args),
        Some(Command::History(Lazy(args))) => history::run(args),
        Some(Command::Patch(Lazy(args))) => patch::run(args),
        Some(Command::Init(Lazy(args))) => init::run(args),
        Some(Command::Snapshot(Lazy(args))) => gate::run_snapshot(args),
        Some(Command::Gate(Lazy(args))) => gate::run_gate(args),
        Some(Command::Status(Lazy(args))) => gate::run_status(args),
        Some(Command::Ack(Lazy(args))) => gate::run_ack(args),
    }
}

/// Catches the two slips a range is most often written with, before the
/// range is parsed: two words (`fpcheck v1 v2`, meaning `v1..v2`) and a
/// mistyped command (`fpcheck histroy`), which would otherwise be read as a
/// range and answered with "is not a range".
pub fn check_range_words(range: Option<&str>, stray: Option<&str>) -> Result<(), Failure> {
    let Some(first) = range else {
        return Ok(());
    };
    if let Some(second) = stray {
        let hint = if first.contains("..") || second.contains("..") {
            "write one range, FROM..TO".to_string()
        } else {
            format!("did you mean {first}..{second}?")
        };
        return Err(Failure::usage(format!(
            "`{} {}` is two arguments where one range is expected: {hint}",
            first, second
        )));
    }
    if first.contains("..") {
        return Ok(());
    }
    match closest_command(first) {
        Some(name) => Err(Failure::usage(format!(
            "`{}` is neither a command nor a range: did you mean `fpcheck {name}`? (a range is FROM..TO, e.g. v7.10.0..v7.11.0)",
            first
        ))),
        None => Ok(()),
    }
}

/// The subcommand `word` is a likely typo of: at most two edits away (one
/// for short names), case aside. (An exact match never gets here: clap
/// takes it as the subcommand.)
fn closest_command(word: &str) -> Option<String> {
    use clap::CommandFactory;
    let word = word.to_lowercase();
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != "help")
        .map(|name| (edit_distance(&word, &name), name))
        .filter(|(d, name)| *d <= if name.len() <= 4 { 1 } else { 2 })
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance, with a swap of two neighbours counting as one edit
/// (`histroy` is one slip from `history`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    d[0] = (0..=b.len()).collect();
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The settings of a runtime given as a directory (`snapshot`, `gate`,
/// `status`, `ack`): `--config FILE`, else the defaults; the flags over
/// them. Its errors name no file, where `fingerprint --dir`'s (through
/// `SettingsRequest::shared`) start with `--config FILE`.
pub fn settings(flags: &RuntimeFlags) -> Result<config::RuntimeSpec, Failure> {
    let file = match config::SettingsOrigin::of(flags.config.as_deref(), false)? {
        config::SettingsOrigin::File { file, .. } => Some(file),
        _ => None,
    };
    Ok(config::resolve(file.as_ref(), &overrides(flags, None)?)?)
}

/// The flags that override the config, at every end.
fn overrides(flags: &RuntimeFlags, root: Option<String>) -> Result<Overrides, Failure> {
    Ok(Overrides::from_flags(
        flags.one_runtime()?,
        root,
        flags.ext.clone(),
        flags.exclude.clone(),
    ))
}

/// Where each end's settings come from: `--config FILE` for both ends, else
/// each end's own committed `fpcheck.toml` (`in_repository`), else defaults;
/// the flags override them all.
pub fn request(
    flags: &RuntimeFlags,
    root: Option<String>,
    in_repository: bool,
) -> Result<config::SettingsRequest, Failure> {
    let mut request = config::SettingsRequest::of(
        flags.config.as_deref(),
        in_repository,
        overrides(flags, root)?,
    )?;
    request.fallback_rule = match flags.config_fallback {
        ConfigFallback::To => config::FallbackRule::ToThenHead,
        ConfigFallback::From => config::FallbackRule::From,
        ConfigFallback::None => config::FallbackRule::Off,
    };
    Ok(request)
}

/// `--tag-pattern GLOB`, checked as the `tag_pattern` key is.
pub fn tag_pattern_flag(value: Option<&str>) -> Result<Option<String>, Failure> {
    let Some(pattern) = value else {
        return Ok(None);
    };
    config::check_tag_pattern(pattern).map_err(|why| {
        // Raw: every failure's message is escaped once, where it is shown.
        Failure::usage(format!("--tag-pattern `{pattern}` {why}"))
    })?;
    Ok(Some(pattern.to_string()))
}

/// Writes `text` to `output` (atomically: a reader sees the old file or the
/// new one), or to stdout.
pub fn emit(text: &str, output: Option<&std::path::Path>) -> Result<(), Failure> {
    match output {
        Some(path) => fpcheck::atomic::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display()))),
        None => print(text),
    }
}

/// `report` as `format`, for a report whose command offers only formats it
/// has (text and JSON): one that cannot be rendered is a bug in fpcheck.
pub fn render_built_in<R: fpcheck::report::Render>(
    report: &R,
    format: &fpcheck::report::Format,
    opts: &fpcheck::report::RenderOptions,
) -> Result<String, Failure> {
    report
        .render(format, opts)
        .map_err(|e| Failure::new(Kind::Internal, e.0))
}

/// Writes `text` to stdout; a closed pipe is an output error (exit 5).
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Whether to colour output: `--color` as given, `auto` meaning a terminal
/// without `NO_COLOR`.
pub fn use_color(when: ColorWhen, terminal: bool) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// `--color auto|always|never`.
#[derive(Debug, Clone, Copy, clap::ValueEnum, Default)]
pub enum ColorWhen {
    #[default]
    Auto,
    Always,
    Never,
}

/// `--witness auto|always|never`: when git's own checkout confirms a "no
/// restart" (docs/spec.md section 4.2).
#[derive(Debug, Clone, Copy, clap::ValueEnum, Default)]
pub enum WitnessWhen {
    /// On trees whose checkout fpcheck emulates (`.gitattributes`,
    /// symbolic links, submodules, names that are not UTF-8).
    #[default]
    Auto,
    /// Before every "no restart".
    Always,
    /// Never.
    Never,
}

impl From<WitnessWhen> for fpcheck::witness::Mode {
    fn from(w: WitnessWhen) -> Self {
        match w {
            WitnessWhen::Auto => fpcheck::witness::Mode::Auto,
            WitnessWhen::Always => fpcheck::witness::Mode::Always,
            WitnessWhen::Never => fpcheck::witness::Mode::Never,
        }
    }
}

/// The width a table may take: `COLUMNS`, else the terminal's own width,
/// else 100 on a terminal whose size is unknown, 80 for a file or pipe.
pub fn table_width(terminal: bool) -> u16 {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return c;
    }
    if terminal {
        // comfy-table asks the terminal (stdout) for its size.
        return comfy_table::Table::new().width().unwrap_or(100);
    }
    80
}

/// Prints warnings on stderr, one per line, control characters escaped.
pub fn warn_all(warnings: &[fpcheck::warning::Warning]) {
    for w in warnings {
        eprintln!("fpcheck: warning: {}", fpcheck::term::escape(&w.message));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_of_commands() {
        assert_eq!(closest_command("histroy").as_deref(), Some("history"));
        assert_eq!(
            closest_command("fingreprint").as_deref(),
            Some("fingerprint")
        );
        assert_eq!(closest_command("pach").as_deref(), Some("patch"));
        assert_eq!(closest_command("HISTORY").as_deref(), Some("history"));
        assert_eq!(closest_command("v7.11.0"), None);
        assert_eq!(closest_command("main"), None);
        assert_eq!(closest_command("HEAD"), None);
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance("history", "history"), 0);
        assert_eq!(edit_distance("histroy", "history"), 1);
        assert_eq!(edit_distance("", "ack"), 3);
        assert_eq!(edit_distance("gate", "state"), 2);
    }
}

//! Subcommands whose arguments clap builds only when they are used.
//!
//! clap's derive builds every subcommand's arguments (with their help
//! texts) before it parses anything: about a fifth of the instructions of
//! a range answered from the cache (`docs/performance.md`). A [`Lazy`]
//! subcommand defers that to clap's `Command::defer`, which runs only for
//! the subcommand the command line names. Help, errors and suggestions
//! need every subcommand whole (the top-level help lists their
//! descriptions), so any parse that does not succeed is parsed again
//! eagerly ([`parse`]), and the user sees exactly what eager parsing says.

use std::cell::Cell;
use std::ffi::OsString;

use clap::{ArgMatches, Args, Command, FromArgMatches, Parser};

thread_local! {
    /// Set while [`parse`] parses eagerly (per thread: the Python package
    /// may run command lines on several threads at once).
    static EAGER: Cell<bool> = const { Cell::new(false) };
}

/// A subcommand's arguments, built when the subcommand is used.
#[derive(Debug)]
pub(super) struct Lazy<T>(pub(super) T);

impl<T: Args> Args for Lazy<T> {
    fn augment_args(cmd: Command) -> Command {
        if EAGER.with(Cell::get) {
            T::augment_args(cmd)
        } else {
            cmd.defer(T::augment_args)
        }
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        if EAGER.with(Cell::get) {
            T::augment_args_for_update(cmd)
        } else {
            cmd.defer(T::augment_args_for_update)
        }
    }
}

impl<T: FromArgMatches> FromArgMatches for Lazy<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches(matches).map(Lazy)
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        T::from_arg_matches_mut(matches).map(Lazy)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches(matches)
    }

    fn update_from_arg_matches_mut(&mut self, matches: &mut ArgMatches) -> Result<(), clap::Error> {
        self.0.update_from_arg_matches_mut(matches)
    }
}

/// Parses `args` with only the named subcommand built; anything but
/// success (help, version, an error) is parsed again with every
/// subcommand built, and that answer is returned.
pub(super) fn parse<P: Parser>(args: Vec<OsString>) -> Result<P, clap::Error> {
    P::try_parse_from(args.iter().cloned()).or_else(|_| {
        EAGER.with(|eager| eager.set(true));
        let eager = P::try_parse_from(args);
        EAGER.with(|eager| eager.set(false));
        eager
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The eager command is whole: every subcommand has its description
    /// and arguments, as the top-level help shows them. Lazily, the same
    /// subcommands exist, built on use.
    #[test]
    fn eager_parsing_builds_every_subcommand_and_lazy_parsing_names_them() {
        EAGER.with(|eager| eager.set(true));
        let eager = super::super::Cli::command();
        EAGER.with(|eager| eager.set(false));
        let lazy = super::super::Cli::command();
        let names = |c: &Command| -> Vec<String> {
            c.get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect()
        };
        assert_eq!(names(&eager), names(&lazy));
        assert!(names(&eager).len() >= 9);
        for sub in eager.get_subcommands() {
            assert!(sub.get_about().is_some(), "{}", sub.get_name());
            assert!(sub.get_arguments().next().is_some(), "{}", sub.get_name());
        }
        for sub in lazy.get_subcommands() {
            assert!(sub.get_arguments().next().is_none(), "{}", sub.get_name());
        }
    }
}

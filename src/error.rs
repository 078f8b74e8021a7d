//! One classification of failures. Every error the library returns has a
//! [`Kind`], decided next to the error it classifies; the command line turns a kind
//! into an exit code in one place (`cli::exit::of`), and the Python package
//! into an exception class.

/// What kind of failure an error is, whatever command met it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The flags or the configuration are wrong or contradict the inputs.
    Usage,
    /// An input cannot be read: not a repository, an unknown revision,
    /// missing objects, unreadable or corrupt files.
    Input,
    /// An output cannot be written (a file, the marker, its lock).
    Output,
    /// A bug in fpcheck, caught before it could give a wrong answer (a
    /// worker thread that panicked, an edit that does not re-read as
    /// planned).
    Internal,
}

/// An error with a [`Kind`].
pub trait Classified: std::error::Error {
    /// The kind of this failure.
    fn kind(&self) -> Kind;
}

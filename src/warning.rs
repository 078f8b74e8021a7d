//! Warnings a releaser must see, each with a stable code for tools.

use serde::Serialize;

/// One warning: a stable `code` and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Warning {
    /// A stable snake_case code (documented in the README).
    pub code: &'static str,
    /// What happened and what it means.
    pub message: String,
}

impl Warning {
    /// A warning with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Warning {
            code,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

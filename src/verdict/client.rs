//! Who must restart: the reference's known clients, their actions, and how
//! a name given by a user (or found in a marker) is normalised
//! (docs/spec.md section 6, "Client names").

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

/// A client the reference gate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Client {
    /// The desktop application: the whole client restarts.
    ClaudeDesktop,
    /// The terminal client: the session restarts.
    ClaudeCode,
    /// Codex: the session restarts.
    Codex,
}

/// What a known client must do, as the marker's `clients` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAction {
    /// Restart the client application.
    RestartClientRequired,
    /// Restart the session.
    RestartSessionRequired,
}

impl ClientAction {
    /// The code written in the marker.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientAction::RestartClientRequired => "restart_client_required",
            ClientAction::RestartSessionRequired => "restart_session_required",
        }
    }
}

/// Every known client, in the reference's order.
pub const ALL: [Client; 3] = [Client::ClaudeDesktop, Client::ClaudeCode, Client::Codex];

/// The client a marker names when nobody was named: the reference's safe
/// default for fresh installs.
pub(crate) const DEFAULT: Client = Client::ClaudeCode;

/// A client's entry once it has restarted.
pub const OK: &str = "ok";

impl Client {
    /// The name written in the marker.
    pub fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude_desktop",
            Client::ClaudeCode => "claude_code",
            Client::Codex => "codex",
        }
    }

    /// What this client must do when a marker is written.
    pub fn action(self) -> ClientAction {
        match self {
            Client::ClaudeDesktop => ClientAction::RestartClientRequired,
            Client::ClaudeCode | Client::Codex => ClientAction::RestartSessionRequired,
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Normalises a client name as the reference does: stripped (Python's
/// whitespace), lower-cased, `-` and space to `_`, then the aliases.
/// `None` means "no client": an unknown name counts as none at all.
pub fn normalise(name: &str) -> Option<Client> {
    let candidate = py_strip(name).to_lowercase().replace(['-', ' '], "_");
    match candidate.as_str() {
        "claude" | "claudecode" | "claude_code" => Some(Client::ClaudeCode),
        "claude_desktop" | "claude_desktop_app" | "desktop" => Some(Client::ClaudeDesktop),
        "codex" => Some(Client::Codex),
        _ => None,
    }
}

/// The marker's `clients` for a new marker: each named client with its
/// action, or [`DEFAULT`] alone when none was named. The old marker's
/// clients are not carried over: a new marker replaces the old one whole.
pub(crate) fn for_marker(named: &[Client]) -> Map<String, Value> {
    let mut list: Vec<Client> = named.to_vec();
    if list.is_empty() {
        list.push(DEFAULT);
    }
    list.sort();
    list.dedup();
    list.into_iter()
        .map(|c| {
            (
                c.as_str().to_string(),
                Value::String(c.action().as_str().into()),
            )
        })
        .collect()
}

/// Python's `str.strip()`: removes the characters `str.isspace()` accepts
/// at both ends. That is Rust's `char::is_whitespace` plus the four
/// information separators U+001C..U+001F.
pub(crate) fn py_strip(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every alias of section 6, written from the spec.
    #[test]
    fn every_alias() {
        let rows: &[(&str, Option<Client>)] = &[
            ("claude_code", Some(Client::ClaudeCode)),
            ("claude", Some(Client::ClaudeCode)),
            ("claudecode", Some(Client::ClaudeCode)),
            ("Claude-Code", Some(Client::ClaudeCode)),
            ("  CLAUDE CODE\n", Some(Client::ClaudeCode)),
            ("\u{1f}claude\u{a0}", Some(Client::ClaudeCode)),
            ("claude_desktop", Some(Client::ClaudeDesktop)),
            ("claude_desktop_app", Some(Client::ClaudeDesktop)),
            ("Claude Desktop App", Some(Client::ClaudeDesktop)),
            ("desktop", Some(Client::ClaudeDesktop)),
            ("DESKTOP", Some(Client::ClaudeDesktop)),
            ("codex", Some(Client::Codex)),
            (" Codex ", Some(Client::Codex)),
            ("foo", None),
            ("", None),
            ("   ", None),
            ("claude__code", None),
            ("claude-desktop-app-x", None),
            ("code", None),
        ];
        for (name, want) in rows {
            assert_eq!(normalise(name), *want, "{name:?}");
        }
    }

    #[test]
    fn actions_and_the_default() {
        let all = for_marker(&ALL);
        assert_eq!(
            Value::Object(all),
            serde_json::json!({
                "claude_desktop": "restart_client_required",
                "claude_code": "restart_session_required",
                "codex": "restart_session_required",
            })
        );
        assert_eq!(
            Value::Object(for_marker(&[])),
            serde_json::json!({"claude_code": "restart_session_required"})
        );
        assert_eq!(
            Value::Object(for_marker(&[Client::Codex, Client::Codex])),
            serde_json::json!({"codex": "restart_session_required"})
        );
    }
}

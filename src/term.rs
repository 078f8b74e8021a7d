//! Text for a terminal, from names an attacker may have chosen.
//!
//! File names, link targets, config keys and version strings come from the
//! repository. Printed raw, an ESC byte starts a terminal escape sequence
//! (retitling the window, hiding the rest of a line, faking a verdict) and
//! a BEL rings; bidirectional overrides reorder what a reader sees. Every
//! human-facing line passes such text through [`escape`]; JSON output keeps
//! the exact strings (its encoder escapes control characters itself).

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character (C0, DEL, C1), every Unicode
/// bidirectional control and every backslash written as a visible escape
/// (`\x1b`, `\u{202e}`, `\\`); unchanged (borrowed) when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
        } else if c == '\\' {
            out.push_str("\\\\");
        } else if (c as u32) < 0x100 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    // A backslash is escaped too, so that a name spelling `\x1b` in plain
    // text never reads like an escaped ESC.
    c == '\\'
        || c.is_control()
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi_only() {
        assert!(matches!(escape("src/app.py"), Cow::Borrowed(_)));
        assert_eq!(escape("a\u{1b}[2Jb\u{7}"), "a\\x1b[2Jb\\x07");
        assert_eq!(escape("x\ny\tz\u{7f}\u{9b}"), "x\\x0ay\\x09z\\x7f\\x9b");
        assert_eq!(escape("evil\u{202e}yp.txt"), "evil\\u{202e}yp.txt");
        assert_eq!(escape("café ✓"), "café ✓");
        // A literal `\x1b` in a name cannot pass for an escaped ESC.
        assert_eq!(escape("a\\x1b"), "a\\\\x1b");
        assert_eq!(escape("\u{61c}"), "\\u{61c}");
    }
}

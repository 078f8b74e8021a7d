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
    c == '\\' || hidden(c)
}

/// A character a terminal does not show as itself: a control (C0, DEL,
/// C1), a Unicode bidirectional control (which reorders what follows), or
/// a zero-width one (which makes two different names look the same).
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            // Bidirectional controls: ALM, LRM, RLM, embeddings and
            // overrides, isolates.
            '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
            // Zero width: space, non-joiner, joiner, word joiner and the
            // invisible operators, byte order mark.
            | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2065}' | '\u{feff}')
}

/// Whether `c` shows as nothing of its own: white space, or a character
/// [`escape`] writes as an escape because a terminal would not show it
/// (a name made only of these names nothing a reader can tell apart).
pub fn blank(c: char) -> bool {
    c.is_whitespace() || hidden(c)
}

/// `n` and the noun that goes with it: "1 release", "2 releases".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
        // Zero-width characters would make two names look the same.
        assert_eq!(escape("app\u{200b}.py\u{feff}"), "app\\u{200b}.py\\u{feff}");
    }

    #[test]
    fn blank_is_white_space_or_what_escape_hides() {
        for c in [
            ' ', '\t', '\u{3000}', '\u{1b}', '\u{85}', '\u{202e}', '\u{2066}', '\u{200b}',
            '\u{2060}', '\u{feff}',
        ] {
            assert!(blank(c), "{c:?}");
        }
        // A backslash is escaped but shows as itself.
        for c in ['a', '\\', '.', 'é', '✓'] {
            assert!(!blank(c), "{c:?}");
        }
        for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
            if needs_escape(c) && c != '\\' {
                assert!(blank(c), "{c:?}");
            }
        }
    }
}

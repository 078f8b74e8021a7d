//! Parsing a newer version of a file where it differs from the older one,
//! not everywhere.
//!
//! Two versions share a prefix and a suffix of bytes. The older version's
//! units (whole top-level statements from a line start, see `stream.rs`)
//! that end where the next unit starts inside the shared prefix are lexed
//! and parsed the same in the newer one: the same bytes, read from the
//! same state. A unit whose preceding line break lies in the shared suffix
//! starts the same bytes in the newer file, at the same distance from the
//! end, on a line of its own. So only the bytes between, `new[start..end]`,
//! are parsed, as a module of their own. At the start nothing is open (no
//! bracket, string, block or continuation: it is a unit boundary of the
//! older file, after the same bytes). At the end, the slice parses on its
//! own only if nothing is open there either: an edit that opened a bracket
//! or a string closing in the suffix, or that ends the slice with a
//! backslash, makes it fail. So if the slice parses, the newer file's
//! tokens are the older file's lead units, the slice's units and the older
//! file's trail units, moved (a trail unit cannot continue the slice's last
//! statement: it starts a statement, and `else`, `elif`, `except`,
//! `finally` cannot); it is valid because the older file is and the slice
//! is. If the slice does not parse, the newer file is parsed whole.
//!
//! Two more conditions keep a windowed parse exactly a whole one: the
//! first unit is never a trail unit (its first statement may be the
//! module's docstring), and no boundary lies on the first two lines, where
//! a comment may be a PEP 263 encoding declaration.

use super::stream::Unit;

/// Which units of the older version the newer one shares, and the bytes of
/// the newer one to parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    /// The first `lead` units, at the same offsets.
    pub lead: usize,
    /// The last `trail` units, moved by `new.len() - old.len()`.
    pub trail: usize,
    /// What to parse of the newer version.
    pub start: usize,
    pub end: usize,
}

/// The plan for parsing `new` after `old`, whose units are `units`.
pub(super) fn plan(old: &[u8], units: &[Unit], new: &[u8]) -> Plan {
    let (prefix, suffix) = shared(old, new);
    let (old_head, new_head) = (past_second_line(old), past_second_line(new));
    let lead = units
        .windows(2)
        .take_while(|pair| pair[1].start < prefix && pair[1].start >= old_head)
        .count();
    let (a_suffix, b_suffix) = (old.len() - suffix, new.len() - suffix);
    let trail = units
        .iter()
        .enumerate()
        .rev()
        .take_while(|(i, u)| {
            *i >= lead.max(1)
                && u.start > a_suffix
                && old[u.start - 1] == b'\n'
                && u.start >= old_head
                && u.start - a_suffix + b_suffix >= new_head
        })
        .count();
    let start = if lead == 0 { 0 } else { units[lead].start };
    let end = match trail {
        0 => new.len(),
        n => units[units.len() - n].start - a_suffix + b_suffix,
    };
    Plan {
        lead,
        trail,
        start,
        end,
    }
}

/// The offset just past the second line break (the file's length if it
/// has fewer).
pub(super) fn past_second_line(source: &[u8]) -> usize {
    let mut breaks = source.iter().enumerate().filter(|(_, b)| **b == b'\n');
    breaks.nth(1).map_or(source.len(), |(i, _)| i + 1)
}

/// The lengths of the longest shared prefix and of the longest shared
/// suffix that does not overlap it.
pub(super) fn shared(old: &[u8], new: &[u8]) -> (usize, usize) {
    let prefix = common_len(old, new, false);
    let (old, new) = (&old[prefix..], &new[prefix..]);
    (prefix, common_len(old, new, true))
}

/// How many bytes `a` and `b` share from their starts, or from their ends
/// (`from_end`). Blocks are compared as slices first (a `memcmp`), then the
/// bytes of the block that differs.
fn common_len(a: &[u8], b: &[u8], from_end: bool) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    // The `len` bytes that are `at` bytes in from the chosen end.
    let part = |s: &[u8], at: usize, len: usize| -> std::ops::Range<usize> {
        if from_end {
            s.len() - at - len..s.len() - at
        } else {
            at..at + len
        }
    };
    let mut same = 0;
    while same + BLOCK <= n && a[part(a, same, BLOCK)] == b[part(b, same, BLOCK)] {
        same += BLOCK;
    }
    while same < n && a[part(a, same, 1)] == b[part(b, same, 1)] {
        same += 1;
    }
    same
}

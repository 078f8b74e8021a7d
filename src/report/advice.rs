//! The advice block of the terminal reports (range and history): printed
//! only when there is advice, after everything else, so that an ordinary
//! report stays as it was.

use crate::advice::Item;

/// The block: a heading, then each item's sentence, what changed and its
/// evidence. Empty without advice.
pub(super) fn block(items: &[Item]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nadvice:\n");
    for item in items {
        out.push_str(&format!("  - {}\n", super::printable(&item.message)));
        for change in &item.changes {
            out.push_str(&format!("      {}\n", super::printable(change)));
        }
        if !item.evidence.is_empty() {
            let at: Vec<String> = (item.evidence.iter())
                .map(|e| super::printable(e))
                .collect();
            out.push_str(&format!("      at {}\n", at.join(", ")));
        }
    }
    out
}

/// The history summary's advice sentence: the possible missed restarts
/// and the restarts caused only by version strings, when there are any.
pub(super) fn history_sentence(m: &crate::history::Summary) -> String {
    let mut out = String::new();
    if let Some(n) = m.avoidable_version_restarts.filter(|n| *n > 0) {
        out.push_str(&format!(
            " avoidable: version {n} (only a version string changed: keep the version out of \
             the code)."
        ));
    }
    if let Some(n) = m.possible_missed_restarts.filter(|n| *n > 0) {
        out.push_str(&format!(
            " possible missed restarts: {n} (free releases that changed the dependencies or a \
             data file a module reads)."
        ));
    }
    out
}

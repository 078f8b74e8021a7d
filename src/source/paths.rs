//! How paths below a runtime root are spelled, in every source: the root
//! normalised, shown, and joined with a path below it.

use super::MAX_TREE_DEPTH;

/// A runtime root as one spelling: `./src/` and `src` are one root, and
/// `.` (or `""`) is the top of the repository, written `""`.
pub(crate) fn normalise_root(root: &str) -> String {
    root.split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect::<Vec<_>>()
        .join("/")
}

/// A normalised root as people read it: the top of the repository is `.`.
pub(crate) fn show_root(root: &str) -> &str {
    if root.is_empty() {
        "."
    } else {
        root
    }
}

/// Joins the root as the user named it with a path below it.
pub(crate) fn display_path(root_display: &str, rel: &[u8]) -> String {
    let rel = String::from_utf8_lossy(rel);
    if root_display.is_empty() || root_display == "." {
        rel.into_owned()
    } else {
        format!("{}/{}", root_display.trim_end_matches('/'), rel)
    }
}

/// The sentence for a directory deeper than git reads.
pub(crate) fn too_deep() -> String {
    format!(
        "is nested deeper than {MAX_TREE_DEPTH} directories (git's core.maxTreeDepth): \
         git refuses to read such a tree"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_have_one_spelling_and_the_top_shows_as_a_dot() {
        for (given, want) in [
            ("src", "src"),
            ("./src/", "src"),
            ("a//b/./c/", "a/b/c"),
            (".", ""),
            ("", ""),
            ("./", ""),
        ] {
            assert_eq!(normalise_root(given), want, "{given:?}");
        }
        assert_eq!(show_root(""), ".");
        assert_eq!(show_root("a/b"), "a/b");
    }
}

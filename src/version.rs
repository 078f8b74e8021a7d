//! Version precedence: semver where both parse (a `v` prefix allowed),
//! otherwise dotted numbers; `None` when neither fits.

use std::cmp::Ordering;

/// Parses `v7.11.0` or `7.11.0` as semver.
pub fn parse(text: &str) -> Option<semver::Version> {
    let t = text.strip_prefix('v').unwrap_or(text);
    semver::Version::parse(t).ok()
}

/// `v7.10` or `7.10.0.1` as its numbers; `None` unless every part is one.
pub(crate) fn dotted(text: &str) -> Option<Vec<u64>> {
    text.strip_prefix('v')
        .unwrap_or(text)
        .split('.')
        .map(|p| p.parse().ok())
        .collect()
}

/// Parses a tag name as a version: semver with an optional `v`, or one or
/// two dotted numbers (`v7.10` is 7.10.0).
pub(crate) fn parse_tag(name: &str) -> Option<semver::Version> {
    if let Some(v) = parse(name) {
        return Some(v);
    }
    match dotted(name)?.as_slice() {
        [a] => Some(semver::Version::new(*a, 0, 0)),
        [a, b] => Some(semver::Version::new(*a, *b, 0)),
        _ => None,
    }
}

/// Compares two version strings by precedence.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (parse(a), parse(b)) {
        return Some(x.cmp_precedence(&y));
    }
    Some(dotted(a)?.cmp(&dotted(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence() {
        assert_eq!(compare("7.10.0", "7.9.34"), Some(Ordering::Greater));
        assert_eq!(compare("v1.0.0-rc.1", "1.0.0"), Some(Ordering::Less));
        assert_eq!(compare("1.2", "1.10"), Some(Ordering::Less));
        assert_eq!(compare("1.0.0+build", "1.0.0"), Some(Ordering::Equal));
        assert_eq!(compare("abc", "1.0"), None);
        assert_eq!(compare("1.2.3.4", "1.2.3.10"), Some(Ordering::Less));
    }

    #[test]
    fn tags() {
        let v = |a, b, c| Some(semver::Version::new(a, b, c));
        assert_eq!(parse_tag("v7.10.0"), v(7, 10, 0));
        assert_eq!(parse_tag("7.10"), v(7, 10, 0));
        assert_eq!(parse_tag("v7"), v(7, 0, 0));
        assert_eq!(
            parse_tag("v2.0.0-rc.1").map(|v| v.pre.to_string()),
            Some("rc.1".into())
        );
        assert_eq!(parse_tag("1.2.3.4"), None);
        assert_eq!(parse_tag("release-1"), None);
        assert_eq!(dotted("v1.2.3.4"), Some(vec![1, 2, 3, 4]));
        assert_eq!(dotted("1.x"), None);
    }
}

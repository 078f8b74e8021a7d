//! Version precedence, one rule for the two schemes release tags use:
//! semver (`v1.2.0`, `2.0.0-rc.1`) and PEP 440, Python's (`v2.0.0rc1`,
//! `1.3.0.post1`, `2.0.dev3`, `1!2.0`, `1.0+local`).
//!
//! A tag is read as semver first (a `v` prefix allowed; one or two numbers
//! are padded, `v7.10` is 7.10.0), else as PEP 440. Two semver versions
//! compare by semver precedence (build metadata ignored), two PEP 440
//! versions by PEP 440's order (`.devN` < `aN` < `bN` < `rcN` < final <
//! `.postN`, missing release numbers are zeros, the epoch first). A semver
//! version without a pre-release is also a PEP 440 release (`1.2.0` is the
//! same in both), so against a PEP 440 version it compares by PEP 440; a
//! semver pre-release that reads as a PEP 440 pre-release (`1.0.0-rc.1` is
//! `1.0.0rc1`, `1.0.0-alpha` is `1.0.0a0`) compares as that. Any other
//! mixed pair compares by epoch and release numbers, then a pre-release
//! before the release, post-releases after it; two pre-releases of the two
//! schemes that still tie are of equal precedence (the history orders
//! those by commit ancestry).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

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

/// A release tag's version, in the scheme it was written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagVersion {
    /// `v1.2.0`, `2.0.0-rc.1`, `7.10` (7.10.0).
    Semver(semver::Version),
    /// `v2.0.0rc1`, `1.3.0.post1`, `2.0.dev3`, `1!2.0`, `1.2.3.4`.
    Pep440(pep440_rs::Version),
}

impl fmt::Display for TagVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TagVersion::Semver(v) => v.fmt(f),
            TagVersion::Pep440(v) => v.fmt(f),
        }
    }
}

/// Where a version's release sits against the plain release of the same
/// numbers, for mixed pairs that PEP 440 cannot order itself.
fn phase(v: &TagVersion) -> i8 {
    match v {
        TagVersion::Semver(s) if !s.pre.is_empty() => -1,
        TagVersion::Semver(_) => 0,
        TagVersion::Pep440(p) if p.any_prerelease() => -1,
        TagVersion::Pep440(p) if p.is_post() => 1,
        TagVersion::Pep440(_) => 0,
    }
}

impl TagVersion {
    /// A pre-release: semver's `-rc.1`, PEP 440's `a`, `b`, `rc` and `.dev`
    /// (a post-release is not one).
    pub fn is_prerelease(&self) -> bool {
        match self {
            TagVersion::Semver(v) => !v.pre.is_empty(),
            TagVersion::Pep440(v) => v.any_prerelease(),
        }
    }

    /// The version as PEP 440 reads it, when it means the same there.
    fn as_pep440(&self) -> Option<pep440_rs::Version> {
        match self {
            TagVersion::Pep440(v) => Some(v.clone()),
            TagVersion::Semver(s) if s.pre.is_empty() => {
                Some(pep440_rs::Version::new([s.major, s.minor, s.patch]))
            }
            TagVersion::Semver(s) => {
                let text = format!("{}.{}.{}-{}", s.major, s.minor, s.patch, s.pre);
                let v = pep440_rs::Version::from_str(&text).ok()?;
                // `1.0.0-1` is a post-release to PEP 440, a pre-release to
                // semver: only a pre-release in both compares by PEP 440.
                (v.is_pre() && !v.is_post() && !v.is_dev()).then_some(v)
            }
        }
    }

    /// Epoch and release numbers, trailing zeros dropped (1.0 is 1.0.0).
    fn numbers(&self) -> (u64, Vec<u64>) {
        let (epoch, mut release) = match self {
            TagVersion::Semver(s) => (0, vec![s.major, s.minor, s.patch]),
            TagVersion::Pep440(p) => (p.epoch(), p.release().to_vec()),
        };
        while release.last() == Some(&0) {
            release.pop();
        }
        (epoch, release)
    }

    /// The precedence order described at the top of this module.
    pub fn cmp_precedence(&self, other: &TagVersion) -> Ordering {
        match (self, other) {
            (TagVersion::Semver(a), TagVersion::Semver(b)) => a.cmp_precedence(b),
            (TagVersion::Pep440(a), TagVersion::Pep440(b)) => a.cmp(b),
            _ => match (self.as_pep440(), other.as_pep440()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => self
                    .numbers()
                    .cmp(&other.numbers())
                    .then_with(|| phase(self).cmp(&phase(other))),
            },
        }
    }
}

/// Parses a tag name as a version: semver with an optional `v`, one or
/// two dotted numbers (`v7.10` is 7.10.0), or PEP 440.
pub fn parse_tag(name: &str) -> Option<TagVersion> {
    if let Some(v) = parse(name) {
        return Some(TagVersion::Semver(v));
    }
    match dotted(name).as_deref() {
        Some([a]) => return Some(TagVersion::Semver(semver::Version::new(*a, 0, 0))),
        Some([a, b]) => return Some(TagVersion::Semver(semver::Version::new(*a, *b, 0))),
        _ => {}
    }
    // PEP 440's parser also skips surrounding whitespace and takes `V`:
    // a tag name has neither, but only a `v` prefix is fpcheck's to allow.
    if name.starts_with(|c: char| c.is_whitespace() || c == 'V') {
        return None;
    }
    pep440_rs::Version::from_str(name)
        .ok()
        .map(TagVersion::Pep440)
}

/// A prefixed release tag (`server-v1.2.0`, `mcp@1.2.0`) that is not a
/// version itself: the length of its shortest prefix whose rest is one
/// (never cutting inside a number), and that version.
pub fn parse_prefixed(name: &str) -> Option<(usize, TagVersion)> {
    if parse_tag(name).is_some() {
        return None;
    }
    (1..name.len())
        .filter(|&i| name.is_char_boundary(i))
        .find_map(|i| {
            let rest = &name[i..];
            let head = rest.strip_prefix('v').unwrap_or(rest);
            let fits = head.starts_with(|c: char| c.is_ascii_digit())
                && !name[..i].ends_with(|c: char| c.is_ascii_digit());
            fits.then(|| parse_tag(rest)).flatten().map(|v| (i, v))
        })
}

/// The part of a glob before its first wildcard (`server-v*` gives
/// `server-v`, `mcp@*` gives `mcp@`).
pub fn literal_prefix(glob: &str) -> &str {
    let end = glob.find(['*', '?', '[', '\\']).unwrap_or(glob.len());
    &glob[..end]
}

/// The version a tag matching `glob` names: the whole name when it is a
/// version, else the name without the glob's literal prefix (a monorepo's
/// `server-v1.2.0` of `server-v*`, changesets' `mcp@1.2.0` of `mcp@*`).
/// The prefix never cuts inside the version: `server-v7.*` strips only
/// `server-v`, so `server-v7.1.0` is 7.1.0.
pub fn of_glob(name: &str, glob: &str) -> Option<TagVersion> {
    parse_tag(name).or_else(|| {
        let prefix =
            literal_prefix(glob).trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        parse_tag(name.strip_prefix(prefix).filter(|_| !prefix.is_empty())?)
    })
}

/// Compares two version strings by precedence: as tags (above), else as
/// dotted numbers of any length.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    if let (Some(x), Some(y)) = (parse_tag(a), parse_tag(b)) {
        return Some(x.cmp_precedence(&y));
    }
    Some(dotted(a)?.cmp(&dotted(b)?))
}

/// Where a release's version, as reported, comes from.
#[derive(Clone, Copy, Debug, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VersionSource {
    /// The version file the gate reads (version.json, package.json).
    VersionFile,
    /// No version file: the version the tag names.
    Tag,
    /// No version file the gate reads, but the runtime's own
    /// `pyproject.toml` (its `[project] version`).
    Pyproject,
}

/// A release's version for reporting and for `restarts_saved`: the
/// version file's when there is one, else the tag's. The reference
/// updater reads the version file only (`from_version`, `to_version`).
#[derive(Clone, Debug, serde::Serialize, PartialEq, Eq)]
pub struct ReleaseVersion {
    /// The version.
    pub version: String,
    /// Where it comes from.
    pub source: VersionSource,
    /// As shown: `1.21.0`, or `1.21.0 (tag)` when it is the tag's.
    pub shown: String,
}

impl ReleaseVersion {
    /// The version of a release of `version` (its version file's), tagged
    /// with a tag naming `tag_version`.
    pub fn of(version: Option<&str>, tag_version: &str) -> ReleaseVersion {
        match version {
            Some(v) => ReleaseVersion {
                version: v.to_string(),
                source: VersionSource::VersionFile,
                shown: v.to_string(),
            },
            None => ReleaseVersion {
                version: tag_version.to_string(),
                source: VersionSource::Tag,
                shown: format!("{tag_version} (tag)"),
            },
        }
    }

    /// A release's version: its version file's, else its `pyproject.toml`'s,
    /// else its tag's; `None` for none of them.
    pub fn choose(
        version: Option<&str>,
        pyproject: Option<&str>,
        tag_version: Option<&str>,
    ) -> Option<ReleaseVersion> {
        match (version, pyproject, tag_version) {
            (None, Some(p), _) => Some(ReleaseVersion::from_pyproject(p)),
            (None, None, None) => None,
            (v, _, t) => Some(ReleaseVersion::of(v, t.unwrap_or_default())),
        }
    }

    /// The version a runtime's `pyproject.toml` gives (`[project] version`).
    pub fn from_pyproject(version: &str) -> ReleaseVersion {
        ReleaseVersion {
            version: version.to_string(),
            source: VersionSource::Pyproject,
            shown: format!("{version} (pyproject.toml)"),
        }
    }

    /// Whether the two versions differ: by precedence, or as text when
    /// precedence cannot order them.
    pub fn differs(&self, other: &ReleaseVersion) -> bool {
        compare(&self.version, &other.version).map_or(self.version != other.version, |o| o.is_ne())
    }

    /// Whether `to` is older than `from` by precedence.
    pub fn went_backwards(from: &ReleaseVersion, to: &ReleaseVersion) -> bool {
        compare(&to.version, &from.version) == Some(Ordering::Less)
    }
}

/// The rule for a release without a version file (docs/spec.md section 6):
/// when neither end has a version file the gate reads, the releases'
/// own versions (a `pyproject.toml`'s, else the tags') are what tells a
/// release; two different ones are a version change. `false` when either
/// end has a version file (the reference's rule then holds alone) or is
/// not a release.
pub fn releases_differ_without_version_file(
    from: Option<&ReleaseVersion>,
    to: Option<&ReleaseVersion>,
) -> bool {
    match (from, to) {
        (Some(a), Some(b)) => {
            a.source != VersionSource::VersionFile
                && b.source != VersionSource::VersionFile
                && a.differs(b)
        }
        _ => false,
    }
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
        let v = |a, b, c| Some(TagVersion::Semver(semver::Version::new(a, b, c)));
        assert_eq!(parse_tag("v7.10.0"), v(7, 10, 0));
        assert_eq!(parse_tag("7.10"), v(7, 10, 0));
        assert_eq!(parse_tag("v7"), v(7, 0, 0));
        assert_eq!(
            parse_tag("v2.0.0-rc.1").map(|v| v.to_string()),
            Some("2.0.0-rc.1".into())
        );
        assert!(matches!(parse_tag("1.2.3.4"), Some(TagVersion::Pep440(_))));
        assert_eq!(parse_tag("release-1"), None);
        assert_eq!(parse_tag(" 1.0rc1"), None);
        assert_eq!(parse_tag("V1.0rc1"), None);
        assert_eq!(dotted("v1.2.3.4"), Some(vec![1, 2, 3, 4]));
        assert_eq!(dotted("1.x"), None);
    }

    /// Every PEP 440 segment, and semver tags among them, in one order.
    #[test]
    fn one_order_for_both_schemes() {
        let order = [
            "v0.9.0",
            "1.0.dev1",
            "v1.0.0a1",
            "1.0.0-alpha.2", // semver, reads as PEP 440 1.0.0a2
            "v1.0.0b1",
            "1.0.0rc1",
            "v1.0.0-rc.2", // semver, 1.0.0rc2
            "v1.0.0",
            "1.0.0.post1",
            "1.0.1.dev0",
            "v1.1",
            "1.1.0.post2.dev1",
            "1.1.0.post2",
            "2.0.0-beta.x.y", // semver only: a pre-release of 2.0.0
            "v2.0.0",
            "1!0.1",
        ];
        let parsed: Vec<TagVersion> = order
            .iter()
            .map(|t| parse_tag(t).unwrap_or_else(|| panic!("{t}")))
            .collect();
        for (i, a) in parsed.iter().enumerate() {
            for (j, b) in parsed.iter().enumerate() {
                assert_eq!(
                    a.cmp_precedence(b),
                    i.cmp(&j),
                    "{} against {}",
                    order[i],
                    order[j]
                );
            }
        }
        let pre: Vec<bool> = parsed.iter().map(TagVersion::is_prerelease).collect();
        assert_eq!(
            pre,
            [
                false, true, true, true, true, true, true, false, false, true, false, true, false,
                true, false, false
            ]
        );
        // `1.0.0-1` is a semver pre-release, not PEP 440's post-release.
        let v1 = parse_tag("1.0.0").unwrap();
        assert!(parse_tag("1.0.0-1").unwrap().cmp_precedence(&v1).is_lt());
        // A local version is above its release (PEP 440), semver build
        // metadata is not.
        assert!(parse_tag("1.0rc1+ubuntu.1")
            .unwrap()
            .cmp_precedence(&parse_tag("1.0rc1").unwrap())
            .is_gt());
    }

    /// A glob's literal prefix is stripped up to the version, never into it.
    #[test]
    fn a_globs_prefix_never_cuts_into_the_version() {
        let version = |name: &str, glob: &str| of_glob(name, glob).map(|v| v.to_string());
        assert_eq!(
            version("server-v7.1.0", "server-v7.*"),
            Some("7.1.0".into())
        );
        assert_eq!(
            version("server-v10.0.0", "server-v1*"),
            Some("10.0.0".into())
        );
        assert_eq!(version("server-v1.2.0", "server-v*"), Some("1.2.0".into()));
        assert_eq!(version("mcp@1.2.0", "mcp@*"), Some("1.2.0".into()));
        assert_eq!(version("v2.0.0rc1", "v2.*"), Some("2.0.0rc1".into()));
    }
}

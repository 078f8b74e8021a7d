//! The runtime fingerprint (FINGERPRINT.md section 2): the SHA-256 of
//! `path NUL bytes LF` for every selected file, in path order.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::select::{select, Problem, Rules, SelectedFile, Selection};
use crate::source::{Node, Source, SourceError};

/// A computed fingerprint, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    /// Lowercase hex SHA-256; `None` when unavailable.
    pub digest: Option<String>,
    /// The files selected (empty when unavailable, as in the reference).
    pub selection: Selection,
    /// Why there is no digest, naming the path at fault.
    pub unavailable_reason: Option<String>,
    /// Things a releaser should know about these bytes.
    pub warnings: Vec<String>,
}

impl Fingerprint {
    /// The gate's string: the digest, or `""` when unavailable.
    pub fn as_gate_str(&self) -> &str {
        self.digest.as_deref().unwrap_or("")
    }

    /// The selected paths in hash order (empty when unavailable).
    pub fn files(&self) -> Vec<&str> {
        if self.digest.is_none() {
            return Vec::new();
        }
        self.selection
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect()
    }
}

/// Selects and hashes the runtime files of `source`.
pub fn compute(source: &dyn Source, rules: &Rules) -> Result<Fingerprint, SourceError> {
    let selection = select(source, rules)?;
    from_selection(source, rules, selection)
}

/// Hashes an existing selection; lets callers that already compared
/// selections (and found them different) reuse the walk.
pub fn from_selection(
    source: &dyn Source,
    rules: &Rules,
    selection: Selection,
) -> Result<Fingerprint, SourceError> {
    finish(source, rules, selection, None)
}

/// Hashes `selection`; with `per_file`, also each file's own digest.
fn finish(
    source: &dyn Source,
    rules: &Rules,
    mut selection: Selection,
    per_file: Option<&mut Vec<String>>,
) -> Result<Fingerprint, SourceError> {
    let root = source.root_display();
    if let Some(reason) = selection.unavailable_reason(&root, rules) {
        return Ok(unavailable(selection, reason));
    }
    let mut warnings = selection.skipped_warnings();
    warnings.extend(source.warnings(&selection.files)?);
    match hash_stream(source, &selection.files, per_file) {
        Ok(digest) => Ok(Fingerprint {
            digest: Some(digest),
            selection,
            unavailable_reason: None,
            warnings,
        }),
        Err(SourceError::Unreadable { path, why }) => {
            selection.problems.push(Problem {
                path,
                what: format!(": {why}"),
            });
            let reason = selection
                .unavailable_reason(&root, rules)
                .expect("a problem was just recorded");
            Ok(unavailable(selection, reason))
        }
        Err(e) => Err(e),
    }
}

fn unavailable(selection: Selection, reason: String) -> Fingerprint {
    Fingerprint {
        digest: None,
        warnings: selection.skipped_warnings(),
        selection,
        unavailable_reason: Some(reason),
    }
}

/// The digest of section 2 over `files`, which must be in hash order.
///
/// Each distinct content is read once: bytes shared by several paths (empty
/// `__init__.py` files, links to one file) are kept until their last use, so
/// memory holds only those and the file being read.
pub fn hash_files(source: &dyn Source, files: &[SelectedFile]) -> Result<String, SourceError> {
    hash_stream(source, files, None)
}

/// A fingerprint together with each selected file's own SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detailed {
    /// The fingerprint, exactly as [`compute`] gives it.
    pub fingerprint: Fingerprint,
    /// Lowercase hex SHA-256 of each selected file's bytes, in the order of
    /// `fingerprint.selection.files`; empty when the fingerprint is
    /// unavailable.
    pub file_digests: Vec<String>,
}

/// Like [`compute`], also hashing each file on its own, from the same single
/// read of its bytes that feeds the fingerprint (a file that changes between
/// two reads could otherwise be recorded with a digest that does not match
/// the fingerprint).
pub fn compute_detailed(source: &dyn Source, rules: &Rules) -> Result<Detailed, SourceError> {
    let selection = select(source, rules)?;
    let mut digests = Vec::new();
    let fingerprint = finish(source, rules, selection, Some(&mut digests))?;
    if fingerprint.digest.is_none() {
        digests.clear();
    }
    Ok(Detailed {
        fingerprint,
        file_digests: digests,
    })
}

/// [`hash_files`], optionally pushing each file's own digest to `per_file`.
fn hash_stream(
    source: &dyn Source,
    files: &[SelectedFile],
    mut per_file: Option<&mut Vec<String>>,
) -> Result<String, SourceError> {
    let mut uses: HashMap<&Node, usize> = HashMap::new();
    for f in files {
        *uses.entry(&f.content).or_default() += 1;
    }
    let mut kept: HashMap<&Node, Vec<u8>> = HashMap::new();
    let mut hasher = Sha256::new();
    for f in files {
        hasher.update(f.path.as_bytes());
        hasher.update([0u8]);
        let left = uses.get_mut(&f.content).expect("counted above");
        *left -= 1;
        // The file's own hasher runs only when asked for: it doubles the
        // hashing work, and `compute` must stay as fast as it was.
        let mut own = per_file.as_ref().map(|_| Sha256::new());
        if let Some(bytes) = kept.get(&f.content) {
            hasher.update(bytes);
            if let Some(own) = own.as_mut() {
                own.update(bytes);
            }
            if *left == 0 {
                kept.remove(&f.content);
            }
        } else if *left > 0 {
            let mut bytes = Vec::new();
            source.read(&f.path, &f.content, &mut |b| bytes.extend_from_slice(b))?;
            hasher.update(&bytes);
            if let Some(own) = own.as_mut() {
                own.update(&bytes);
            }
            kept.insert(&f.content, bytes);
        } else {
            source.read(&f.path, &f.content, &mut |b| {
                hasher.update(b);
                if let Some(own) = own.as_mut() {
                    own.update(b);
                }
            })?;
        }
        hasher.update([b'\n']);
        if let (Some(out), Some(own)) = (per_file.as_deref_mut(), own) {
            out.push(hex::encode(own.finalize()));
        }
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::DirSource;

    #[test]
    fn detailed_matches_compute() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("pkg")).unwrap();
        std::fs::write(root.join("a.py"), b"alpha\n").unwrap();
        std::fs::write(root.join("pkg/__init__.py"), b"").unwrap();
        std::fs::write(root.join("pkg/b.py"), b"beta").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.py", root.join("z.py")).unwrap();
        let source = DirSource::new(root);
        let rules = Rules::default();
        let plain = compute(&source, &rules).unwrap();
        let detailed = compute_detailed(&source, &rules).unwrap();
        assert_eq!(detailed.fingerprint, plain);
        let sha = |b: &[u8]| hex::encode(Sha256::digest(b));
        let mut want = vec![sha(b"alpha\n"), sha(b""), sha(b"beta")];
        if cfg!(unix) {
            want.push(sha(b"alpha\n"));
        }
        assert_eq!(detailed.file_digests, want);
    }

    /// Counts reads, to show each file is read once for both digests.
    struct Counting(DirSource, std::cell::Cell<usize>);

    impl Source for Counting {
        fn root_display(&self) -> String {
            self.0.root_display()
        }
        fn root(&self) -> Result<crate::source::RootState, SourceError> {
            self.0.root()
        }
        fn read_dir(
            &self,
            dir: &Node,
            rel: &[u8],
        ) -> Result<Vec<crate::source::Entry>, SourceError> {
            self.0.read_dir(dir, rel)
        }
        fn resolve(
            &self,
            rel: &[u8],
            entry: &crate::source::Entry,
        ) -> Result<crate::source::Target, SourceError> {
            self.0.resolve(rel, entry)
        }
        fn read(
            &self,
            rel: &str,
            content: &Node,
            sink: &mut dyn FnMut(&[u8]),
        ) -> Result<(), SourceError> {
            self.1.set(self.1.get() + 1);
            self.0.read(rel, content, sink)
        }
        fn read_meta(
            &self,
            name: &str,
            in_parent: bool,
        ) -> Result<Option<crate::source::MetaFile>, SourceError> {
            self.0.read_meta(name, in_parent)
        }
        fn origin(&self) -> crate::source::Origin {
            self.0.origin()
        }
    }

    #[test]
    fn detailed_reads_each_file_once() {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [("a.py", "a"), ("b.py", "b"), ("c.py", "")] {
            std::fs::write(dir.path().join(name), body).unwrap();
        }
        let source = Counting(DirSource::new(dir.path()), Default::default());
        let d = compute_detailed(&source, &Rules::default()).unwrap();
        assert_eq!(d.file_digests.len(), 3);
        assert_eq!(source.1.get(), 3);
    }

    #[test]
    fn detailed_has_no_digests_when_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("x.py")).unwrap();
        let d = compute_detailed(&DirSource::new(dir.path()), &Rules::default()).unwrap();
        assert_eq!(d.fingerprint.digest, None);
        assert!(d.file_digests.is_empty());
    }
}

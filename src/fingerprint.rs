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
    mut selection: Selection,
) -> Result<Fingerprint, SourceError> {
    let root = source.root_display();
    if let Some(reason) = selection.unavailable_reason(&root, rules) {
        return Ok(unavailable(selection, reason));
    }
    let warnings = source.warnings(&selection.files)?;
    match hash_files(source, &selection.files) {
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
        selection,
        unavailable_reason: Some(reason),
        warnings: Vec::new(),
    }
}

/// The digest of section 2 over `files`, which must be in hash order.
///
/// Each distinct content is read once: bytes shared by several paths (empty
/// `__init__.py` files, links to one file) are kept until their last use, so
/// memory holds only those and the file being read.
pub fn hash_files(source: &dyn Source, files: &[SelectedFile]) -> Result<String, SourceError> {
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
        if let Some(bytes) = kept.get(&f.content) {
            hasher.update(bytes);
            if *left == 0 {
                kept.remove(&f.content);
            }
        } else if *left > 0 {
            let mut bytes = Vec::new();
            source.read(&f.path, &f.content, &mut |b| bytes.extend_from_slice(b))?;
            hasher.update(&bytes);
            kept.insert(&f.content, bytes);
        } else {
            source.read(&f.path, &f.content, &mut |b| hasher.update(b))?;
        }
        hasher.update([b'\n']);
    }
    Ok(hex::encode(hasher.finalize()))
}

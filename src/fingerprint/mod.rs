//! The runtime fingerprint (docs/spec.md section 2): the SHA-256 of
//! `path NUL bytes LF` for every selected file, in path order.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::select::{select, Problem, Rules, SelectedFile, Selection};
use crate::source::{Node, Source, SourceError};
use crate::warning::Warning;

mod parallel;
mod pipe;
mod resumable;
mod stream;
#[cfg(test)]
mod tests;

use parallel::*;
// Also for the scan of unchanged roots (`source::git`).
use crate::threads::{idle_core, parallel};
use pipe::*;
pub use resumable::Resumable;
use resumable::*;
pub(crate) use stream::StreamSink;

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
    pub warnings: Vec<Warning>,
}

impl Fingerprint {
    /// The gate's string: the digest, or `""` when unavailable.
    pub fn as_gate_str(&self) -> &str {
        gate_text(self.digest.as_deref())
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

/// A fingerprint as the gate writes it (`""` when unavailable, in the
/// snapshot file, the marker and every JSON report) read as the library
/// holds it: `None` when unavailable. The one place that reads `""` so.
pub fn available(gate_text: &str) -> Option<&str> {
    (!gate_text.is_empty()).then_some(gate_text)
}

/// A fingerprint as the gate writes it: `""` when unavailable. The
/// inverse of [`available`], and the one place that writes `""` so.
pub fn gate_text(fingerprint: Option<&str>) -> &str {
    fingerprint.unwrap_or("")
}

/// How many hex digits of a fingerprint the reports show.
pub(crate) const SHORT_DIGITS: usize = 12;

/// A fingerprint's first [`SHORT_DIGITS`] hex digits, as the reports show
/// it; `None` for the gate's `""` (unavailable), which each report words
/// its own way.
pub fn short(fingerprint: &str) -> Option<&str> {
    short_to(fingerprint, SHORT_DIGITS)
}

/// [`short`] at `digits` hex digits (the history table's narrow column).
pub fn short_to(fingerprint: &str, digits: usize) -> Option<&str> {
    // `get`: never a panic, whatever a hand-edited file holds.
    available(fingerprint).map(|fp| fp.get(..digits).unwrap_or(fp))
}

/// Selects and hashes the runtime files of `source`.
pub fn compute(source: &dyn Source, rules: &Rules) -> Result<Fingerprint, SourceError> {
    let selection = select(source, rules)?;
    from_selection(source, rules, selection)
}

/// Hashes an existing selection; lets callers that already compared
/// selections (and found them different) reuse the walk.
pub(crate) fn from_selection(
    source: &dyn Source,
    rules: &Rules,
    selection: Selection,
) -> Result<Fingerprint, SourceError> {
    finish(source, rules, selection, Hashing::Piped)
}

/// Like [`from_selection`] for one of a series of selections (the releases
/// of a history), hashed by `hasher`, which resumes after the files this
/// selection shares with the one it hashed last. The source's own warnings
/// (`.gitattributes`) are left out: a history does not report them.
pub(crate) fn from_selection_resumed(
    source: &dyn Source,
    rules: &Rules,
    selection: Selection,
    hasher: &mut Resumable,
) -> Result<Fingerprint, SourceError> {
    finish(source, rules, selection, Hashing::Resumed(hasher))
}

/// How [`finish`] hashes the stream.
enum Hashing<'h> {
    /// On a second thread, see [`Pipe`].
    Piped,
    /// Inline, also pushing each file's own digest.
    Detailed(&'h mut Vec<String>),
    /// Inline, resuming after a shared prefix.
    Resumed(&'h mut Resumable),
}

/// Hashes `selection`, turning an unreadable file into an unavailable
/// fingerprint the same way whichever [`Hashing`] is used.
fn finish(
    source: &dyn Source,
    rules: &Rules,
    mut selection: Selection,
    hashing: Hashing<'_>,
) -> Result<Fingerprint, SourceError> {
    let root = source.root_display();
    if let Some(reason) = selection.unavailable_reason(&root, rules) {
        return Ok(unavailable(selection, reason));
    }
    let mut warnings = selection.skipped_warnings();
    if !matches!(hashing, Hashing::Resumed(_)) {
        warnings.extend(source.warnings(&selection.files)?);
    }
    let digest = match hashing {
        Hashing::Piped => hash_stream(source, &selection.files, None),
        Hashing::Detailed(out) => hash_stream(source, &selection.files, Some(out)),
        Hashing::Resumed(hasher) => hasher.hash(source, &selection.files),
    };
    match digest {
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
        Err(SourceError::Malformed { path, why }) => {
            selection.problems.push(Problem { path, what: why });
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

/// A fingerprint together with each selected file's own SHA-256.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Detailed {
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
pub(crate) fn compute_detailed(
    source: &dyn Source,
    rules: &Rules,
) -> Result<Detailed, SourceError> {
    let selection = select(source, rules)?;
    let mut digests = Vec::new();
    let fingerprint = finish(source, rules, selection, Hashing::Detailed(&mut digests))?;
    if fingerprint.digest.is_none() {
        digests.clear();
    }
    Ok(Detailed {
        fingerprint,
        file_digests: digests,
    })
}

/// The digest of section 2 over `files`, which must be in hash order,
/// optionally pushing each file's own digest to `per_file`.
fn hash_stream(
    source: &dyn Source,
    files: &[SelectedFile],
    per_file: Option<&mut Vec<String>>,
) -> Result<String, SourceError> {
    match per_file {
        // The file's own hashers run only when asked for: they double the
        // hashing work, and `compute` must stay as fast as it was.
        Some(out) => {
            let mut hasher = Sha256::new();
            let mut own = Sha256::new();
            feed(source, files, &mut |piece| match piece {
                Piece::Path(path) => hasher.begin_file(path),
                Piece::Bytes(bytes) => {
                    hasher.put(bytes);
                    own.update(bytes);
                }
                Piece::End => {
                    hasher.end_file();
                    out.push(hex::encode(std::mem::take(&mut own).finalize()));
                }
            })?;
            Ok(hex::encode(hasher.finalize()))
        }
        // A directory: read by its own readers, on two threads when there
        // are enough files and a core to spare (see [`hash_split`] and
        // [`idle_core`]), else on this one.
        None => match source.file_reader() {
            Some(reader) if files.len() >= SPLIT_MIN_FILES && parallel() && idle_core() => {
                let other = source.file_reader().expect("given once, given again");
                hash_split(reader, other, files)
            }
            Some(mut reader) => hash_inline(&mut *reader, files),
            None => hash_piped(source, files),
        },
    }
}

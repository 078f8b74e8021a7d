//! A report that must fit a size limit (GitHub's 1 MiB step summary, its
//! 65,536-character comments): rendered again with shorter file lists until
//! it fits, so whole rows are left out and the report says how many ("N more
//! not shown"), and never cut mid-row or mid-entity.

use super::ReportError;

/// Fits a report to `max_bytes` (UTF-8, so also at most `max_bytes`
/// characters): `at(n)` renders it with file lists of at most `n` rows; the
/// longest lists up to `max_files` that fit are kept. An error when even no
/// row at all does not fit (JSON, which lists everything, fits or not).
pub(super) fn fit_within(
    max_files: usize,
    max_bytes: usize,
    at: impl Fn(usize) -> Result<String, ReportError>,
) -> Result<String, ReportError> {
    let full = at(max_files)?;
    if full.len() <= max_bytes {
        return Ok(full);
    }
    let mut best = at(0)?;
    if best.len() > max_bytes {
        return Err(ReportError(format!(
            "the report takes {} bytes even with no file listed, more than the limit of {max_bytes} bytes",
            best.len()
        )));
    }
    // `fits` fits and `too_many` does not: halve the gap. Longer lists make
    // a longer report, so this finds the longest lists that fit.
    let (mut fits, mut too_many) = (0, max_files);
    while too_many - fits > 1 {
        let mid = fits + (too_many - fits) / 2;
        let text = at(mid)?;
        if text.len() <= max_bytes {
            fits = mid;
            best = text;
        } else {
            too_many = mid;
        }
    }
    Ok(best)
}

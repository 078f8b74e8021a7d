//! Names for ends given by commit id. A script that resolved the releases
//! itself (the GitHub Action) passes full commit ids, so that no name can be
//! read as an option or as another revision, and names them for the report
//! here: `--from-name v1.1.0` shows `v1.1.0` where the report would show the
//! id.

use crate::range::Analysis;

/// Which end a name is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The older release.
    From,
    /// The newer one.
    To,
}

/// Gives the `end` of `analysis` the name `name` in its `ref` and in every
/// sentence that names it (summary, warnings, notes). The end must have been
/// given as its full commit id, so that the id is replaced exactly and no
/// other text is touched.
pub fn name_end(analysis: &mut Analysis, end: End, name: &str) -> Result<(), String> {
    let side = match end {
        End::From => &mut analysis.from,
        End::To => &mut analysis.to,
    };
    let id = side.reference.clone();
    if side.commit.as_deref() != Some(id.as_str()) {
        let flag = match end {
            End::From => "from",
            End::To => "to",
        };
        return Err(format!(
            "a name for the {flag} end needs that end given as its full commit id, not `{id}`"
        ));
    }
    side.reference = name.to_string();
    analysis.summary = analysis.summary.replace(&id, name);
    for w in &mut analysis.warnings {
        w.message = w.message.replace(&id, name);
    }
    for note in &mut analysis.notes {
        *note = note.replace(&id, name);
    }
    Ok(())
}

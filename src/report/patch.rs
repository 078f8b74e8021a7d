//! `fpcheck patch`'s answer: the patch itself (what `--patch-out` writes),
//! or with `--json` one object with the file, the explanations and whether
//! it was written.

use serde::Serialize;

use super::{to_json, Format, Render, RenderOptions, ReportError};
use crate::patch::{Chosen, Explanation, PatchFormat, Plan};

/// A release's version.json patch, in the format asked for.
pub struct PatchReport<'a> {
    /// The older end, as the range report names it.
    pub from: &'a str,
    /// The newer end.
    pub to: &'a str,
    /// The patch and the file it is for.
    pub plan: &'a Plan,
    /// Merge patch or JSON Patch.
    pub format: PatchFormat,
    /// Whether `--write` wrote it.
    pub written: bool,
}

/// `--json`.
#[derive(Serialize)]
struct Output<'a> {
    schema_version: u32,
    from: &'a str,
    to: &'a str,
    version_file: &'a str,
    version_file_source: Chosen,
    exists: bool,
    format: PatchFormat,
    patch: serde_json::Value,
    explanations: &'a [Explanation],
    written: bool,
}

impl Render for PatchReport<'_> {
    const COMMAND: &'static str = "fpcheck patch";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        let plan = self.plan;
        match format {
            // The patch is the text: it is applied as it is printed.
            Format::Text => Ok(to_json(&plan.patch(self.format))),
            Format::Json => Ok(to_json(&Output {
                schema_version: 1,
                from: self.from,
                to: self.to,
                version_file: &plan.version_file,
                version_file_source: plan.chosen,
                exists: plan.exists,
                format: self.format,
                patch: plan.patch(self.format),
                explanations: &plan.explanations,
                written: self.written,
            })),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

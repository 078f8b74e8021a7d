//! `fpcheck fingerprint`'s answer: the digest (and with `--list` the
//! selected files), or its documented JSON object.

use serde::Serialize;

use super::{printable, to_json, Format, Render, RenderOptions, ReportError};
use crate::config::RuntimeSpec;
use crate::source::Origin;
use crate::warning::Warning;
use crate::Fingerprint;

/// A fingerprint with what it was computed from.
pub struct FingerprintReport<'a> {
    /// The fingerprint.
    pub fingerprint: &'a Fingerprint,
    /// The tree or directory read.
    pub origin: &'a Origin,
    /// The runtime root as shown: from the top of the repository, or the
    /// directory given.
    pub root: &'a str,
    /// The settings that selected the files.
    pub spec: &'a RuntimeSpec,
    /// The text lists the selected files too (`--list`).
    pub list: bool,
}

/// The JSON object, in its documented order.
#[derive(Serialize)]
struct Output<'a, S> {
    schema_version: u32,
    fingerprint: &'a str,
    unavailable_reason: Option<&'a str>,
    files: Vec<&'a str>,
    #[serde(flatten)]
    origin: &'a Origin,
    settings: S,
    #[serde(serialize_with = "crate::warning::messages")]
    warnings: &'a [Warning],
}

impl Render for FingerprintReport<'_> {
    const COMMAND: &'static str = "fpcheck fingerprint";

    fn render_lists(&self, format: &Format, _: &RenderOptions) -> Result<String, ReportError> {
        match format {
            Format::Text => Ok(self.text()),
            Format::Json => Ok(self.json()),
            other => Err(ReportError::unsupported(Self::COMMAND, other)),
        }
    }
}

impl FingerprintReport<'_> {
    /// The digest on one line (nothing when unavailable), then the files.
    fn text(&self) -> String {
        let Some(digest) = &self.fingerprint.digest else {
            return String::new();
        };
        let mut out = format!("{digest}\n");
        if self.list {
            // One path per line: a name holding a newline must not split.
            for f in self.fingerprint.files() {
                out.push_str(&printable(f));
                out.push('\n');
            }
        }
        out
    }

    fn json(&self) -> String {
        let fp = self.fingerprint;
        to_json(&Output {
            schema_version: 1,
            fingerprint: fp.as_gate_str(),
            unavailable_reason: fp.unavailable_reason.as_deref(),
            files: fp.files(),
            origin: self.origin,
            settings: crate::config::shown::at_root(self.spec, self.root),
            warnings: &fp.warnings,
        })
    }
}

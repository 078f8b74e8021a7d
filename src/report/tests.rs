//! The one way to render: formats a report lacks, and the size limit.

use super::*;
use crate::gate::run::GateReport;
use crate::range::{ResolvedEnd, ResolvedEnds};

/// A report of `rows` rows, all listed up to `max_files`, then counted.
struct Rows(usize);

impl Render for Rows {
    const COMMAND: &'static str = "fpcheck rows";

    fn render_lists(&self, format: &Format, opts: &RenderOptions) -> Result<String, ReportError> {
        if *format != Format::Text {
            return Err(ReportError::unsupported(Self::COMMAND, format));
        }
        let shown = self.0.min(opts.max_files);
        let mut out = "row\n".repeat(shown);
        if shown < self.0 {
            out.push_str(&format!("{} more\n", self.0 - shown));
        }
        Ok(out)
    }
}

fn ends() -> ResolvedEnds {
    let end = |name: &str| ResolvedEnd {
        reference: name.into(),
        commit: Some("0".repeat(40)),
    };
    ResolvedEnds {
        from: end("v1"),
        to: end("v2\u{1b}"),
        notes: vec!["chosen by the tag rule".into()],
    }
}

#[test]
fn a_format_a_report_lacks_names_the_command_and_the_format() {
    let gate = GateReport::default();
    let opts = RenderOptions::default();
    for (format, name) in [
        (Format::Markdown, "markdown"),
        (Format::Table, "table"),
        (Format::Html, "html"),
        (
            Format::Template(Template {
                name: "t.md".into(),
                text: "{{ reason }}".into(),
            }),
            "template",
        ),
    ] {
        let e = gate.render(&format, &opts).unwrap_err();
        assert_eq!(e.0, format!("`fpcheck gate` has no {name} output"));
    }
    let e = ends().render(&Format::Html, &opts).unwrap_err();
    assert_eq!(e.0, "`fpcheck RANGE --resolve-only` has no html output");
}

#[test]
fn the_gate_report_is_its_document_with_the_schema_version() {
    let opts = RenderOptions::default();
    let gate = GateReport::default();
    let json = gate.render(&Format::Json, &opts).unwrap();
    assert_eq!(json, crate::pretty::json(&crate::gate::document(&gate)));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["schema_version"], crate::gate::JSON_SCHEMA);
    assert!(json.ends_with("}\n"));
}

#[test]
fn resolved_ends_are_one_escaped_line_each_then_the_notes() {
    let text = ends()
        .render(&Format::Text, &RenderOptions::default())
        .unwrap();
    let id = "0".repeat(40);
    assert_eq!(
        text,
        format!("from v1 {id}\nto v2\\x1b {id}\nnote: chosen by the tag rule\n")
    );
}

#[test]
fn a_size_limit_keeps_whole_rows_and_says_when_nothing_fits() {
    let opts = |max_bytes| RenderOptions {
        max_files: 10,
        max_bytes,
        ..RenderOptions::default()
    };
    let rows = Rows(10);
    assert_eq!(rows.render(&Format::Text, &opts(None)).unwrap().len(), 40);
    // 40 bytes do not fit in 30: the longest list that fits, counted.
    let fitted = rows.render(&Format::Text, &opts(Some(30))).unwrap();
    assert_eq!(fitted, format!("{}5 more\n", "row\n".repeat(5)));
    let e = rows.render(&Format::Text, &opts(Some(3))).unwrap_err();
    assert_eq!(
        e.0,
        "the report takes 8 bytes even with no file listed, more than the limit of 3 bytes"
    );
    // A format the report lacks is named before any fitting.
    let e = rows.render(&Format::Json, &opts(Some(30))).unwrap_err();
    assert_eq!(e.0, "`fpcheck rows` has no json output");
}

/// Every output is `report`'s: the command line and the Python package
/// choose a format and print, and never write JSON or set up a table of
/// their own (where a second copy would drift from the documented one).
#[test]
fn the_edges_only_choose_a_format_and_print() {
    let top = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(top.join("src/cli"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(top.join("python/src/lib.rs"));
    let own_outputs = [
        "pretty::json",
        "to_json",
        "serde_json::to_string",
        "derive(Serialize",
        "load_preset",
        "report::render_",
    ];
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for needle in own_outputs {
            assert!(
                !text.contains(needle),
                "{} has `{needle}`: render through report::Render",
                file.display()
            );
        }
    }
}

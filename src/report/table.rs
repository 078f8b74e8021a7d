//! The terminal report: a verdict line, a table of the two ends, then the
//! changes and warnings. Readable at 80 columns; colour only when asked.

use comfy_table::{Cell, Color, Table};

use super::RenderOptions;
use crate::changes::Why;
use crate::range::Analysis;
use crate::side::Side;

/// Renders the terminal report.
pub(super) fn render_table(a: &Analysis, opts: &RenderOptions) -> String {
    let paint = |text: &str, code: &str| {
        if opts.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    for note in &a.notes {
        out.push_str(&format!("note: {}\n", clean(note)));
    }
    let verdict = if a.restart_required {
        paint("RESTART REQUIRED", "1;31")
    } else {
        paint("NO RESTART", "1;32")
    };
    out.push_str(&format!(
        "{verdict} ({})  {}\n",
        a.reason.as_str(),
        clean(&a.summary)
    ));
    out.push_str(&sides(a, opts).to_string());
    out.push('\n');
    let marker = match a.updater.marker_reason {
        Some(r) => format!("writes the marker ({r})"),
        None => "writes no marker".into(),
    };
    let process = match a.process_check.reason {
        Some(r) => format!("fires ({r})"),
        None => "does not fire".into(),
    };
    out.push_str(&format!("updater: {marker}; process check: {process}\n"));
    if let Some(said) = &a.witness.summary {
        out.push_str(&format!("witness: {}\n", clean(said)));
    }
    if let Some(row) = &a.matrix_row {
        out.push_str(&format!(
            "behaviour matrix row {}: {}\n",
            row.number, row.touches
        ));
    }
    changes(&mut out, a, opts);
    if !a.warnings.is_empty() {
        out.push_str(&format!("\n{}\n", paint("warnings:", "1;33")));
        for w in &a.warnings {
            out.push_str(&format!("  ! {}: {}\n", w.code, clean(&w.message)));
        }
    }
    out.push_str(&super::advice::block(&a.advice));
    out
}

fn sides(a: &Analysis, opts: &RenderOptions) -> Table {
    // Narrower than 40 columns the rows would not read.
    let mut table = super::grid::table(
        vec![Cell::new(""), Cell::new("from"), Cell::new("to")],
        opts.color,
        opts.width.map(|w| w.max(40)),
    );
    let row = |name: &str, f: &dyn Fn(&Side) -> String| {
        vec![
            Cell::new(name),
            Cell::new(super::shown(&clean(&f(&a.from)))),
            Cell::new(super::shown(&clean(&f(&a.to)))),
        ]
    };
    table.add_row(row("ref", &|s| s.reference.clone()));
    table.add_row(row("commit", &|s| match (&s.commit, s.worktree) {
        (Some(c), _) => c[..12.min(c.len())].to_string(),
        (None, true) => "working tree".into(),
        (None, false) => "-".into(),
    }));
    table.add_row(row("version", &|s| match (&s.version, &s.version_file) {
        (Some(v), Some(f)) => format!("{v} ({f})"),
        (Some(v), None) => v.clone(),
        _ => match &s.release_version {
            Some(r) => r.shown.clone(),
            None => "none".into(),
        },
    }));
    table.add_row(row("force_restart", &|s| match &s.force_restart_raw {
        Some(serde_json::Value::Bool(b)) => b.to_string(),
        Some(raw) => format!("{} (raw {raw})", s.force_restart),
        None => "false (absent)".into(),
    }));
    let changed = a.code_changed;
    let fp_cell = |s: &Side| {
        let cell = Cell::new(s.short_fingerprint());
        match (opts.color, s.unavailable(), changed) {
            (true, true, _) => cell.fg(Color::Yellow),
            (true, false, true) => cell.fg(Color::Red),
            (true, false, false) => cell.fg(Color::Green),
            _ => cell,
        }
    };
    table.add_row(vec![
        Cell::new("fingerprint"),
        fp_cell(&a.from),
        fp_cell(&a.to),
    ]);
    table.add_row(row("runtime files", &|s| s.runtime_files.to_string()));
    table
}

fn changes(out: &mut String, a: &Analysis, opts: &RenderOptions) {
    let runtime = &a.changes.runtime;
    out.push_str(&format!("\nruntime files changed ({}):\n", runtime.len()));
    if runtime.is_empty() {
        out.push_str(if a.from.unavailable() || a.to.unavailable() {
            "  none listed, but a fingerprint is unavailable (see the warnings)\n"
        } else {
            "  none: the runtime fingerprint is byte-for-byte the same\n"
        });
    }
    for c in runtime.iter().take(opts.max_files) {
        let path = match &c.old_path {
            Some(old) => format!("{} -> {}", clean(old), clean(&c.path)),
            None => clean(&c.path),
        };
        let kind = c
            .change_kind
            .map(|k| format!("  ({})", k.as_str()))
            .unwrap_or_default();
        out.push_str(&format!("  {:<2} {path}{kind}\n", c.status.letter()));
    }
    more(out, runtime.len(), opts.max_files);
    if a.avoidable == Some(true) {
        out.push_str(&format!(
            "{}\n",
            crate::classify::avoidable_sentence(runtime.len())
        ));
    }
    let ignored = &a.changes.ignored;
    if ignored.is_empty() {
        if !a.changes.ignored_complete {
            out.push_str(
                "(changes outside the runtime files are not listed for the working tree)\n",
            );
        }
        return;
    }
    out.push_str(&format!("changed but not counted ({}):\n", ignored.len()));
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for c in ignored {
        let why = match c.why {
            Why::OutsideRoot => "outside the runtime root".to_string(),
            Why::Excluded => format!(
                "under excluded `{}`",
                c.excluded_name.as_deref().unwrap_or("?")
            ),
            Why::NotRuntimeExtension => "not a runtime extension".to_string(),
        };
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, paths)) => paths.push(clean(&c.path)),
            None => groups.push((why, vec![clean(&c.path)])),
        }
    }
    for (why, paths) in groups {
        let shown: Vec<&str> = paths
            .iter()
            .take(if opts.ignored_in_full {
                opts.max_files
            } else {
                opts.max_files.min(8)
            })
            .map(String::as_str)
            .collect();
        let rest = paths.len() - shown.len();
        let tail = if rest > 0 {
            format!(" and {rest} more")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {why} ({}): {}{tail}\n",
            paths.len(),
            shown.join(", ")
        ));
    }
}

fn more(out: &mut String, len: usize, max: usize) {
    if len > max {
        out.push_str(&format!("  ... and {} more\n", len - max));
    }
}

use super::printable as clean;

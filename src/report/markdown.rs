//! Markdown (or any text) from tera templates, safe to post on a pull
//! request: everything from the repository is escaped so that it cannot
//! break a table, render HTML, or mention anyone.

use std::collections::HashMap;

use serde::Serialize;
use tera::{Context, Tera, Value};

use super::{bounded, RenderOptions, ReportError};

/// The embedded default Markdown template (`templates/report.md.tera`).
pub const DEFAULT_MARKDOWN: &str = include_str!("../../templates/report.md.tera");

/// The section of one runtime, as a macro (`templates/section.md.tera`):
/// both Markdown reports call it, and a user's template may import it as
/// `section.md`.
pub const SECTION_MARKDOWN: &str = include_str!("../../templates/section.md.tera");

/// The embedded history templates.
pub const HISTORY_MARKDOWN: &str = include_str!("../../templates/history.md.tera");
/// The embedded HTML history page.
pub const HISTORY_HTML: &str = include_str!("../../templates/history.html.tera");

/// Escapes text for Markdown inline content: HTML is neutralised, every
/// character Markdown or a table could read is an entity, `@` cannot start
/// a mention, and a newline cannot end a table row.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\r' => out.push('␤'),
            '|' | '`' | '*' | '_' | '~' | '[' | ']' | '#' | '\\' | '$' => {
                out.push_str(&format!("&#{};", ch as u32))
            }
            // A zero-width joiner after the entity keeps GitHub from
            // reading `@name` as a mention even after entity decoding.
            '@' => out.push_str("&#64;&#8288;"),
            // Other controls and the bidirectional ones, visible as the
            // terminal shows them (`\x1b`, `\u{202e}`): a tag or a path
            // cannot reorder what a reviewer reads. The backslash is an
            // entity, as above.
            c => match crate::term::escape(c.encode_utf8(&mut [0; 4])) {
                std::borrow::Cow::Owned(shown) => out.push_str(&shown.replacen('\\', "&#92;", 1)),
                std::borrow::Cow::Borrowed(_) => out.push(c),
            },
        }
    }
    out
}

/// Escapes text for HTML (tera's autoescaping), after writing controls and
/// bidirectional characters as visible escapes ([`crate::term::escape`]):
/// a name cannot reorder a page or carry a raw ESC or newline into it.
fn escape_html_visible(text: &str) -> String {
    tera::escape_html(&crate::term::escape(text))
}

fn md(value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
    Ok(Value::String(escape_markdown(&super::shown(&as_text(
        value,
    )))))
}

fn md_code(value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
    Ok(Value::String(format!(
        "<code>{}</code>",
        escape_markdown(&super::shown(&as_text(value)))
    )))
}

/// The Markdown line of an avoidable restart, from the number of files
/// (the words are [`crate::classify::avoidable_sentence`]'s).
fn avoidable(value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
    let files = value
        .as_u64()
        .ok_or_else(|| tera::Error::msg("`avoidable` takes a number of files"))?;
    let files = usize::try_from(files).unwrap_or(usize::MAX);
    Ok(Value::String(crate::classify::avoidable_markdown(files)))
}

fn short(value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
    Ok(Value::String(as_text(value).chars().take(12).collect()))
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Renders `template` (tera syntax) with the context of `data` plus
/// `max_files`, and `data` again as `report` (to hand the whole report to
/// a macro). `name` names the template in errors; the runtime section's
/// macros can be imported from `section.md`.
pub(super) fn render_template<T: Serialize>(
    data: &T,
    template: &str,
    name: &str,
    opts: &RenderOptions,
) -> Result<String, ReportError> {
    let tera = with_templates(template, name)?;
    let context = context_of(data, opts)?;
    let text = tera
        .render(name, &context)
        .map_err(|e| ReportError(format!("template {name} failed: {}", chain(&e))))?;
    trimmed(text)
}

/// [`render_template`] for a user's template (`--template`), which may
/// come with a pull request: parsed and rendered on a thread of its own
/// within [`bounded::Limits`], so that it ends, in bounded memory, and
/// never crashes fpcheck; a bound reached is an error naming the template.
pub(super) fn render_user_template<T: Serialize>(
    data: &T,
    template: &str,
    name: &str,
    opts: &RenderOptions,
) -> Result<String, ReportError> {
    let context = context_of(data, opts)?;
    let limits = bounded::Limits::default();
    let work = move || -> Result<String, ReportError> {
        let mut tera = with_templates(template, name)?;
        let beyond = |why: String| {
            ReportError(format!(
                "template {name} was stopped: {why} (a template may not recurse, and its nesting, loops, output and time are bounded: see the README)"
            ))
        };
        let budget = bounded::bound(&mut tera, name, limits).map_err(beyond)?;
        let mut out = Capped {
            bytes: Vec::new(),
            budget: &budget,
        };
        let done = tera.render_to(name, &context, &mut out);
        if let Some(why) = budget.stopped() {
            return Err(beyond(why));
        }
        done.map_err(|e| ReportError(format!("template {name} failed: {}", chain(&e))))?;
        let text = String::from_utf8(out.bytes)
            .map_err(|_| ReportError(format!("template {name} wrote text that is not UTF-8")))?;
        trimmed(text)
    };
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("template".into())
            .stack_size(bounded::STACK)
            .spawn_scoped(scope, work)
            .map_err(|e| ReportError(format!("cannot start rendering template {name}: {e}")))?;
        worker.join().unwrap_or_else(|_| {
            Err(ReportError(format!(
                "rendering template {name} failed inside fpcheck (a bug: please report it)"
            )))
        })
    })
}

/// The output of a user's template: written within the budget's bytes and
/// time, or refused with why.
struct Capped<'a> {
    bytes: Vec<u8>,
    budget: &'a bounded::BudgetHandle,
}

impl std::io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.budget
            .wrote(buf.len())
            .map_err(std::io::Error::other)?;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A tera with fpcheck's filters, the section macros and `template` as
/// `name`.
fn with_templates(template: &str, name: &str) -> Result<Tera, ReportError> {
    let mut tera = Tera::default();
    // Markdown escapes through its filters; HTML templates autoescape.
    tera.autoescape_on(vec![".html", ".htm"]);
    tera.set_escape_fn(escape_html_visible);
    tera.register_filter("md", md);
    tera.register_filter("md_code", md_code);
    tera.register_filter("short", short);
    tera.register_filter("avoidable", avoidable);
    // A template may come with a pull request and be rendered in CI, where
    // the environment holds secrets (`GITHUB_TOKEN`): it sees the report
    // and nothing else. tera registers `get_env` whatever its features,
    // with no way to remove it, so it is replaced by one that refuses.
    tera.register_function("get_env", refuse_get_env);
    tera.add_raw_templates([("section.md", SECTION_MARKDOWN), (name, template)])
        .map_err(|e| ReportError(format!("template {name} does not parse: {}", chain(&e))))?;
    Ok(tera)
}

/// The context of `data`: its JSON, `max_files`, and itself as `report`.
fn context_of<T: Serialize>(data: &T, opts: &RenderOptions) -> Result<Context, ReportError> {
    let mut context = Context::from_serialize(data).map_err(|e| ReportError(chain(&e)))?;
    context.insert("max_files", &opts.max_files);
    context.insert("report", data);
    Ok(context)
}

/// A leading template comment leaves blank lines; the hidden marker that
/// finds a sticky comment must be the first line.
fn trimmed(text: String) -> Result<String, ReportError> {
    Ok(text.trim_start_matches(['\n', '\r']).to_string())
}

fn refuse_get_env(_: &std::collections::HashMap<String, Value>) -> tera::Result<Value> {
    Err(tera::Error::msg(
        "get_env is not available: a template sees the report only, never the environment",
    ))
}

/// tera's errors keep the useful part in their sources.
fn chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_from_a_path_can_render() {
        let hostile = "a|b`c*d<img src=x>@someone\nrow_[x](y)";
        let out = escape_markdown(hostile);
        for bad in ["|", "`", "*", "<img", "@someone", "\n", "[", "]"] {
            assert!(!out.contains(bad), "{bad} survived in {out}");
        }
        assert_eq!(escape_markdown("src/ok.py"), "src/ok.py");
    }

    /// Bidirectional controls and other controls are shown, never applied.
    #[test]
    fn bidi_and_controls_are_visible() {
        assert_eq!(
            escape_markdown("v1\u{202e}0.0.1\u{2066}x\u{200f}\u{61c}"),
            "v1&#92;u{202e}0.0.1&#92;u{2066}x&#92;u{200f}&#92;u{61c}"
        );
        assert_eq!(escape_markdown("w\u{1b}[31m"), "w&#92;x1b&#91;31m");
        assert_eq!(
            escape_html_visible("<b>\u{202e}\u{1b}\n"),
            "&lt;b&gt;\\u{202e}\\x1b\\x0a"
        );
    }
}

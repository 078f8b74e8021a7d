//! A user's template rendered within bounds. A template may come with a
//! pull request and be rendered in CI, so it must end, quickly, in little
//! memory, and never crash fpcheck: tera itself has no limit on recursion
//! (a recursive macro overflows the stack, which aborts the process and
//! cannot be caught), on `range`, on loops or on output.
//!
//! The bounds, each failing with an error naming the template:
//! - no recursion: a macro that calls itself, directly or through other
//!   macros (of this file or an imported one), or a template that includes
//!   itself, is refused before rendering; so are macro calls nested more
//!   than [`Limits::depth`] deep and template nesting (blocks, loops,
//!   expressions) deeper than that;
//! - `range` gives at most [`Limits::range`] numbers (and refuses a step of 0);
//! - every loop iteration and macro call is a step, at most
//!   [`Limits::steps`], and checks the clock ([`Limits::time`]);
//! - the text a template writes, into its output or a macro's, each value
//!   `set` keeps and each filter's result, at most [`Limits::bytes`] (a
//!   filter that multiplies, `replace`, `indent`, `join`, is refused before
//!   it makes a larger value), and one expression uses at most
//!   [`MAX_REFS`] values and calls (it holds them all at once).
//!
//! Parsing and rendering run on a thread of their own with a large stack
//! ([`STACK`]), so the nesting the depth bound lets through always fits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tera::ast::{Expr, ExprVal, FunctionCall, Node, WS};
use tera::{Tera, Value};

/// The stack of the thread that parses and renders a user's template.
pub(super) const STACK: usize = 256 << 20;

/// The function every loop iteration and macro call runs first.
const STEP: &str = "__fpcheck_step";
/// The filter every `set` value goes through.
const KEEP: &str = "__fpcheck_keep";
/// The variable a buffered `{{ value }}` is set to first.
const OUT: &str = "__fpcheck_out";

/// How far a user's template may go.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    /// Nesting of the template and of macro calls.
    pub depth: usize,
    /// Numbers one `range` may give.
    pub range: u64,
    /// Loop iterations and macro calls.
    pub steps: u64,
    /// Bytes written (into the output or a macro's) and bytes of one value.
    pub bytes: u64,
    /// Wall time of the rendering.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: 64,
            range: 100_000,
            steps: 10_000_000,
            bytes: 64 << 20,
            time: Duration::from_secs(5),
        }
    }
}

/// What one rendering has spent.
struct Budget {
    limits: Limits,
    start: Instant,
    steps: AtomicU64,
    bytes: AtomicU64,
}

impl Budget {
    fn new(limits: Limits) -> Self {
        Budget {
            limits,
            start: Instant::now(),
            steps: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// One step that writes `bytes` of the template's own text.
    fn step(&self, bytes: u64) -> Result<(), String> {
        let steps = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        if steps > self.limits.steps {
            return Err(format!(
                "it ran more than {} loop iterations and macro calls",
                self.limits.steps
            ));
        }
        self.wrote(bytes)
    }

    /// `bytes` more written; the clock checked.
    fn wrote(&self, bytes: u64) -> Result<(), String> {
        let total = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total > self.limits.bytes {
            return Err(format!("it wrote more than {} bytes", self.limits.bytes));
        }
        if self.start.elapsed() > self.limits.time {
            return Err(format!(
                "it ran longer than {} s",
                self.limits.time.as_secs()
            ));
        }
        Ok(())
    }
}

/// Checks the templates of `tera` (the user's is `name`) and instruments
/// them: the bounds above, registered as a step function, a capped
/// `range` and a guard on `set` values. An error says which bound.
pub(super) fn bound(
    tera: &mut Tera,
    name: &str,
    limits: Limits,
) -> Result<Arc<BudgetHandle>, String> {
    check_recursion(tera, name, limits.depth)?;
    for template in tera.templates.values_mut() {
        instrument_body(&mut template.ast, false);
        for definition in template.macros.values_mut() {
            instrument_macro(&mut definition.body);
        }
        for block in template.blocks.values_mut() {
            instrument_body(&mut block.body, false);
        }
        for definitions in template.blocks_definitions.values_mut() {
            for (_, block) in definitions {
                instrument_body(&mut block.body, false);
            }
        }
    }
    let budget = Arc::new(BudgetHandle {
        budget: Budget::new(limits),
        stopped: Mutex::new(None),
    });
    let step = Arc::clone(&budget);
    tera.register_function(STEP, move |args: &HashMap<String, Value>| {
        let bytes = args.get("n").and_then(Value::as_u64).unwrap_or(0);
        step.check(step.budget.step(bytes))?;
        Ok(Value::String(String::new()))
    });
    let keep = Arc::clone(&budget);
    tera.register_filter(KEEP, move |value: &Value, _: &HashMap<String, Value>| {
        let limits = keep.budget.limits;
        let size = keep.check(size_within(value, limits.bytes, limits.depth))?;
        keep.check(keep.budget.wrote(size))?;
        Ok(value.clone())
    });
    wrap_filters(tera, &budget);
    let ranges = Arc::clone(&budget);
    tera.register_function("range", move |args: &HashMap<String, Value>| {
        let numbers = match range_length(args, limits.range) {
            Ok(numbers) => numbers,
            Err(RangeError::Bound(why)) => ranges.check(Err(why))?,
            Err(RangeError::Bad(why)) => return Err(tera::Error::msg(why)),
        };
        Ok(Value::Array(numbers.map(Value::from).collect()))
    });
    Ok(budget)
}

/// The budget a rendering spends, shared with the functions registered,
/// and the first bound it reached.
pub(super) struct BudgetHandle {
    budget: Budget,
    stopped: Mutex<Option<String>>,
}

impl BudgetHandle {
    /// `bytes` written to the output.
    pub(super) fn wrote(&self, bytes: usize) -> Result<(), String> {
        self.check(self.budget.wrote(bytes as u64))
            .map_err(|e| e.to_string())
    }

    /// The first bound reached, if any: the rendering's error, whatever
    /// tera made of it.
    pub(super) fn stopped(&self) -> Option<String> {
        self.stopped.lock().map_or(None, |s| s.clone())
    }

    /// `outcome`, a bound reached recorded.
    fn check<T>(&self, outcome: Result<T, String>) -> tera::Result<T> {
        outcome.map_err(|why| {
            if let Ok(mut first) = self.stopped.lock() {
                first.get_or_insert_with(|| why.clone());
            }
            tera::Error::msg(why)
        })
    }
}

/// Why `range` gives no numbers.
enum RangeError {
    /// Its arguments are wrong, as tera's would say.
    Bad(String),
    /// More numbers than a template may use, or no end.
    Bound(String),
}

/// The numbers of tera's `range` (`start`, `end`, `step_by`), at most
/// `max` of them, a step of 0 refused (tera's own loops on forever).
fn range_length(
    args: &HashMap<String, Value>,
    max: u64,
) -> Result<std::iter::StepBy<std::ops::Range<u64>>, RangeError> {
    let number = |key: &str, default: Option<u64>| -> Result<u64, RangeError> {
        match (args.get(key), default) {
            (Some(value), _) => value.as_u64().ok_or_else(|| {
                RangeError::Bad(format!(
                    "Function `range` received {key}={value} but `{key}` can only be a number"
                ))
            }),
            (None, Some(default)) => Ok(default),
            (None, None) => Err(RangeError::Bad(
                "Function `range` was called without a `end` argument".into(),
            )),
        }
    };
    let (start, step, end) = (
        number("start", Some(0))?,
        number("step_by", Some(1))?,
        number("end", None)?,
    );
    if start > end {
        return Err(RangeError::Bad(
            "Function `range` was called with a `start` argument greater than the `end` one".into(),
        ));
    }
    if step == 0 {
        return Err(RangeError::Bound("range(step_by=0) never ends".into()));
    }
    let count = (end - start).div_ceil(step);
    if count > max {
        return Err(RangeError::Bound(format!(
            "range(start={start}, end={end}, step_by={step}) gives {count} numbers, more than {max}"
        )));
    }
    Ok((start..end).step_by(usize::try_from(step).unwrap_or(usize::MAX)))
}

/// The size of `value` in bytes (strings' lengths, 8 per other value),
/// refused past `max` bytes or `depth` levels of nesting.
fn size_within(value: &Value, max: u64, depth: usize) -> Result<u64, String> {
    fn walk(
        value: &Value,
        depth: usize,
        left: usize,
        total: &mut u64,
        max: u64,
    ) -> Result<(), String> {
        if depth > left {
            return Err(format!("a value nests more than {left} levels"));
        }
        // What the value takes in memory: its own slot, and a string's bytes.
        *total += VALUE_SLOT
            + match value {
                Value::String(s) => s.len() as u64,
                _ => 0,
            };
        if *total > max {
            return Err(format!("a value is larger than {max} bytes"));
        }
        match value {
            Value::Array(items) => items
                .iter()
                .try_for_each(|v| walk(v, depth + 1, left, total, max)),
            Value::Object(map) => map.iter().try_for_each(|(k, v)| {
                *total += k.len() as u64;
                walk(v, depth + 1, left, total, max)
            }),
            _ => Ok(()),
        }
    }
    let mut total = 0;
    walk(value, 0, depth, &mut total, max)?;
    Ok(total)
}

/// The step node: a call of the step function that writes nothing,
/// counting `bytes` of text.
fn step_node(bytes: usize) -> Node {
    let mut args = HashMap::new();
    args.insert("n".to_string(), Expr::new(ExprVal::Int(bytes as i64)));
    Node::VariableBlock(
        WS::default(),
        Expr::new(ExprVal::FunctionCall(FunctionCall {
            name: STEP.to_string(),
            args,
        })),
    )
}

/// The bytes of text written by `body` itself (not its nested bodies).
fn text_bytes(body: &[Node]) -> usize {
    (body.iter())
        .map(|node| match node {
            Node::Text(s) | Node::Raw(_, s, _) => s.len(),
            _ => 0,
        })
        .sum()
}

/// A macro's body: a step first, then as any body whose output is kept
/// in memory.
fn instrument_macro(body: &mut Vec<Node>) {
    instrument_body(body, true);
    body.insert(0, step_node(text_bytes(body)));
}

/// Each loop's body starts with a step (counting its text), each `set`
/// value goes through the guard, in `body` and every body nested in it.
/// Where the output is kept in memory (`buffered`: a macro's, a filter
/// section's), each `{{ value }}` is first `set`, so that its size counts
/// before it is written.
fn instrument_body(body: &mut Vec<Node>, buffered: bool) {
    let nodes = std::mem::take(body);
    for mut node in nodes {
        match &mut node {
            Node::Forloop(_, forloop, _) => {
                instrument_body(&mut forloop.body, buffered);
                let bytes = text_bytes(&forloop.body);
                forloop.body.insert(0, step_node(bytes));
                if let Some(empty) = &mut forloop.empty_body {
                    instrument_body(empty, buffered);
                }
            }
            Node::Set(_, set) => set.value.filters.push(keep()),
            Node::MacroDefinition(_, definition, _) => instrument_macro(&mut definition.body),
            Node::Block(_, block, _) => instrument_body(&mut block.body, buffered),
            Node::FilterSection(_, section, _) => instrument_body(&mut section.body, true),
            Node::If(branches, _) => {
                for (_, _, body) in &mut branches.conditions {
                    instrument_body(body, buffered);
                }
                if let Some((_, body)) = &mut branches.otherwise {
                    instrument_body(body, buffered);
                }
            }
            Node::VariableBlock(ws, expr) if buffered => {
                // Escaped as before: what tera leaves unescaped (marked
                // safe, a macro's output, a plain concatenation) stays so.
                let safe =
                    expr.is_marked_safe() || (expr.filters.is_empty() && unescaped(&expr.val));
                let mut value = expr.clone();
                value.filters.push(keep());
                body.push(Node::Set(
                    *ws,
                    tera::ast::Set {
                        key: OUT.to_string(),
                        value,
                        global: false,
                    },
                ));
                let mut shown = Expr::new(ExprVal::Ident(OUT.to_string()));
                if safe {
                    shown.filters.push(FunctionCall {
                        name: "safe".to_string(),
                        args: HashMap::new(),
                    });
                }
                body.push(Node::VariableBlock(WS::default(), shown));
                continue;
            }
            _ => {}
        }
        body.push(node);
    }
}

/// Whether tera leaves the value of `val` unescaped (before filters): a
/// macro's output (escaped inside) and a concatenation of no function's
/// output, as its renderer decides.
fn unescaped(val: &ExprVal) -> bool {
    match val {
        ExprVal::MacroCall(_) => true,
        ExprVal::StringConcat(concat) => {
            !(concat.values.iter()).any(|part| matches!(part, ExprVal::FunctionCall(_)))
        }
        _ => false,
    }
}

/// The guard on a kept value.
fn keep() -> FunctionCall {
    FunctionCall {
        name: KEEP.to_string(),
        args: HashMap::new(),
    }
}

/// Every filter of `tera` wrapped: the multiplying ones (`replace`,
/// `indent`, `join`) refuse a result past the bound before they make it,
/// and every result is measured (and the clock checked) before it is used.
fn wrap_filters(tera: &mut Tera, budget: &Arc<BudgetHandle>) {
    let filters = std::mem::take(&mut tera.filters);
    for (name, inner) in filters {
        let wrapped = Guarded {
            name: name.clone(),
            inner,
            budget: Arc::clone(budget),
        };
        tera.filters.insert(name, Arc::new(wrapped));
    }
}

/// A filter within the budget.
struct Guarded {
    name: String,
    inner: Arc<dyn tera::Filter>,
    budget: Arc<BudgetHandle>,
}

impl tera::Filter for Guarded {
    fn filter(&self, value: &Value, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let limits = self.budget.budget.limits;
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map_or(0, str::len) as u64;
        let input = value.as_str().unwrap_or("");
        let grows = match self.name.as_str() {
            "replace" => {
                let from = args.get("from").and_then(Value::as_str).unwrap_or("");
                let times = if from.is_empty() {
                    input.chars().count() as u64 + 1
                } else {
                    input.matches(from).count() as u64
                };
                times.saturating_mul(text(args.get("to")))
            }
            "indent" => (input.lines().count() as u64 + 1)
                .saturating_mul(args.get("prefix").map_or(4, |p| text(Some(p)))),
            "join" => {
                (value.as_array().map_or(0, Vec::len) as u64).saturating_mul(text(args.get("sep")))
            }
            // Each piece a value of its own: a slot and a heap allocation.
            "split" => {
                let pat = args.get("pat").and_then(Value::as_str).unwrap_or("");
                let pieces = if pat.is_empty() {
                    input.chars().count() as u64 + 1
                } else {
                    input.matches(pat).count() as u64 + 1
                };
                pieces.saturating_mul(VALUE_SLOT * 2)
            }
            // One byte may become an entity of up to six (`&quot;`), three
            // (`%2F`) or a `<br>` per line.
            "escape" | "escape_xml" => (input.len() as u64).saturating_mul(5),
            "urlencode" | "urlencode_strict" => (input.len() as u64).saturating_mul(2),
            "linebreaksbr" => (input.lines().count() as u64 + 1).saturating_mul(4),
            _ => 0,
        };
        if grows.saturating_add(input.len() as u64) > limits.bytes {
            return self.budget.check(Err(format!(
                "the filter {} would make a value larger than {} bytes",
                self.name, limits.bytes
            )));
        }
        let out = self.inner.filter(value, args)?;
        self.budget
            .check(size_within(&out, limits.bytes, limits.depth))?;
        self.budget.check(self.budget.budget.wrote(0))?;
        Ok(out)
    }

    fn is_safe(&self) -> bool {
        self.inner.is_safe()
    }
}

/// What one JSON value takes in memory besides a string's bytes, as a
/// template's values are counted against [`Limits::bytes`].
const VALUE_SLOT: u64 = std::mem::size_of::<Value>() as u64;

/// A macro: the template that defines it and its name.
type MacroId = (String, String);

/// Refuses recursion (a macro reaching itself through calls, a template
/// including itself) and nesting deeper than `depth`.
fn check_recursion(tera: &Tera, name: &str, depth: usize) -> Result<(), String> {
    let mut calls: HashMap<MacroId, Vec<MacroId>> = HashMap::new();
    for (file, template) in &tera.templates {
        let namespaces: HashMap<&str, &str> = (template.imported_macro_files.iter())
            .map(|(path, namespace)| (namespace.as_str(), path.as_str()))
            .collect();
        let resolve = |namespace: &str| -> String {
            match namespace {
                "self" => file.clone(),
                other => namespaces
                    .get(other)
                    .map_or(other.to_string(), |f| f.to_string()),
            }
        };
        let mut top = Seen::default();
        nodes_depth(&template.ast, 0, depth, &mut top)?;
        if top.includes.iter().any(|included| included == name) {
            return Err(format!("it includes itself ({name})"));
        }
        for (macro_name, definition) in &template.macros {
            let mut seen = Seen::default();
            nodes_depth(&definition.body, 0, depth, &mut seen)?;
            for (_, default) in definition
                .args
                .values()
                .filter_map(|d| d.as_ref().map(|e| ((), e)))
            {
                expr_depth(default, 0, depth, &mut seen)?;
            }
            if seen.includes.iter().any(|included| included == name) {
                return Err(format!(
                    "its macro {macro_name} includes the template itself"
                ));
            }
            let callees = (seen.calls.into_iter())
                .map(|(namespace, callee)| (resolve(&namespace), callee))
                .collect();
            calls.insert((file.clone(), macro_name.clone()), callees);
        }
    }
    // Depth-first through the calls: a macro met again on the way is a
    // cycle; a way longer than `depth`, too deep.
    let mut done: HashMap<MacroId, usize> = HashMap::new();
    for start in calls.keys() {
        let mut path = Vec::new();
        visit(start, &calls, &mut path, &mut done, depth)?;
    }
    Ok(())
}

/// Visits the macro `at` below the calls `path`, refusing a cycle or a
/// chain of calls longer than `depth`; its height (the macros of the
/// longest chain it starts) is remembered in `done`, so a macro reached
/// again by a longer path is checked with what lies below it.
fn visit(
    at: &MacroId,
    calls: &HashMap<MacroId, Vec<MacroId>>,
    path: &mut Vec<MacroId>,
    done: &mut HashMap<MacroId, usize>,
    depth: usize,
) -> Result<usize, String> {
    if let Some(i) = path.iter().position(|m| m == at) {
        let cycle: Vec<String> = (path[i..].iter().chain([at]))
            .map(|(_, name)| name.clone())
            .collect();
        return Err(format!(
            "its macros call themselves ({})",
            cycle.join(" -> ")
        ));
    }
    let too_deep = || Err(format!("its macro calls nest more than {depth} deep"));
    if let Some(&height) = done.get(at) {
        return if path.len() + height > depth {
            too_deep()
        } else {
            Ok(height)
        };
    }
    if path.len() >= depth {
        return too_deep();
    }
    path.push(at.clone());
    let mut below = 0;
    for callee in calls.get(at).into_iter().flatten() {
        below = below.max(visit(callee, calls, path, done, depth)?);
    }
    path.pop();
    done.insert(at.clone(), below + 1);
    Ok(below + 1)
}

/// The macros called (namespace, name) and templates included.
#[derive(Default)]
struct Seen {
    calls: Vec<(String, String)>,
    includes: Vec<String>,
    /// Values and calls the expression being read uses.
    refs: usize,
}

/// Values and calls one expression may use: each may be as large as a
/// value may be, and an expression holds them all at once (`a ~ a ~ a`).
const MAX_REFS: usize = 32;

/// [`expr_depth`] for a whole expression, its values and calls counted.
fn top_expr(expr: &Expr, depth: usize, max: usize, seen: &mut Seen) -> Result<(), String> {
    seen.refs = 0;
    expr_depth(expr, depth, max, seen)?;
    if seen.refs > MAX_REFS {
        return Err(format!(
            "an expression uses {} values and calls, more than {MAX_REFS}",
            seen.refs
        ));
    }
    Ok(())
}

fn too_deep(max: usize) -> String {
    format!("it nests more than {max} levels (blocks, loops, expressions)")
}

fn nodes_depth(body: &[Node], depth: usize, max: usize, seen: &mut Seen) -> Result<(), String> {
    if depth > max {
        return Err(too_deep(max));
    }
    let deeper = depth + 1;
    for node in body {
        match node {
            Node::VariableBlock(_, expr) => top_expr(expr, deeper, max, seen)?,
            Node::Set(_, set) => top_expr(&set.value, deeper, max, seen)?,
            Node::Include(_, names, _) => seen.includes.extend(names.iter().cloned()),
            Node::FilterSection(_, section, _) => {
                seen.refs = 0;
                call_depth(&section.filter, deeper, max, seen)?;
                nodes_depth(&section.body, deeper, max, seen)?;
            }
            Node::Block(_, block, _) => nodes_depth(&block.body, deeper, max, seen)?,
            Node::Forloop(_, forloop, _) => {
                top_expr(&forloop.container, deeper, max, seen)?;
                nodes_depth(&forloop.body, deeper, max, seen)?;
                if let Some(empty) = &forloop.empty_body {
                    nodes_depth(empty, deeper, max, seen)?;
                }
            }
            Node::If(branches, _) => {
                for (_, condition, body) in &branches.conditions {
                    top_expr(condition, deeper, max, seen)?;
                    nodes_depth(body, deeper, max, seen)?;
                }
                if let Some((_, body)) = &branches.otherwise {
                    nodes_depth(body, deeper, max, seen)?;
                }
            }
            // Definitions are checked as macros, not where they stand.
            _ => {}
        }
    }
    Ok(())
}

fn call_depth(
    call: &FunctionCall,
    depth: usize,
    max: usize,
    seen: &mut Seen,
) -> Result<(), String> {
    call.args
        .values()
        .try_for_each(|arg| expr_depth(arg, depth, max, seen))
}

fn expr_depth(expr: &Expr, depth: usize, max: usize, seen: &mut Seen) -> Result<(), String> {
    if depth > max {
        return Err(too_deep(max));
    }
    let deeper = depth + 1;
    for filter in &expr.filters {
        call_depth(filter, deeper, max, seen)?;
    }
    if matches!(
        expr.val,
        ExprVal::Ident(_) | ExprVal::FunctionCall(_) | ExprVal::MacroCall(_)
    ) {
        seen.refs += 1;
    }
    match &expr.val {
        ExprVal::Math(math) => {
            expr_depth(&math.lhs, deeper, max, seen)?;
            expr_depth(&math.rhs, deeper, max, seen)
        }
        ExprVal::Logic(logic) => {
            expr_depth(&logic.lhs, deeper, max, seen)?;
            expr_depth(&logic.rhs, deeper, max, seen)
        }
        ExprVal::In(within) => {
            expr_depth(&within.lhs, deeper, max, seen)?;
            expr_depth(&within.rhs, deeper, max, seen)
        }
        ExprVal::Test(test) => {
            (test.args.iter()).try_for_each(|arg| expr_depth(arg, deeper, max, seen))
        }
        ExprVal::MacroCall(call) => {
            seen.calls.push((call.namespace.clone(), call.name.clone()));
            (call.args.values()).try_for_each(|arg| expr_depth(arg, deeper, max, seen))
        }
        ExprVal::FunctionCall(call) => call_depth(call, deeper, max, seen),
        ExprVal::Array(items) => items
            .iter()
            .try_for_each(|item| expr_depth(item, deeper, max, seen)),
        ExprVal::StringConcat(concat) => (concat.values.iter()).try_for_each(|value| match value {
            ExprVal::FunctionCall(call) => {
                seen.refs += 1;
                call_depth(call, deeper, max, seen)
            }
            ExprVal::Ident(_) => {
                seen.refs += 1;
                Ok(())
            }
            _ => Ok(()),
        }),
        _ => Ok(()),
    }
}

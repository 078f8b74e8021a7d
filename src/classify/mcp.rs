//! Which functions a server registers with an MCP framework, read from
//! their decorators: one rule, shared by classification (such a function's
//! docstring is its description, sent to clients: `code`, never
//! `docstrings`) and the advice's list of the tools clients see.
//!
//! A decorator registers when it is an attribute named `tool`, `resource`
//! or `prompt` of any object, called or not: `@mcp.tool`, `@mcp.tool()`,
//! `@server.tool(name="x")`, `@app.resource("uri://x")`, `@mcp.prompt`.
//! Not seen: a bare imported decorator (`@tool`), registration by a call
//! (`mcp.add_tool(f)`), a low-level server's list/call handlers, a
//! decorator with another name.

use ruff_python_ast::{Decorator, Expr};

/// What a decorator registers a function as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Registration {
    /// `.tool`.
    Tool,
    /// `.resource`.
    Resource,
    /// `.prompt`.
    Prompt,
}

impl Registration {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Registration::Tool => "tool",
            Registration::Resource => "resource",
            Registration::Prompt => "prompt",
        }
    }
}

/// What `decorator` registers its function as, if anything.
pub fn registration(decorator: &Decorator) -> Option<Registration> {
    let target = match &decorator.expression {
        Expr::Call(call) => &*call.func,
        other => other,
    };
    let Expr::Attribute(attribute) = target else {
        return None;
    };
    match attribute.attr.as_str() {
        "tool" => Some(Registration::Tool),
        "resource" => Some(Registration::Resource),
        "prompt" => Some(Registration::Prompt),
        _ => None,
    }
}

/// What the first registering decorator of `decorators` registers.
pub fn registered(decorators: &[Decorator]) -> Option<(Registration, &Decorator)> {
    decorators
        .iter()
        .find_map(|d| registration(d).map(|r| (r, d)))
}

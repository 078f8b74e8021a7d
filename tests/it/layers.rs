//! The library's layers, as docs/architecture.md draws them, enforced: a
//! module may use the modules of its own layer and of the layers below,
//! never one above, and no two top-level modules may use each other
//! through any chain. The table is read from the document, so the
//! diagram and the build cannot drift apart.
//!
//! Only the library's own code counts: `#[cfg(test)]` items and files
//! under a `tests` folder may reach anywhere to build their cases.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layer name and modules, lowest first, as the document lists them.
type Layers = Vec<(String, Vec<String>)>;

const DOC: &str = "docs/architecture.md";
const TABLE_HEADING: &str = "## Layers the build enforces";

#[test]
fn no_module_uses_a_layer_above_it_and_no_modules_form_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let layers = layer_table(&std::fs::read_to_string(root.join(DOC)).unwrap());
    let modules = top_level_modules(&root.join("src"));
    let layer_of = check_table(&layers, &modules);
    let edges = module_edges(&root.join("src"), &modules);

    let mut upward = Vec::new();
    for ((from, to), site) in &edges {
        if layer_of[to].0 > layer_of[from].0 {
            upward.push(format!(
                "{site} uses `{to}` (layer {}) from `{from}` (layer {}, below it)",
                layer_of[to].1, layer_of[from].1
            ));
        }
    }
    assert!(
        upward.is_empty(),
        "upward edges against {DOC}:\n{}",
        upward.join("\n")
    );
    if let Some(cycle) = find_cycle(&edges, &modules) {
        let sites: Vec<String> = cycle
            .windows(2)
            .map(|w| edges[&(w[0].clone(), w[1].clone())].clone())
            .collect();
        panic!(
            "modules in a cycle: {}\n{}",
            cycle.join(" -> "),
            sites.join("\n")
        );
    }
}

/// A public type's name says which one it is: two public types of one name
/// (three `Report`s, four `Outcome`s) make every reader look up the path.
#[test]
fn no_two_public_types_share_a_name() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in rust_files(&src) {
        let rel = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.split('/').any(|s| s == "tests" || s == "tests.rs") {
            continue;
        }
        let code = without_tests(&code_only(&std::fs::read_to_string(&file).unwrap()));
        let tokens = tokens(&code);
        for w in tokens.windows(3) {
            if w[0] == "pub" && matches!(w[1], "struct" | "enum" | "type" | "trait") {
                seen.entry(w[2].to_string())
                    .or_default()
                    .push(format!("src/{rel}"));
            }
        }
    }
    let shared: Vec<String> = seen
        .iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(name, files)| format!("{name}: {}", files.join(", ")))
        .collect();
    assert!(
        shared.is_empty(),
        "public types sharing a name:\n{}",
        shared.join("\n")
    );
}

/// The checker sees the edges it must: a direct path, a `use` group, a
/// `super::` from a nested file, and not a test's or a comment's.
#[test]
fn the_checker_finds_edges_of_every_spelling_and_skips_tests_and_comments() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).into();
    let source = r#"
        use crate::{b::X, c};
        // crate::d::Nothing in a comment
        const S: &str = "crate::d::Nothing in a string";
        fn f() { super::super::e::g(); fpcheck::a::own(); }
        #[cfg(test)]
        mod tests { use crate::f::Anything; }
    "#;
    let found = names_used(source, &["a", "x.rs"], &modules);
    assert_eq!(found, ["a", "b", "c", "e"].map(String::from).into());
}

/// gix's ways to read an object (and the object store's field, through
/// which any of them can be reached): only `source::git`, where the
/// session lives, may name them.
const OBJECT_READS: [&str; 11] = [
    "find_object",
    "find_blob",
    "find_tree",
    "find_commit",
    "find_header",
    "find_tag",
    "try_find_object",
    "try_find_header",
    "find_tree_iter",
    "find_commit_iter",
    "find_tag_iter",
];

/// Where the one reader lives: every object is read through its
/// `Session`, which owns the memo and the missing-object policy.
const READER: &str = "src/source/git/";

/// Every git object is read through `source::git::Session`: a module that
/// called gix itself would bypass the missing-object policy (and, later,
/// the fetcher a blobless clone needs). Test code counts too.
#[test]
fn no_object_is_read_around_the_session() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for dir in ["src", "python/src"] {
        for file in rust_files(&root.join(dir)) {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.starts_with(READER) {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            found.extend(
                object_reads(&text)
                    .into_iter()
                    .map(|r| format!("{rel}: {r}")),
            );
        }
    }
    assert!(
        found.is_empty(),
        "objects read outside {READER} (use the session's blob/tree/commit/object/header):\n{}",
        found.join("\n")
    );
}

/// The object reads `text` names: a method of [`OBJECT_READS`], or the
/// `objects` field (not a method of that name), outside comments and
/// strings.
fn object_reads(text: &str) -> Vec<String> {
    let code = code_only(text);
    let tokens = tokens(&code);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let field =
            *t == "objects" && i > 0 && tokens[i - 1] == "." && tokens.get(i + 1) != Some(&"(");
        if OBJECT_READS.contains(t) || field {
            out.push(t.to_string());
        }
    }
    out
}

#[test]
fn the_reader_check_finds_calls_and_fields_and_skips_comments_and_strings() {
    let source = r#"
        let a = repo.find_blob(id)?;
        let b = repo.repo().try_find_header(id);
        gix::diff::tree(x, y, &mut s, &repo.objects, &mut d);
        repo.objects.find_tree_iter(&id, &mut buf);
        // repo.find_commit(id) in a comment
        const S: &str = "find_object in a string";
        let c = session.objects();
        let d = session.blob(id, "what", "rev");
    "#;
    assert_eq!(
        object_reads(source),
        [
            "find_blob",
            "try_find_header",
            "objects",
            "objects",
            "find_tree_iter"
        ]
    );
}

fn layer_table(doc: &str) -> Layers {
    let section = doc
        .split(TABLE_HEADING)
        .nth(1)
        .unwrap_or_else(|| panic!("{DOC} has no {TABLE_HEADING:?} section"));
    let mut layers: Layers = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
            let modules = cells[1]
                .split(|c: char| c == ',' || c.is_whitespace())
                .map(|m| m.trim_matches('`'))
                .filter(|m| !m.is_empty())
                .map(String::from)
                .collect();
            (cells[0].trim_matches('*').to_string(), modules)
        })
        .collect();
    assert!(!layers.is_empty(), "the {TABLE_HEADING:?} table is empty");
    // The document lists the top layer first, as the diagram draws it.
    layers.reverse();
    layers
}

/// Every module in one layer, every listed module real: module → (layer
/// index, layer name).
fn check_table(layers: &Layers, modules: &BTreeSet<String>) -> BTreeMap<String, (usize, String)> {
    let mut layer_of = BTreeMap::new();
    for (i, (name, listed)) in layers.iter().enumerate() {
        for m in listed {
            assert!(
                modules.contains(m),
                "{DOC} lists `{m}`, which is no module of src/"
            );
            let before = layer_of.insert(m.clone(), (i, name.clone()));
            assert!(before.is_none(), "{DOC} lists `{m}` twice");
        }
    }
    let missing: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(*m))
        .collect();
    assert!(
        missing.is_empty(),
        "modules of src/ in no layer of {DOC}: {missing:?} (add each to the table)"
    );
    layer_of
}

fn top_level_modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "lib" && stem != "main").then(|| stem.to_string())
            }
        })
        .collect()
}

/// (from, to) → the first file seen making that edge.
fn module_edges(src: &Path, modules: &BTreeSet<String>) -> BTreeMap<(String, String), String> {
    let mut edges = BTreeMap::new();
    for file in rust_files(src) {
        let rel: Vec<String> = file
            .strip_prefix(src)
            .unwrap()
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        if rel.len() == 1 && (rel[0] == "lib.rs" || rel[0] == "main.rs") {
            continue;
        }
        if rel.iter().any(|s| s == "tests" || s == "tests.rs") {
            continue;
        }
        let from = rel[0].trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let segments: Vec<&str> = rel.iter().map(String::as_str).collect();
        for to in names_used(&text, &segments, modules) {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_insert_with(|| format!("src/{}", rel.join("/")));
            }
        }
    }
    edges
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The top-level modules the code of one file names: `crate::m`,
/// `fpcheck::m`, `crate::{m, ...}`, and `super::` chains that climb to the
/// crate's root. `segments` is the file's path below `src/`.
fn names_used(text: &str, segments: &[&str], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code = without_tests(&code_only(text));
    // How many `super::` climb from this file's module to the crate root.
    let depth = match segments.last() {
        Some(&"mod.rs") => segments.len() - 1,
        _ => segments.len(),
    };
    let tokens = tokens(&code);
    let mut used = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let at_root = if tokens[i] == "crate" || tokens[i] == "fpcheck" {
            Some(i + 1)
        } else if tokens[i] == "super" && (i == 0 || tokens[i - 1] != "::") {
            let mut j = i;
            let mut ups = 0;
            while tokens.get(j) == Some(&"super") && tokens.get(j + 1) == Some(&"::") {
                ups += 1;
                j += 2;
            }
            (ups == depth).then_some(j - 1)
        } else {
            None
        };
        if let Some(k) = at_root {
            if tokens.get(k) == Some(&"::") {
                match tokens.get(k + 1) {
                    Some(&"{") => used.extend(group_heads(&tokens[k + 2..])),
                    Some(name) => {
                        used.insert(name.to_string());
                    }
                    None => {}
                }
            }
        }
        i += 1;
    }
    used.retain(|m| modules.contains(m));
    used
}

/// The first name of each item of a `{...}` use group (its tokens after the
/// opening brace).
fn group_heads(tokens: &[&str]) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for t in tokens {
        match *t {
            "{" => depth += 1,
            "}" if depth == 0 => break,
            "}" => depth -= 1,
            "," if depth == 0 => expect_head = true,
            name if expect_head && depth == 0 => {
                heads.push(name.to_string());
                expect_head = false;
            }
            _ => {}
        }
    }
    heads
}

/// Identifiers, `::` and single punctuation characters.
fn tokens(code: &str) -> Vec<&str> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(&code[start..i]);
        } else if code[i..].starts_with("::") {
            out.push("::");
            i += 2;
        } else if b.is_ascii_whitespace() || !b.is_ascii() {
            i += 1;
        } else {
            out.push(&code[i..i + 1]);
            i += 1;
        }
    }
    out
}

/// The code with comments removed and string and character literals
/// emptied (a path in a string or a doc comment is no use of a module).
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(len) = raw_string_len(&chars[i..], out.chars().last()) {
            out.push_str("\"\"");
            i += len;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && is_char_literal(&chars[i..]) {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The length of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`)
/// starting here, when one does (`before`: the character before it).
fn raw_string_len(chars: &[char], before: Option<char>) -> Option<usize> {
    if before.is_some_and(|b| b.is_alphanumeric() || b == '_') {
        return None;
    }
    let start = usize::from(chars.first() == Some(&'b'));
    if chars.get(start) != Some(&'r') {
        return None;
    }
    let hashes = chars[start + 1..].iter().take_while(|&&c| c == '#').count();
    let open = start + 1 + hashes;
    if chars.get(open) != Some(&'"') {
        return None;
    }
    let mut i = open + 1;
    while i < chars.len() {
        if chars[i] == '"'
            && chars[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(chars.len())
}

/// A quote that opens a character literal (`'a'`, `'\n'`, `'{'`), not a
/// lifetime (`'a`, `'static`).
fn is_char_literal(chars: &[char]) -> bool {
    match chars.get(1) {
        Some('\\') => true,
        Some(_) => chars.get(2) == Some(&'\''),
        None => false,
    }
}

/// The code with every `#[cfg(test)]` (or `#[cfg(all(test, ...))]`) item
/// removed: up to its `;` or its closing brace.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = find_test_attribute(rest) {
        out.push_str(&rest[..at.start]);
        let item = &rest[at.end..];
        let semicolon = item.find(';');
        let brace = item.find('{');
        let end = match (semicolon, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => b + closing_brace(&item[b..]),
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

fn find_test_attribute(code: &str) -> Option<std::ops::Range<usize>> {
    ["#[cfg(test)]", "#[cfg(all(test,"]
        .iter()
        .filter_map(|a| code.find(a).map(|i| (i, *a)))
        .min()
        .map(|(i, a)| {
            let end = code[i..].find(']').map_or(i + a.len(), |j| i + j + 1);
            i..end
        })
}

/// The length up to and including the brace closing the one `code` opens.
fn closing_brace(code: &str) -> usize {
    let mut depth = 0;
    for (i, c) in code.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// A cycle of modules (first repeated at the end), if the edges hold one.
fn find_cycle(
    edges: &BTreeMap<(String, String), String>,
    modules: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // 0: not seen, 1: on the path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut path: Vec<&str> = Vec::new();
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(m, 1);
        path.push(m);
        for &n in next.get(m).into_iter().flatten() {
            match state.get(n).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|p| *p == n).unwrap();
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|s| s.to_string()).collect();
                    cycle.push(n.to_string());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(n, next, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(m, 2);
        None
    }
    for m in modules {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(m, &next, &mut state, &mut path) {
                return Some(c);
            }
        }
    }
    None
}

/// A cycle is found and named, and an acyclic graph passes.
#[test]
fn the_checker_finds_a_cycle() {
    let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let mut edges = BTreeMap::new();
    edges.insert(("a".to_string(), "b".to_string()), "src/a.rs".to_string());
    edges.insert(("b".to_string(), "c".to_string()), "src/b.rs".to_string());
    assert_eq!(find_cycle(&edges, &modules), None);
    edges.insert(("c".to_string(), "a".to_string()), "src/c.rs".to_string());
    assert_eq!(
        find_cycle(&edges, &modules),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
}

//! The classifier against CPython on real files: edits of the machine's
//! Python standard library, each judged by fpcheck and by Python itself
//! (`tokenize` for layout, `ast` without docstrings, `compile` for what does
//! not parse). Files are sampled with a fixed seed; set
//! `FPCHECK_CLASSIFY_CORPUS=all` to run every file (bench/ does).

use std::path::{Path, PathBuf};
use std::process::Command;

use fpcheck::classify::{compare, compare_parsed, ChangeKind, Classifier};
use tree_sitter::Node;

/// Files sampled by default, and edits tried per file and per kind.
const SAMPLE: usize = 30;
const MAX_BYTES: usize = 32 * 1024;

/// A deterministic generator (SplitMix64): the same edits on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.below(items.len())])
    }
}

/// An edit and what it should be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Intent {
    Cosmetic,
    Code,
}

struct Edit {
    what: &'static str,
    intent: Intent,
    text: Vec<u8>,
}

/// Python's own judgement of a pair.
#[derive(Debug, serde::Deserialize)]
struct Oracle {
    /// The edited file does not compile.
    error: bool,
    /// Token streams equal once comments and NL are dropped.
    tokens: bool,
    /// ASTs equal once docstrings are dropped.
    nodoc: bool,
}

const ORACLE: &str = r#"
import ast, io, json, sys, tokenize
SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING}
def toks(b):
    out = []
    for t in tokenize.tokenize(io.BytesIO(b).readline):
        if t.type in SKIP: continue
        out.append((t.type, '' if t.type in (tokenize.INDENT, tokenize.DEDENT) else t.string))
    return out
def nodoc(tree):
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            b = n.body
            if b and isinstance(b[0], ast.Expr) and isinstance(b[0].value, ast.Constant) and isinstance(b[0].value.value, str):
                n.body = b[1:]
    return ast.dump(tree)
cache = {}
for line in sys.stdin:
    a, b = line.rstrip('\n').split('\t')
    old, new = open(a, 'rb').read(), open(b, 'rb').read()
    if a not in cache:
        cache.clear()
        try:
            cache[a] = (toks(old), nodoc(ast.parse(old)))
        except Exception:
            cache[a] = (None, None)
    old_toks, old_nodoc = cache[a]
    r = {'error': False, 'tokens': False, 'nodoc': False}
    try:
        compile(new, b, 'exec', dont_inherit=True)
        tb = ast.parse(new)
    except (SyntaxError, ValueError):
        r['error'] = True
    if not r['error']:
        try:
            r['tokens'] = old_toks == toks(new)
        except (SyntaxError, tokenize.TokenError):
            pass
        r['nodoc'] = old_nodoc == nodoc(tb)
    print(json.dumps(r), flush=True)
"#;

fn stdlib() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_path('stdlib'))",
        ])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (out.status.success() && path.join("os.py").is_file()).then_some(path)
}

fn python_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        let name = e.file_name();
        if kind.is_dir() && name != "site-packages" && name != "__pycache__" {
            python_files(&path, out);
        } else if kind.is_file() && path.extension().is_some_and(|x| x == "py") {
            out.push(path);
        }
    }
}

/// Files of the corpus that CPython compiles, sampled with the seed.
fn corpus(root: &Path, rng: &mut Rng) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    python_files(root, &mut all);
    all.sort();
    let everything = std::env::var("FPCHECK_CLASSIFY_CORPUS").is_ok_and(|v| v == "all");
    let mut picked = Vec::new();
    let mut order: Vec<usize> = (0..all.len()).collect();
    if !everything {
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
    }
    for i in order {
        let Ok(bytes) = std::fs::read(&all[i]) else {
            continue;
        };
        if everything || (bytes.len() <= MAX_BYTES && bytes.len() > 200) {
            picked.push((all[i].clone(), bytes));
        }
        if !everything && picked.len() >= SAMPLE * 2 {
            break;
        }
    }
    picked
}

/// Leaves of the tree in order, strings as one leaf (their insides are
/// never edited by a "whitespace" edit).
fn leaves<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    if node.child_count() == 0 || node.kind() == "string" {
        out.push(node);
        return;
    }
    let mut c = node.walk();
    for child in node.children(&mut c) {
        leaves(child, out);
    }
}

fn all_nodes<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    out.push(node);
    let mut c = node.walk();
    for child in node.children(&mut c) {
        all_nodes(child, out);
    }
}

fn splice(src: &[u8], start: usize, end: usize, with: &[u8]) -> Vec<u8> {
    let mut v = src[..start].to_vec();
    v.extend_from_slice(with);
    v.extend_from_slice(&src[end..]);
    v
}

fn line_start(src: &[u8], at: usize) -> usize {
    src[..at]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1)
}

struct Parsed<'s> {
    src: &'s [u8],
    leaves: Vec<Node<'s>>,
    nodes: Vec<Node<'s>>,
    /// Whether each byte is strictly inside a string literal.
    strings: Vec<bool>,
}

impl Parsed<'_> {
    fn in_string(&self, at: usize) -> bool {
        self.strings.get(at).copied().unwrap_or(false)
    }

    /// Line starts that are not inside a string and not after a backslash
    /// continuation.
    fn free_line_starts(&self) -> Vec<usize> {
        let mut out = vec![0];
        for (i, b) in self.src.iter().enumerate() {
            if *b == b'\n' && i + 1 < self.src.len() {
                let prev = self.src[..i].trim_ascii_end();
                if !self.in_string(i + 1) && !prev.ends_with(b"\\") {
                    out.push(i + 1);
                }
            }
        }
        out
    }

    fn docstrings(&self) -> Vec<Node<'_>> {
        self.nodes
            .iter()
            .filter(|n| matches!(n.kind(), "module" | "block"))
            .filter(|n| {
                n.kind() == "module"
                    || n.parent().is_some_and(|p| {
                        matches!(p.kind(), "function_definition" | "class_definition")
                    })
            })
            .filter_map(|body| {
                let mut c = body.walk();
                let first = body.named_children(&mut c).find(|n| n.kind() != "comment");
                first
            })
            .filter(|s| s.kind() == "expression_statement" && s.child_count() == 1)
            .filter_map(|s| s.child(0))
            .filter(|s| s.kind() == "string")
            .collect()
    }
}

fn cosmetic(p: &Parsed<'_>, rng: &mut Rng) -> Option<Edit> {
    let src = p.src;
    let edit = |what, text| {
        Some(Edit {
            what,
            intent: Intent::Cosmetic,
            text,
        })
    };
    match rng.below(7) {
        0 => {
            let at = rng.pick(&p.free_line_starts())?;
            let indent = " ".repeat(rng.below(9));
            edit(
                "comment line",
                splice(
                    src,
                    at,
                    at,
                    format!("{indent}# fpcheck was here\n").as_bytes(),
                ),
            )
        }
        1 => {
            let at = rng.pick(&p.free_line_starts())?;
            let blank = ["\n", "\n\n", "   \n", "\t\n"][rng.below(4)];
            edit("blank line", splice(src, at, at, blank.as_bytes()))
        }
        2 => {
            // A comment at the end of a line that does not continue.
            let ends: Vec<usize> = p
                .free_line_starts()
                .into_iter()
                .filter(|s| *s > 0)
                .map(|s| s - 1)
                .filter(|e| {
                    let prev = src[..*e].trim_ascii_end();
                    !prev.ends_with(b"\\") && !p.in_string(*e)
                })
                .collect();
            let at = rng.pick(&ends)?;
            edit("trailing comment", splice(src, at, at, b"  # note"))
        }
        3 | 4 => {
            // Spaces between two tokens of a line, or a newline between two
            // tokens inside brackets.
            let mut depth = 0i32;
            let mut spots = Vec::new();
            for w in p.leaves.windows(2) {
                let t = &src[w[0].start_byte()..w[0].end_byte()];
                match t {
                    b"(" | b"[" | b"{" => depth += 1,
                    b")" | b"]" | b"}" => depth -= 1,
                    _ => {}
                }
                let (end, next) = (w[0].end_byte(), w[1].start_byte());
                let same_line = !src[end..next].contains(&b'\n');
                let real =
                    !w[0].is_extra() && !w[1].is_extra() && w[0].kind() != "line_continuation";
                if same_line && real && !p.in_string(end) && next >= end {
                    spots.push((end, depth > 0));
                }
            }
            let (at, bracketed) = rng.pick(&spots)?;
            if bracketed && rng.below(2) == 0 {
                let indent = " ".repeat(rng.below(13));
                edit(
                    "newline in brackets",
                    splice(src, at, at, format!("\n{indent}").as_bytes()),
                )
            } else {
                edit("spaces between tokens", splice(src, at, at, b"   "))
            }
        }
        5 => {
            // Re-indent a whole block by two more spaces.
            if src.windows(2).any(|w| w == b"\n\t") {
                return None;
            }
            let blocks: Vec<&Node<'_>> = p
                .nodes
                .iter()
                .filter(|n| n.kind() == "block" && n.start_position().row < n.end_position().row)
                .filter(|n| line_start(src, n.start_byte()) < n.start_byte())
                .collect();
            let block = rng.pick(&blocks)?;
            let (from, to) = (line_start(src, block.start_byte()), block.end_byte());
            let mut out = Vec::new();
            let mut at_line_start = true;
            for (i, b) in src.iter().enumerate() {
                if at_line_start && i >= from && i < to && !p.in_string(i) && *b != b'\n' {
                    out.extend_from_slice(b"  ");
                }
                out.push(*b);
                at_line_start = *b == b'\n';
            }
            edit("re-indented block", out)
        }
        _ => {
            let doc = rng.pick(&p.docstrings())?;
            let text = &src[doc.start_byte()..doc.end_byte()];
            let quotes = text.iter().position(|b| *b == b'"' || *b == b'\'')?;
            let q = if text[quotes..].starts_with(b"\"\"\"") || text[quotes..].starts_with(b"'''") {
                3
            } else {
                1
            };
            let at = doc.start_byte() + quotes + q;
            edit(
                "docstring text",
                splice(src, at, at, b"Edited by fpcheck. "),
            )
        }
    }
}

fn code(p: &Parsed<'_>, rng: &mut Rng) -> Option<Edit> {
    let src = p.src;
    let text = |n: &Node<'_>| &src[n.start_byte()..n.end_byte()];
    let edit = |what, text| {
        Some(Edit {
            what,
            intent: Intent::Code,
            text,
        })
    };
    let of_kind = |kinds: &[&str]| -> Vec<Node<'_>> {
        p.leaves
            .iter()
            .filter(|n| kinds.contains(&n.kind()))
            .copied()
            .collect()
    };
    match rng.below(5) {
        0 => {
            let n = rng.pick(&of_kind(&["integer"]))?;
            let t = std::str::from_utf8(text(&n)).ok()?;
            let new = match t.parse::<u64>() {
                Ok(v) if !t.starts_with('0') => (v + 1).to_string(),
                _ if t == "0" => "1".to_string(),
                _ => return None,
            };
            edit(
                "changed number",
                splice(src, n.start_byte(), n.end_byte(), new.as_bytes()),
            )
        }
        1 => {
            let n = rng.pick(&of_kind(&["identifier"]))?;
            edit(
                "changed name",
                splice(src, n.end_byte(), n.end_byte(), b"_x"),
            )
        }
        2 => {
            let swaps: [(&str, &str); 8] = [
                ("+", "-"),
                ("-", "+"),
                ("*", "//"),
                ("==", "!="),
                ("!=", "=="),
                ("<", "<="),
                ("and", "or"),
                ("or", "and"),
            ];
            let ops: Vec<Node<'_>> = p
                .leaves
                .iter()
                .filter(|n| !n.is_named() && swaps.iter().any(|(a, _)| text(n) == a.as_bytes()))
                .copied()
                .collect();
            let n = rng.pick(&ops)?;
            let (_, to) = swaps.iter().find(|(a, _)| text(&n) == a.as_bytes())?;
            edit(
                "changed operator",
                splice(src, n.start_byte(), n.end_byte(), to.as_bytes()),
            )
        }
        3 => {
            // Swap two adjacent one-line statements of a block.
            let mut pairs = Vec::new();
            for body in p
                .nodes
                .iter()
                .filter(|n| matches!(n.kind(), "block" | "module"))
            {
                let mut c = body.walk();
                let stmts: Vec<Node<'_>> = body
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "comment")
                    .collect();
                for w in stmts.windows(2) {
                    let one_line = |n: &Node<'_>| n.start_position().row == n.end_position().row;
                    let starts = |n: &Node<'_>| line_start(src, n.start_byte());
                    if one_line(&w[0])
                        && one_line(&w[1])
                        && w[1].start_position().row == w[0].end_position().row + 1
                        && src[starts(&w[0])..w[0].start_byte()]
                            == src[starts(&w[1])..w[1].start_byte()]
                        && text(&w[0]) != text(&w[1])
                    {
                        pairs.push((w[0], w[1]));
                    }
                }
            }
            let (a, b) = rng.pick(&pairs)?;
            let mut out = src[..a.start_byte()].to_vec();
            out.extend_from_slice(text(&b));
            out.extend_from_slice(&src[a.end_byte()..b.start_byte()]);
            out.extend_from_slice(text(&a));
            out.extend_from_slice(&src[b.end_byte()..]);
            edit("moved statement", out)
        }
        _ => {
            let defaults: Vec<Node<'_>> = p
                .nodes
                .iter()
                .filter(|n| matches!(n.kind(), "default_parameter" | "typed_default_parameter"))
                .filter_map(|n| n.child_by_field_name("value"))
                .collect();
            let v = rng.pick(&defaults)?;
            let new: &[u8] = if text(&v) == b"None" { b"0" } else { b"None" };
            edit(
                "changed default argument",
                splice(src, v.start_byte(), v.end_byte(), new),
            )
        }
    }
}

#[test]
fn stdlib_edits_agree_with_cpython() {
    let Some(root) = stdlib() else {
        eprintln!(
            "SKIPPED stdlib_edits_agree_with_cpython: no python3 standard library on this machine"
        );
        return;
    };
    let mut rng = Rng(0x5eed_0017);
    let files = corpus(&root, &mut rng);
    let work = tempfile::tempdir().unwrap();
    let mut classifier = Classifier::new();
    let mut ts = tree_sitter::Parser::new();
    ts.set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();

    // Files and edits, then one Python process judges them all.
    let mut cases: Vec<(PathBuf, &'static str, Intent, ChangeKind)> = Vec::new();
    let mut pairs = String::new();
    let mut used = 0;
    for (path, bytes) in &files {
        let Some(tree) = ts.parse(bytes, None) else {
            continue;
        };
        let root_node = tree.root_node();
        if root_node.has_error() {
            continue;
        }
        // The original is parsed once for all its edits.
        let Some(original) = classifier.stream(bytes) else {
            continue;
        };
        let parsed = classifier.parse(bytes.clone(), None);
        let mut p = Parsed {
            src: bytes,
            leaves: Vec::new(),
            nodes: Vec::new(),
            strings: Vec::new(),
        };
        leaves(root_node, &mut p.leaves);
        all_nodes(root_node, &mut p.nodes);
        p.strings = vec![false; bytes.len()];
        for n in p.nodes.iter().filter(|n| n.kind() == "string") {
            p.strings[n.start_byte() + 1..n.end_byte()].fill(true);
        }
        let orig = work.path().join(format!("{used}.py"));
        std::fs::write(&orig, bytes).unwrap();
        for k in 0..8 {
            let made = if k % 2 == 0 {
                cosmetic(&p, &mut rng)
            } else {
                code(&p, &mut rng)
            };
            let Some(edit) = made else { continue };
            let fresh = match classifier.stream(&edit.text) {
                Some(edited) => compare(&original, &edited),
                None => ChangeKind::Code,
            };
            // What fpcheck runs: the edited side parsed incrementally from
            // the original's tree; it must agree with a fresh parse.
            let edited = classifier.parse(edit.text.clone(), Some(&parsed));
            let got = compare_parsed(&parsed, &edited);
            assert_eq!(
                got,
                fresh,
                "{}: {}: incremental parse differs",
                path.display(),
                edit.what
            );
            let edited = work.path().join(format!("{used}-{k}.py"));
            std::fs::write(&edited, &edit.text).unwrap();
            pairs.push_str(&format!("{}\t{}\n", orig.display(), edited.display()));
            cases.push((path.clone(), edit.what, edit.intent, got));
        }
        used += 1;
        if files.len() > SAMPLE
            && used >= SAMPLE
            && std::env::var("FPCHECK_CLASSIFY_CORPUS").is_err()
        {
            break;
        }
    }
    assert!(
        used >= SAMPLE.min(10),
        "too few stdlib files parsed: {used}"
    );

    let started = std::time::Instant::now();
    let verdicts = run_oracle(&pairs);
    eprintln!("oracle: {:?}", started.elapsed());
    assert_eq!(verdicts.len(), cases.len(), "one verdict per pair");
    let mut failures = Vec::new();
    let (mut cosmetic_seen, mut code_seen) = (0, 0);
    let mut truths = std::collections::BTreeMap::new();
    for ((path, what, intent, got), o) in cases.iter().zip(&verdicts) {
        // What Python says the edit is.
        let truth = if o.error {
            ChangeKind::Code
        } else if o.tokens {
            ChangeKind::Layout
        } else if o.nodoc {
            ChangeKind::Docstrings
        } else {
            ChangeKind::Code
        };
        *truths.entry(format!("{truth:?}")).or_insert(0) += 1;
        match intent {
            Intent::Cosmetic => cosmetic_seen += 1,
            Intent::Code => code_seen += 1,
        }
        // Never cosmetic when Python says code; never a weaker claim than
        // the truth for edits that keep tokens equal; docstring edits of
        // the generator are told apart from layout exactly.
        let ok = match (truth, got) {
            (ChangeKind::Code, k) => *k == ChangeKind::Code,
            (ChangeKind::Layout, k) => *k == ChangeKind::Layout,
            (ChangeKind::Docstrings, k) => {
                *k == ChangeKind::Docstrings || (*intent == Intent::Code && *k == ChangeKind::Code)
            }
        };
        if !ok || (*intent == Intent::Code && got.is_cosmetic()) {
            failures.push(format!(
                "{}: {what}: python says {truth:?}, fpcheck {got:?}",
                path.display()
            ));
        }
    }
    eprintln!(
        "classify corpus: {used} files, {cosmetic_seen} cosmetic and {code_seen} code edits (CPython says {truths:?}), {} disagreements",
        failures.len()
    );
    assert!(
        cosmetic_seen >= used * 2 && code_seen >= used * 2,
        "too few edits were made"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn run_oracle(pairs: &str) -> Vec<Oracle> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args(["-c", ORACLE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = pairs.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "the oracle failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------
// Reports on real repositories.

use serde_json::{json, Value};

use crate::support::TestRepo;

const SERVER: &str = "\"\"\"The server.\"\"\"\nimport os\n\n\ndef main(port=8080):\n    \"\"\"Serve.\"\"\"\n    return os.getpid() + port  # the pid\n";
const TOOLS: &str = "def tool(x):\n    return x * 2\n";

/// v1.0.0 with two runtime files; `edit` makes v1.1.0 from it.
fn release(edit: impl FnOnce(&TestRepo)) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", SERVER)
        .write("src/tools.py", TOOLS)
        .write("README.md", "# readme\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    edit(&repo);
    repo.write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    repo
}

fn json_of(repo: &TestRepo, extra: &[&str]) -> Value {
    let mut args = vec!["v1.0.0..v1.1.0", "--format", "json"];
    args.extend_from_slice(extra);
    let run = repo.fpcheck(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn a_comment_only_release_is_an_avoidable_restart() {
    let repo = release(|r| {
        r.write(
            "src/server.py",
            SERVER.replace("# the pid", "# the process id, plus the port\n\n"),
        );
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "code_changed");
    assert_eq!(j["avoidable"], true);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/server.py", "status": "modified", "change_kind": "layout"}])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(
        table.stdout.contains("  M  src/server.py  (layout)\n"),
        "{}",
        table.stdout
    );
    assert!(table.stdout.contains(
        "\nthis restart is avoidable: 1 file changed only comments or docstrings; hold it for the next code release\n"
    ), "{}", table.stdout);
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "markdown"]);
    assert!(md.stdout.contains(
        "**This restart is avoidable:** 1 file changed only comments or docstrings; hold it for the next code release."
    ), "{}", md.stdout);
    assert!(
        md.stdout
            .contains("| modified (layout) | <code>src/server.py</code> |"),
        "{}",
        md.stdout
    );
    // The verdict stays the gate's.
    assert_eq!(table.code, 0);
}

#[test]
fn a_file_over_the_read_limit_is_code_without_being_parsed() {
    // A 64 MiB comment: more than classification reads from a blob (a parse
    // would take memory many times its size), so the change counts as code.
    let big = format!("x = 1\n#{}\n", "a".repeat(64 << 20));
    let repo = TestRepo::new();
    repo.write("src/big.py", &big)
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write("src/big.py", big.replacen("#a", "#b", 1))
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["avoidable"], false);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/big.py", "status": "modified", "change_kind": "code"}])
    );
}

#[test]
fn docstrings_and_layout_in_two_files_are_avoidable_together() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("Serve.", "Serve forever."))
            .write("src/tools.py", "def tool( x ):\n\n    return x*2\n");
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], true);
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/server.py", "status": "modified", "change_kind": "docstrings"},
            {"path": "src/tools.py", "status": "modified", "change_kind": "layout"}
        ])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(table.stdout.contains(
        "this restart is avoidable: 2 files changed only comments or docstrings; hold them for the next code release\n"
    ), "{}", table.stdout);
}

#[test]
fn one_code_change_makes_the_restart_necessary() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"))
            .write("src/tools.py", TOOLS.replace("2", "3"));
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], false);
    assert_eq!(
        j["changes"]["runtime"],
        json!([
            {"path": "src/server.py", "status": "modified", "change_kind": "layout"},
            {"path": "src/tools.py", "status": "modified", "change_kind": "code"}
        ])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0"]);
    assert!(!table.stdout.contains("avoidable"), "{}", table.stdout);
    let md = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "markdown"]);
    assert!(!md.stdout.contains("avoidable"), "{}", md.stdout);
}

#[test]
fn additions_renames_links_and_unparsable_files_are_code() {
    // A new module next to a comment change.
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"))
            .write("src/new.py", "# only a comment\n");
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["avoidable"], false);
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["changes"]["runtime"][0]["status"], "added");

    // A rename with a comment edit: the module's import path changed.
    let repo = release(|r| {
        r.remove("src/server.py")
            .write("src/app.py", SERVER.replace("# the pid", "# pid"));
    });
    let j = json_of(&repo, &[]);
    assert_eq!(j["changes"]["runtime"][0]["status"], "renamed");
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["avoidable"], false);

    // A file that does not parse, on either side, whatever the edit.
    let repo = TestRepo::new();
    repo.write("src/broken.py", "def f(:\n    pass\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write("src/broken.py", "def f(:\n    pass  # still broken\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "code");
    assert_eq!(j["avoidable"], false);

    // A runtime link pointed elsewhere, both targets only differing by a
    // comment: the link is code.
    let repo = TestRepo::new();
    repo.write("src/a.py", "x = 1\n")
        .write("src/b.py", "x = 1  # b\n")
        .symlink("src/link.py", "a.py")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.symlink("src/link.py", "b.py")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    let j = json_of(&repo, &[]);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/link.py", "status": "modified", "change_kind": "code"}])
    );
    assert_eq!(j["avoidable"], false);
}

#[test]
fn force_restart_makes_nothing_avoidable() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    // The same release, with force_restart on.
    repo.write(
        "version.json",
        "{\"version\": \"1.2.0\", \"force_restart\": true}\n",
    )
    .write("src/server.py", SERVER.replace("# the pid", "# the pid!"));
    repo.commit("1.2.0");
    repo.tag("v1.2.0");
    let run = repo.fpcheck(&["v1.1.0..v1.2.0", "--format", "json"]);
    let j = run.json();
    assert_eq!(j["changes"]["runtime"][0]["change_kind"], "layout");
    assert_eq!(j["avoidable"], false);
}

#[test]
fn no_classify_leaves_the_report_as_it_was() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    let j = json_of(&repo, &["--no-classify"]);
    assert_eq!(j["avoidable"], Value::Null);
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/server.py", "status": "modified"}])
    );
    let table = repo.fpcheck(&["v1.0.0..v1.1.0", "--no-classify"]);
    assert!(
        table.stdout.contains("  M  src/server.py\n"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("avoidable"), "{}", table.stdout);
}

#[test]
fn the_working_tree_is_classified_before_committing() {
    let repo = release(|_| {});
    repo.write("src/tools.py", "# Tools.\ndef tool(x):\n    return x * 2\n");
    let run = repo.fpcheck(&["v1.1.0..", "--worktree", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        j["changes"]["runtime"],
        json!([{"path": "src/tools.py", "status": "modified", "change_kind": "layout"}])
    );
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["avoidable"], true);
}

#[test]
fn history_counts_and_marks_avoidable_restarts() {
    let repo = release(|r| {
        r.write("src/server.py", SERVER.replace("# the pid", "# pid"));
    });
    let next = |version: &str, edit: &dyn Fn(&TestRepo)| {
        edit(&repo);
        repo.write("version.json", format!("{{\"version\": \"{version}\"}}\n"));
        repo.commit(version);
        repo.tag(&format!("v{version}"));
    };
    next("1.2.0", &|r| {
        r.write("src/tools.py", TOOLS.replace("2", "4"));
    });
    next("1.3.0", &|r| {
        r.write("src/server.py", SERVER.replace("Serve.", "Serve well."))
            .write(
                "src/tools.py",
                format!("# Tools.\n{}", TOOLS.replace("2", "4")),
            );
    });
    next("1.4.0", &|r| {
        r.write("README.md", "# more\n");
    });
    next("1.5.0", &|r| {
        r.write("src/extra.py", "\n");
    });

    let run = repo.fpcheck(&["history", "--format", "json", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    let flags: Vec<Value> = j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| json!([s["to"], s["restart_required"], s["avoidable"]]))
        .collect();
    assert_eq!(
        flags,
        vec![
            json!(["v1.1.0", true, true]),
            json!(["v1.2.0", true, false]),
            json!(["v1.3.0", true, true]),
            json!(["v1.4.0", false, false]),
            json!(["v1.5.0", true, false]),
        ]
    );
    assert_eq!(j["summary"]["avoidable_restarts"], 2);
    assert_eq!(j["summary"]["restarts_forced"], 4);

    let table = repo.fpcheck(&["history", "--no-cache"]);
    assert!(
        table
            .stdout
            .contains(" 2 restarts were forced only by comments or docstrings (avoidable)."),
        "{}",
        table.stdout
    );
    // Two rows and the summary (the reason cell may wrap).
    assert_eq!(
        table.stdout.matches("(avoidable)").count(),
        3,
        "{}",
        table.stdout
    );
    let html = repo.fpcheck(&["history", "--no-cache", "--format", "html"]);
    assert_eq!(html.stdout.matches("<rect class=\"avoidable\"").count(), 2);
    assert!(html
        .stdout
        .contains("<b>2</b>avoidable (comments or docstrings only)"));
    let md = repo.fpcheck(&["history", "--no-cache", "--format", "markdown"]);
    assert!(
        md.stdout
            .contains("**2** restarts were forced only by comments or docstrings (avoidable)."),
        "{}",
        md.stdout
    );

    let off = repo
        .fpcheck(&["history", "--format", "json", "--no-cache", "--no-classify"])
        .json();
    assert_eq!(off["summary"]["avoidable_restarts"], Value::Null);
    assert!(off["releases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["avoidable"].is_null()));
    let html = repo.fpcheck(&["history", "--no-cache", "--no-classify", "--format", "html"]);
    assert!(!html.stdout.contains("avoidable"), "{}", html.stdout);
}

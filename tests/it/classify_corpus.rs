//! The classifier against CPython on real files: edits of the machine's
//! Python standard library (`classify_edits.rs`), each judged by fpcheck and
//! by Python itself (`tokenize` for layout, `ast` without docstrings,
//! `compile` for what does not parse). The default test samples 30 files
//! with a fixed seed; `whole_stdlib_agrees_with_cpython` (ignored: minutes)
//! takes every file, on every core, one Python judge per worker and batch:
//!
//! ```text
//! CARGO_PROFILE_DEV_OPT_LEVEL=2 cargo test --locked --test it \
//!     classify_corpus::whole -- --ignored --nocapture
//! ```
//!
//! `FPCHECK_CLASSIFY_CORPUS=all` makes the default test take every file too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use fpcheck::classify::{compare, compare_parsed, ChangeKind, Classifier};

use crate::classify_edits::{code, cosmetic, Intent, Parsed, Rng};

/// Files used by the sampled test, and the largest file it samples.
const SAMPLE: usize = 30;
const MAX_BYTES: usize = 32 * 1024;
/// Edits tried per file (alternately cosmetic and code).
const EDITS_PER_FILE: usize = 8;
/// Files judged by one Python process (bounds the edited copies on disk).
const BATCH: usize = 40;
const SEED: u64 = 0x5eed_0017;

/// Python's own judgement of a pair.
#[derive(Debug, serde::Deserialize)]
struct Oracle {
    /// The original file does not compile: the pair says nothing.
    original_error: bool,
    /// The edited file does not compile.
    error: bool,
    /// Token streams equal once comments and NL are dropped.
    tokens: bool,
    /// ASTs equal once docstrings are dropped.
    nodoc: bool,
}

/// CPython's view of a change, in Python, shared by the classifier's tests
/// that ask it: `toks(bytes)`, the tokens once comments, blank lines and
/// indentation widths are left out (layout), and `nodoc(tree)`, the syntax
/// tree without docstrings (docstrings).
pub const CPYTHON_VIEW: &str = r#"
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
"#;

const ORACLE: &str = r#"
sys.setrecursionlimit(10000)
def judge(src, name):
    compile(src, name, 'exec', dont_inherit=True)
    return ast.parse(src)
cache = {}
for line in sys.stdin:
    a, b = line.rstrip('\n').split('\t')
    old, new = open(a, 'rb').read(), open(b, 'rb').read()
    if a not in cache:
        cache.clear()
        try:
            cache[a] = (toks(old), nodoc(judge(old, a)))
        except Exception:
            cache[a] = None
    r = {'original_error': cache[a] is None, 'error': False, 'tokens': False, 'nodoc': False}
    if cache[a] is not None:
        old_toks, old_nodoc = cache[a]
        try:
            tb = judge(new, b)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            r['error'] = True
        if not r['error']:
            try:
                r['tokens'] = old_toks == toks(new)
            except (SyntaxError, tokenize.TokenError):
                pass
            r['nodoc'] = old_nodoc == nodoc(tb)
    print(json.dumps(r), flush=True)
"#;

#[test]
fn stdlib_edits_agree_with_cpython() {
    let everything = std::env::var("FPCHECK_CLASSIFY_CORPUS").is_ok_and(|v| v == "all");
    check_corpus(everything);
}

#[test]
#[ignore = "the whole standard library takes minutes: run with --ignored"]
fn whole_stdlib_agrees_with_cpython() {
    check_corpus(true);
}

/// Edits files of the standard library (all, or a sample) and checks every
/// verdict against CPython's; panics with the disagreements.
fn check_corpus(everything: bool) {
    let Some(root) = stdlib() else {
        eprintln!("SKIPPED classify corpus: no python3 standard library on this machine");
        return;
    };
    let started = std::time::Instant::now();
    let mut all = Vec::new();
    python_files(&root, &mut all);
    all.sort();
    let files = if everything {
        all.into_iter().enumerate().collect()
    } else {
        sample(all)
    };
    let threads = if everything {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    };
    let tally = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<(usize, PathBuf)> =
                    files.iter().skip(t).step_by(threads).cloned().collect();
                s.spawn(move || run_files(&mine))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a corpus worker panicked"))
            .fold(Tally::default(), Tally::merge)
    });
    eprintln!(
        "classify corpus: {} files of {} ({} not parsed by tree-sitter, {} rejected by CPython), \
         {} cosmetic and {} code edits (CPython says {:?}), {} disagreements, {} cosmetic edits \
         called code because fpcheck does not parse the edited file, {:.1?} on {threads} threads",
        tally.used,
        files.len(),
        tally.unparsed,
        tally.rejected,
        tally.cosmetic_edits,
        tally.code_edits,
        tally.truths,
        tally.failures.len(),
        tally.stricter,
        started.elapsed(),
    );
    let minimum = if everything { 1000 } else { SAMPLE };
    assert!(
        tally.used >= minimum.min(files.len() / 2),
        "too few stdlib files used: {}",
        tally.used
    );
    assert!(
        tally.cosmetic_edits >= tally.used * 2 && tally.code_edits >= tally.used * 2,
        "too few edits were made"
    );
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
}

/// The sampled files: shuffled with the seed, small ones, enough that
/// [`SAMPLE`] of them parse (with their index in the sorted list).
fn sample(all: Vec<PathBuf>) -> Vec<(usize, PathBuf)> {
    let mut rng = Rng(SEED);
    let mut order: Vec<usize> = (0..all.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut classifier = Classifier::new();
    let mut picked = Vec::new();
    for i in order {
        let Ok(bytes) = std::fs::read(&all[i]) else {
            continue;
        };
        if bytes.len() <= MAX_BYTES && bytes.len() > 200 && classifier.stream(&bytes).is_some() {
            picked.push((i, all[i].clone()));
        }
        if picked.len() == SAMPLE {
            break;
        }
    }
    picked
}

/// What a worker saw.
#[derive(Default)]
struct Tally {
    /// Files edited and judged.
    used: usize,
    /// Files tree-sitter does not parse (or fpcheck refuses): not edited.
    unparsed: usize,
    /// Files CPython does not compile as they are: their pairs say nothing.
    rejected: usize,
    cosmetic_edits: usize,
    code_edits: usize,
    /// Cosmetic edits (CPython says) called `code` because fpcheck finds
    /// that the edited file does not parse: tree-sitter reports an error
    /// (a comment or a bracketed line indented less than its block), or the
    /// indentation check, stricter than Python's by design, refuses it.
    stricter: usize,
    truths: BTreeMap<String, usize>,
    failures: Vec<String>,
}

impl Tally {
    fn merge(mut self, other: Tally) -> Tally {
        self.used += other.used;
        self.unparsed += other.unparsed;
        self.rejected += other.rejected;
        self.cosmetic_edits += other.cosmetic_edits;
        self.code_edits += other.code_edits;
        self.stricter += other.stricter;
        for (k, v) in other.truths {
            *self.truths.entry(k).or_insert(0) += v;
        }
        self.failures.extend(other.failures);
        self
    }
}

/// One pair waiting for its verdict.
struct Case {
    path: PathBuf,
    what: &'static str,
    intent: Intent,
    got: ChangeKind,
    /// fpcheck finds that the edited file parses.
    parses: bool,
}

/// Edits and judges `files` (index in the sorted list, path), a batch at a
/// time. Each file's edits come from its own seed, so the edits do not
/// depend on how files are spread over threads.
fn run_files(files: &[(usize, PathBuf)]) -> Tally {
    let mut tally = Tally::default();
    let mut classifier = Classifier::new();
    let mut ts = tree_sitter::Parser::new();
    ts.set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    for batch in files.chunks(BATCH) {
        let work = tempfile::tempdir().unwrap();
        let mut cases: Vec<(usize, Case)> = Vec::new();
        let mut pairs = String::new();
        for (n, (index, path)) in batch.iter().enumerate() {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            let Some(tree) = ts
                .parse(&bytes, None)
                .filter(|t| !t.root_node().has_error())
            else {
                tally.unparsed += 1;
                continue;
            };
            // The original is parsed once for all its edits.
            let Some(original) = classifier.stream(&bytes) else {
                tally.unparsed += 1;
                continue;
            };
            let parsed = classifier.parse(bytes.clone(), None);
            let p = Parsed::new(&bytes, tree.root_node());
            let mut rng = Rng(SEED ^ (*index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let orig = work.path().join(format!("{n}.py"));
            std::fs::write(&orig, &bytes).unwrap();
            for k in 0..EDITS_PER_FILE {
                let made = if k % 2 == 0 {
                    cosmetic(&p, &mut rng)
                } else {
                    code(&p, &mut rng)
                };
                let Some(edit) = made else { continue };
                let whole = classifier.stream(&edit.text);
                let valid = whole.is_some();
                let fresh = match whole {
                    Some(edited) => compare(&original, &edited),
                    None => ChangeKind::Code,
                };
                // What fpcheck runs: the edited side parsed incrementally
                // from the original's tree, compared where it changed; it
                // must agree with whole streams of fresh parses.
                let edited = classifier.parse(edit.text.clone(), Some(&parsed));
                let got = compare_parsed(&parsed, &edited);
                assert_eq!(
                    (got, edited.is_valid()),
                    (fresh, valid),
                    "{}: {}: the windowed comparison of an incremental parse differs",
                    path.display(),
                    edit.what
                );
                // The lexer's shortcut history asks first says `code`
                // only where the parser does.
                let shape = fpcheck::classify::proven_code(
                    &std::sync::Arc::new(bytes.clone()),
                    &std::sync::Arc::new(edit.text.clone()),
                );
                assert!(
                    !shape || got == ChangeKind::Code,
                    "{}: {}: the shape says code, the parser {got:?}",
                    path.display(),
                    edit.what
                );
                let edited = work.path().join(format!("{n}-{k}.py"));
                std::fs::write(&edited, &edit.text).unwrap();
                pairs.push_str(&format!("{}\t{}\n", orig.display(), edited.display()));
                cases.push((
                    n,
                    Case {
                        path: path.clone(),
                        what: edit.what,
                        intent: edit.intent,
                        got,
                        parses: valid,
                    },
                ));
            }
        }
        let verdicts = run_oracle(&pairs);
        assert_eq!(verdicts.len(), cases.len(), "one verdict per pair");
        let mut used = std::collections::BTreeSet::new();
        let mut rejected = std::collections::BTreeSet::new();
        for ((n, case), o) in cases.iter().zip(&verdicts) {
            if o.original_error {
                rejected.insert(*n);
                continue;
            }
            used.insert(*n);
            judge(case, o, &mut tally);
        }
        tally.used += used.len();
        tally.rejected += rejected.len();
    }
    tally
}

/// Compares fpcheck's answer for one pair with CPython's.
fn judge(case: &Case, o: &Oracle, tally: &mut Tally) {
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
    *tally.truths.entry(format!("{truth:?}")).or_insert(0) += 1;
    match case.intent {
        Intent::Cosmetic => tally.cosmetic_edits += 1,
        Intent::Code => tally.code_edits += 1,
    }
    // Never cosmetic when Python says code; never a weaker claim than the
    // truth for edits that keep tokens equal; docstring edits of the
    // generator are told apart from layout exactly.
    let got = case.got;
    if truth.is_cosmetic() && got == ChangeKind::Code && !case.parses {
        tally.stricter += 1;
        return;
    }
    let ok = match truth {
        // A module's version string is fpcheck's own kind: Python's
        // tokens and tree call it code, as they call every other value.
        ChangeKind::Code | ChangeKind::Version => {
            got == ChangeKind::Code || got == ChangeKind::Version
        }
        ChangeKind::Layout => got == ChangeKind::Layout,
        ChangeKind::Docstrings => {
            got == ChangeKind::Docstrings
                || (case.intent == Intent::Code && got == ChangeKind::Code)
        }
    };
    if !ok || (case.intent == Intent::Code && got.is_cosmetic()) {
        tally.failures.push(format!(
            "{}: {}: python says {truth:?}, fpcheck {got:?}",
            case.path.display(),
            case.what
        ));
    }
}

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

/// One Python process judges every pair (`old\tnew` lines), in order.
fn run_oracle(pairs: &str) -> Vec<Oracle> {
    use std::io::Write;
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut child = Command::new("python3")
        .args(["-c", &format!("{CPYTHON_VIEW}{ORACLE}")])
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

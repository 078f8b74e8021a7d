//! Hand-picked pairs where Ruff's parser and CPython could part ways, or
//! where a token comparison could hide a change: docstrings on a header's
//! line, after `;`, parenthesised, concatenated, bytes or f-strings;
//! numbers run into keywords; form feeds, tabs and line continuations in
//! indentation; lone `\r`; NFKC identifiers. Each verdict is checked
//! against CPython (`compile`, then `tokenize` for layout and `ast`
//! without docstrings): fpcheck may be stricter, never call code cosmetic.
//! Skipped without python3.

use std::process::{Command, Stdio};

use fpcheck::classify::{classify, ChangeKind};

use crate::classify_corpus::CPYTHON_VIEW;

/// The verdict of each pair, after [`CPYTHON_VIEW`]'s definitions.
const JUDGE: &str = r#"
import warnings
warnings.simplefilter('ignore')
def compiles(b):
    try:
        compile(b, 'x', 'exec', dont_inherit=True)
        return True
    except Exception:
        return False
out = []
for a, b in json.load(sys.stdin):
    a, b = a.encode(), b.encode()
    if not compiles(a):
        out.append('rejected')
    elif not compiles(b):
        out.append('code')
    else:
        try:
            same = toks(a) == toks(b)
        except Exception:
            same = False
        if same:
            out.append('layout')
        else:
            out.append('docstrings' if nodoc(ast.parse(a)) == nodoc(ast.parse(b)) else 'code')
print(json.dumps(out))
"#;

/// (older, newer): each a change some part of the classifier could get
/// wrong.
const PAIRS: &[(&str, &str)] = &[
    // Docstrings.
    ("class A: \"\"\"d\"\"\"\nx = 1\n", "class A: x = 1\n"),
    ("def f(): 'd'\nx = 1\n", "def f(): x = 1\n"),
    ("class A: 'd'\n", "class A: 'e'\n"),
    ("class A: 'd'; x = 1\n", "class A: x = 1\n"),
    ("'d'; x = 1\n", "x = 1\n"),
    ("'d'; x = 1\n", "'e'; x = 1\n"),
    ("('d')\nx = 1\n", "'d'\nx = 1\n"),
    ("'d' 'e'\nx = 1\n", "'de'\nx = 1\n"),
    ("b'd'\nx = 1\n", "b'e'\nx = 1\n"),
    ("f'd'\nx = 1\n", "f'e'\nx = 1\n"),
    ("u'd'\nx = 1\n", "'e'\nx = 1\n"),
    ("def f():\n    'd'\n    'e'\n", "def f():\n    'e'\n"),
    ("def f():\n    'd'\n", "def f():\n    'd'\n    pass\n"),
    (
        "class A:\n    'd'\nx = 1\n",
        "class A:\n    'd'\n    x = 1\n",
    ),
    ("class A:\n    'd'\n    x = 1\n", "class A:\n    x = 1\n"),
    ("if x:\n    'd'\n", "if x:\n    'e'\n"),
    ("x = 1\n'd'\n", "x = 1\n'e'\n"),
    ("'''a'''\n'''b'''\n", "'''b'''\n"),
    ("'''a'''\n\n\n'''b'''\n", "# a\n# b\n# c\n'''b'''\n"),
    ("# coding: latin-1\n'd'\n", "# coding: latin-1\n'e'\n"),
    (
        "def f():\n    'd' \\\n    ; x = 1\n",
        "def f():\n    x = 1\n",
    ),
    (
        "class A:\n  'd'\n  def f(self): 'e'\n",
        "class A:\n  def f(self): pass\n",
    ),
    ("def f():\n    'd'\n", "def f():\n    'd' if 1 else 'e'\n"),
    // Numbers run into keywords, spaces that make or split tokens.
    ("x = 1 if y else 2\n", "x = 1if y else 2\n"),
    ("x = [0x1 for a in b]\n", "x = [0x1for a in b]\n"),
    ("x = 1 .real\n", "x = 1.real\n"),
    ("x = a.b\n", "x = a .b\n"),
    ("x = f'{a}'\n", "x = f'{ a }'\n"),
    ("x = 1\n", "x = 1  # type: int\n"),
    ("e = 1\n", "e\u{301} = 1\n"),
    ("\u{fb01} = 1\n", "fi = 1\n"),
    // Form feeds, tabs, continuations and line breaks.
    ("x = 1\n", "x = 1\x0c\n"),
    ("x = 1\n", "\x0cx = 1\n"),
    ("if x:\n    a\n    b\n", "if x:\n    a\n\x0c    b\n"),
    ("if x:\n    a\n", "if x:\n\ta\n"),
    (
        "if x:\n    if y:\n        b\n",
        "if x:\n    if y:\n\t    b\n",
    ),
    ("x = 1\n", "x = 1 \\\n\n"),
    ("x = 1\n", "x = 1\n\\\n"),
    ("x = 1\ny = 2\n", "x = 1\n\\\ny = 2\n"),
    ("if x:\n    a = 1\nb = 2\n", "if x:\n    a = 1\n\\\nb = 2\n"),
    (
        "if x:\n    a = 1\n    b = 2\n",
        "if x:\n    a = 1\n\\\nb = 2\n",
    ),
    (
        "if x:\n    a = 1\n    b = 2\n",
        "if x:\n    a = 1\n\\\n    b = 2\n",
    ),
    (
        "if x:\n    a = 1\nb = 2\n",
        "if x:\n    a = 1\n    \\\nb = 2\n",
    ),
    (
        "if x:\n    a = 1\nb = 2\n",
        "if x:\n    a = 1\n\\\n    \\\nb = 2\n",
    ),
    (
        "if x:\n    if y:\n        a = 1\n        b = 2\n",
        "if x:\n    if y:\n        a = 1\n\\\n    b = 2\n",
    ),
    (
        "if x:\n    if y:\n        a = 1\n    b = 2\n",
        "if x:\n    if y:\n        a = 1\n    \\\n        b = 2\n",
    ),
    (
        "if x:\n    a\nelse:\n    b\n",
        "if x:\n    a\n    \\\nelse:\n    b\n",
    ),
    ("def f():\n    return 1\n", "def f():\n    return \\\n1\n"),
    ("x = (\n1)\n", "x = (\\\n1)\n"),
    ("x = 1  # c\ny = 2\n", "x = 1  # c\ry = 2\n"),
    ("a = 1\nb = 2\n", "a = 1; b = 2\n"),
    ("def f(): return 1\n", "def f():\n    return 1\n"),
    (
        "class A:\n    x = 1\n    def f(): pass\n",
        "class A:\n    x = 1\ndef f(): pass\n",
    ),
];

#[test]
fn tricky_pairs_are_never_called_cosmetic_when_python_says_code() {
    let input = serde_json::to_string(PAIRS).unwrap();
    let Ok(mut child) = Command::new("python3")
        .args(["-c", &format!("{CPYTHON_VIEW}{JUDGE}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIPPED tricky pairs: no python3");
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the judge failed");
    let truths: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(truths.len(), PAIRS.len());
    let mut wrong = Vec::new();
    let mut code = 0;
    for ((old, new), truth) in PAIRS.iter().zip(&truths) {
        assert_ne!(truth, "rejected", "{old:?} must compile");
        let got = classify(old.as_bytes(), new.as_bytes());
        if truth == "code" {
            code += 1;
            if got != ChangeKind::Code {
                wrong.push(format!(
                    "{old:?} → {new:?}: python says code, fpcheck {got:?}"
                ));
            }
        }
    }
    assert!(code >= 15, "too few code pairs: {code}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The lexer's shortcut (`proven_code`, which history asks before it
/// parses) never says `code` where the parser says cosmetic, on any pair.
#[test]
fn tricky_pairs_are_proven_code_only_where_the_parser_finds_it() {
    use std::sync::Arc;
    let mut proven = 0;
    for (old, new) in PAIRS {
        for (a, b) in [(old, new), (new, old)] {
            let got = classify(a.as_bytes(), b.as_bytes());
            let shape = fpcheck::classify::proven_code(
                &Arc::new(a.as_bytes().to_vec()),
                &Arc::new(b.as_bytes().to_vec()),
            );
            assert!(!shape || got == ChangeKind::Code, "{a:?} → {b:?}: {got:?}");
            proven += usize::from(shape);
        }
    }
    assert!(proven >= 10, "too few pairs proven: {proven}");
}

//! The windowed parse against whole parses, on random edits: every newer
//! version parsed from its older one (and the next from that, as the
//! history does) must have exactly the tokens, docstring marks included,
//! and the validity of a fresh parse of the whole file, and compare with
//! its older version as whole parses do.
//!
//! The files are synthetic snippets chosen for their unit boundaries, and
//! a few small files of the machine's Python standard library (when
//! python3 is there); the edits are byte-level and line-level, made to
//! open and close strings, brackets and continuations at the window's
//! ends. A fixed seed: the same edits on every run;
//! `FPCHECK_WINDOW_SEEDS=n` runs n seeds (a longer search).

use super::*;

/// SplitMix64: deterministic.
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
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SEED: u64 = 0x5eed_0017_0f0f;
/// Edit chains per file, and versions per chain.
const CHAINS: usize = 12;
const VERSIONS: usize = 4;
/// Standard library files used, and the largest.
const STDLIB_FILES: usize = 8;
const STDLIB_MAX_BYTES: usize = 6 * 1024;

/// Snippets whose statements meet at the places a window may start or
/// end: compound statements with their clauses, decorators, `;`, line
/// continuations, docstrings, comments at column 0 inside blocks, form
/// feeds, encoding declarations, repeated text.
const SNIPPETS: &[&str] = &[
    "'''Doc.'''\n__version__ = '1.0'\nVERSION = (1, 0)\n\n@mcp.tool\ndef t():\n    '''Tool.'''\n\nx = 1\n",
    "x = 1\n\n\n'doc'\ny = 2\n",
    "'''a'''\n# b\n# c\n'd'\nz = 1\n",
    "\"\"\"Module doc.\"\"\"\n\nimport os\n\n\ndef f(a):\n    \"\"\"F doc.\"\"\"\n    return a\n\n\nclass C:\n    'C doc'\n    x = 1\n",
    "# -*- coding: latin-1 -*-\n# second\nx = 1\ny = 2\nz = 3\n",
    "#!/usr/bin/env python\n# coding: utf-8\n'''doc'''\nx = 1\n",
    "if a:\n    b = 1\nelif c:\n    b = 2\nelse:\n    b = 3\nd = 4\n",
    "try:\n    x = 1\nexcept E:\n    pass\nelse:\n    y = 2\nfinally:\n    z = 3\nw = 4\n",
    "for i in x:\n    pass\nelse:\n    pass\nwhile y:\n    pass\nelse:\n    pass\n",
    "match p:\n    case 1:\n        a = 1\n    case _:\n        a = 2\ncase = 3\nmatch = 4\n",
    "@dec\ndef f():\n    pass\n@dec(1)\n@other\nclass C:\n    pass\nx = 1\n",
    "x = 1; y = 2\nz = 3;\nw = 4 ; v = 5\n",
    "x = 1 + \\\n    2\ny = \\\n  3\nz = 4\n",
    "s = '''a\nb\nc'''\nt = \"\"\"\n\"\"\"\nu = 1\n",
    "def f():\n    x = 1\n# col 0 comment\n    return x\n\n# top\ny = 2\n",
    "x = 1\n\x0c\ny = 2\n\x0cz = 3\n",
    "def f():\n\tif a:\n\t\treturn 1\n\treturn 2\ng = 1\n",
    "x = 1\nx = 1\nx = 1\nx = 1\nx = 1\n",
    "a = (1,\n     2)\nb = [\n    3,\n]\nc = {4: 5}\n",
    "x = f'{a}' f\"{b!r:>{w}}\"\ny = f'''{\nc}'''\nz = 1\n",
    "class A: 'doc'\nx = 1\nclass B: pass\ny = 2\n",
    "def g(): \"doc\"; return 1\nh = 2\n",
    "x = 1\ny = 2",
    "",
    "'doc'\n",
    "x = 1\r\ny = 2\r\nz = 3\r\n",
    "\u{feff}x = 1\ny = 2\n",
    "async def f():\n    async with a:\n        await b\n    async for c in d:\n        pass\nx = lambda: (yield)\n",
    "type X = int\nx: int = 1\ndel x\nglobal y\nassert y, 'm'\n",
];

/// Pieces inserted at random bytes: what opens or closes something.
const PIECES: &[&str] = &[
    "\"\"\"",
    "'''",
    "\"",
    "'",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "\\\n",
    "\\",
    "#",
    "# c\n",
    "\n",
    "\n\n",
    " ",
    "    ",
    "\t",
    "\x0c",
    ";",
    ":",
    "@d\n",
    "else:\n",
    "elif x:\n",
    "except:\n",
    "finally:\n",
    "pass",
    "x",
    "if x:\n    ",
    "'doc'\n",
    "\"\"\"doc\"\"\"\n",
    "\r",
    "\r\n",
    "\u{feff}",
    "# coding: latin-1\n",
    "f'{",
    "}'",
    "= 1",
    "case 1:\n",
    "\ny = 2\n",
];

/// Whole lines inserted.
const LINES: &[&str] = &[
    "",
    "# comment",
    "    # indented comment",
    "x = 1",
    "    x = 1",
    "\"\"\"doc\"\"\"",
    "    '''doc'''",
    "else:",
    "    pass",
    "def f():",
    "@dec",
    "if x:",
    "\"\"\"",
    "(",
    ")",
    "y = 2 \\",
    "\x0c",
    "# coding: latin-1",
    "z = 3; w = 4",
];

/// One random edit of `text`.
fn edit(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = text.to_vec();
    let n = out.len();
    let mut lines: Vec<Vec<u8>> = text.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let line = rng.below(lines.len());
    match rng.below(14) {
        0 | 1 => {
            let at = rng.below(n + 1);
            out.splice(at..at, rng.pick(PIECES).bytes());
            return out;
        }
        2 if n > 0 => {
            let at = rng.below(n);
            let len = 1 + rng.below(8.min(n - at));
            out.drain(at..at + len);
            return out;
        }
        3 if n > 0 => {
            let at = rng.below(n);
            out[at] = rng
                .pick(&["x", " ", "\n", "(", "'", "#", "\\", ":"])
                .as_bytes()[0];
            return out;
        }
        4 | 5 => lines.insert(line, rng.pick(LINES).as_bytes().to_vec()),
        6 => {
            lines.remove(line);
        }
        7 => {
            let copy = lines[line].clone();
            lines.insert(line, copy);
        }
        8 => {
            let other = rng.below(lines.len());
            lines.swap(line, other);
        }
        9 => {
            let indent = rng.pick(&["    ", "\t", " ", "\x0c"]);
            lines[line].splice(0..0, indent.bytes());
        }
        10 => {
            let lead = lines[line]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
            let cut = lead.min(1 + rng.below(4));
            lines[line].drain(..cut);
        }
        11 => {
            // A statement turned into a comment, or the first lines gone:
            // what the window keeps may become the first statement.
            lines[line].splice(0..0, *b"# ");
        }
        12 => {
            lines.drain(..line);
        }
        _ => {
            // Text repeated from elsewhere in the file: shared prefixes
            // and suffixes that overlap.
            let at = rng.below(n + 1);
            let from = rng.below(n + 1);
            let len = rng.below(40).min(n - from);
            let copy = text[from..from + len].to_vec();
            out.splice(at..at, copy);
            return out;
        }
    }
    lines.join(&b'\n')
}

/// A parsed file's tokens with their text and docstring and version marks.
fn tokens(parsed: &Parsed) -> Option<Vec<(TokenKindName, Vec<u8>, Marks)>> {
    let units = parsed.units.as_ref()?;
    Some(
        units
            .iter()
            .flat_map(|u| {
                u.toks.iter().map(move |t| {
                    let at = u.start + t.start as usize..u.start + t.end as usize;
                    (
                        format!("{:?}", t.kind),
                        parsed.source[at].to_vec(),
                        (t.doc, t.version),
                    )
                })
            })
            .collect(),
    )
}

type TokenKindName = String;

/// A token's docstring and version marks.
type Marks = (bool, bool);

/// Checks one step of a chain: `new` parsed after `old` (itself perhaps
/// from a windowed parse) against fresh parses of both.
/// `fresh_old`: `old` parsed whole. Returns the windowed and the whole
/// parse of `new`.
fn check_step(
    c: &mut Classifier,
    (old, fresh_old): (&Parsed, &Parsed),
    new: &[u8],
    label: &str,
) -> (Parsed, Parsed) {
    let windowed = c.parse(new.to_vec(), Some(old));
    let fresh = c.parse(new.to_vec(), None);
    let context = || {
        format!(
            "{label}: {:?} → {:?}",
            String::from_utf8_lossy(&old.source),
            String::from_utf8_lossy(new)
        )
    };
    assert_eq!(
        windowed.is_valid(),
        fresh.is_valid(),
        "validity: {}",
        context()
    );
    assert_eq!(tokens(&windowed), tokens(&fresh), "tokens: {}", context());
    assert_eq!(
        compare_parsed(old, &windowed),
        compare_parsed(fresh_old, &fresh),
        "kind: {}",
        context()
    );
    (windowed, fresh)
}

fn check_file(source: &[u8], seed: u64, label: &str) -> usize {
    let mut rng = Rng(seed);
    let mut c = Classifier::new();
    let original = c.parse(source.to_vec(), None);
    let mut steps = 0;
    for chain in 0..CHAINS {
        let mut old = c.parse(source.to_vec(), None);
        let mut fresh_old = c.parse(source.to_vec(), None);
        let mut text = source.to_vec();
        for version in 0..VERSIONS {
            let edits = 1 + rng.below(3);
            for _ in 0..edits {
                text = edit(&text, &mut rng);
            }
            let label = format!("{label} chain {chain} version {version}");
            let (new, fresh) = check_step(&mut c, (&old, &fresh_old), &text, &label);
            // Back to the original, parsed from the edited version.
            check_step(&mut c, (&new, &fresh), source, &label);
            steps += 2;
            if new.is_valid() {
                (old, fresh_old) = (new, fresh);
            } else {
                // An invalid version has no units to window from: go on
                // from the original's text.
                text = source.to_vec();
                old = c.parse(source.to_vec(), Some(&original));
                fresh_old = c.parse(source.to_vec(), None);
            }
        }
    }
    steps
}

/// Small files of the standard library (sorted, then every k-th), if
/// python3 is there.
fn stdlib_files() -> Vec<std::path::PathBuf> {
    let Ok(out) = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_path('stdlib'))",
        ])
        .output()
    else {
        return Vec::new();
    };
    let root = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .filter(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.len() as usize <= STDLIB_MAX_BYTES && m.len() > 0)
        })
        .collect();
    files.sort();
    let step = (files.len() / STDLIB_FILES).max(1);
    files.into_iter().step_by(step).take(STDLIB_FILES).collect()
}

#[test]
fn windowed_parses_equal_whole_parses_on_random_edits() {
    let seeds = std::env::var("FPCHECK_WINDOW_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1u64);
    let started = std::time::Instant::now();
    let mut steps = 0;
    for round in 0..seeds {
        steps += check_all(SEED.wrapping_add(round.wrapping_mul(0x1_0001)));
    }
    eprintln!(
        "{steps} windowed parses checked against whole ones in {:.1?}",
        started.elapsed()
    );
}

fn check_all(seed: u64) -> usize {
    let mut steps = 0;
    for (i, snippet) in SNIPPETS.iter().enumerate() {
        steps += check_file(snippet.as_bytes(), seed ^ i as u64, &format!("snippet {i}"));
    }
    let files = stdlib_files();
    if files.is_empty() {
        eprintln!("no python3 standard library: snippets only");
    }
    for (i, path) in files.iter().enumerate() {
        let bytes = std::fs::read(path).unwrap();
        let label = path.display().to_string();
        steps += check_file(&bytes, seed.rotate_left(7) ^ i as u64, &label);
    }
    steps
}

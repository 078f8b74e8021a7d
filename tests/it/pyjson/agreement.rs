//! The agreements with python3: documents, float reprs and equality.

use super::*;

/// Runs `python3 ARGS` with `stdin` as its input; its stdout, once it has
/// exited successfully (the differential tests need Python 3).
fn python3(args: &[&str], stdin: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = Command::new("python3")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (the differential test needs Python 3)");
    // Written from a thread: a large input must not wait on a full stdout.
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&input));
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    writer.join().unwrap().expect("python3 read all its input");
    String::from_utf8(out.stdout).expect("python3 prints UTF-8")
}

#[test]
fn agrees_with_python_json_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut corpus = hand_picked();
    let hand = corpus.len();
    let cases: u64 = std::env::var("FPCHECK_PYJSON_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    // FPCHECK_PYJSON_CASES / FPCHECK_PYJSON_SEED explore further.
    let seed: u64 = std::env::var("FPCHECK_PYJSON_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5E_ED0F_F9C8);
    let mut gen = Gen(seed | 1);
    corpus.extend((0..cases).map(|_| gen.document()));
    let mut names = String::new();
    for (i, bytes) in corpus.iter().enumerate() {
        let path = dir.path().join(format!("{i:05}.json"));
        std::fs::write(&path, bytes).unwrap();
        names.push_str(path.to_str().unwrap());
        names.push('\n');
    }
    let stdout = python3(&["-c", READER], names.as_bytes());
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let (version, python_limit): (&str, usize) = (header[1], header[2].parse().unwrap());
    let (major, minor) = version.split_once('.').unwrap();
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    // 3.13 reworded some messages ("Illegal trailing comma ..."); newer
    // Unicode tables change which characters repr() escapes.
    let exact_messages = (major, minor) < (3, 13);
    if (major, minor) == (3, 11) {
        // Our limit sits just under what 3.11 reads from a shallow stack.
        assert!(
            (MAX_DEPTH..MAX_DEPTH + 10).contains(&python_limit),
            "Python 3.11 reads {python_limit} levels here; MAX_DEPTH is {MAX_DEPTH}"
        );
    }
    let theirs: Vec<&str> = lines.collect();
    assert_eq!(theirs.len(), corpus.len());
    let mut failures = Vec::new();
    let mut accepted = 0;
    let mut depth_band = 0;
    for (i, (bytes, py)) in corpus.iter().zip(&theirs).enumerate() {
        let mine = ours(bytes);
        if mine.starts_with("ok\t") {
            accepted += 1;
        }
        let same = if exact_messages {
            mine == *py
        } else {
            mine.split('\t').take(2).eq(py.split('\t').take(2))
        };
        if same {
            continue;
        }
        // Refusing a nesting Python still reads is allowed only between
        // MAX_DEPTH and Python's own limit (see pyjson::MAX_DEPTH).
        if mine == "err\tRecursionError\t" && py.starts_with("ok\t") && python_limit > MAX_DEPTH {
            depth_band += 1;
            continue;
        }
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
        failures.push(format!(
            "case {i} ({}) {shown:?}\n  python: {py}\n  ours:   {mine}",
            if i < hand { "hand-picked" } else { "generated" }
        ));
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ from Python {version}:\n{}",
        failures.len(),
        corpus.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The corpus must exercise both sides.
    assert!(
        accepted > corpus.len() / 5 && accepted < corpus.len() * 4 / 5,
        "{accepted} of {} accepted",
        corpus.len()
    );
    // On 3.11 only the MAX_DEPTH + 1 case may fall in the band, and only
    // when this Python reads that deep.
    if (major, minor) == (3, 11) {
        assert_eq!(depth_band, usize::from(python_limit > MAX_DEPTH));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes: an answer, never a panic.
    #[test]
    fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = pyjson::loads(&bytes);
    }

    /// Any bytes drawn from JSON's alphabet: an answer, never a panic.
    #[test]
    fn never_panics_on_json_like_text(s in r#"[\[\]{}",:\\0-9eE.+\-a-zA-Z \t\r\n\u{0}-\u{1f}\u{80}-\u{10ffff}]{0,80}"#) {
        let _ = pyjson::loads(s.as_bytes());
    }

    /// A string, written as json.dumps writes it, reads back as itself.
    #[test]
    fn strings_round_trip(cps in proptest::collection::vec(prop_oneof![0u32..0x80, 0u32..0x110000, 0xD800u32..0xE000], 0..20)) {
        let s = fpcheck::pyjson::PyStr::from_code_points(cps).unwrap();
        let doc = s.to_json();
        // Two adjacent lone surrogates that make a pair are joined on the
        // way back, as Python joins them; skip that one shape.
        let cps: Vec<u32> = s.code_points().collect();
        let joins = cps.windows(2).any(|w| (0xD800..0xDC00).contains(&w[0]) && (0xDC00..0xE000).contains(&w[1]));
        prop_assume!(!joins);
        prop_assert_eq!(pyjson::loads(doc.as_bytes()).unwrap(), PyValue::Str(s));
    }

    /// Finite floats: Python's repr reads back as the same float.
    #[test]
    fn float_repr_round_trips(bits in any::<u64>()) {
        let f = f64::from_bits(bits);
        prop_assume!(f.is_finite());
        let text = pyjson::float_repr(f);
        match pyjson::loads(text.as_bytes()).unwrap() {
            PyValue::Float(g) => prop_assert_eq!(g.to_bits(), f.to_bits(), "{}", text),
            other => prop_assert!(false, "{} read as {:?}", text, other),
        }
    }
}

/// `repr(float)` on many doubles, Python against [`pyjson::float_repr`]:
/// random bit patterns, and `m * 2**e` with a 53-bit `m` and small `e`,
/// whose exact decimal values often sit halfway between two shortest
/// candidates.
#[test]
fn float_repr_agrees_with_python() {
    let mut gen = Gen(0xF1_0A72_E9B0);
    let mut floats = Vec::new();
    while floats.len() < 20_000 {
        let f = if floats.len() % 2 == 0 {
            f64::from_bits(gen.next())
        } else {
            let m = (1u64 << 52) | (gen.next() >> 12);
            let e = gen.below(40) as i32 - 20;
            m as f64 * 2f64.powi(e)
        };
        if f.is_finite() {
            floats.push(f);
        }
    }
    let input: String = floats
        .iter()
        .map(|f| format!("{}\n", f.to_bits()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bits.txt");
    std::fs::write(&path, input).unwrap();
    let script = "import struct, sys\n\
        for line in open(sys.argv[1]):\n    \
            print(repr(struct.unpack('<d', int(line).to_bytes(8, 'little'))[0]))\n";
    let stdout = python3(&["-c", script, path.to_str().unwrap()], b"");
    let theirs: Vec<&str> = stdout.lines().collect();
    assert_eq!(theirs.len(), floats.len());
    let wrong: Vec<String> = floats
        .iter()
        .zip(&theirs)
        .filter(|(f, py)| pyjson::float_repr(**f) != **py)
        .map(|(f, py)| {
            format!(
                "{:#x}: python {py}, ours {}",
                f.to_bits(),
                pyjson::float_repr(*f)
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        floats.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

/// Python's `==` on every pair of a pool of values (the updater compares
/// raw `"version"` values with `!=`), against [`PyValue::py_eq`].
#[test]
fn py_eq_agrees_with_python() {
    let pool = [
        "0",
        "-0",
        "0.0",
        "-0.0",
        "false",
        "true",
        "1",
        "1.0",
        "1e0",
        "2",
        "NaN",
        "-NaN0",
        "Infinity",
        "1e400",
        "-Infinity",
        "null",
        "\"\"",
        "\"1\"",
        "\"1.0\"",
        "\"None\"",
        "[]",
        "{}",
        "[NaN]",
        "[[NaN]]",
        "[1]",
        "[1.0]",
        "[true]",
        "[1, 2]",
        "[2, 1]",
        "{\"a\": 1}",
        "{\"a\": 1.0}",
        "{\"a\": true}",
        "{\"a\": NaN}",
        "{\"a\": [NaN]}",
        "{\"a\": 1, \"b\": 2}",
        "{\"b\": 2, \"a\": 1}",
        "{\"b\": 2, \"a\": 1, \"a\": 2}",
        "9007199254740993",
        "9007199254740992.0",
        "9007199254740992",
        "18446744073709551616",
        "1.8446744073709552e19",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud83d\\ude00\"",
        "\"\u{1F600}\"",
        "\" 7 \"",
        "\"7\"",
        "7",
    ];
    let values: Vec<Option<PyValue>> = pool
        .iter()
        .map(|s| pyjson::loads(s.as_bytes()).ok())
        .collect();
    let script = "import json, sys\n\
        pool = json.loads(sys.stdin.read())\n\
        FAIL = object()\n\
        vals = []\n\
        for s in pool:\n    \
            try:\n        vals.append(json.loads(s))\n    \
            except ValueError:\n        vals.append(FAIL)\n\
        ok = [v is not FAIL for v in vals]\n\
        print(''.join('1' if ok[i] else '-' for i in range(len(pool))))\n\
        for a in vals:\n    \
            print(''.join('1' if a == b else '0' for b in vals))\n";
    let pool_json = serde_json::to_string(&pool[..]).unwrap();
    let stdout = python3(&["-c", script], pool_json.as_bytes());
    let mut lines = stdout.lines();
    let parsed: String = values
        .iter()
        .map(|v| if v.is_some() { '1' } else { '-' })
        .collect();
    assert_eq!(lines.next().unwrap(), parsed, "which of the pool parse");
    let mut wrong = Vec::new();
    for (i, line) in lines.enumerate() {
        for (j, py) in line.chars().enumerate() {
            let (Some(a), Some(b)) = (&values[i], &values[j]) else {
                continue;
            };
            if a.py_eq(b) != (py == '1') {
                wrong.push(format!("{} == {}: python {}", pool[i], pool[j], py == '1'));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

//! Expected values below were produced by CPython 3.11 (`str(json.loads(s))`
//! and the `JSONDecodeError` message), not by this module.

use super::*;

fn py_str(src: &str) -> String {
    let v = loads(src.as_bytes()).unwrap_or_else(|e| panic!("{src:?}: {e}"));
    v.py_str().to_string_lossless().unwrap()
}

fn err(src: &[u8]) -> String {
    loads(src).expect_err("must be refused").to_string()
}

#[test]
fn str_of_values_matches_python() {
    let cases = [
        ("1e400", "inf"),
        ("-0.0", "-0.0"),
        ("1E16", "1e+16"),
        ("1e15", "1000000000000000.0"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("7", "7"),
        ("-0", "0"),
        ("7.0", "7.0"),
        ("1.5e300", "1.5e+300"),
        ("5e-324", "5e-324"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("0.1", "0.1"),
        ("100000000000000000000.5", "1e+20"),
        ("123e-20", "1.23e-18"),
        (
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        ),
        ("null", "None"),
        ("true", "True"),
        ("false", "False"),
        ("\" 7.38.7 \"", " 7.38.7 "),
        ("\"it's\"", "it's"),
        ("[NaN, Infinity, -Infinity]", "[nan, inf, -inf]"),
        (
            r#"[1, "a", null, true, 1.0, {"b": -0.0}]"#,
            "[1, 'a', None, True, 1.0, {'b': -0.0}]",
        ),
        (r#"{"a":1,"b":2,"a":3}"#, "{'a': 3, 'b': 2}"),
        (
            r#"["it's", "say \"x\"", "both '\""]"#,
            r#"["it's", 'say "x"', 'both \'"']"#,
        ),
        ("[[], {}]", "[[], {}]"),
    ];
    for (src, want) in cases {
        assert_eq!(py_str(src), want, "str(json.loads({src:?}))");
    }
}

#[test]
fn errors_match_python_messages() {
    let cases: [(&[u8], &str); 17] = [
        (b"", "Expecting value: line 1 column 1 (char 0)"),
        (b"[1,]", "Expecting value: line 1 column 4 (char 3)"),
        (
            b"{\"a\":1,}",
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
        ),
        (b"-NaN", "Expecting value: line 1 column 1 (char 0)"),
        (
            b"\"\\u12\"",
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        ),
        (
            b"\"abc",
            "Unterminated string starting at: line 1 column 1 (char 0)",
        ),
        (
            b"\"a\x01\"",
            "Invalid control character at: line 1 column 3 (char 2)",
        ),
        (
            b"[1 2]",
            "Expecting ',' delimiter: line 1 column 4 (char 3)",
        ),
        (
            b"{\"a\" 1}",
            "Expecting ':' delimiter: line 1 column 6 (char 5)",
        ),
        (
            b"{1:2}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            b"\xef\xbb\xbf1",
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
        ),
        (b"1 x", "Extra data: line 1 column 3 (char 2)"),
        (b"\"\\q\"", "Invalid \\escape: line 1 column 2 (char 1)"),
        (
            b"\"\\ud800\\u12x4\"",
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
        ),
        (
            b"\"\\u0041",
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
        ),
        (b"[\n\n  x", "Expecting value: line 3 column 3 (char 5)"),
        // Universal newlines: \r\n counts as one character, as Python reads it.
        (b"[\r\n\r\n  x", "Expecting value: line 3 column 3 (char 5)"),
    ];
    for (src, want) in cases {
        assert_eq!(err(src), want, "{:?}", String::from_utf8_lossy(src));
    }
}

#[test]
fn other_failures_are_typed() {
    assert_eq!(loads(b"[1, \xff]"), Err(PyJsonError::NotUtf8 { offset: 4 }));
    // UTF-8-encoded surrogates are not UTF-8 for Python either.
    assert_eq!(
        loads(b"\"\xed\xa0\x80\""),
        Err(PyJsonError::NotUtf8 { offset: 1 })
    );
    // A UTF-16 file (with its BOM) is not UTF-8.
    assert!(matches!(
        loads(b"\xff\xfe1\x00"),
        Err(PyJsonError::NotUtf8 { .. })
    ));
    let long = "1".repeat(MAX_INT_DIGITS + 1);
    assert_eq!(
        loads(long.as_bytes()),
        Err(PyJsonError::IntTooLong { digits: 4301 })
    );
    let ok = format!("-{}", "1".repeat(MAX_INT_DIGITS));
    assert_eq!(py_str(&ok), ok);
    // Long floats have no limit in Python.
    assert_eq!(py_str(&format!("{}.5", "1".repeat(5000))), "inf");
}

#[test]
fn nesting_up_to_the_limit_and_no_further() {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(loads(nest(200).as_bytes()).is_ok());
    assert!(loads(nest(MAX_DEPTH).as_bytes()).is_ok());
    let too_deep = Err(PyJsonError::TooDeep { limit: MAX_DEPTH });
    assert_eq!(loads(nest(MAX_DEPTH + 1).as_bytes()), too_deep);
    // No stack overflow however deep, closed or not.
    assert_eq!(loads("[".repeat(1_000_000).as_bytes()), too_deep);
    let objs = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    assert_eq!(loads(objs.as_bytes()), too_deep);
    // A syntax error before the limit is reached wins, as in Python.
    assert!(matches!(
        loads(format!("[1 {}", "[".repeat(5000)).as_bytes()),
        Err(PyJsonError::Decode { .. })
    ));
    let deep = loads(nest(200).as_bytes()).unwrap();
    assert_eq!(deep.py_str().char_len(), 400);
}

#[test]
fn strings_keep_lone_surrogates_distinct() {
    let a = loads(br#""\ud800""#).unwrap().py_str();
    let b = loads(br#""\udc00""#).unwrap().py_str();
    assert_ne!(a, b);
    assert_eq!(a.to_json(), r#""\ud800""#);
    let pair = loads(br#""\ud83d\ude00""#).unwrap().py_str();
    assert_eq!(pair, "😀");
    // High surrogate followed by a non-low escape: both kept as they are.
    let two = loads(br#""\ud800\u0041""#).unwrap().py_str();
    assert_eq!(two.code_points().collect::<Vec<_>>(), [0xD800, 0x41]);
    // Reversed pair stays two lone surrogates.
    let rev = loads(br#""\udc00\ud800""#).unwrap().py_str();
    assert_eq!(rev.code_points().collect::<Vec<_>>(), [0xDC00, 0xD800]);
    assert_eq!(loads(br#"["\ud800"]"#).unwrap().py_str(), "['\\ud800']");
}

#[test]
fn dicts_follow_python_semantics() {
    let v = loads(br#"{"version": 1, "x": 2, "version": " 8 "}"#).unwrap();
    assert_eq!(v.get("version").unwrap().py_str().strip(), "8");
    assert_eq!(v.py_str(), "{'version': ' 8 ', 'x': 2}");
    assert_eq!(v.get("missing"), None);
    assert_eq!(loads(b"[1]").unwrap().get("version"), None);
    let big = format!(
        "{{{}\"k\": 1}}",
        (0..20_000)
            .map(|i| format!("\"k{i}\": {i}, "))
            .collect::<String>()
    );
    let PyValue::Dict(d) = loads(big.as_bytes()).unwrap() else {
        panic!("a dict")
    };
    assert_eq!(d.len(), 20_001);
}

#[test]
fn truthiness_is_pythons() {
    for falsy in [
        "0", "0.0", "-0.0", "\"\"", "[]", "{}", "null", "false", "-0",
    ] {
        assert!(!loads(falsy.as_bytes()).unwrap().truthy(), "{falsy}");
    }
    for truthy in [
        "NaN",
        "1",
        "\"false\"",
        "\"0\"",
        "[0]",
        "{\"a\": 0}",
        "true",
        "1e-300",
        "-Infinity",
    ] {
        assert!(loads(truthy.as_bytes()).unwrap().truthy(), "{truthy}");
    }
}

#[test]
fn equality_is_pythons() {
    let v = |s: &str| loads(s.as_bytes()).unwrap();
    assert!(v("1").py_eq(&v("1.0")));
    assert!(v("1").py_eq(&v("true")));
    assert!(v("0").py_eq(&v("-0.0")));
    assert!(v("false").py_eq(&v("0")));
    assert!(!v("NaN").py_eq(&v("NaN")));
    assert!(v("[NaN]").py_eq(&v("[NaN]")));
    assert!(v(r#"{"a": NaN, "b": 1}"#).py_eq(&v(r#"{"b": 1.0, "a": NaN}"#)));
    assert!(!v("9007199254740993").py_eq(&v("9007199254740992.0")));
    assert!(v("9007199254740992").py_eq(&v("9007199254740992.0")));
    // 1e300 is not exactly 10**300.
    assert!(!v("1e300").py_eq(&v(&format!("1{}", "0".repeat(300)))));
    assert!(!v("\"1\"").py_eq(&v("1")));
    assert!(!v("null").py_eq(&v("false")));
    assert!(v("Infinity").py_eq(&v("1e400")));
}

#[test]
// The exact tie values are written out in full on purpose.
#[allow(clippy::excessive_precision)]
fn float_repr_shapes() {
    let cases = [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (1e15, "1000000000000000.0"),
        (123456789.125, "123456789.125"),
        (0.0001, "0.0001"),
        (0.00012, "0.00012"),
        (1e-5, "1e-05"),
        (-2.5e-7, "-2.5e-07"),
        (1e100, "1e+100"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
        (0.30000000000000004, "0.30000000000000004"),
        (9007199254740993.0, "9007199254740992.0"),
        // Exact ties between two shortest candidates: half to even.
        (72656021730249.125, "72656021730249.12"),
        (1621238007578910.25, "1621238007578910.2"),
    ];
    for (f, want) in cases {
        assert_eq!(float_repr(f), want, "{f:e}");
    }
}

#[test]
fn python_dependent_failures_are_flagged() {
    let deep = loads("[".repeat(MAX_DEPTH + 1).as_bytes()).unwrap_err();
    assert!(deep.python_dependent());
    assert!(loads("1".repeat(4301).as_bytes())
        .unwrap_err()
        .python_dependent());
    assert!(!loads(b"[1,]").unwrap_err().python_dependent());
    assert!(!loads(b"\xff").unwrap_err().python_dependent());
    let names: Vec<_> = ["null", "true", "1", "1.0", "\"\"", "[]", "{}"]
        .iter()
        .map(|s| loads(s.as_bytes()).unwrap().type_name())
        .collect();
    assert_eq!(
        names,
        ["NoneType", "bool", "int", "float", "str", "list", "dict"]
    );
}

#[test]
fn ints_are_exact_at_every_size() {
    let v = |s: &str| loads(s.as_bytes()).unwrap();
    let PyValue::Int(max) = v("9223372036854775807") else {
        panic!("an int")
    };
    assert_eq!(max.to_i64(), Some(i64::MAX));
    let PyValue::Int(min) = v("-9223372036854775808") else {
        panic!("an int")
    };
    assert_eq!(min.to_i64(), Some(i64::MIN));
    assert!(min.is_negative());
    let PyValue::Int(big) = v("-9223372036854775809") else {
        panic!("an int")
    };
    assert_eq!(big.to_i64(), None);
    assert_eq!(big.to_string(), "-9223372036854775809");
    assert_eq!(
        PyInt::from_parts(true, "000"),
        PyInt::from_parts(false, "0")
    );
    assert_eq!(
        PyInt::from_parts(false, "0009223372036854775808").to_string(),
        "9223372036854775808"
    );
    // Python compares int and float exactly.
    assert!(v("9223372036854775808").py_eq(&v("9.223372036854775808e18")));
    assert!(!v("9223372036854775807").py_eq(&v("9.223372036854775808e18")));
    assert!(v("-9223372036854775808").py_eq(&v("-9.223372036854775808e18")));
    assert!(!v("-9223372036854775809").py_eq(&v("-9.223372036854775808e18")));
    assert!(v("-18446744073709551616").py_eq(&v("-1.8446744073709552e19")));
}

#[test]
fn repeated_keys_in_large_objects_keep_their_first_place() {
    // Past the scan threshold the parser indexes keys; same semantics.
    let body: Vec<String> = (0..40).map(|i| format!("\"k{i}\": {i}")).collect();
    let doc = format!(
        "{{{}, \"k3\": \"x\", \"k39\": \"y\", \"k0\": null}}",
        body.join(", ")
    );
    let PyValue::Dict(d) = loads(doc.as_bytes()).unwrap() else {
        panic!("a dict")
    };
    assert_eq!(d.len(), 40);
    let keys: Vec<String> = d.iter().map(|(k, _)| k.display()).collect();
    let want: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    assert_eq!(keys, want);
    let v = loads(doc.as_bytes()).unwrap();
    assert_eq!(v.get("k3").unwrap().py_str(), "x");
    assert_eq!(v.get("k39").unwrap().py_str(), "y");
    assert_eq!(v.get("k0"), Some(&PyValue::None));
    assert_eq!(v.get("k1").unwrap().py_str(), "1");
}

#[test]
fn loads_str_is_json_loads_without_file_reading() {
    // No newline translation: a raw CR in a string is a control character
    // where a file read in text mode would have made it a newline.
    assert_eq!(
        loads_str("[\r\n x").unwrap_err().to_string(),
        "Expecting value: line 2 column 2 (char 4)"
    );
    assert_eq!(
        loads(b"[\r\n x").unwrap_err().to_string(),
        "Expecting value: line 2 column 2 (char 3)"
    );
    assert_eq!(
        loads_str("{\"version\": 7}")
            .unwrap()
            .get("version")
            .unwrap()
            .py_str(),
        "7"
    );
}

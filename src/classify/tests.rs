use super::*;

fn kind(old: &str, new: &str) -> ChangeKind {
    classify(old.as_bytes(), new.as_bytes())
}

#[test]
fn comments_blank_lines_and_spaces_are_layout() {
    let old = "import os\n\ndef f(a, b=1):\n    return a + b  # sum\n";
    let new = "# header\nimport os\n\n\n\ndef f( a,b = 1 ) :\n    # why\n    return (a+b)  \n";
    // The parentheses are tokens: code.
    assert_eq!(kind(old, new), ChangeKind::Code);
    let new = "# header\nimport os\n\n\n\ndef f( a,b = 1 ) :\n    # why\n\n    return a+b\n";
    assert_eq!(kind(old, new), ChangeKind::Layout);
}

#[test]
fn consistent_reindentation_is_layout_but_moving_a_statement_out_is_code() {
    let old = "def f():\n    x = 1\n    return x\n";
    assert_eq!(
        kind(old, "def f():\n        x = 1\n        return x\n"),
        ChangeKind::Layout
    );
    assert_eq!(
        kind("if a:\n    b()\n    c()\n", "if a:\n    b()\nc()\n"),
        ChangeKind::Code
    );
}

#[test]
fn newlines_inside_brackets_and_backslash_continuations_are_layout() {
    assert_eq!(
        kind("x = f(1, 2)\n", "x = f(\n    1,\n        2,\n)\n"),
        ChangeKind::Code, // the trailing comma is a token
    );
    assert_eq!(
        kind("x = f(1, 2)\n", "x = f(\n    1,\n        2\n)\n"),
        ChangeKind::Layout
    );
    assert_eq!(
        kind("x = 1 + 2\n", "x = 1 + \\\n    2\n"),
        ChangeKind::Layout
    );
    // A significant newline splits a statement in two.
    assert_eq!(kind("x = 1 + 2\n", "x = 1\n+ 2\n"), ChangeKind::Code);
    assert_eq!(kind("a = 1; b = 2\n", "a = 1\nb = 2\n"), ChangeKind::Code);
}

#[test]
fn string_contents_and_prefixes_are_compared_exactly() {
    assert_eq!(kind("x = 'a b'\n", "x = 'a  b'\n"), ChangeKind::Code);
    assert_eq!(kind("x = 'a'\n", "x = \"a\"\n"), ChangeKind::Code);
    assert_eq!(kind("x = 'a'\n", "x = r'a'\n"), ChangeKind::Code);
    assert_eq!(kind("x = f'{a}'\n", "x = f'{ a }'\n"), ChangeKind::Code);
    assert_eq!(kind("x = f'{a!r}'\n", "x = f'{a!s}'\n"), ChangeKind::Code);
    assert_eq!(kind("x = 1.0\n", "x = 1.00\n"), ChangeKind::Code);
    assert_eq!(kind("x = 'a' 'b'\n", "x = 'a'   'b'\n"), ChangeKind::Layout);
}

#[test]
fn docstrings_of_modules_classes_and_functions() {
    let old = "\"\"\"Module.\"\"\"\nclass A:\n    '''A.'''\n    def f(self):\n        \"Doc.\"\n        return 1\n";
    let new = "\"\"\"Module, better.\"\"\"\nclass A:\n    '''A, better.'''\n    def f(self):\n        \"\"\"Doc,\n        longer.\"\"\"\n        return 1\n";
    assert_eq!(kind(old, new), ChangeKind::Docstrings);
    // Added and removed docstrings.
    assert_eq!(
        kind(
            "def f():\n    return 1\n",
            "def f():\n    'Doc.'\n    return 1\n"
        ),
        ChangeKind::Docstrings
    );
    assert_eq!(
        kind("# c\n'''Doc.'''\nx = 1\n", "x = 1\n"),
        ChangeKind::Docstrings
    );
    // Not docstrings: a second string statement, an f-string, bytes, a
    // string in a plain block.
    assert_eq!(
        kind(
            "def f():\n    'a'\n    'b'\n",
            "def f():\n    'a'\n    'c'\n"
        ),
        ChangeKind::Code
    );
    assert_eq!(
        kind("def f():\n    f'a{x}'\n", "def f():\n    f'b{x}'\n"),
        ChangeKind::Code
    );
    assert_eq!(kind("b'a'\n", "b'b'\n"), ChangeKind::Code);
    assert_eq!(
        kind("if a:\n    'x'\n", "if a:\n    'y'\n"),
        ChangeKind::Code
    );
    // Adding a docstring in front of a docstring turns the old one into code.
    assert_eq!(
        kind(
            "def f():\n    'a'\n    return 1\n",
            "def f():\n    'b'\n    'a'\n    return 1\n"
        ),
        ChangeKind::Code
    );
}

#[test]
fn python_3_13_syntax_parses() {
    let src = concat!(
        "type Point[T] = tuple[T, T]\n",
        "def first[T: (int, str), *Ts, **P](xs: list[T]) -> T:\n    return xs[0]\n",
        "class Box[T]:\n    pass\n",
        "match command.split():\n    case [\"go\", direction] if direction:\n        pass\n    case {\"x\": x, **rest}:\n        pass\n    case Point(x=0) | None:\n        pass\n    case _:\n        pass\n",
        "songs = {'a': 1}\n",
        "msg = f\"{'\\n'.join(songs)} {f\"{songs[\"a\"]:>{width}}\"}\"\n",
        "try:\n    pass\nexcept* ValueError as e:\n    pass\n",
        "async def g():\n    async with a as b, c:\n        await b\n",
        "with (open(p) as f, open(q) as g):\n    pass\n",
        "print(x := 1, *a, **k)\n",
    );
    let mut c = Classifier::new();
    assert!(c.stream(src.as_bytes()).is_some(), "3.13 syntax must parse");
    let spaced = src.replace("-> T", "->  T").replace("case _:", "case _ :");
    assert_eq!(kind(src, &spaced), ChangeKind::Layout);
    let nested = src.replace("songs[\"a\"]", "songs[\"b\"]");
    assert_eq!(kind(src, &nested), ChangeKind::Code);
    let comment_in_fstring = "x = f'''{a # c\n}'''\n";
    assert!(c.stream(comment_in_fstring.as_bytes()).is_some());
}

#[test]
fn what_does_not_parse_is_code() {
    assert_eq!(kind("x = (1\n", "x = (1  \n"), ChangeKind::Code);
    assert_eq!(kind("x = 1\n", "x = 1\n)\n"), ChangeKind::Code);
    // Python 2.
    assert_eq!(kind("print 'a'\n", "print  'a'\n"), ChangeKind::Code);
    // Indentation Python rejects, though the tree could look the same.
    assert_eq!(kind("x = 1\n", "  x = 1\n"), ChangeKind::Code);
    assert_eq!(
        kind("def f():\n    a\n    b\n", "def f():\n    a\n\tb\n"),
        ChangeKind::Code
    );
    assert_eq!(
        kind(
            "def f():\n    if a:\n        b\n    c\n",
            "def f():\n    if a:\n        b\n  c\n"
        ),
        ChangeKind::Code
    );
    assert_eq!(
        kind(
            "if a:\n    b\nelse:\n    c\n",
            "if a:\n    b\n else:\n    c\n"
        ),
        ChangeKind::Code
    );
    // Characters some parsers skip as space but Python does not.
    assert_eq!(kind("x = 1\n", "x =\u{200b} 1\n"), ChangeKind::Code);
    assert_eq!(kind("x = 1\n", "x =\u{a0}1\n"), ChangeKind::Code);
    assert_eq!(kind("x = 1\n", "x = 1\n\u{feff}\n"), ChangeKind::Code);
}

#[test]
fn an_empty_file_and_one_with_only_comments_are_the_same_code() {
    // Found by the whole-stdlib corpus run (empty `__init__.py` files).
    assert_eq!(kind("", "# fpcheck was here\n"), ChangeKind::Layout);
    assert_eq!(kind("# a\n", ""), ChangeKind::Layout);
    assert_eq!(kind("", "\n\n"), ChangeKind::Layout);
    assert_eq!(kind("", "x = 1\n"), ChangeKind::Code);
    assert_eq!(kind("", "'''doc'''\n"), ChangeKind::Docstrings);
    assert_eq!(windowed("", "# c\n").0, ChangeKind::Layout);
}

#[test]
fn the_encoding_declaration_is_not_a_comment() {
    assert_eq!(
        kind(
            "# -*- coding: latin-1 -*-\nx = 1\n",
            "# -*- coding: utf-8 -*-\nx = 1\n"
        ),
        ChangeKind::Code
    );
    assert_eq!(
        kind(
            "#!/usr/bin/env python\n# hi\nx = 1\n",
            "#!/usr/bin/python3\n# ho\nx = 1\n"
        ),
        ChangeKind::Layout
    );
}

/// Classifies through the windowed parse and checks that it agrees with
/// whole parses (the kind, and whether the newer version parses).
fn windowed(old: &str, new: &str) -> (ChangeKind, Option<window::Plan>) {
    let mut c = Classifier::new();
    let a = c.parse(old.as_bytes().to_vec(), None);
    let b = c.parse(new.as_bytes().to_vec(), Some(&a));
    let whole = match (c.stream(old.as_bytes()), c.stream(new.as_bytes())) {
        (Some(x), Some(y)) => compare(&x, &y),
        _ => ChangeKind::Code,
    };
    let got = compare_parsed(&a, &b);
    assert_eq!(
        got, whole,
        "windowed and whole differ for {old:?} → {new:?}"
    );
    let fresh = Classifier::new().parse(new.as_bytes().to_vec(), None);
    assert_eq!(b.is_valid(), fresh.is_valid(), "validity of {new:?}");
    let plan = a
        .units
        .as_ref()
        .map(|units| window::plan(&a.source, units, &b.source));
    (got, plan)
}

/// The plan's lead and trail unit counts.
fn kept(plan: Option<window::Plan>) -> (usize, usize) {
    let plan = plan.expect("the older version parses");
    (plan.lead, plan.trail)
}

#[test]
fn only_the_statements_an_edit_touched_are_compared() {
    let body = "import os\n\n\ndef f(a):\n    return a\n\n\nclass C:\n    x = 1\n";
    // An addition at the end leaves every old statement out.
    // An addition at the end: the last unit is parsed again with it (a
    // unit ends where the next one starts).
    let (kind, plan) = windowed(body, &format!("{body}y = 2\n"));
    assert_eq!(kind, ChangeKind::Code);
    assert_eq!(kept(plan), (2, 0));
    // A comment at the top: everything from line 3 on is the same suffix.
    let (kind, plan) = windowed(body, &format!("# new\n{body}"));
    assert_eq!(kind, ChangeKind::Layout);
    assert_eq!(kept(plan), (0, 2));
    // An edit in the middle statement.
    let (kind, plan) = windowed(body, &body.replace("return a", "return  a  # same"));
    assert_eq!(kind, ChangeKind::Layout);
    assert_eq!(kept(plan), (1, 1));
    // Statements after `;` stay in their line's unit.
    let semi = "import os\n\n\nx = 1; y = 2\nz = 3\n";
    let (kind, plan) = windowed(semi, &semi.replace("y = 2", "y = 2  # c"));
    assert_eq!(kind, ChangeKind::Layout);
    assert_eq!(kept(plan), (1, 1));
}

#[test]
fn what_a_left_out_statement_depends_on_is_still_compared() {
    // An encoding declaration moved into line 2 by deleting lines above it.
    assert_eq!(
        windowed(
            "x = 1\n\n\ny = 2  # coding: latin-1\n",
            "x = 1\ny = 2  # coding: latin-1\n"
        )
        .0,
        ChangeKind::Code
    );
    // A string that becomes the module docstring.
    assert_eq!(
        windowed("x = 1\n'doc'\nz = 3\n", "'doc'\nz = 3\n").0,
        ChangeKind::Code
    );
    // The same statement, now indented at the top level.
    assert_eq!(
        windowed("x = 1\ny = 2\nz = 3\n", "x = 1\n  y = 2\nz = 3\n").0,
        ChangeKind::Code
    );
    assert_eq!(
        windowed("x = 1\n\ny = 2\n\nz = 3\n", "x = 1\ny = 2\nz = 3\n").0,
        ChangeKind::Layout
    );
    // Left-out statements that do not parse as Python 3 keep the file code.
    let py2 = "x = 1\n\nprint 'a'\n";
    assert_eq!(windowed(py2, &format!("# c\n{py2}")).0, ChangeKind::Code);
    let bad_indent = "x = 1\n\ndef f():\n    a\n\tb\n";
    assert_eq!(
        windowed(bad_indent, &format!("# c\n{bad_indent}")).0,
        ChangeKind::Code
    );
}

/// Python ends a line at a lone `\r` and reads `\r\n` as `\n` before
/// anything else; a parser given the raw bytes may take a lone `\r` for
/// whitespace or comment text (each claim checked with python3's `compile`).
#[test]
fn line_breaks_are_read_as_python_reads_them() {
    // `return \r1` returns None, then evaluates 1.
    assert_eq!(
        kind("def f():\n    return 1\n", "def f():\n    return \r1\n"),
        ChangeKind::Code
    );
    // The comment ends at the `\r`: `x = 2` is a statement.
    assert_eq!(
        kind("x = 1  # hi\n", "x = 1  # hi\rx = 2\n"),
        ChangeKind::Code
    );
    // The same code with other line breaks.
    assert_eq!(
        kind("x = 1\ny = 2\n", "x = 1\r\ny = 2  # c\r\n"),
        ChangeKind::Layout
    );
    assert_eq!(kind("x = 1\ry = 2\r", "x = 1\ny = 2\n"), ChangeKind::Layout);
    assert_eq!(
        kind(
            "def f():\r    '''A.'''\r    return 1\r",
            "def f():\n    '''B.'''\n    return 1\n"
        ),
        ChangeKind::Docstrings
    );
    // A string's line breaks are part of its value.
    assert_eq!(
        kind("x = '''a\nb'''\n", "x = '''a\r\nb'''\n"),
        ChangeKind::Layout
    );
    assert_eq!(
        kind("x = '''a\nb'''\n", "x = '''a\\r\nb'''\n"),
        ChangeKind::Code
    );
    // Python refuses NUL bytes anywhere.
    assert_eq!(kind("x = 1  # hi\n", "x = 1  # h\0i\n"), ChangeKind::Code);
}

/// A declared codec decides what every byte means: one that can turn
/// comment bytes into code (UTF-7, `unicode_escape`) makes the file `code`;
/// bytes the codec does not decode make it `code` (Python raises
/// SyntaxError); Latin-1 is read as Python decodes it.
#[test]
fn encodings_are_followed_or_refused() {
    for codec in ["utf-7", "unicode_escape", "raw_unicode_escape", "utf-16"] {
        let old = format!("# coding: {codec}\nx = 1\n");
        assert_eq!(
            kind(&old, &format!("{old}# c\n")),
            ChangeKind::Code,
            "{codec}"
        );
    }
    // Python runs `x = 2` here.
    assert_eq!(
        kind(
            "# coding: utf-7\nx = 1\n",
            "# coding: utf-7\nx = 1  # +AAo-x = 2\n"
        ),
        ChangeKind::Code
    );
    assert_eq!(
        kind(
            "# -*- coding: unicode_escape -*-\nx = 1\n",
            "# -*- coding: unicode_escape -*-\nx = 1  # \\u000ax = 2\n"
        ),
        ChangeKind::Code
    );
    // The second line counts when the first is only a comment.
    assert_eq!(
        kind(
            "#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\nx = 1\n",
            "#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\nx = 1  # +AAo-x = 2\n"
        ),
        ChangeKind::Code
    );
    // Latin-1: é is one character of a string.
    let latin = b"# coding: latin-1\nx = '\xe9'\n";
    let mut commented = latin.to_vec();
    commented.extend_from_slice(b"# \xe9\n");
    assert_eq!(classify(latin, &commented), ChangeKind::Layout);
    let other = b"# coding: latin-1\nx = '\xe8'\n";
    assert_eq!(classify(latin, other), ChangeKind::Code);
    // ASCII-compatible code pages, for ASCII files.
    for codec in ["cp1252", "iso-8859-15", "ascii", "utf8", "UTF_8", "latin1"] {
        let old = format!("# coding: {codec}\nx = 1\n");
        assert_eq!(
            kind(&old, &format!("{old}# c\n")),
            ChangeKind::Layout,
            "{codec}"
        );
    }
    // cp1252 leaves 0x81 undefined: Python raises SyntaxError.
    assert_eq!(
        classify(
            b"# coding: cp1252\nx = 1\n",
            b"# coding: cp1252\nx = 1  # \x81\n"
        ),
        ChangeKind::Code
    );
    // UTF-8 (declared or not) must be valid: Python 3.11 refuses invalid
    // bytes in a docstring, not in a comment; refusing both is the safe
    // side.
    assert_eq!(
        classify(b"x = 1  # hi\n", b"x = 1  # h\xffi\n"),
        ChangeKind::Code
    );
    assert_eq!(
        classify(b"'''doc'''\n", b"'''d\xffoc'''\n"),
        ChangeKind::Code
    );
    // A leading byte-order mark is dropped by Python, and allows only a
    // declaration spelled `utf-8`.
    assert_eq!(kind("x = 1\n", "\u{feff}x = 1\n"), ChangeKind::Layout);
    assert_eq!(
        kind(
            "\u{feff}# coding: utf-8\nx = 1\n",
            "\u{feff}# coding: utf-8\nx = 1  # c\n"
        ),
        ChangeKind::Layout
    );
    for codec in ["latin-1", "utf8"] {
        let old = format!("\u{feff}# coding: {codec}\nx = 1\n");
        assert_eq!(
            kind(&old, &format!("{old}# c\n")),
            ChangeKind::Code,
            "{codec}"
        );
    }
}

/// Files Python rejects that the parser accepts, on either side or both
/// (each claim checked with python3's `compile`).
#[test]
fn what_python_rejects_is_code_though_the_tree_parses() {
    // Docstring escapes Python cannot decode (SyntaxError).
    for bad in ["\\N{NOPE}", "\\x4", "\\u12", "\\U00110000", "\\x"] {
        let new = format!("\"\"\"doc {bad}\"\"\"\n");
        assert_eq!(kind("\"\"\"doc\"\"\"\n", &new), ChangeKind::Code, "{bad}");
        // Both sides rejected: a comment edit does not make it cosmetic.
        assert_eq!(
            kind(&new, &format!("# c\n{new}")),
            ChangeKind::Code,
            "{bad}"
        );
    }
    let ok = "def f():\n    '''A \\x41 \\u00e9 \\U0001F600 \\101 \\\\ \\q.'''\n";
    assert_eq!(kind("def f():\n    '''A.'''\n", ok), ChangeKind::Docstrings);
    assert_eq!(
        kind("'''doc'''\n", "r'''doc \\x4 \\N{NOPE}'''\n"),
        ChangeKind::Docstrings
    );
    // A line continuation followed by a blank or comment-only line, or by
    // the end of the file.
    assert_eq!(
        kind("x = 1 + \\\n  2\n", "x = 1 + \\\n\n  2\n"),
        ChangeKind::Code
    );
    assert_eq!(
        kind("x = 1 + \\\n  2\n", "x = 1 + \\\n  # two\n  2\n"),
        ChangeKind::Code
    );
    assert_eq!(kind("x = 1 \\\n\n", "x = 1 \\\n"), ChangeKind::Code);
    assert_eq!(
        kind("x = 1 + \\\n  2\n", "x = 1 + \\\n        2  # two\n"),
        ChangeKind::Layout
    );
}

fn nested_ifs(levels: usize) -> String {
    let mut s: String = (0..levels)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    s.push_str(&format!("{}pass\n", " ".repeat(levels)));
    s
}

/// Python's limits: beyond them both sides are rejected, and a comment
/// edit is not cosmetic (checked with python3's `compile`).
#[test]
fn beyond_pythons_limits_is_code() {
    let parens = |n: usize| format!("x = {}1{}\n", "(".repeat(n), ")".repeat(n));
    let edit = |s: &str| kind(s, &format!("# c\n{s}"));
    assert_eq!(edit(&parens(200)), ChangeKind::Layout);
    assert_eq!(edit(&parens(201)), ChangeKind::Code);
    let mixed = format!("x = {}1{}\n", "[(".repeat(101), ")]".repeat(101));
    assert_eq!(edit(&mixed), ChangeKind::Code);
    // Inside an f-string, counted from its bytes to be safe (Python 3.11
    // parses an f-string's expressions apart and accepts this one).
    let fstring = format!(
        "x = {}f'{{{}1{}}}'{}\n",
        "(".repeat(150),
        "(".repeat(60),
        ")".repeat(60),
        ")".repeat(150)
    );
    assert_eq!(edit(&fstring), ChangeKind::Code);
    assert_eq!(edit(&nested_ifs(99)), ChangeKind::Layout);
    assert_eq!(edit(&nested_ifs(100)), ChangeKind::Code);
    // Expressions nested past the compiler's recursion limit.
    let sum = |n: usize| format!("x = 1{}\n", " + 1".repeat(n));
    assert_eq!(edit(&sum(100)), ChangeKind::Layout);
    assert_eq!(edit(&sum(3000)), ChangeKind::Code);
    let negations = format!("x = {}1\n", "-".repeat(3000));
    assert_eq!(edit(&negations), ChangeKind::Code);
    // A statement past a limit, left out of the comparison as unchanged:
    // the whole-file check still sees it.
    // (Blank lines inside the brackets: a count of bytes would let it
    // through, the tokens' count does not.)
    let deep = format!("x = {}1{}\n\ny = 1\n", "(\n\n".repeat(201), ")".repeat(201));
    let (got, plan) = windowed(&deep, &deep.replace("y = 1", "y = 1  # c"));
    assert_eq!(got, ChangeKind::Code);
    assert_eq!(plan, None, "the older version does not parse");
    let blank = "x = 1 + \\\n\n  2\n\n\ny = 1\n";
    assert_eq!(
        windowed(blank, &blank.replace("y = 1", "y = 1  # c")).0,
        ChangeKind::Code
    );
}

/// What nests past Python's limits is refused before parsing (the parser
/// would recurse as deep): the change is `code` at once.
#[test]
fn deep_nesting_is_refused_before_parsing() {
    let brackets = format!("x = {}1{}\n", "(".repeat(1_000_000), ")".repeat(1_000_000));
    let negations = format!("x = {}1\n", "- ".repeat(500_000));
    let mut c = Classifier::new();
    for deep in [&brackets, &negations] {
        let parsed = c.parse(deep.as_bytes().to_vec(), None);
        assert!(!parsed.is_valid());
        assert_eq!(kind(deep, &format!("# c\n{deep}")), ChangeKind::Code);
    }
    // Brackets and operators in strings and comments do not count.
    let strings = "x = '('\n".repeat(201);
    assert_eq!(
        kind(&strings, &format!("# c\n{strings}")),
        ChangeKind::Layout
    );
    let comment = format!("# {}\nx = 1\n", "-".repeat(5000));
    assert_eq!(
        kind(&comment, &format!("# c\n{comment}")),
        ChangeKind::Layout
    );
}

/// Ruff's parser recurses without a limit of its own, and dropping a
/// left-deep tree recurses too: the deepest files the token count lets
/// through parse (and are refused, past Python's limits) on the parse
/// thread's stack, without overflowing it.
#[test]
fn the_deepest_files_let_through_do_not_overflow_the_parse_stack() {
    let just_under = limits::MAX_RECURSIVE - 10;
    let chains = [
        format!("x = {}1\n", "not ".repeat(just_under)),
        format!("x = {}1\n", "lambda:".repeat(just_under)),
        format!("x = 1{}\n", "**1".repeat(just_under)),
        format!("x = 1{}\n", " if 1 else 1".repeat(just_under / 2)),
        format!("x = {}1\n", "- (".repeat(199) + &"- ".repeat(999)),
        format!("x = a{}\n", ".b".repeat(400_000)),
        format!("x = a{}\n", "()".repeat(400_000)),
        format!("x = 1{}\n", "*1".repeat(400_000)),
    ];
    let mut c = Classifier::new();
    for text in &chains {
        assert!(limits::tokens_ok(text), "{}", &text[..20]);
        let parsed = c.parse(text.as_bytes().to_vec(), None);
        assert!(
            !parsed.is_valid(),
            "{} nests past Python's limits",
            &text[..20]
        );
    }
    let too_many = format!("x = {}1\n", "not ".repeat(limits::MAX_RECURSIVE + 1));
    assert!(!limits::tokens_ok(&too_many));
    // Names are not keywords, and the count is per logical line.
    assert!(limits::tokens_ok(&"nothing = iffy\n".repeat(60_000)));
    assert!(limits::tokens_ok(&"x = not y\n".repeat(60_000)));
}

/// The block-wise prefix and suffix agree with their byte-by-byte
/// definition, around block boundaries and overlaps included.
#[test]
fn shared_prefix_and_suffix_follow_their_definition() {
    let naive = |a: &[u8], b: &[u8]| {
        let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let room = a.len().min(b.len()) - prefix;
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(room)
            .take_while(|(x, y)| x == y)
            .count();
        (prefix, suffix)
    };
    let base: Vec<u8> = (0..300u32)
        .map(|i| b"ab\nc "[(i * 7 % 5) as usize])
        .collect();
    for len in [0, 1, 63, 64, 65, 128, 200, 300] {
        let a = &base[..len];
        for at in (0..=len).step_by(7).chain([len.saturating_sub(1), len / 2]) {
            let mut edits: Vec<Vec<u8>> = Vec::new();
            let mut inserted = a.to_vec();
            inserted.insert(at, b'#');
            edits.push(inserted);
            let mut doubled = a.to_vec();
            doubled.splice(at..at, a[at..].iter().take(70).copied());
            edits.push(doubled);
            if at < len {
                let mut changed = a.to_vec();
                changed[at] ^= 1;
                edits.push(changed);
                let mut removed = a.to_vec();
                removed.remove(at);
                edits.push(removed);
            }
            for b in &edits {
                assert_eq!(window::shared(a, b), naive(a, b), "len {len} at {at}");
                assert_eq!(window::shared(b, a), naive(b, a), "len {len} at {at}");
            }
        }
        assert_eq!(window::shared(a, a), naive(a, a));
    }
}

#[test]
fn python_source_is_known_by_its_name() {
    for path in [
        "a.py",
        "src/pkg/__init__.py",
        "gui.pyw",
        "src/types.pyi",
        "src/.x.py",
    ] {
        assert!(is_python_source(path), "{path}");
    }
    for path in [
        "notes.txt",
        "src/ext.pyx",
        "src/app.PY",
        "src/app.py.txt",
        "src/.py",
        "src/py",
        "src/app.pyc",
        "src.py/data.json",
    ] {
        assert!(!is_python_source(path), "{path}");
    }
}

/// A docstring on its class's or function's header line is a statement
/// of that one-line body: the line break after it ends the body, so it is
/// compared even without docstrings (else `x = 1` after it would read as
/// the body's next statement). Each claim checked with python3's `ast`.
#[test]
fn a_docstring_on_the_header_line_keeps_its_line_break() {
    for (old, new) in [
        ("class A: \"\"\"d\"\"\"\nx = 1\n", "class A: x = 1\n"),
        ("def f(): 'd'\nx = 1\n", "def f(): x = 1\n"),
        ("async def f(): 'd'\nx = 1\n", "async def f(): x = 1\n"),
    ] {
        assert_eq!(kind(old, new), ChangeKind::Code, "{old:?} → {new:?}");
        assert_eq!(kind(new, old), ChangeKind::Code, "{new:?} → {old:?}");
    }
    assert_eq!(
        kind("class A: 'd'\nx = 1\n", "class A: 'e'  # c\nx = 1\n"),
        ChangeKind::Docstrings
    );
    assert_eq!(
        kind("class A:\n    'd'\n    x = 1\n", "class A:\n    x = 1\n"),
        ChangeKind::Docstrings
    );
}

/// A windowed parse whose slice holds no statement would make the first
/// kept statement after it the module's first one, and perhaps its
/// docstring, which only a parse from the start recognises.
#[test]
fn a_statement_that_becomes_the_first_is_parsed_again() {
    let old = "\"\"\"a\"\"\"\n\n\n\"\"\"doc\"\"\"\n";
    let new = "# a\n# b\n# c\n\"\"\"doc\"\"\"\n";
    assert_eq!(windowed(old, new).0, ChangeKind::Code);
    assert_eq!(kind(old, new), ChangeKind::Code);
    let old = "x = 1\n\n\n'doc'\ny = 2\n";
    assert_eq!(
        windowed(old, "# a\n# b\n# c\n'doc'\ny = 2\n").0,
        ChangeKind::Code
    );
}

/// Nesting a count of bytes cannot see (an earlier version counted bytes
/// before parsing): closing brackets in strings, blank lines between
/// brackets, runs of prefix operators (each a level for the parser, one
/// count for the bytes). Each nests hundreds of thousands of
/// levels deep within 1 MiB and overflowed the parse thread's stack (an
/// abort of the whole process); the tokens refuse them before parsing,
/// and the parser goes on with the next file.
#[test]
fn nesting_hidden_from_the_byte_count_is_refused() {
    let hostile = [
        format!("x = {}\n", "(')'".repeat(260_000)),
        format!("x = {}\n", "{'}'".repeat(260_000)),
        format!("x = {}1\n", "(\n\n".repeat(340_000)),
        format!(
            "x = {}a\n",
            format!("{} not ", "-".repeat(1000)).repeat(1000)
        ),
    ];
    let mut c = Classifier::new();
    for text in &hostile {
        assert!(!limits::tokens_ok(text), "{}", &text[..12]);
        assert!(!c.parse(text.as_bytes().to_vec(), None).is_valid());
        assert!(c.parse(b"x = 1\n".to_vec(), None).is_valid());
    }
    // What Python accepts passes: brackets in strings and comments do not
    // count (for the bytes, a blank line restarts the count).
    let fine = format!(
        "x = ')]}}' + '((('  # ([{{\n\ny = ({})\n\nz = [\n\n1]\n",
        "(".repeat(199) + &")".repeat(199)
    );
    assert!(limits::tokens_ok(&fine));
    assert!(c.parse(fine.into_bytes(), None).is_valid());
    // The operators are counted in a logical line, where the parser's
    // recursion unwinds: a file is refused the same whole or in the slice
    // of it that a windowed parse reads.
    let products = "x = a * b\n".repeat(limits::MAX_RECURSIVE + 1);
    assert!(limits::tokens_ok(&products));
    let (got, _) = windowed(&products, &format!("# c\n{products}"));
    assert_eq!(got, ChangeKind::Layout);
    let unary = format!("x = {}a\n", "-".repeat(limits::MAX_RECURSIVE + 1));
    assert!(!limits::tokens_ok(&unary));
    let starred = format!("x = [{}a]\n", "* ".repeat(limits::MAX_RECURSIVE + 1));
    assert!(!limits::tokens_ok(&starred));
    // Binary operators are looped over, not recursed into: a long
    // expression is not refused (sympy's bench_solvers.py has 53,916 in
    // one logical line).
    let binary = format!("x = [a{}]\n", " * a - a\n".repeat(limits::MAX_RECURSIVE));
    assert!(limits::tokens_ok(&binary));
    // Python rejects brackets that do not match.
    for bad in ["x = (]\n", "x = [)\n", "x = 1)\n", "x = f'{(}'\n"] {
        assert!(!limits::tokens_ok(bad), "{bad}");
    }
}

fn proven(old: &str, new: &str) -> bool {
    proven_code(
        &Arc::new(old.as_bytes().to_vec()),
        &Arc::new(new.as_bytes().to_vec()),
    )
}

/// The lexer's shortcut says `code` only where the parser does: what it
/// proves, and what it leaves to the parser (every cosmetic change, and
/// code changes that keep the token kinds).
#[test]
fn the_shape_proves_code_only_where_the_parser_finds_it() {
    use ChangeKind::{Code, Docstrings, Layout};
    let cases: &[(&str, &str, ChangeKind, bool)] = &[
        // Statements added, removed, operators and keywords changed.
        ("x = 1\n", "x = 1\ny = 2\n", Code, true),
        ("x = a\n", "x = not a\n", Code, true),
        ("x = 1\n", "x = 1;\n", Code, true),
        (
            "if a:\n    pass\n",
            "if a:\n    pass\nelse:\n    pass\n",
            Code,
            true,
        ),
        (
            "def f():\n    return 1\n",
            "def f():\n    if a:\n        return 1\n",
            Code,
            true,
        ),
        (
            "match = 1\n",
            "match x:\n    case 1:\n        pass\n",
            Code,
            true,
        ),
        ("x = 1\n", "x = (\n", Code, true),
        // What Python would not decode is code without lexing.
        ("x = 1\n", "x = 1\0\n", Code, true),
        ("x = 1\n", "# coding: utf-7\nx = 1\n", Code, true),
        // Code with the same kinds: left to the parser.
        ("x = 1\n", "x = 2\n", Code, false),
        ("x = 'a'\n", "x = 'b'\n", Code, false),
        ("x = f'{a}'\n", "x = f'{b} {c}'\n", Code, false),
        ("x = f'{a}'\n", "x = t'{a}'\n", Code, false),
        ("f(a)\n", "f((a))\n", Code, false),
        ("x = 1\n'a'\n", "x = 1\n", Code, false),
        ("match = 1\n", "match = 2\n", Code, false),
        // Cosmetic changes never have a shape of their own.
        ("x = 1  # a\n", "x = 1\n", Layout, false),
        ("x = (1,\n     2)\n", "x = (1, 2)\n", Layout, false),
        ("x = f'{a}'  # c\n", "x = f'{a}'\n", Layout, false),
        ("'''doc'''\nx = 1\n", "x = 1\n", Docstrings, false),
        ("('doc')\nx = 1\n", "x = 1\n", Docstrings, false),
        ("'a' 'b'\nx = 1\n", "'c'\nx = 1\n", Docstrings, false),
        (
            "def f():\n    return 1\n",
            "def f():\n    \"\"\"Doc.\"\"\"\n    return 1\n",
            Docstrings,
            false,
        ),
        (
            "class A: 'd'\nx = 1\n",
            "class A: 'e'  # c\nx = 1\n",
            Docstrings,
            false,
        ),
        (
            "class A:\n    'd'\n    x = 1\n",
            "class A:\n    x = 1\n",
            Docstrings,
            false,
        ),
    ];
    for (old, new, want, shape) in cases {
        assert_eq!(kind(old, new), *want, "{old:?} → {new:?}");
        assert_eq!(proven(old, new), *shape, "{old:?} → {new:?}");
        assert_eq!(proven(new, old), *shape, "{new:?} → {old:?}");
    }
}

/// The shape check runs on the history's own threads, not the parse
/// thread's large stack: hostile nesting (brackets, f-strings, prefix
/// operators, blocks) is lexed without recursing, on a small stack, and
/// the change is still classified.
#[test]
fn the_shape_of_hostile_nesting_is_read_on_a_small_stack() {
    let hostile = [
        "(".repeat(1 << 20),
        format!("x = {}1{}\n", "f'{".repeat(20_000), "}'".repeat(20_000)),
        format!("x = {}a\n", "not ".repeat(200_000)),
        format!("x = {}a\n", "-".repeat(1 << 20)),
        nested_ifs(5_000),
    ];
    let small = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            hostile
                .iter()
                .map(|h| (proven(h, "x = 1\n"), proven(h, &format!("{h}\n# c\n"))))
                .collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .unwrap();
    // Against a small file the kinds differ; against itself with a comment
    // added they do not.
    for (against_small, against_itself) in small {
        assert!(against_small);
        assert!(!against_itself);
    }
}

mod window_diff;

#[test]
fn a_module_level_version_string_is_its_own_kind() {
    let old = "\"\"\"Pkg.\"\"\"\nimport os\n__version__ = \"1.0\"\nVERSION = (1, 0)\n";
    let new = "\"\"\"Pkg.\"\"\"\nimport os\n__version__ = \"1.1\"\nVERSION = (1, 1)\n";
    assert_eq!(kind(old, new), ChangeKind::Version);
    let annotated = ("__version__: str = '1.0'\n", "__version__: str = '1.1'\n");
    assert_eq!(kind(annotated.0, annotated.1), ChangeKind::Version);
    // With a docstring change too: still only a version and cosmetics.
    let docs = "\"\"\"Pkg, new.\"\"\"\nimport os\n__version__ = \"1.1\"\nVERSION = (1, 1)\n";
    assert_eq!(kind(old, docs), ChangeKind::Version);
    // With a real change: code.
    let code = "\"\"\"Pkg.\"\"\"\nimport sys\n__version__ = \"1.1\"\nVERSION = (1, 1)\n";
    assert_eq!(kind(old, code), ChangeKind::Code);
}

#[test]
fn other_version_assignments_are_code() {
    // Not module level, another name, a computed value, two targets, the
    // assignment added or removed.
    let pairs = [
        (
            "def f():\n    __version__ = '1'\n",
            "def f():\n    __version__ = '2'\n",
        ),
        ("version = '1'\n", "version = '2'\n"),
        ("__version__ = get('1')\n", "__version__ = get('2')\n"),
        ("__version__ = v = '1'\n", "__version__ = v = '2'\n"),
        ("__version__ = '1'\n", "__version__ = f'2'\n"),
        ("x = 1\n", "x = 1\n__version__ = '2'\n"),
        (
            "__version__ = '1'\n",
            "__version__ = ('1',)\n__all__ = []\n",
        ),
    ];
    for (old, new) in pairs {
        assert_eq!(kind(old, new), ChangeKind::Code, "{old:?} → {new:?}");
    }
}

#[test]
fn a_registered_mcp_functions_docstring_is_code() {
    for decorator in [
        "@mcp.tool",
        "@mcp.tool()",
        "@server.tool(name='x')",
        "@app.resource('r://x')",
        "@mcp.prompt",
    ] {
        let old = format!("{decorator}\ndef heartbeat():\n    \"\"\"Beat.\"\"\"\n    return 1\n");
        let new = format!(
            "{decorator}\ndef heartbeat():\n    \"\"\"Beat, and report.\"\"\"\n    return 1\n"
        );
        assert_eq!(kind(&old, &new), ChangeKind::Code, "{decorator}");
        let class = |d: &str| {
            format!("class S:\n    {decorator}\n    def t(self):\n        \"\"\"{d}\"\"\"\n")
        };
        assert_eq!(
            kind(&class("a"), &class("b")),
            ChangeKind::Code,
            "{decorator}"
        );
    }
    // Any other decorator keeps a docstring a docstring.
    let cached =
        |d: &str| format!("import functools\n@functools.cache\ndef f():\n    \"\"\"{d}\"\"\"\n");
    assert_eq!(kind(&cached("a"), &cached("b")), ChangeKind::Docstrings);
}

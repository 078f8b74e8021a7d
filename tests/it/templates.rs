//! A user's template (`--template`) that would never end is stopped: no
//! recursion, bounded `range`, loops, output, values and time; an `error:`
//! line naming the template and exit 2 (a bad template, as one that does
//! not parse), for one runtime and several.

use std::time::{Duration, Instant};

use crate::support::{fpcheck_command, Run, TestRepo};

/// One runtime released as v1.0.0 with a change after it; and two
/// runtimes (`server`, `worker`) of one repository, the same.
fn repos() -> [(TestRepo, &'static str); 2] {
    let one = TestRepo::new();
    one.write("src/app.py", "A = 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    one.commit("one");
    one.tag("v1.0.0");
    one.write("src/app.py", "A = 2\n");
    one.commit("two");
    let two = TestRepo::new();
    two.write(
        "fpcheck.toml",
        "[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n",
    )
    .write("server/app.py", "serve = 1\n")
    .write("worker/job.py", "work = 1\n");
    two.commit("one");
    two.tag("v1.0.0");
    two.write("server/app.py", "serve = 2\n");
    two.commit("two");
    [(one, "one runtime"), (two, "two runtimes")]
}

/// Runs fpcheck, killing it after 10 s (a failure).
fn run_within_10s(repo: &TestRepo, args: &[&str]) -> Run {
    let mut child = fpcheck_command(repo.path())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("{args:?} still ran after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::finished(child.wait_with_output().unwrap())
}

const NEVER_ENDING: &[(&str, &str, &str)] = &[
    (
        "recursive.tera",
        "{% macro f(n) %}{{ self::f(n=n+1) }}{% endmacro f %}{{ self::f(n=0) }}",
        "its macros call themselves (f -> f)",
    ),
    (
        "mutual.tera",
        "{% macro f(n) %}{{ self::g(n=n+1) }}{% endmacro f %}\
         {% macro g(n) %}{{ self::f(n=n+1) }}{% endmacro g %}{{ self::f(n=0) }}",
        "its macros call themselves (",
    ),
    (
        "imported.tera",
        "{% import \"imported.tera\" as me %}\
         {% macro f(n) %}{{ me::f(n=n+1) }}{% endmacro f %}{{ self::f(n=0) }}",
        "its macros call themselves (f -> f)",
    ),
    (
        "include.tera",
        "x{% include \"include.tera\" %}",
        "it includes itself (include.tera)",
    ),
    (
        "split.tera",
        "{% set a = \"aaaaaaaaaaaaaaaa\" %}{% set b = a | replace(from=\"a\", to=a) %}\
         {% set c = b | replace(from=\"a\", to=b) %}{% set d = c | replace(from=\"a\", to=b) %}\
         {{ d | split(pat=\"\") | length }}",
        "the filter split would make a value larger than 67108864 bytes",
    ),
    (
        "escape.tera",
        "{% set a = \"<<<<<<<<<<<<<<<<\" %}{% set b = a | replace(from=\"<\", to=a) %}\
         {% set c = b | replace(from=\"<\", to=b) %}{% set d = c | replace(from=\"<\", to=b) %}\
         {{ d | escape | length }}",
        "the filter escape would make a value larger than 67108864 bytes",
    ),
    (
        "range.tera",
        "{% for i in range(end=2000000000) %}x{% endfor %}",
        "range(start=0, end=2000000000, step_by=1) gives 2000000000 numbers, more than 100000",
    ),
    (
        "step.tera",
        "{% for i in range(end=5, step_by=0) %}x{% endfor %}",
        "range(step_by=0) never ends",
    ),
    (
        "nested.tera",
        "{% for i in range(end=100000) %}{% for j in range(end=100000) %}\
         {% for k in range(end=100000) %}{% endfor %}{% endfor %}{% endfor %}",
        "",
    ),
    (
        "output.tera",
        "{% for i in range(end=100000) %}{% for j in range(end=100000) %}\
         {{ report | json_encode }}{% endfor %}{% endfor %}",
        "it wrote more than 67108864 bytes",
    ),
    (
        "in_macro.tera",
        "{% macro m(s) %}{% for i in range(end=100000) %}{% for j in range(end=100000) %}\
         {{ s }}{{ s }}{% endfor %}{% endfor %}{% endmacro m %}\
         {{ self::m(s=\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\") | length }}",
        "",
    ),
    (
        "doubling.tera",
        "{% set s = \"xxxxxxxxxxxxxxxx\" %}{% for i in range(end=64) %}\
         {% set_global s = s ~ s %}{% endfor %}{{ s | length }}",
        "it wrote more than 67108864 bytes",
    ),
    (
        "replace.tera",
        "{% set a = \"aaaaaaaaaaaaaaaa\" %}{% set b = a | replace(from=\"a\", to=a) %}\
         {% set c = b | replace(from=\"a\", to=b) %}{% set d = c | replace(from=\"a\", to=c) %}\
         {{ d | replace(from=\"a\", to=d) | length }}",
        "the filter replace would make a value larger than 67108864 bytes",
    ),
    (
        "join.tera",
        "{% set a = \"aaaaaaaaaaaaaaaa\" %}{% for i in range(end=20) %}{% set_global a = a ~ a %}\
         {% if a | length > 1000000 %}{% break %}{% endif %}{% endfor %}\
         {{ range(end=100000) | join(sep=a) | length }}",
        "the filter join would make a value larger than 67108864 bytes",
    ),
];

#[test]
fn templates_that_would_never_end_are_stopped_with_an_error_naming_them() {
    for (repo, shape) in repos() {
        for (name, text, why) in NEVER_ENDING {
            repo.write(name, text);
            let run = run_within_10s(&repo, &["v1.0.0..", "--template", name]);
            assert_eq!(run.code, 2, "{shape} {name}: {}{}", run.stdout, run.stderr);
            let line = format!("fpcheck: error: template {name} was stopped: {why}");
            assert!(
                run.stderr.starts_with(&line),
                "{shape} {name}: {}",
                run.stderr
            );
            assert!(run.stdout.is_empty(), "{shape} {name}");
        }
        // Within the bounds: loops, macros (of the file and of section.md),
        // ranges and filters render as before.
        repo.write(
            "fine.tera",
            "{% import \"section.md\" as s %}{% macro f(n) %}<{{ n }}>{% endmacro f %}\
             {% macro g(n) %}{{ self::f(n=n) }}{{ self::f(n=n+1) }}{% endmacro g %}\
             {% for i in range(end=3) %}{{ self::g(n=i) }}{% endfor %} \
             {{ \"ab\" | replace(from=\"a\", to=\"x\") }} {{ range(end=3) | join(sep=\",\") }}\n",
        );
        let run = run_within_10s(&repo, &["v1.0.0..", "--template", "fine.tera"]);
        assert_eq!(run.code, 0, "{shape}: {}", run.stderr);
        assert_eq!(run.stdout, "<0><1><1><2><2><3> xb 0,1,2\n", "{shape}");
        // An HTML template escapes as tera does, inside macros and filter
        // sections too (where fpcheck measures each value before writing it).
        repo.write(
            "page.html",
            "{% macro m(x) %}<b>{{ x }}</b>{{ x | safe }}{{ x ~ \"<p>\" }}{{ \"<q>\" ~ x | upper }}\
             {% endmacro m %}{{ self::m(x=\"<i>\") }} {{ \"<u>\" }}\
             {% filter upper %}{{ \"<s>\" ~ \"a\" }}{{ \"<t>\" }}{% endfilter %}\n",
        );
        let run = run_within_10s(&repo, &["v1.0.0..", "--template", "page.html"]);
        assert_eq!(run.code, 0, "{shape}: {}", run.stderr);
        assert_eq!(
            run.stdout,
            "<b>&lt;i&gt;</b><i><i><p>&lt;Q&gt;&lt;I&gt; &lt;u&gt;&LT;S&GT;A&LT;T&GT;\n",
            "{shape}"
        );
    }
}

/// A chain of macro calls longer than the bound is refused whichever
/// macro the check happens to start from: each of 70 macros calls the
/// next, and the template is tried under several names (the order the
/// macros are met in differs).
#[test]
fn a_chain_of_macro_calls_past_the_bound_is_always_refused() {
    let mut text = String::new();
    for n in 0..70 {
        text.push_str(&format!(
            "{{% macro m{n}() %}}{{{{ self::m{}() }}}}{{% endmacro m{n} %}}",
            n + 1
        ));
    }
    text.push_str("{% macro m70() %}x{% endmacro m70 %}{{ self::m0() }}");
    let (repo, _) = repos().into_iter().next().unwrap();
    for round in 0..8 {
        let name = format!("chain{round}.tera");
        repo.write(&name, &text);
        let run = run_within_10s(&repo, &["v1.0.0..", "--template", &name]);
        assert_eq!(run.code, 2, "{name}: {}{}", run.stdout, run.stderr);
        let line = format!(
            "fpcheck: error: template {name} was stopped: its macro calls nest more than 64 deep"
        );
        assert!(run.stderr.starts_with(&line), "{name}: {}", run.stderr);
    }
}

//! A small executable model of docs/spec.md section 7, written from the
//! spec's text, against fpcheck's `status` (the library's check on many
//! random inputs, the CLI on a sample of them).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};

use fpcheck::verdict::client;
use fpcheck::verdict::marker::MarkerState;
use fpcheck::verdict::process::{self, CheckInputs};

use super::{release_a, Host, BASE_FP, MARKER};

const A: &str = "aaaa";

/// The marker as the model sees it.
#[derive(Clone, Debug)]
enum Marker {
    Absent,
    Corrupt,
    Present(Map<String, Value>),
}

fn py_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

fn strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// Section 6's client names, as a table.
fn normalise(name: &str) -> &'static str {
    let n = strip(name).to_lowercase().replace(['-', ' '], "_");
    match n.as_str() {
        "claude" | "claudecode" | "claude_code" => "claude_code",
        "claude_desktop_app" | "desktop" | "claude_desktop" => "claude_desktop",
        "codex" => "codex",
        _ => "",
    }
}

/// Section 7, line by line.
fn model(
    m: &Marker,
    iv: &str,
    ifp: &str,
    pv: &str,
    pfp: &str,
    client: &str,
) -> (bool, &'static str) {
    let (iv, ifp, pfp) = (strip(iv), strip(ifp), strip(pfp));
    let pv = if strip(pv).is_empty() { iv } else { strip(pv) };
    let client = normalise(client);
    let usable = !ifp.is_empty() && !pfp.is_empty() && pfp != "unknown";
    let obj = match m {
        Marker::Present(o) => Some(o),
        _ => None,
    };
    let required = obj.is_some_and(|o| o.get("required").is_none_or(py_truthy));
    let acknowledged = !client.is_empty()
        && obj
            .and_then(|o| o.get("clients"))
            .and_then(Value::as_object)
            .and_then(|c| c.get(client))
            == Some(&json!("ok"));
    let to_fp = obj
        .and_then(|o| o.get("to_fingerprint"))
        .is_some_and(|v| match v {
            Value::String(s) => !strip(s).is_empty(),
            other => py_truthy(other),
        });
    let (mut restart, mut reason) = (false, "");
    if required && !acknowledged {
        (restart, reason) = (true, "marker_required");
    }
    let keep = |reason: &'static str, own| if reason.is_empty() { own } else { reason };
    // A `clients` that is not an object is not a marker of section 6's
    // shape (the reference's dict of it fails): corrupt, whatever else;
    // one Python finds false is read as no clients (`or {}`).
    let misshapen = obj
        .and_then(|o| o.get("clients"))
        .is_some_and(|c| !c.is_object() && py_truthy(c));
    if matches!(m, Marker::Corrupt) || misshapen {
        (restart, reason) = (true, "marker_corrupt");
    } else if usable && ifp != pfp {
        (restart, reason) = (true, keep(reason, "fingerprint_mismatch"));
    } else if required && !acknowledged && to_fp && (pfp.is_empty() || pfp == "unknown") {
        (restart, reason) = (true, keep(reason, "process_fingerprint_missing"));
    } else if !usable && !iv.is_empty() && !pv.is_empty() && iv != pv {
        (restart, reason) = (true, keep(reason, "version_mismatch"));
    } else if acknowledged {
        (restart, reason) = (false, "");
    }
    (restart, reason)
}

fn marker_strategy(fp: &'static str) -> impl Strategy<Value = Marker> {
    let required = prop::option::of(prop::sample::select(vec![
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(""),
        json!("no"),
        json!(null),
    ]));
    let to = prop::option::of(prop::sample::select(vec![
        json!(""),
        json!("  "),
        json!(fp),
        json!("bbbb"),
        json!(7),
        json!(null),
    ]));
    let entry = prop::sample::select(vec![
        json!("ok"),
        json!("restart_session_required"),
        json!(true),
        json!("OK"),
    ]);
    let names = prop::sample::select(vec![
        "codex",
        "claude_code",
        "claude_desktop",
        "Codex",
        "foo",
    ]);
    let clients = prop_oneof![
        Just(None),
        Just(Some(json!(["codex"]))),
        Just(Some(json!("codex"))),
        Just(Some(json!(null))),
        Just(Some(json!([]))),
        Just(Some(json!(false))),
        Just(Some(json!(0))),
        Just(Some(json!(""))),
        prop::collection::vec((names, entry), 0..4).prop_map(|es| Some(Value::Object(
            es.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
        ))),
    ];
    prop_oneof![
        1 => Just(Marker::Absent),
        1 => Just(Marker::Corrupt),
        6 => (required, to, clients).prop_map(|(r, t, c)| {
            let mut o = Map::new();
            if let Some(r) = r { o.insert("required".into(), r); }
            if let Some(t) = t { o.insert("to_fingerprint".into(), t); }
            if let Some(c) = c { o.insert("clients".into(), c); }
            Marker::Present(o)
        }),
    ]
}

fn texts(options: Vec<&'static str>) -> impl Strategy<Value = &'static str> {
    prop::sample::select(options)
}

type Case = (
    Marker,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

fn case(fp: &'static str) -> impl Strategy<Value = Case> {
    (
        marker_strategy(fp),
        texts(vec!["", "1.0.0", " 1.0.0 ", "1.1.0"]),
        texts(vec!["", fp]),
        texts(vec!["", "  ", "1.0.0", "1.1.0", " 1.1.0"]),
        texts(vec!["", "unknown", " unknown ", fp, "bbbb"]),
        texts(vec![
            "",
            "codex",
            "Codex",
            "claude",
            "desktop",
            "claude-code",
            "foo",
        ]),
    )
}

#[test]
fn the_library_check_follows_the_model() {
    let mut runner = TestRunner::new(Config {
        cases: 3000,
        ..Config::default()
    });
    runner
        .run(&case(A), |(m, iv, ifp, pv, pfp, c)| {
            let state = match &m {
                Marker::Absent => MarkerState::Absent,
                Marker::Corrupt => MarkerState::Corrupt("x".into()),
                Marker::Present(o) => {
                    fpcheck::verdict::marker::parse(Value::Object(o.clone()).to_string().as_bytes())
                }
            };
            let got = process::check(&CheckInputs {
                marker: &state,
                installed_version: iv,
                installed_fingerprint: fpcheck::fingerprint::available(ifp),
                process_version: pv,
                process_fingerprint: Some(pfp),
                client: client::normalise(c),
            });
            let want = model(&m, iv, ifp, pv, pfp, c);
            prop_assert_eq!(
                (got.restart_required, got.reason.map_or("", |r| r.as_str())),
                want
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn the_status_command_follows_the_model() {
    // The installed runtime is release A (1.0.0, BASE_FP); the rest varies.
    let h = Host::new();
    h.install(&release_a());
    let mut runner = TestRunner::new(Config {
        cases: 40,
        ..Config::default()
    });
    runner
        .run(&case(BASE_FP), |(m, _, _, pv, pfp, c)| {
            let _ = std::fs::remove_file(h.join(MARKER));
            match &m {
                Marker::Absent => {}
                Marker::Corrupt => h.write(MARKER, "{\"required\": tru"),
                Marker::Present(o) => h.write(MARKER, &Value::Object(o.clone()).to_string()),
            }
            let mut args = vec!["--client", c];
            if c.is_empty() {
                args.clear();
            }
            let run = h.status(pfp, pv, &args);
            let j = run.json();
            let want = model(&m, "1.0.0", BASE_FP, pv, pfp, c);
            prop_assert_eq!(
                (
                    j["restart_required"].as_bool().unwrap(),
                    j["reason"].as_str().unwrap()
                ),
                want
            );
            prop_assert_eq!(run.code, if want.0 { 1 } else { 0 });
            Ok(())
        })
        .unwrap();
}

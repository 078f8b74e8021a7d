//! `status`: every reason code of section 7, and its human answer.

use super::*;

#[test]
fn status_gives_every_reason_code_of_section_7() {
    let h = Host::new();
    h.install(&release_a()); // installed: 1.0.0, BASE_FP
    let marker = |body: &str| h.write(MARKER, body);
    let no_marker = || {
        let _ = std::fs::remove_file(h.join(MARKER));
    };
    let ok_marker = format!(
        "{{\"schema_version\": 3, \"required\": true, \"to_fingerprint\": \"{BASE_FP}\", \"clients\": {{\"codex\": \"ok\", \"claude_desktop\": \"restart_client_required\"}}}}"
    );
    // (setup, process fp, process version, client, restart, reason, exit)
    type Setup<'a> = Box<dyn Fn() + 'a>;
    type Row<'a> = (
        Setup<'a>,
        &'a str,
        &'a str,
        Option<&'a str>,
        bool,
        &'a str,
        i32,
    );
    #[rustfmt::skip]
    let rows: Vec<Row> = vec![
        (Box::new(no_marker), BASE_FP, "1.0.0", None, false, "", 0),
        (Box::new(no_marker), V2_FP, "0.9.0", None, true, "fingerprint_mismatch", 1),
        (Box::new(no_marker), V2_FP, "1.0.0", None, true, "fingerprint_mismatch", 1),
        (Box::new(no_marker), BASE_FP, "0.9.0", None, false, "", 0),
        (Box::new(no_marker), "unknown", "0.9.0", None, true, "version_mismatch", 1),
        (Box::new(no_marker), "", "0.9.0", None, true, "version_mismatch", 1),
        (Box::new(no_marker), "unknown", "1.0.0", None, false, "", 0),
        (Box::new(no_marker), "unknown", "", None, false, "", 0),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", None, true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("desktop"), true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("desk"), true, "marker_required", 1),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some("codex"), false, "", 0),
        (Box::new(|| marker(&ok_marker)), BASE_FP, "1.0.0", Some(" CODEX "), false, "", 0),
        // An acknowledged client: the marker no longer speaks for it, but
        // the other signals do (the reference as of v7.38.7).
        (Box::new(|| marker(&ok_marker)), "unknown", "1.0.0", Some("codex"), false, "", 0),
        (Box::new(|| marker(&ok_marker)), V2_FP, "1.0.0", Some("codex"), true, "fingerprint_mismatch", 1),
        (Box::new(|| marker(&ok_marker)), "unknown", "0.9.0", Some("codex"), true, "version_mismatch", 1),
        // Not acknowledged, and the process cannot show its fingerprint.
        (Box::new(|| marker(&ok_marker)), "unknown", "1.0.0", Some("desktop"), true, "marker_required", 1),
        (Box::new(|| marker("{}")), BASE_FP, "1.0.0", None, true, "marker_required", 1),
        (Box::new(|| marker("{\"required\": false}")), BASE_FP, "1.0.0", None, false, "", 0),
        (Box::new(|| marker("{oops")), BASE_FP, "1.0.0", Some("codex"), true, "marker_corrupt", 1),
        (Box::new(|| marker("[3]")), BASE_FP, "1.0.0", None, true, "marker_corrupt", 1),
        (Box::new(|| marker("")), BASE_FP, "1.0.0", None, true, "marker_corrupt", 1),
    ];
    for (n, (setup, fp, version, client, restart, reason, exit)) in rows.into_iter().enumerate() {
        setup();
        let mut extra = vec![];
        if let Some(c) = client {
            extra = vec!["--client", c];
        }
        let run = h.status(fp, version, &extra);
        let j = run.json();
        assert_eq!(
            (
                &j["restart_required"],
                j["reason"].as_str().unwrap(),
                run.code
            ),
            (&json!(restart), reason, exit),
            "row {n}: {}",
            run.stdout
        );
    }

    // Every field, once.
    marker(&ok_marker);
    let j = h.status(BASE_FP, "", &["--client", "codex"]).json();
    assert_eq!(
        j,
        json!({
            "schema_version": 1,
            "restart_required": false,
            "reason": "",
            "installed_fingerprint": BASE_FP,
            "process_fingerprint": BASE_FP,
            "fingerprint_match": true,
            "installed_version": "1.0.0",
            "process_version": "1.0.0",
            "version_match": true,
            "marker_exists": true,
            "marker_corrupt": false,
            "client": "codex",
            "client_action": "ok",
            "installed_unavailable_reason": null,
            "marker_problem": null,
            "conservative": null,
            "warnings": [],
            "warning_codes": [],
        })
    );
    marker("{oops");
    let j = h.status(BASE_FP, "1.0.0", &[]).json();
    assert_eq!(
        (&j["marker_exists"], &j["marker_corrupt"]),
        (&json!(true), &json!(true))
    );
    assert!(j["marker_problem"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{MARKER} is not valid JSON")));

    // An unavailable installed fingerprint: the versions decide (rule 4);
    // "no restart" is exit 0 whatever it rests on.
    no_marker();
    let mut broken = release_a();
    broken.insert("src/plugins/gone.py", "-> nowhere.py".into());
    h.install(&broken);
    let run = h.status(BASE_FP, "0.9.0", &[]);
    let j = run.json();
    assert_eq!((run.code, &j["reason"]), (1, &json!("version_mismatch")));
    assert_eq!(j["installed_fingerprint"], "");
    assert_eq!(
        j["installed_unavailable_reason"],
        "app/src/plugins/gone.py: symlink to nowhere.py is broken"
    );
    let run = h.status(BASE_FP, "1.0.0", &[]);
    assert_eq!(
        (run.code, &run.json()["restart_required"]),
        (0, &json!(false))
    );
}

#[test]
fn status_prints_a_human_answer() {
    let h = Host::new();
    h.install(&release_a());
    let run = h.fpcheck(&Host::status_args(MARKER, V2_FP, "0.9.0", &[]));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        format!("restart required (fingerprint_mismatch)\n  installed  1.0.0  {BASE_FP}\n  process    0.9.0  {V2_FP}\n  marker     absent\n")
    );
}

/// The installed runtime gone (`--dir` names nothing) while the process
/// gives the fingerprint and version it started with: section 7 answers
/// "no restart" (no usable fingerprint, no installed version), exit 0, and
/// every format says why it could not look, with `installed_unavailable`.
#[test]
fn status_says_when_the_installed_runtime_is_unavailable() {
    let h = Host::new();
    h.install(&release_a());
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "status",
            "--dir",
            "gone/src",
            "--marker",
            MARKER,
            "--process-fingerprint",
            BASE_FP,
            "--process-version",
            "1.0.0",
        ];
        a.extend_from_slice(extra);
        a
    };
    let run = h.fpcheck(&args(&["--json"]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["installed_unavailable_reason"], "gone/src does not exist");
    assert_eq!(j["warning_codes"], json!(["installed_unavailable"]), "{j}");
    let message = j["warnings"][0].as_str().unwrap();
    assert!(
        message.starts_with(
            "the installed runtime's fingerprint is unavailable (gone/src does not exist)"
        ) && message.contains("only the marker can ask for a restart"),
        "{message}"
    );
    assert!(run.stderr.contains(message), "{}", run.stderr);

    let text = h.fpcheck(&args(&[]));
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.starts_with("no restart\n"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains(&format!("  warning    installed_unavailable: {message}\n")),
        "{}",
        text.stdout
    );

    // A runtime there but unreadable, its version readable: the same code,
    // and the versions decide.
    let mut broken = release_a();
    broken.insert("src/plugins/gone.py", "-> nowhere.py".into());
    h.install(&broken);
    let j = h.status(BASE_FP, "1.0.0", &[]).json();
    assert_eq!(j["warning_codes"], json!(["installed_unavailable"]), "{j}");
    assert!(j["warnings"][0]
        .as_str()
        .unwrap()
        .contains("the marker and the versions decide"));
    // A readable runtime: no such warning.
    h.install(&release_a());
    let j = h.status(BASE_FP, "1.0.0", &[]).json();
    assert_eq!(j["warning_codes"], json!([]), "{j}");
}

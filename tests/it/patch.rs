//! `fpcheck patch`: the version.json patch, printed in both RFC formats,
//! written in place without disturbing the file's layout, idempotent, with
//! every force_restart case explained, and refusals that leave the file
//! byte for byte as it was. Both formats are checked against a real
//! implementation of each RFC (the json-patch crate).

use serde_json::{json, Value};

use crate::support::{Run, TestRepo};

use fpcheck::select::DEFAULT_EXCLUDE;

/// v1.0.0: one runtime file, a README and `version` (the file's text).
fn first_release(version: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): pass\n")
        .write("README.md", "# server\n")
        .write("version.json", version);
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo
}

/// v1.1.0 with `version` as version.json; `code` changes a runtime file,
/// otherwise only the README changes.
fn next_release(repo: &TestRepo, version: &str, code: bool) {
    repo.write("version.json", version);
    if code {
        repo.write("src/server.py", "def main(): return 2\n");
    } else {
        repo.write("README.md", "# server, now documented\n");
    }
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
}

fn fingerprint(repo: &TestRepo, rev: &str) -> String {
    let run = repo.fpcheck(&["fingerprint", "--rev", rev]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout.trim().to_string()
}

fn spec(exclude: &[&str]) -> Value {
    json!({
        "algorithm": "fpcheck-runtime-v1",
        "hash": "sha256",
        "root": "src",
        "extensions": [".py"],
        "exclude": exclude,
    })
}

fn ok(repo: &TestRepo, args: &[&str]) -> Run {
    let run = repo.fpcheck(args);
    assert_eq!(run.code, 0, "fpcheck {args:?}: {}", run.stderr);
    run
}

fn read(repo: &TestRepo, rel: &str) -> Vec<u8> {
    std::fs::read(repo.join(rel)).unwrap()
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Applies both printed patches to `original` with the json-patch crate
/// (RFC 7396 `merge`, RFC 6902 `patch`).
fn apply_both(original: &Value, merge: &Value, ops: &Value) -> (Value, Value) {
    let mut merged = original.clone();
    json_patch::merge(&mut merged, merge);
    let ops: json_patch::Patch = serde_json::from_value(ops.clone()).unwrap();
    let mut patched = original.clone();
    json_patch::patch(&mut patched, &ops).unwrap();
    (merged, patched)
}

/// The round trip of one layout: v1.1.0's version.json is `original`;
/// both printed patches, applied by the RFC implementations, give the
/// document `--write` produces, whose text is exactly `expected` (with
/// `FP` standing for v1.1.0's fingerprint); a second run is empty and
/// changes no byte.
fn round_trip(original: &str, expected: &str) {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(&repo, original, true);
    let ex = ["--exclude", "tests,scripts"];
    let args = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["patch", "v1.0.0.."];
        a.extend_from_slice(&ex);
        a.extend_from_slice(extra);
        a
    };
    let merge = parse(ok(&repo, &args(&[])).stdout.as_bytes());
    let ops = parse(
        ok(&repo, &args(&["--patch-format", "json-patch"]))
            .stdout
            .as_bytes(),
    );
    let run = ok(&repo, &args(&["--write"]));
    assert_eq!(parse(run.stdout.as_bytes()), merge);
    assert_eq!(run.stderr, "fpcheck: wrote version.json\n");

    let fp = fingerprint(&repo, "v1.1.0");
    let written = read(&repo, "version.json");
    assert_eq!(
        String::from_utf8(written.clone()).unwrap(),
        expected.replace("FP", &fp)
    );
    let (merged, patched) = apply_both(&parse(original.as_bytes()), &merge, &ops);
    assert_eq!(merged, parse(&written));
    assert_eq!(patched, parse(&written));

    // Idempotent: nothing left to do, in either format, and no byte moves.
    let again = ok(&repo, &args(&["--write"]));
    assert_eq!(again.stdout, "{}\n");
    assert_eq!(
        again.stderr,
        "fpcheck: version.json is up to date: nothing written\n"
    );
    let again = ok(&repo, &args(&["--write", "--patch-format", "json-patch"]));
    assert_eq!(again.stdout, "[]\n");
    assert_eq!(read(&repo, "version.json"), written);
}

#[test]
fn two_spaces_final_newline_unicode_and_untouched_values() {
    round_trip(
        "{\n  \"name\": \"server\",\n  \"version\": \"1.1.0\",\n  \"description\": \"naïve café ✓ — 日本語 \\u00e9\",\n  \"build\": {\"n\": 1.50, \"tags\": [\"a\",\"b\"]}\n}\n",
        "{\n  \"name\": \"server\",\n  \"version\": \"1.1.0\",\n  \"description\": \"naïve café ✓ — 日本語 \\u00e9\",\n  \"build\": {\"n\": 1.50, \"tags\": [\"a\",\"b\"]},\n  \"runtime_fingerprint\": \"FP\",\n  \"runtime_fingerprint_spec\": {\n    \"algorithm\": \"fpcheck-runtime-v1\",\n    \"hash\": \"sha256\",\n    \"root\": \"src\",\n    \"extensions\": [\n      \".py\"\n    ],\n    \"exclude\": [\n      \"tests\",\n      \"scripts\"\n    ]\n  }\n}\n",
    );
}

#[test]
fn four_spaces_without_final_newline_replaces_a_stale_value_in_place() {
    round_trip(
        "{\n    \"version\": \"1.1.0\",\n    \"runtime_fingerprint\": \"0000\",\n    \"force_restart\": false,\n    \"notes\": \"ünïcödé 🚀\"\n}",
        "{\n    \"version\": \"1.1.0\",\n    \"runtime_fingerprint\": \"FP\",\n    \"force_restart\": false,\n    \"notes\": \"ünïcödé 🚀\",\n    \"runtime_fingerprint_spec\": {\n        \"algorithm\": \"fpcheck-runtime-v1\",\n        \"hash\": \"sha256\",\n        \"root\": \"src\",\n        \"extensions\": [\n            \".py\"\n        ],\n        \"exclude\": [\n            \"tests\",\n            \"scripts\"\n        ]\n    }\n}",
    );
}

#[test]
fn tabs_and_a_stale_nested_spec() {
    // The merge patch must delete the stale nested key ("note": null),
    // since RFC 7396 merges objects rather than replacing them.
    round_trip(
        "{\n\t\"version\": \"1.1.0\",\n\t\"runtime_fingerprint_spec\": {\n\t\t\"algorithm\": \"fpcheck-runtime-v1\",\n\t\t\"root\": \"src\",\n\t\t\"note\": \"old\"\n\t},\n\t\"emoji\": \"🦀\"\n}\n",
        "{\n\t\"version\": \"1.1.0\",\n\t\"runtime_fingerprint_spec\": {\n\t\t\"algorithm\": \"fpcheck-runtime-v1\",\n\t\t\"hash\": \"sha256\",\n\t\t\"root\": \"src\",\n\t\t\"extensions\": [\n\t\t\t\".py\"\n\t\t],\n\t\t\"exclude\": [\n\t\t\t\"tests\",\n\t\t\t\"scripts\"\n\t\t]\n\t},\n\t\"emoji\": \"🦀\",\n\t\"runtime_fingerprint\": \"FP\"\n}\n",
    );
}

#[test]
fn compact_one_line_and_crlf_files_keep_their_layout() {
    round_trip(
        "{\"version\":\"1.1.0\",\"name\":\"ü\"}",
        "{\"version\":\"1.1.0\",\"name\":\"ü\",\"runtime_fingerprint\":\"FP\",\"runtime_fingerprint_spec\":{\"algorithm\":\"fpcheck-runtime-v1\",\"hash\":\"sha256\",\"root\":\"src\",\"extensions\":[\".py\"],\"exclude\":[\"tests\",\"scripts\"]}}",
    );
    round_trip(
        "{\r\n  \"version\": \"1.1.0\"\r\n}\r\n",
        "{\r\n  \"version\": \"1.1.0\",\r\n  \"runtime_fingerprint\": \"FP\",\r\n  \"runtime_fingerprint_spec\": {\r\n    \"algorithm\": \"fpcheck-runtime-v1\",\r\n    \"hash\": \"sha256\",\r\n    \"root\": \"src\",\r\n    \"extensions\": [\r\n      \".py\"\r\n    ],\r\n    \"exclude\": [\r\n      \"tests\",\r\n      \"scripts\"\r\n    ]\r\n  }\r\n}\r\n",
    );
}

/// `--json` of `fpcheck patch RANGE args...`.
fn patch_json(repo: &TestRepo, range: &str, args: &[&str]) -> Value {
    let mut all = vec!["patch", range, "--json"];
    all.extend_from_slice(args);
    parse(ok(repo, &all).stdout.as_bytes())
}

#[test]
fn carried_over_force_restart_is_turned_off_and_said_so() {
    let repo = first_release("{\"version\": \"1.0.0\", \"force_restart\": true}\n");
    next_release(
        &repo,
        "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
        false,
    );
    let fp = fingerprint(&repo, "v1.1.0");
    let message = "version.json: force_restart true turned off: it was carried over unchanged from v1.0.0, and nothing asks for it now (no runtime file changed; pass --force-restart to keep it on)";
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &[]);
    assert_eq!(
        j,
        json!({
            "schema_version": 1,
            "from": "v1.0.0",
            "to": "v1.1.0",
            "version_file": "version.json",
            "version_file_source": "lookup",
            "exists": true,
            "format": "merge",
            "patch": {
                "force_restart": false,
                "runtime_fingerprint": fp,
                "runtime_fingerprint_spec": spec(&DEFAULT_EXCLUDE),
            },
            "explanations": [{"code": "force_restart_carried_over", "message": message}],
            "written": false,
        })
    );
    // Without --json the same sentence goes to stderr.
    let run = ok(&repo, &["patch", "v1.0.0..v1.1.0"]);
    assert_eq!(run.stderr, format!("fpcheck: {message}\n"));

    let run = ok(&repo, &["patch", "v1.0.0..", "--write"]);
    assert_eq!(
        run.stderr,
        format!("fpcheck: {message}\nfpcheck: wrote version.json\n")
    );
    assert_eq!(
        String::from_utf8(read(&repo, "version.json")).unwrap(),
        format!(
            "{{\"version\": \"1.1.0\", \"force_restart\": false, \"runtime_fingerprint\": \"{fp}\", \"runtime_fingerprint_spec\": {{\"algorithm\": \"fpcheck-runtime-v1\", \"hash\": \"sha256\", \"root\": \"src\", \"extensions\": [\".py\"], \"exclude\": [\"scripts\", \"tests\", \"migrations\", \"crons\", \"__pycache__\", \"node_modules\", \".git\", \"versions\"]}}}}\n"
        )
    );
    // The release as patched no longer restarts running clients.
    let after = parse(
        ok(&repo, &["v1.0.0..", "--worktree", "--format", "json"])
            .stdout
            .as_bytes(),
    );
    assert_eq!(after["restart_required"], false);
    assert_eq!(after["to"]["force_restart"], false);
    // And a second run has nothing to do or say.
    let run = ok(&repo, &["patch", "v1.0.0..", "--write"]);
    assert_eq!(
        (run.stdout.as_str(), run.stderr.as_str()),
        (
            "{}\n",
            "fpcheck: version.json is up to date: nothing written\n"
        )
    );
}

#[test]
fn force_restart_flag_keeps_it_on() {
    let repo = first_release("{\"version\": \"1.0.0\", \"force_restart\": true}\n");
    next_release(
        &repo,
        "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
        false,
    );
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &["--force-restart"]);
    assert_eq!(j["patch"].get("force_restart"), None);
    assert_eq!(
        j["explanations"],
        json!([{
            "code": "force_restart_requested",
            "message": "version.json: force_restart kept on, as --force-restart asks (it was already on in v1.0.0; without the flag it would be turned off as carried over)"
        }])
    );
    // Asked for where it was absent: set, and the release now forces.
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(&repo, "{\"version\": \"1.1.0\"}\n", false);
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &["--force-restart"]);
    assert_eq!(j["patch"]["force_restart"], true);
    assert_eq!(
        j["explanations"][0]["message"],
        "version.json: force_restart set to true (was absent), as --force-restart asks: no runtime file changed, so this is what makes running clients restart"
    );
    ok(&repo, &["patch", "v1.0.0..", "--force-restart", "--write"]);
    let after = parse(
        ok(&repo, &["v1.0.0..", "--worktree", "--format", "json"])
            .stdout
            .as_bytes(),
    );
    assert_eq!(after["reason"], "forced");
}

#[test]
fn force_restart_is_redundant_when_the_code_changed() {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(
        &repo,
        "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
        true,
    );
    let (from, to) = (fingerprint(&repo, "v1.0.0"), fingerprint(&repo, "v1.1.0"));
    let why = format!(
        "the runtime code changed (fingerprint {} → {})",
        &from[..12],
        &to[..12]
    );
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &["--force-restart"]);
    assert_eq!(j["patch"]["force_restart"], false);
    assert_eq!(
        j["explanations"],
        json!([
            {
                "code": "force_restart_redundant",
                "message": format!("version.json: force_restart true turned off as redundant: {why}, so running clients restart anyway; left on, it would be carried over into the next release")
            },
            {
                "code": "force_restart_redundant",
                "message": format!("--force-restart is redundant: {why}, so running clients restart anyway; version.json keeps force_restart off so that it is not carried over into the next release")
            }
        ])
    );
    // Still a restart after the patch: the code changed.
    ok(&repo, &["patch", "v1.0.0..", "--write"]);
    let after = parse(
        ok(&repo, &["v1.0.0..", "--worktree", "--format", "json"])
            .stdout
            .as_bytes(),
    );
    assert_eq!(
        (&after["reason"], &after["restart_required"]),
        (&json!("code_changed"), &json!(true))
    );
}

#[test]
fn non_boolean_force_restart_is_normalised_and_explained() {
    for (raw, value, message) in [
        (
            "\"false\"",
            Some(false),
            "version.json: force_restart \"false\" is not a JSON boolean: normalised to false; careful: the gate reads it as on (Python truthiness), so until this patch it forced running clients to restart",
        ),
        (
            "\"yes\"",
            Some(true),
            "version.json: force_restart \"yes\" is not a JSON boolean: normalised to true; the gate reads it as on too",
        ),
        (
            "0",
            Some(false),
            "version.json: force_restart 0 is not a JSON boolean: normalised to false; the gate reads it as off too",
        ),
        (
            "null",
            Some(false),
            "version.json: force_restart null is not a JSON boolean: normalised to false; the gate reads it as off too",
        ),
    ] {
        let repo = first_release("{\"version\": \"1.0.0\"}\n");
        next_release(
            &repo,
            &format!("{{\"version\": \"1.1.0\", \"force_restart\": {raw}}}\n"),
            false,
        );
        let j = patch_json(&repo, "v1.0.0..v1.1.0", &[]);
        assert_eq!(j["patch"]["force_restart"], json!(value), "{raw}");
        assert_eq!(
            j["explanations"],
            json!([{"code": "force_restart_not_boolean", "message": message}]),
            "{raw}"
        );
        let ops = patch_json(&repo, "v1.0.0..v1.1.0", &["--patch-format", "json-patch"]);
        assert_eq!(
            ops["patch"][2],
            json!({"op": "replace", "path": "/force_restart", "value": value})
        );
    }
}

#[test]
fn a_deliberate_or_absent_force_restart_is_left_alone() {
    // Turned on in this release, no code change: that is what it is for.
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(
        &repo,
        "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
        false,
    );
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &[]);
    assert_eq!(
        j["patch"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        ["runtime_fingerprint", "runtime_fingerprint_spec"]
    );
    assert_eq!(j["explanations"], json!([]));
    // Absent stays absent.
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(&repo, "{\"version\": \"1.1.0\"}\n", false);
    let j = patch_json(&repo, "v1.0.0..v1.1.0", &[]);
    assert_eq!(j["patch"].get("force_restart"), None);
    assert_eq!(j["explanations"], json!([]));
}

#[test]
fn without_version_json_it_says_so_and_creates_one_from_package_json() {
    let repo = TestRepo::new();
    repo.write("src/server.py", "x = 1\n").write(
        "package.json",
        "{\n  \"name\": \"srv\",\n  \"version\": \"1.0.0\",\n  \"force_restart\": true\n}\n",
    );
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write(
        "package.json",
        "{\n  \"name\": \"srv\",\n  \"version\": \"1.1.0\",\n  \"force_restart\": true\n}\n",
    );
    repo.commit("1.1.0");
    let fp = fingerprint(&repo, "HEAD");
    let j = patch_json(&repo, "v1.0.0..", &[]);
    assert_eq!(j["version_file"], "version.json");
    assert_eq!(j["version_file_source"], "default");
    assert_eq!(j["exists"], false);
    assert_eq!(
        j["patch"],
        json!({"version": "1.1.0", "runtime_fingerprint": fp, "runtime_fingerprint_spec": spec(&DEFAULT_EXCLUDE)})
    );
    assert_eq!(
        j["explanations"],
        json!([
            {"code": "version_file_missing", "message": "HEAD has no version.json (the gate looks for src/version.json, version.json, src/package.json, package.json): the patch applies to an empty object, and --write creates the file"},
            {"code": "version_copied", "message": "version 1.1.0 is copied from package.json into the new version.json: the gate takes the version from the first file of its lookup that has one, so keep both in step from now on"},
            {"code": "force_restart_elsewhere", "message": "package.json sets force_restart to true, which the gate reads as on whatever version.json says: remove it there (fpcheck patch edits one file)"}
        ])
    );
    // Both formats apply to the empty object the file starts as.
    let ops = patch_json(&repo, "v1.0.0..", &["--patch-format", "json-patch"]);
    let (merged, patched) = apply_both(&json!({}), &j["patch"], &ops["patch"]);
    assert_eq!(merged, patched);

    let run = ok(&repo, &["patch", "v1.0.0..", "--write"]);
    assert!(
        run.stderr.ends_with("fpcheck: created version.json\n"),
        "{}",
        run.stderr
    );
    let created = read(&repo, "version.json");
    assert_eq!(parse(&created), merged);
    assert_eq!(
        String::from_utf8(created.clone()).unwrap(),
        format!("{{\n  \"version\": \"1.1.0\",\n  \"runtime_fingerprint\": \"{fp}\",\n  \"runtime_fingerprint_spec\": {{\n    \"algorithm\": \"fpcheck-runtime-v1\",\n    \"hash\": \"sha256\",\n    \"root\": \"src\",\n    \"extensions\": [\n      \".py\"\n    ],\n    \"exclude\": [\n      \"scripts\",\n      \"tests\",\n      \"migrations\",\n      \"crons\",\n      \"__pycache__\",\n      \"node_modules\",\n      \".git\",\n      \"versions\"\n    ]\n  }}\n}}\n")
    );
    let again = ok(&repo, &["patch", "v1.0.0..", "--write"]);
    assert_eq!(again.stdout, "{}\n");
    assert_eq!(read(&repo, "version.json"), created);
    assert_eq!(
        read(&repo, "package.json"),
        b"{\n  \"name\": \"srv\",\n  \"version\": \"1.1.0\",\n  \"force_restart\": true\n}\n",
        "package.json untouched"
    );
}

/// A released repository whose v1.1.0 version.json is `bad`; HEAD is v1.1.0.
fn refused(bad: &str, message: &str) {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(&repo, bad, true);
    for args in [
        &["patch", "v1.0.0.."][..],
        &["patch", "v1.0.0..", "--write"],
        &[
            "patch",
            "v1.0.0..",
            "--write",
            "--patch-format",
            "json-patch",
        ],
    ] {
        let run = repo.fpcheck(args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "");
        let tail = if args.contains(&"--write") {
            " (nothing was written)"
        } else {
            ""
        };
        assert_eq!(run.stderr, format!("fpcheck: error: {message}{tail}\n"));
        assert_eq!(read(&repo, "version.json"), bad.as_bytes());
    }
}

#[test]
fn invalid_json_is_refused_with_path_and_line() {
    refused(
        "{\n  \"version\": \"1.1.0\",\n}\n",
        "version.json:3:1: not valid JSON: trailing comma",
    );
    refused(
        "{\n  \"version\": \"1.1.0\"\n  \"force_restart\": true\n}\n",
        "version.json:3:3: not valid JSON: expected `,` or `}`",
    );
}

#[test]
fn a_document_that_is_not_an_object_is_refused() {
    refused(
        "\n[\"1.1.0\"]\n",
        "version.json:2: the document is an array, not a JSON object",
    );
}

#[test]
fn duplicate_keys_are_refused_with_both_lines() {
    refused(
        "{\n  \"version\": \"1.1.0\",\n  \"force_restart\": false,\n  \"force_restart\": true\n}\n",
        "version.json:4: duplicate key \"force_restart\" in the top-level object (first at line 3): the gate would silently use the last one",
    );
    refused(
        "{\n  \"version\": \"1.1.0\",\n  \"build\": {\"a\": 1,\n    \"a\": 2}\n}\n",
        "version.json:4: duplicate key \"a\" in /build (first at line 3): the gate would silently use the last one",
    );
}

#[test]
fn write_refuses_another_checkout_unless_forced() {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    next_release(&repo, "{\"version\": \"1.1.0\"}\n", true);
    repo.write("src/server.py", "def main(): return 3\n");
    let head = repo.commit("work after the release");
    let before = read(&repo, "version.json");
    let run = repo.fpcheck(&["patch", "v1.0.0..v1.1.0", "--write"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "fpcheck: error: --write edits the working tree, but the `to` side v1.1.0 is not the checked-out commit ({}): check it out, compare with the working tree (--worktree), or pass --force to write its values anyway (nothing was written)\n",
            &head[..12]
        )
    );
    assert_eq!(read(&repo, "version.json"), before);
    // --force without --write is a usage error.
    assert_eq!(repo.fpcheck(&["patch", "v1.0.0..", "--force"]).code, 2);
    // Forced: v1.1.0's values go into the working tree's file.
    ok(&repo, &["patch", "v1.0.0..v1.1.0", "--write", "--force"]);
    let written = parse(&read(&repo, "version.json"));
    assert_eq!(written["runtime_fingerprint"], fingerprint(&repo, "v1.1.0"));
    assert_ne!(written["runtime_fingerprint"], fingerprint(&repo, "HEAD"));
}

#[test]
fn worktree_records_the_uncommitted_runtime() {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    repo.write("src/server.py", "def main(): return 'not committed'\n")
        .write("version.json", "{\n  \"version\": \"1.1.0\"\n}\n");
    let run = ok(&repo, &["patch", "v1.0.0..", "--worktree", "--write"]);
    assert_eq!(run.stderr, "fpcheck: wrote version.json\n");
    let dir_fp = ok(&repo, &["fingerprint", "--dir", "src"]).stdout;
    assert_eq!(
        parse(&read(&repo, "version.json"))["runtime_fingerprint"],
        dir_fp.trim()
    );
    let again = ok(&repo, &["patch", "v1.0.0..", "--worktree", "--write"]);
    assert_eq!(again.stdout, "{}\n");
}

#[test]
fn patch_out_writes_what_patch_prints() {
    let repo = first_release("{\"version\": \"1.0.0\", \"force_restart\": true}\n");
    next_release(
        &repo,
        "{\"version\": \"1.1.0\", \"force_restart\": true}\n",
        false,
    );
    let out = repo.join("release.patch.json");
    let out = out.to_str().unwrap();
    let report = ok(
        &repo,
        &["v1.0.0..v1.1.0", "--format", "json", "--patch-out", out],
    );
    assert_eq!(parse(report.stdout.as_bytes())["reason"], "forced");
    assert!(
        report
            .stderr
            .contains("fpcheck: version.json: force_restart true turned off: it was carried over"),
        "{}",
        report.stderr
    );
    let printed = ok(&repo, &["patch", "v1.0.0..v1.1.0"]).stdout;
    assert_eq!(std::fs::read_to_string(out).unwrap(), printed);
    ok(
        &repo,
        &[
            "v1.0.0..v1.1.0",
            "--patch-out",
            out,
            "--patch-format",
            "json-patch",
        ],
    );
    let printed = ok(
        &repo,
        &["patch", "v1.0.0..v1.1.0", "--patch-format", "json-patch"],
    )
    .stdout;
    assert_eq!(std::fs::read_to_string(out).unwrap(), printed);
    // --patch-format means nothing without --patch-out.
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--patch-format", "merge"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn version_file_from_the_flag_or_the_config() {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    repo.write("meta/release.json", "{\"channel\": \"stable\"}\n");
    next_release(&repo, "{\"version\": \"1.1.0\"}\n", true);
    // The flag: a file the gate reads (src/version.json), missing so far.
    let j = patch_json(&repo, "v1.0.0..", &["--version-file", "src/version.json"]);
    assert_eq!(
        (&j["version_file"], &j["version_file_source"], &j["exists"]),
        (&json!("src/version.json"), &json!("flag"), &json!(false))
    );
    assert_eq!(j["patch"]["version"], "1.1.0");
    // The config (committed at the `to` end): a file the gate does not
    // read, which it says.
    repo.write(
        "fpcheck.toml",
        "[runtime]\nversion_file = \"meta/release.json\"\n",
    );
    repo.commit("config");
    let j = patch_json(&repo, "v1.0.0..", &["--write"]);
    assert_eq!(j["version_file_source"], "config");
    assert_eq!(j["written"], true);
    assert_eq!(
        j["explanations"],
        json!([{"code": "version_file_not_read_by_gate", "message": "meta/release.json is not where the gate looks (src/version.json, version.json, src/package.json, package.json): it will not read these keys there"}])
    );
    let written = parse(&read(&repo, "meta/release.json"));
    assert_eq!(written["channel"], "stable");
    assert_eq!(written["runtime_fingerprint"], fingerprint(&repo, "HEAD"));
    assert_eq!(read(&repo, "version.json"), b"{\"version\": \"1.1.0\"}\n");
    // A path out of the repository is refused.
    let run = repo.fpcheck(&["patch", "v1.0.0..", "--version-file", "../x.json"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "fpcheck: error: version file `../x.json` leaves the repository: give a path from its top, such as src/version.json\n"
    );
}

#[test]
fn a_symlinked_version_file_is_written_through_the_link() {
    let repo = first_release("{\"version\": \"1.0.0\"}\n");
    repo.remove("version.json")
        .write("release/version.json", "{\n  \"version\": \"1.1.0\"\n}\n")
        .symlink("version.json", "release/version.json")
        .write("src/server.py", "def main(): return 2\n");
    repo.commit("1.1.0");
    let run = ok(&repo, &["patch", "v1.0.0..", "--write"]);
    assert_eq!(run.stderr, "fpcheck: wrote version.json\n");
    assert!(repo.join("version.json").is_symlink());
    let written = parse(&read(&repo, "release/version.json"));
    assert_eq!(written["runtime_fingerprint"], fingerprint(&repo, "HEAD"));
    assert_eq!(ok(&repo, &["patch", "v1.0.0..", "--write"]).stdout, "{}\n");
}

//! Warning codes end to end: each warning keeps the code its producer gave
//! it, whichever end of a range it comes from.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{fpcheck_in, test_env, two_releases, warning_codes, Run, TestRepo};

/// `fpcheck args` in `cwd` without the capabilities that let root read any
/// directory, so a mode-000 directory is unreadable, as for another user.
fn fpcheck_without_dac_override(cwd: &Path, args: &[&str]) -> Run {
    let out = test_env(&mut Command::new("setpriv"))
        .arg("--bounding-set=-dac_override,-dac_read_search")
        .arg(env!("CARGO_BIN_EXE_fpcheck"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("setpriv runs");
    Run::finished(out)
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Under `--worktree`, a directory that cannot be read is skipped as the
/// reference gate's `Path.rglob` skips it: the warning says so under its
/// own code, not `gitattributes_conversion` (which the range used to give
/// every warning of the `to` end).
#[test]
fn an_unreadable_directory_in_the_worktree_is_directory_skipped() {
    let repo = two_releases();
    repo.write("src/private/hidden.py", "h = 1\n");
    let private = repo.join("src/private");
    chmod(&private, 0o000);
    let run =
        fpcheck_without_dac_override(repo.path(), &["v1.1.0..", "--worktree", "--format", "json"]);
    chmod(&private, 0o755);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        warning_codes(&j),
        ["directory_skipped"],
        "{}",
        j["warnings"]
    );
    let message = j["warnings"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("src/private: ") && message.contains("Path.rglob"),
        "{message}"
    );
    // The skipped file is not part of the fingerprint: the runtime is
    // unchanged, as the gate would see it.
    assert_eq!(j["code_changed"], false, "{j}");
}

/// A `.gitattributes` conversion keeps its code at either end, and is
/// reported once when both ends have it.
#[test]
fn gitattributes_warnings_keep_their_code_at_both_ends() {
    let repo = TestRepo::new();
    repo.write("src/app.py", "a = 1\n")
        .write(".gitattributes", "*.py eol=crlf\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write("src/app.py", "a = 2\n")
        .write(".gitattributes", "")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    let run = repo.fpcheck(&["v1.0.0..v1.1.0", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(
        warning_codes(&j),
        ["gitattributes_conversion"],
        "{}",
        j["warnings"]
    );
    assert!(j["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .starts_with(".gitattributes at `v1.0.0` sets eol=crlf on 1 runtime file"));
}

/// The snapshot file keeps each warning's code beside its message, and a
/// snapshot written before the codes were kept (no `warning_codes`) still
/// serves a gate.
#[test]
fn the_snapshot_file_keeps_the_codes_and_old_files_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    std::fs::write(src.join("app.py"), "a = 1\n").unwrap();
    std::fs::write(
        src.join("version.json"),
        "{\"version\": \"1.0.0\", \"force_restart\": \"false\"}\n",
    )
    .unwrap();
    let run = fpcheck_in(dir.path(), &["snapshot", "--dir", "src", "--out", "s.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let file = dir.path().join("s.json");
    let mut snap: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(snap["warning_codes"], json!(["force_restart_not_boolean"]));
    let message = snap["warnings"][0].as_str().unwrap();
    assert!(message.contains("not a JSON boolean"), "{message}");

    snap.as_object_mut().unwrap().remove("warning_codes");
    std::fs::write(&file, serde_json::to_vec_pretty(&snap).unwrap()).unwrap();
    let gate = [
        "gate",
        "--dir",
        "src",
        "--before",
        "s.json",
        "--marker",
        "m/marker.json",
        "--json",
    ];
    let run = fpcheck_in(dir.path(), &gate);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["restart_required"], false);

    // Codes that do not match the messages are a corrupt file: the gate
    // fails closed.
    snap["warning_codes"] = json!([]);
    std::fs::write(&file, serde_json::to_vec_pretty(&snap).unwrap()).unwrap();
    let run = fpcheck_in(dir.path(), &gate);
    assert_eq!(run.json()["restart_required"], true, "{}", run.stdout);
    assert!(
        run.json()["error"]
            .as_str()
            .unwrap()
            .contains("warning_codes and warnings differ in length"),
        "{}",
        run.stdout
    );
}

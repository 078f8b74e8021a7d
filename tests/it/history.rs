//! `fpcheck history`: a generated history with known verdicts.

use serde_json::{json, Value};

use crate::support::TestRepo;

/// Releases, oldest version first, with the verdict each update must get.
/// Tags are created out of version order (v1.10.0 before v1.9.0) so that
/// ordering by date would be wrong.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    // 0.9.0: no runtime root yet.
    repo.write("README.md", "# early\n")
        .write("version.json", "{\"version\": \"0.9.0\"}\n");
    repo.commit_and_tag("0.9.0", "v0.9.0");
    repo.write("src/server.py", "s1\n")
        .write("src/plugins/a.py", "a1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit_and_tag("1.0.0", "v1.0.0");
    repo.tag("release-one"); // not a version
    repo.write("README.md", "# docs\n")
        .write("version.json", "{\"version\": \"1.0.1\"}\n");
    repo.commit("1.0.1 docs");
    repo.tag_annotated("v1.0.1");
    repo.tag("v1.0.1-final"); // a pre-release by semver, on the same commit
    repo.write("src/plugins/a.py", "a2\n")
        .write("version.json", "{\"version\": \"1.10.0\"}\n");
    let c110 = repo.commit("1.10.0 fix");
    repo.write(
        "version.json",
        "{\"version\": \"2.0.0-rc.1\", \"force_restart\": true}\n",
    );
    repo.commit_and_tag("2.0.0-rc.1 forced", "v2.0.0-rc.1");
    // v1.9.0 is tagged later, on an older commit.
    repo.git(&["tag", "v1.10.0", &c110]);
    repo.git(&["checkout", "-q", "-b", "old", "HEAD~2"]);
    repo.write("src/scripts/x.py", "x\n")
        .write("version.json", "{\"version\": \"1.9.0\"}\n");
    repo.commit_and_tag("1.9.0 scripts", "v1.9.0");
    repo
}

fn steps(j: &Value) -> Vec<(String, String, bool, String)> {
    j["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["from"].as_str().unwrap().to_string(),
                s["to"].as_str().unwrap().to_string(),
                s["restart_required"].as_bool().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_update_gets_its_verdict_in_version_order() {
    let repo = project();
    let j = repo.history_json(&["--no-cache"]);
    let s =
        |a: &str, b: &str, r: bool, why: &str| (a.to_string(), b.to_string(), r, why.to_string());
    assert_eq!(
        steps(&j),
        [
            s("v0.9.0", "v1.0.0", true, "fingerprint_unavailable"),
            s("v1.0.0", "v1.0.1", false, "no_runtime_change"),
            s("v1.0.1", "v1.9.0", false, "no_runtime_change"),
            s("v1.9.0", "v1.10.0", true, "code_changed"),
            s("v1.10.0", "v2.0.0-rc.1", true, "forced"),
        ]
    );
    let tags = j["tags"].as_array().unwrap();
    assert_eq!(tags[0]["unavailable_reason"], "src does not exist");
    assert_eq!(tags[2]["tag"], "v1.0.1");
    assert_eq!(tags[2]["aliases"], json!(["v1.0.1-final"]));
    assert_eq!(tags[5]["prerelease"], true);
    assert_eq!(
        j["skipped"],
        json!([{"tag": "release-one", "why": "not a version"}])
    );
    assert_eq!(
        j["summary"],
        json!({
            "releases": 6, "updates": 5, "restarts_forced": 3, "free_releases": 2,
            "forced_only_by_force_restart": 1, "unavailable_fingerprints": 1, "restarts_saved": 2, "versions_from_tags": 0,
            "avoidable_restarts": 0, "avoidable_version_restarts": 0,
            "possible_missed_restarts": 0
        })
    );
    let fix = &j["releases"][3];
    assert_eq!(fix["runtime_files_changed"], 1);
    assert_eq!(fix["marker_reason"], "brain_update");
    assert_eq!(j["releases"][1]["changed_anything"], true);
    // Each fingerprint equals the one `fingerprint` computes for the tag.
    let fp = repo.fpcheck(&["fingerprint", "--rev", "v1.10.0"]).stdout;
    assert_eq!(tags[4]["fingerprint"], fp.trim());
}

#[test]
fn spans_globs_and_prereleases() {
    let repo = project();
    let j = repo.history_json(&["v1.0.0..v1.10.0", "--no-cache"]);
    assert_eq!(j["summary"]["releases"], 4);
    let j = repo.history_json(&["--tags", "v1.*", "--skip-prereleases", "--no-cache"]);
    let names: Vec<&str> = j["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["v1.0.0", "v1.0.1", "v1.9.0", "v1.10.0"]);
    // An unknown tag cannot be read: exit 4, as in a range.
    let run = repo.fpcheck(&["history", "v1.0.0..v8"]);
    run.assert_error(4, "`v8` is not a release tag");
    let run = repo.fpcheck(&["history", "v1.10.0..v1.0.0"]);
    run.assert_error(2, "runs backwards");
    let run = repo.fpcheck(&["history", "--tags", "nothing*"]);
    run.assert_error(4, "no release tags matching `nothing*`");
}

#[test]
fn a_second_run_reads_no_blob_and_a_corrupt_cache_is_ignored() {
    let repo = project();
    let first = repo.history_json(&[]);
    assert!(first["stats"]["blobs_read"].as_u64().unwrap() > 0);
    let second = repo.history_json(&[]);
    assert_eq!(second["stats"]["blobs_read"], 0);
    assert_eq!(second["stats"]["hashed"], 0);
    assert_eq!(second["stats"]["cached"], 5);
    assert_eq!(first["tags"], second["tags"]);

    let cache = repo.join(".git/fpcheck/fingerprints-v3");
    std::fs::write(&cache, "garbage\n\u{0}not a line\n").unwrap();
    let third = repo.history_json(&[]);
    assert_eq!(third["tags"], first["tags"]);
    assert_eq!(third["stats"]["cached"], 0);

    // --no-cache neither reads nor trusts the file.
    let fresh = repo.history_json(&["--no-cache"]);
    assert_eq!(fresh["tags"], first["tags"]);
}

#[test]
fn html_is_one_well_formed_page_with_every_release() {
    let repo = project();
    repo.write("out/.keep", "");
    let run = repo.fpcheck(&[
        "history",
        "--format",
        "html",
        "--output",
        "out/h.html",
        "--no-cache",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let html = std::fs::read_to_string(repo.join("out/h.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for tag in [
        "v0.9.0",
        "v1.0.0",
        "v1.0.1",
        "v1.9.0",
        "v1.10.0",
        "v2.0.0-rc.1",
    ] {
        assert!(
            html.contains(&format!("<code>{tag}</code>")),
            "{tag} missing"
        );
    }
    assert!(html.contains("<svg"));
    for external in ["http://", "https://", "<script", "src="] {
        let n = html.matches(external).count();
        // The SVG namespace is the only URL allowed.
        let allowed = if external == "http://" { 1 } else { 0 };
        assert_eq!(n, allowed, "{external} found in the page");
    }
    assert_balanced(&html);
}

/// Every non-void element is closed, in order.
pub(crate) fn assert_balanced(html: &str) {
    const VOID: [&str; 4] = ["meta", "br", "img", "hr"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').expect("tag closes");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if tag.starts_with('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.as_str()),
                "unbalanced </{name}>"
            );
        } else if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
}

/// The history's resumable hasher (a release resumes from the state after
/// the files it shares with the one before, per worker thread) agrees with
/// a plain `fingerprint` of every tag, on one thread and on two, over
/// releases that change the last file, an early file, add and remove
/// files, repeat an earlier selection and lose the runtime root.
#[test]
fn every_thread_count_agrees_with_a_plain_fingerprint_of_every_tag() {
    let repo = TestRepo::new();
    let mut tags = Vec::new();
    let mut release = |repo: &TestRepo, n: usize| {
        repo.write("version.json", format!("{{\"version\": \"1.{n}.0\"}}\n"));
        repo.commit(&format!("1.{n}.0"));
        let tag = format!("v1.{n}.0");
        repo.tag(&tag);
        tags.push(tag);
    };
    for name in ["a", "b", "c", "d", "e"] {
        repo.write(&format!("src/{name}.py"), format!("{name} = 0\n"));
    }
    release(&repo, 0);
    repo.write("src/e.py", "e = 1\n"); // the last file: a long shared prefix
    release(&repo, 1);
    repo.write("src/a.py", "a = 1\n"); // the first file: nothing shared
    release(&repo, 2);
    repo.write("src/c2.py", "c2\n"); // added in the middle
    release(&repo, 3);
    repo.remove("src/b.py");
    release(&repo, 4);
    repo.write("src/pkg/__init__.py", "")
        .write("src/pkg/m.py", "m\n");
    release(&repo, 5);
    repo.write("src/README.md", "not runtime\n"); // same selection as 1.5.0
    release(&repo, 6);
    repo.write("src/e.py", "e = 2\n");
    release(&repo, 7);
    repo.write("src/e.py", "e = 1\n"); // back to 1.6.0's bytes
    release(&repo, 8);
    repo.symlink("src/z.py", "a.py"); // the same bytes under a second path
    release(&repo, 9);
    repo.remove("src");
    repo.write("lib/x.py", "x\n"); // no runtime root: unavailable
    release(&repo, 10);
    repo.remove("lib");
    repo.write("src/a.py", "a = 3\n").write("src/y.py", "y\n");
    release(&repo, 11);

    let plain: Vec<String> = tags
        .iter()
        .map(|t| {
            repo.fpcheck(&["fingerprint", "--rev", t])
                .stdout
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(plain[10], "", "1.10.0 has no runtime root");
    assert!(plain.iter().filter(|p| p.len() == 64).count() == 11);
    assert_eq!(plain[5], plain[6]);
    assert_eq!(plain[6], plain[8]);
    for threads in ["1", "2"] {
        let j = repo.history_json(&["--no-cache", "--threads", threads]);
        let got: Vec<&str> = j["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["fingerprint"].as_str().unwrap())
            .collect();
        assert_eq!(got, plain, "--threads {threads}");
        let stats = &j["stats"];
        assert_eq!(
            stats["hashed"].as_u64().unwrap() + stats["reused"].as_u64().unwrap(),
            11,
            "--threads {threads}: {stats}"
        );
    }
}

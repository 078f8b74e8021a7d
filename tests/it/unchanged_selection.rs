//! The everyday range: no runtime blob changed. Nothing is hashed, the
//! fingerprints are reported as skipped (or taken from the cache), and the
//! shortcut that skips the second walk (same settings, same root tree)
//! never hides a change made through a link out of the root or through
//! the settings.

use serde_json::Value;

use crate::support::{warning_codes, TestRepo};

/// v1 with a runtime under `src` and a library outside it.
fn released() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/server.py", "def main(): pass\n")
        .write("src/plugins/__init__.py", "")
        .write("src/plugins/memory.py", "v = 1\n")
        .write("lib/impl.py", "x = 1\n")
        .write("README.md", "# readme\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo
}

/// A release that changes only the README (no runtime file), tagged `tag`.
fn docs_release(repo: &TestRepo, tag: &str) {
    repo.write("README.md", "# docs only\n");
    repo.commit_and_tag("docs", tag);
}

fn fingerprint_at(repo: &TestRepo, rev: &str) -> String {
    let run = repo.fpcheck(&["fingerprint", "--rev", rev]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout.trim().to_string()
}

#[test]
fn an_unchanged_selection_is_not_hashed_and_says_so() {
    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    repo.write("README.md", "# docs only\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit_and_tag("docs", "v2");
    let j = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["reason"], "no_runtime_change");
    assert_eq!(j["code_changed"], false);
    assert_eq!(j["version_changed"], true);
    assert_eq!(j["updater"]["writes_marker"], false);
    assert_eq!(j["process_check"]["fires"], false);
    for end in ["from", "to"] {
        assert_eq!(j[end]["fingerprint"], Value::Null, "{end}");
        assert_eq!(j[end]["fingerprint_skipped"], "selection_unchanged");
        assert_eq!(j[end]["unavailable_reason"], Value::Null);
        assert_eq!(j[end]["runtime_files"], 3);
    }
    assert_eq!(j["changes"]["runtime"], serde_json::json!([]));
    assert!(j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["code"] != "fingerprint_unavailable"));

    let table = repo.fpcheck(&["v1..v2", "--no-cache"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(
        table.stdout.contains("same (not computed)"),
        "{}",
        table.stdout
    );
    assert!(!table.stdout.contains("unavailable"), "{}", table.stdout);
    let md = repo.fpcheck(&["v1..v2", "--no-cache", "--format", "markdown"]);
    assert!(md.stdout.contains("same (not computed)"), "{}", md.stdout);
    assert!(
        md.stdout
            .contains("None: the runtime fingerprint is byte-for-byte the same."),
        "{}",
        md.stdout
    );

    // `patch` records the digest: it always computes it.
    let patch = repo.fpcheck(&["patch", "v1..v2"]);
    assert_eq!(patch.code, 0, "{}", patch.stderr);
    let digest = fingerprint_at(&repo, "v2");
    assert!(patch.stdout.contains(&digest), "{}", patch.stdout);
}

/// A digest the cache holds is reported (never one made up).
#[test]
fn a_cached_digest_is_reported_and_patch_always_has_one() {
    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    let digest = fingerprint_at(&repo, "v1");
    // A changed range fills the cache with both ends' digests.
    repo.write("src/server.py", "def main(): return 1\n");
    repo.commit_and_tag("fix", "v3");
    let changed = repo.verdict_json(&["v2..v3"]);
    assert_eq!(changed["from"]["fingerprint"], digest.as_str());
    // Twice: the second run answers from the remembered walk of the
    // shared root tree, the same way.
    for _ in 0..2 {
        let j = repo.verdict_json(&["v1..v2"]);
        for end in ["from", "to"] {
            assert_eq!(j[end]["fingerprint"], digest.as_str(), "{end}");
            assert_eq!(j[end]["fingerprint_skipped"], Value::Null);
            assert_eq!(j[end]["runtime_files"], 3);
        }
        assert_eq!(j["restart_required"], false);
    }
    // No cache: not computed.
    let cold = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(cold["to"]["fingerprint"], Value::Null);
}

/// The root's tree is the same at both ends, but a runtime link leads out
/// of the root to a file that changed: a restart, never "no change".
#[test]
fn a_link_out_of_an_unchanged_root_tree_still_restarts() {
    for target in ["../lib/impl.py", "../src/../lib/impl.py"] {
        let repo = released();
        repo.symlink("src/impl.py", target);
        repo.commit_and_tag("1.0.0", "v1");
        let root_v1 = repo.git(&["rev-parse", "HEAD:src"]);
        repo.write("lib/impl.py", "x = 2\n");
        repo.commit_and_tag("lib only", "v2");
        assert_eq!(repo.git(&["rev-parse", "HEAD:src"]), root_v1);
        for cache in [true, false] {
            let mut args = vec!["v1..v2"];
            if !cache {
                args.push("--no-cache");
            }
            let j = repo.verdict_json(&args);
            assert_eq!(j["restart_required"], true, "{target} {cache}");
            assert_eq!(j["reason"], "code_changed");
            assert_eq!(j["code_changed"], true);
            assert_eq!(
                j["from"]["fingerprint"],
                fingerprint_at(&repo, "v1").as_str()
            );
            assert_eq!(j["to"]["fingerprint"], fingerprint_at(&repo, "v2").as_str());
            assert_ne!(j["from"]["fingerprint"], j["to"]["fingerprint"]);
            assert_eq!(
                j["changes"]["runtime"],
                serde_json::json!([{"path": "src/impl.py", "status": "target_changed", "change_kind": "code"}])
            );
        }
    }
}

/// A link out of the root whose target did not change, and a link inside
/// the root: the selections are equal, so nothing is hashed.
#[test]
fn links_whose_targets_did_not_change_are_not_hashed() {
    let repo = released();
    repo.symlink("src/impl.py", "../lib/impl.py")
        .symlink("src/alias.py", "plugins/memory.py");
    repo.commit_and_tag("1.0.0", "v1");
    repo.write("lib/other.py", "y = 1\n")
        .write("README.md", "# more\n");
    repo.commit_and_tag("outside only", "v2");
    let j = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["code_changed"], false);
    assert_eq!(j["to"]["fingerprint_skipped"], "selection_unchanged");
    assert_eq!(j["to"]["runtime_files"], 5);
}

/// The `to` end's settings move the root to a copy of the old code (the
/// same tree id as the old root) while the old root's code changes: equal
/// root tree ids prove nothing when the settings differ.
#[test]
fn a_root_moved_to_a_copy_of_the_old_tree_is_cross_checked() {
    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    let old_root = repo.git(&["rev-parse", "HEAD:src"]);
    for f in ["server.py", "plugins/__init__.py", "plugins/memory.py"] {
        let bytes = std::fs::read(repo.join(&format!("src/{f}"))).unwrap();
        repo.write(&format!("copy/{f}"), bytes);
    }
    repo.write("src/plugins/memory.py", "v = 666\n")
        .write("fpcheck.toml", "[runtime]\nroot = \"copy\"\n");
    repo.commit_and_tag("move the root", "v2");
    assert_eq!(repo.git(&["rev-parse", "HEAD:copy"]), old_root);
    let j = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(j["restart_required"], true);
    assert_eq!(j["reason"], "settings_changed_runtime_changed");
    assert_eq!(
        j["from"]["fingerprint"],
        fingerprint_at(&repo, "v1").as_str()
    );
    assert_eq!(j["from"]["fingerprint"], j["to"]["fingerprint"]);
    assert_eq!(j["settings_check"]["runtime_changed"], true);
}

/// Settings that change without changing the selection: the cross-check
/// compares real digests (no false restart, no skipped digest).
#[test]
fn settings_that_change_nothing_selected_are_compared_by_digest() {
    let repo = released();
    repo.write("src/docs/guide.md", "# guide\n");
    repo.commit_and_tag("1.0.0", "v1");
    repo.write(
        "fpcheck.toml",
        "[runtime]\nroot = \"src\"\nexclude = [\"docs\", \"tests\", \"scripts\", \"migrations\", \"crons\", \"__pycache__\", \"node_modules\", \".git\", \"versions\"]\n",
    );
    repo.commit_and_tag("exclude docs", "v2");
    let j = repo.verdict_json(&["v1..v2", "--no-cache"]);
    let digest = fingerprint_at(&repo, "v1");
    assert_eq!(j["restart_required"], false);
    assert_eq!(j["reason"], "no_runtime_change");
    for end in ["from", "to"] {
        assert_eq!(j[end]["fingerprint"], digest.as_str(), "{end}");
        assert_eq!(j[end]["fingerprint_skipped"], Value::Null);
    }
    assert_eq!(j["settings_check"]["fingerprint"], digest.as_str());
    assert_eq!(j["settings_check"]["runtime_changed"], false);
}

/// With the persistent cache, a range over a shared root tree is answered
/// from the remembered walk the second time: the same verdict, file count
/// and skipped digests; a `.gitattributes` added above the root (the root
/// tree unchanged) changes the bytes a checkout writes: that range restarts
/// (twice the same), the files listed as changed through attributes.
#[test]
fn a_remembered_walk_answers_the_same_and_keeps_attribute_warnings() {
    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    repo.write(".gitattributes", "*.py text eol=crlf\n");
    repo.commit_and_tag("attributes", "v3");
    let first = repo.verdict_json(&["v1..v2"]);
    let second = repo.verdict_json(&["v1..v2"]);
    assert_eq!(first, second);
    assert_eq!(second["to"]["fingerprint_skipped"], "selection_unchanged");
    assert_eq!(second["to"]["runtime_files"], 3);
    assert_eq!(second["warnings"], serde_json::json!([]));
    for _ in 0..2 {
        let j = repo.verdict_json(&["v2..v3"]);
        assert_eq!(j["restart_required"], true, "{j}");
        assert_eq!(j["reason"], "code_changed", "{j}");
        assert_eq!(j["to"]["runtime_files"], 3);
        let statuses: Vec<&str> = j["changes"]["runtime"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["status"].as_str().unwrap())
            .collect();
        // The empty `__init__.py` reads the same with CRLF endings.
        assert_eq!(statuses, ["attributes_changed"; 2], "{j}");
        let codes = warning_codes(&j);
        assert!(codes.contains(&"gitattributes_conversion"), "{j}");
    }
}

/// Without a cache, an unchanged root is proven to select the same files
/// by a scan of its trees that stops at the first selected link, however
/// deep: one that leaves the root, whose target changed, still restarts.
/// A `.py` link under an excluded folder is never selected: it neither
/// stops the scan nor counts, and no restart follows from its target.
#[test]
fn a_deep_link_out_of_an_unchanged_root_still_restarts() {
    let repo = released();
    repo.symlink("src/plugins/deep/er/impl.py", "../../../../lib/impl.py")
        .symlink("src/tests/impl.py", "../../lib/impl.py");
    repo.commit_and_tag("1.0.0", "v1");
    repo.write("lib/impl.py", "x = 2\n");
    repo.commit_and_tag("lib only", "v2");
    docs_release(&repo, "v3");
    for cache in [false, true] {
        let mut args = vec!["v1..v2"];
        if !cache {
            args.push("--no-cache");
        }
        let j = repo.verdict_json(&args);
        assert_eq!(j["restart_required"], true, "cache {cache}");
        assert_eq!(j["reason"], "code_changed");
        assert_eq!(j["to"]["fingerprint"], fingerprint_at(&repo, "v2").as_str());
        assert_eq!(
            j["changes"]["runtime"],
            serde_json::json!([{"path": "src/plugins/deep/er/impl.py", "status": "target_changed", "change_kind": "code"}])
        );
        args[0] = "v2..v3";
        let j = repo.verdict_json(&args);
        assert_eq!(j["restart_required"], false, "cache {cache}");
        assert_eq!(j["to"]["runtime_files"], 4);
    }
    // Only the excluded link's target changes: nothing selected changed.
    let repo = released();
    repo.symlink("src/tests/impl.py", "../../lib/impl.py");
    repo.commit_and_tag("1.0.0", "v1");
    repo.write("lib/impl.py", "x = 2\n");
    repo.commit_and_tag("lib only", "v2");
    for cache in [false, true, true] {
        let mut args = vec!["v1..v2"];
        if !cache {
            args.push("--no-cache");
        }
        let j = repo.verdict_json(&args);
        assert_eq!(j["restart_required"], false, "cache {cache}");
        assert_eq!(j["to"]["fingerprint_skipped"], "selection_unchanged");
        assert_eq!(j["to"]["runtime_files"], 3);
    }
}

/// What the scan leaves to the full walk, in an unchanged root, answers as
/// the walk does: a `.gitattributes` below the root keeps its warning, a
/// directory named like a module keeps the fingerprint unavailable, and
/// the remembered scan (persistent cache) gives the same report twice.
#[test]
fn an_unchanged_root_answers_the_same_with_and_without_the_scan() {
    let repo = released();
    repo.write("src/plugins/.gitattributes", "*.py text eol=crlf\n");
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    for args in [&["v1..v2", "--no-cache"][..], &["v1..v2"], &["v1..v2"]] {
        let j = repo.verdict_json(args);
        assert_eq!(j["restart_required"], false);
        assert_eq!(j["to"]["runtime_files"], 3);
        let codes = warning_codes(&j);
        // `text` and `eol`, at each end.
        assert_eq!(codes, ["gitattributes_conversion"; 4], "{args:?} {j}");
    }

    let repo = released();
    repo.write("src/broken.py/x.txt", "not a module\n");
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    for args in [&["v1..v2", "--no-cache"][..], &["v1..v2"]] {
        let j = repo.verdict_json(args);
        assert_eq!(j["to"]["fingerprint"], "");
        assert_eq!(
            j["to"]["unavailable_reason"], "src/broken.py is a directory",
            "{args:?}"
        );
        assert_eq!(j["to"]["fingerprint_skipped"], Value::Null);
    }

    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    let cold = repo.verdict_json(&["v1..v2", "--no-cache"]);
    let first = repo.verdict_json(&["v1..v2"]);
    let second = repo.verdict_json(&["v1..v2"]);
    assert_eq!(cold, first);
    assert_eq!(first, second);
    assert_eq!(second["to"]["fingerprint_skipped"], "selection_unchanged");
    assert_eq!(second["to"]["runtime_files"], 3);
    // `patch` still computes the digest, whatever the cache remembers.
    let patch = repo.fpcheck(&["patch", "v1..v2"]);
    assert_eq!(patch.code, 0, "{}", patch.stderr);
    assert!(
        patch.stdout.contains(&fingerprint_at(&repo, "v2")),
        "{}",
        patch.stdout
    );
}

/// A `.gitattributes` the rules select (`--ext .gitattributes`) still
/// sets conversions: the scan of an unchanged root leaves it to the walk,
/// which warns as `fingerprint` does, without and with the cache.
#[test]
fn a_selected_gitattributes_below_an_unchanged_root_keeps_its_warnings() {
    let repo = released();
    repo.write("src/plugins/.gitattributes", "*.py text eol=crlf\n");
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    let exts = ["--ext", ".py", "--ext", ".gitattributes"];
    // The cache last: cold, it is empty and the scan is tried.
    for cache in [Some("--no-cache"), None] {
        let mut args = vec!["v1..v2"];
        args.extend(exts);
        args.extend(cache);
        let j = repo.verdict_json(&args);
        assert_eq!(j["restart_required"], false, "{args:?} {j}");
        assert_eq!(j["to"]["runtime_files"], 4, "{args:?} {j}");
        // `text` and `eol`, at each end.
        assert_eq!(
            warning_codes(&j),
            ["gitattributes_conversion"; 4],
            "{args:?} {j}"
        );
    }
    // As `fingerprint` warns.
    let mut fp = vec!["fingerprint", "--rev", "v2", "--json"];
    fp.extend(exts);
    let run = repo.fpcheck(&fp);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let alone = run.json();
    let warned: Vec<&str> = alone["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warned.len(), 2, "{alone}");
    assert!(warned[0].contains("sets eol=crlf"), "{alone}");
    assert!(warned[1].contains("sets text"), "{alone}");
}

/// `--compute-fingerprints` (what the GitHub Action passes): both ends of
/// an unchanged selection get the digest `fingerprint --rev` gives, cold,
/// with a cache that remembers the root tree unwalked, and per runtime;
/// the rest of the report is the default report's.
#[test]
fn compute_fingerprints_reports_both_digests_of_an_unchanged_selection() {
    let without = |mut j: Value| {
        for end in ["from", "to"] {
            let side = j[end].as_object_mut().unwrap();
            side.remove("fingerprint");
            side.remove("fingerprint_skipped");
        }
        j
    };
    let repo = released();
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    // The default run first: a persistent cache then remembers the root
    // tree (scanned, not hashed), which must not stand for a digest.
    let default = repo.verdict_json(&["v1..v2"]);
    assert_eq!(default["to"]["fingerprint_skipped"], "selection_unchanged");
    let digest = fingerprint_at(&repo, "v1");
    assert_eq!(fingerprint_at(&repo, "v2"), digest);
    for args in [
        &["v1..v2", "--compute-fingerprints", "--no-cache"][..],
        &["v1..v2", "--compute-fingerprints"],
        &["v1..v2", "--compute-fingerprints"],
    ] {
        let j = repo.verdict_json(args);
        for end in ["from", "to"] {
            assert_eq!(j[end]["fingerprint"], digest.as_str(), "{args:?} {end}");
            assert_eq!(j[end]["fingerprint_skipped"], Value::Null, "{args:?}");
            assert_eq!(j[end]["runtime_files"], 3);
        }
        assert_eq!(without(j), without(default.clone()), "{args:?}");
    }
    let table = repo.fpcheck(&["v1..v2", "--compute-fingerprints"]);
    assert_eq!(table.code, 0, "{}", table.stderr);
    assert!(!table.stdout.contains("not computed"), "{}", table.stdout);
    assert!(table.stdout.contains(&digest[..12]), "{}", table.stdout);

    // Several runtimes, neither changed: each runtime's own digests.
    let repo = TestRepo::new();
    repo.write(
        "fpcheck.toml",
        "[runtimes.server]\nroot = \"server\"\n[runtimes.worker]\nroot = \"worker\"\n",
    )
    .write("server/app.py", "serve = 1\n")
    .write("worker/job.py", "work = 1\n")
    .write("README.md", "# mono\n");
    repo.commit_and_tag("1.0.0", "v1");
    docs_release(&repo, "v2");
    let skipped = repo.verdict_json(&["v1..v2", "--no-cache"]);
    assert_eq!(
        skipped["runtimes"][0]["to"]["fingerprint_skipped"],
        "selection_unchanged"
    );
    let j = repo.verdict_json(&["v1..v2", "--no-cache", "--compute-fingerprints"]);
    let runtimes = j["runtimes"].as_array().unwrap();
    assert_eq!(runtimes.len(), 2);
    for r in runtimes {
        let name = r["name"].as_str().unwrap();
        let run = repo.fpcheck(&["fingerprint", "--rev", "v2", "--runtime", name]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        for end in ["from", "to"] {
            assert_eq!(r[end]["fingerprint"], run.stdout.trim(), "{name} {end}");
            assert_eq!(r[end]["fingerprint_skipped"], Value::Null);
        }
    }
    assert_ne!(
        runtimes[0]["to"]["fingerprint"],
        runtimes[1]["to"]["fingerprint"]
    );
}

//! The walk's limits (directories entered, entries seen) on an unchanged
//! runtime root: the range's cheap scan must stop where the walk stops, so
//! `FROM..TO` gives the answer `fingerprint --rev TO` and `--patch-out`
//! give, whatever the cache holds.

use super::*;

/// Both ends share `src` (a hostile tree past one of the walk's limits):
/// every command must call the `to` end unavailable, for the same reason,
/// without the cache, with a cold one and with a warm one.
fn same_unavailable_answer_everywhere(src_of: impl Fn(&gix::Repository) -> ObjectId) {
    let repo = base();
    let g = open(&repo);
    let src = src_of(&g);
    let v2 = commit_tree(&repo, top_with_src(&g, src, "2.0.0"), "v1.0.0", "v2.0.0");
    commit_tree(&repo, top_with_src(&g, src, "2.0.1"), &v2, "v2.0.1");
    let fp = bounded(repo.path(), &["fingerprint", "--rev", "v2.0.1", "--json"]);
    assert_eq!(fp.code, 3, "fingerprint: {}", fp.stderr);
    let reason = json(&fp)["unavailable_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("the walk below the root passed 262144 directories or 1048576 entries"),
        "{reason}"
    );
    let out = repo.path().join("patch.json");
    let out = out.to_str().unwrap();
    for args in [
        &["v2.0.0..v2.0.1", "--format", "json", "--no-cache"][..],
        // Cold, then warm: what the first run stored must not change the
        // answer of the second.
        &["v2.0.0..v2.0.1", "--format", "json"],
        &["v2.0.0..v2.0.1", "--format", "json"],
        &["v2.0.0..v2.0.1", "--format", "json", "--patch-out", out],
    ] {
        let run = bounded(repo.path(), args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        let j = json(&run);
        assert_eq!(j["restart_required"], true, "{args:?}: {j}");
        assert_eq!(j["reason"], "fingerprint_unavailable", "{args:?}: {j}");
        assert_eq!(j["to"]["fingerprint"], "", "{args:?}: {j}");
        assert_eq!(j["to"]["unavailable_reason"], reason.as_str(), "{args:?}");
    }
    let patch: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(patch["runtime_fingerprint"], "", "{patch}");
}

/// 1024 names of one tree of 1024 entries (one `.py`): 1,049,601 entries
/// once walked, past the walk's 1,048,576, from two small tree objects.
/// The scan counted no entries at all, and called the range unchanged.
#[test]
fn an_unchanged_root_past_the_entry_limit_is_unavailable_in_the_range_too() {
    same_unavailable_answer_everywhere(|g| {
        let py = blob(g, b"x = 1\n");
        let mut names: Vec<Vec<u8>> = vec![b"a.py".to_vec()];
        names.extend((1..1024).map(|i| format!("f{i:04}.txt").into_bytes()));
        let entries: Vec<RawEntry<'_>> = names.iter().map(|n| ("100644", &n[..], py)).collect();
        let wide = raw_tree(g, &entries);
        let mut names: Vec<Vec<u8>> = vec![b"app.py".to_vec()];
        names.extend((0..1024).map(|i| format!("d{i:04}").into_bytes()));
        let entries: Vec<RawEntry<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i == 0 {
                    ("100644", &n[..], py)
                } else {
                    ("40000", &n[..], wide)
                }
            })
            .collect();
        raw_tree(g, &entries)
    });
}

/// A tree naming one subtree twice at each of 18 levels, ending in the
/// empty tree: 2^19 directories once walked, past the walk's 262,144. The
/// scan did not count the empty trees (half of them), and called the range
/// unchanged.
#[test]
fn an_unchanged_root_past_the_directory_limit_through_empty_trees_is_unavailable_too() {
    same_unavailable_answer_everywhere(|g| {
        let mut dag = raw_tree(g, &[]);
        for _ in 0..18 {
            dag = raw_tree(g, &[("40000", b"a", dag), ("40000", b"b", dag)]);
        }
        let py = blob(g, b"x = 1\n");
        raw_tree(g, &[("100644", b"app.py", py), ("40000", b"pkg", dag)])
    });
}

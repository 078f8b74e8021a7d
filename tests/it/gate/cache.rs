//! `status --cache`: reads skipped, renames never missed.

use super::*;

#[test]
fn status_cache_skips_reads_but_never_misses_a_rename() {
    let h = Host::new();
    h.install(&release_a());
    // Files changed within 2 s of the cached stats are never trusted: wait
    // so that this tree is old enough to be cached.
    std::thread::sleep(Duration::from_millis(2100));
    let status = |fp: &str| {
        h.status(fp, "1.0.0", &["--cache", "state/cache.json"])
            .json()
    };

    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("miss"), &json!(BASE_FP))
    );
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("hit"), &json!(BASE_FP))
    );
    assert_eq!(j["restart_required"], false);

    // Same count, same total size, same newest mtime, same inode: a rename.
    let plugins = h.join("app/src/plugins");
    std::fs::rename(plugins.join("memory.py"), plugins.join("recall.py")).unwrap();
    let renamed = fpcheck::compute(
        &fpcheck::DirSource::new(h.join("app/src")),
        &Default::default(),
    )
    .unwrap();
    let renamed = renamed.as_gate_str().to_string();
    assert_ne!(renamed, BASE_FP);
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("miss"), &json!(renamed))
    );
    assert_eq!(
        (&j["restart_required"], &j["reason"]),
        (&json!(true), &json!("fingerprint_mismatch"))
    );

    // Once the rename is old enough, the cache is trusted again...
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(status(BASE_FP)["cache"], "miss"); // cached right after the rename: racy
    let j = status(BASE_FP);
    assert_eq!(
        (&j["cache"], &j["installed_fingerprint"]),
        (&json!("hit"), &json!(renamed))
    );

    // ...until a file is rewritten with the same size and its old mtime put
    // back: its ctime moved, and no one can set that back.
    let file = plugins.join("recall.py");
    let old_mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "def hello(): return 'v9'\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old_mtime)
        .unwrap();
    let j = status(BASE_FP);
    assert_eq!(j["cache"], "miss");
    assert_ne!(j["installed_fingerprint"], json!(renamed));

    // A corrupt cache is ignored and rewritten.
    h.write(
        "state/cache.json",
        "{\"kind\": \"fpcheck-status-cache\", \"files\": [",
    );
    let j = status(BASE_FP);
    assert_eq!(j["cache"], "corrupt");
    let cache: Value =
        serde_json::from_slice(&std::fs::read(h.join("state/cache.json")).unwrap()).unwrap();
    assert_eq!(cache["fingerprint"], j["installed_fingerprint"]);
}

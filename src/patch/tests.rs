//! The patch's rules, on plain facts.

use super::*;

fn facts() -> Facts {
    Facts {
        from: "v1.0.0".into(),
        to: "v1.1.0".into(),
        from_fingerprint: "a".repeat(64),
        fingerprint: "b".repeat(64),
        unavailable_reason: None,
        code_changed: true,
        version_changed: true,
        previous_force: false,
        previous_raw: None,
        root: "src".into(),
        extensions: vec![".py".into()],
        exclude: vec!["tests".into()],
    }
}

fn files(bytes: Option<&str>, others: &[(&str, &str)]) -> VersionFiles {
    VersionFiles {
        target: "src/version.json".into(),
        chosen: Chosen::Lookup,
        bytes: bytes.map(|b| b.as_bytes().to_vec()),
        others: others
            .iter()
            .map(|(p, b)| (p.to_string(), b.as_bytes().to_vec()))
            .collect(),
        lookup: locate::gate_lookup("src"),
        place: "v1.1.0".into(),
    }
}

#[test]
fn merge_patch_deletes_stale_nested_keys() {
    let f = files(
        Some("{\"version\": \"1.1.0\", \"runtime_fingerprint_spec\": {\"algorithm\": \"fpcheck-runtime-v1\", \"note\": 1}}"),
        &[],
    );
    let plan = plan(&facts(), &f, false).unwrap();
    assert_eq!(
        plan.merge_patch(),
        json!({
            "runtime_fingerprint": "b".repeat(64),
            "runtime_fingerprint_spec": {
                "hash": "sha256", "root": "src", "extensions": [".py"],
                "exclude": ["tests"], "note": null
            }
        })
    );
    assert_eq!(
        plan.json_patch()[1],
        json!({"op": "replace", "path": "/runtime_fingerprint_spec", "value": facts().spec()})
    );
}

#[test]
fn a_missing_file_takes_the_version_from_package_json() {
    let f = files(
        None,
        &[(
            "package.json",
            "{\"version\": \"2.0.0\", \"force_restart\": 1}",
        )],
    );
    let plan = plan(&facts(), &f, false).unwrap();
    assert!(!plan.exists);
    assert_eq!(
        plan.set.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["version", "runtime_fingerprint", "runtime_fingerprint_spec"]
    );
    assert!(plan
        .text
        .starts_with("{\n  \"version\": \"2.0.0\",\n  \"runtime_fingerprint\": \"bbbb"));
    assert!(plan.text.ends_with("\n  }\n}\n"));
    let codes: Vec<_> = plan.explanations.iter().map(|e| e.code).collect();
    assert_eq!(
        codes,
        [
            "version_file_missing",
            "version_copied",
            "force_restart_elsewhere"
        ]
    );
}

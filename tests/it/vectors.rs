//! Every case of the spec's vectors.json, as a directory and as a commit.

use fpcheck::source::git::Session;
use fpcheck::{DirSource, GitSource, Revision, Rules};
use serde_json::Value;

use crate::support::{write_tree, TestRepo};

fn cases() -> Vec<Value> {
    let text = include_str!("../data/vectors.json");
    let doc: Value = serde_json::from_str(text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn rules_for(case: &Value) -> Rules {
    let mut rules = Rules::default();
    if let Some(ex) = case.get("exclude") {
        rules.exclude = ex
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
    }
    rules
}

fn expected(case: &Value) -> (String, Vec<String>) {
    let fp = case["fingerprint"].as_str().unwrap().to_string();
    let sel = case["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    (fp, sel)
}

fn got(fp: &fpcheck::Fingerprint) -> (String, Vec<String>) {
    (
        fp.as_gate_str().to_string(),
        fp.files().into_iter().map(String::from).collect(),
    )
}

#[test]
fn vectors_as_directories() {
    let cases = cases();
    assert!(cases.len() >= 20, "the vectors file lost cases");
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        write_tree(&root, case["files"].as_object().unwrap());
        let fp = fpcheck::compute(&DirSource::new(&root), &rules_for(&case)).unwrap();
        assert_eq!(got(&fp), expected(&case), "case {}", case["name"]);
        assert_eq!(
            fp.unavailable_reason.is_some(),
            case["unavailable"].as_bool().unwrap(),
            "case {}",
            case["name"]
        );
    }
}

#[test]
fn vectors_as_commits() {
    for case in cases() {
        let repo = TestRepo::new();
        write_tree(&repo.join("src"), case["files"].as_object().unwrap());
        repo.write("README.md", "outside the root\n");
        let commit = repo.commit(case["name"].as_str().unwrap());
        let git = Session::open(Some(repo.path())).unwrap();
        let rev = Revision::parse(&git, &commit[..10]).unwrap();
        let source = GitSource::new(git, rev, "src").unwrap();
        let fp = fpcheck::compute(&source, &rules_for(&case)).unwrap();
        assert_eq!(got(&fp), expected(&case), "case {}", case["name"]);
    }
}

/// The checkout cases: stored blobs plus `.gitattributes`, committed in two
/// steps, give the fingerprint of a fresh clone.
#[test]
fn checkout_vectors_as_commits() {
    let all: Value = serde_json::from_str(include_str!("../data/vectors.json")).unwrap();
    let cases = all["checkout_cases"].as_array().unwrap();
    assert!(cases.len() >= 10, "the checkout vectors lost cases");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let repo = TestRepo::new();
        let files = case["files"].as_object().unwrap();
        for (path, text) in files.iter().filter(|(p, _)| !p.ends_with(".gitattributes")) {
            repo.write(&format!("src/{path}"), text.as_str().unwrap());
        }
        repo.commit("blobs");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        repo.git(&["update-index", "--refresh"]);
        for (path, text) in files.iter().filter(|(p, _)| p.ends_with(".gitattributes")) {
            repo.write(&format!("src/{path}"), text.as_str().unwrap());
        }
        let top = case["gitattributes"].as_str().unwrap();
        if !top.is_empty() {
            repo.write(".gitattributes", top);
        }
        let commit = repo.commit(name);
        let git = Session::open(Some(repo.path())).unwrap();
        let rev = Revision::parse(&git, &commit[..10]).unwrap();
        let source = GitSource::new(git, rev, "src").unwrap();
        let fp = fpcheck::compute(&source, &Rules::default()).unwrap();
        assert_eq!(
            fp.as_gate_str(),
            case["fingerprint"].as_str().unwrap(),
            "case {name}: {:?}",
            fp.unavailable_reason
        );
    }
}

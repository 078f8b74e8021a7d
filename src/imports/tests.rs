use super::*;
use std::collections::BTreeMap as Map;

/// A tree from a list of files (directories implied).
struct Files(Map<String, String>);

impl Files {
    fn new(files: &[(&str, &str)]) -> Self {
        Files(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        )
    }
}

impl Tree for Files {
    fn is_file(&self, path: &str) -> bool {
        self.0.contains_key(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        path.is_empty() || self.0.keys().any(|k| k.starts_with(&format!("{path}/")))
    }
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(path).map(|t| t.as_bytes().to_vec())
    }
}

fn imp(module: &str, level: u32, names: &[&str]) -> Import {
    Import {
        module: module.into(),
        level,
        names: names.iter().map(|n| n.to_string()).collect(),
    }
}

#[test]
fn every_kind_of_import_is_read_wherever_it_stands() {
    let src = b"import os, a.b as c
from . import x
from ..pkg.mod import y
from star import *
def f():
    if True:
        import inner
    try:
        from lazy import z
    except ImportError:
        pass
importlib.import_module(\"dyn.mod\")
__import__(\"old\")
importlib.import_module(name)
importlib.import_module(\"bad name\")
";
    assert_eq!(
        imports_of(src).unwrap(),
        [
            imp("os", 0, &[]),
            imp("a.b", 0, &[]),
            imp("", 1, &["x"]),
            imp("pkg.mod", 2, &["y"]),
            imp("star", 0, &[]),
            imp("inner", 0, &[]),
            imp("lazy", 0, &["z"]),
            imp("dyn.mod", 0, &[]),
            imp("old", 0, &[]),
        ]
    );
}

#[test]
fn what_is_not_python_or_too_deep_has_no_imports_read() {
    assert_eq!(imports_of(b"def (:\n"), None);
    assert_eq!(imports_of(b"\xff\xfe"), None);
    let deep = format!("x = {}1{}\n", "(".repeat(300), ")".repeat(300));
    assert_eq!(imports_of(deep.as_bytes()), None);
    let huge = vec![b'#'; MAX_SOURCE + 1];
    assert_eq!(imports_of(&huge), None);
}

#[test]
fn modules_resolve_as_the_path_search_finds_them() {
    let t = Files::new(&[
        ("src/pkg/__init__.py", ""),
        ("src/pkg/mod.py", ""),
        ("src/ns/part.py", ""),
        ("top.py", ""),
    ]);
    let roots = vec![String::new(), "src".to_string()];
    let file = |p: &str| Some(Location::File(p.into()));
    assert_eq!(resolve(&t, "pkg", &roots), file("src/pkg/__init__.py"));
    assert_eq!(resolve(&t, "pkg.mod", &roots), file("src/pkg/mod.py"));
    assert_eq!(resolve(&t, "top", &roots), file("top.py"));
    assert_eq!(
        resolve(&t, "ns", &roots),
        Some(Location::Namespace("src/ns".into()))
    );
    assert_eq!(resolve(&t, "os", &roots), None);
    assert_eq!(resolve(&t, "pkg..mod", &roots), None);
    assert_eq!(resolve(&t, "../etc", &roots), None);
    assert_eq!(
        relative_base("src/pkg/mod.py", 1).as_deref(),
        Some("src/pkg")
    );
    assert_eq!(relative_base("src/pkg/mod.py", 2).as_deref(), Some("src"));
    assert_eq!(relative_base("src/pkg/mod.py", 4), None);
}

/// The shape of a formatter whose package imports its sibling package.
#[test]
fn the_closure_follows_a_package_into_its_sibling() {
    let t = Files::new(&[
        (
            "src/black/__init__.py",
            "from blib2to3.pgen2 import driver\nfrom .mode import Mode\n",
        ),
        ("src/black/mode.py", "import os\n"),
        ("src/black/__main__.py", "from black import main\n"),
        ("src/blib2to3/__init__.py", ""),
        ("src/blib2to3/pgen2/__init__.py", ""),
        ("src/blib2to3/pgen2/driver.py", "from . import tokenize\n"),
        ("src/blib2to3/pgen2/tokenize.py", ""),
        ("src/blackd/__init__.py", "import aiohttp\n"),
    ]);
    let c = closure(&t, &["src/black/__main__.py".to_string()], 100);
    assert_eq!(
        c.files.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "src/black/__init__.py",
            "src/black/__main__.py",
            "src/black/mode.py",
            "src/blib2to3/__init__.py",
            "src/blib2to3/pgen2/__init__.py",
            "src/blib2to3/pgen2/driver.py",
            "src/blib2to3/pgen2/tokenize.py",
        ]
    );
    assert!(c.edges.contains(&Edge {
        from: "src/black/__init__.py".into(),
        module: "blib2to3".into(),
        to: Location::File("src/blib2to3/__init__.py".into()),
    }));
    assert!(!c.truncated);
    let dirs = c.files.iter().map(|f| parent(f));
    assert_eq!(common_dir(dirs), "src");
    let c = closure(&t, &["src/black/__main__.py".to_string()], 2);
    assert!(c.truncated);
}

//! `fpcheck demo`: a throwaway repository whose history is one release per
//! row of the spec's behaviour matrix, analysed pair by pair and checked
//! against what the spec says each row must do.
//!
//! The repository is written with gix alone (blobs, trees, commits, tags),
//! so the demo needs neither `git` nor a repository of the user's.

use std::collections::BTreeMap;
use std::path::Path;

use gix::bstr::BString;
use gix::objs::tree::{Entry, EntryKind};
use gix::ObjectId;

use crate::range::{self, Analysis};

/// What the spec's behaviour matrix says a release must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The version changed.
    pub version_changed: bool,
    /// The code changed (or counts as changed).
    pub code_changed: bool,
    /// The updater writes the marker.
    pub marker: bool,
    /// Running clients restart.
    pub restart: bool,
}

/// One analysed release of the demo.
#[derive(Clone, Debug)]
pub struct Row {
    /// The matrix row number (1 to 8).
    pub number: u8,
    /// The spec's "release touches" text.
    pub touches: &'static str,
    /// `FROM..TO`.
    pub range: String,
    /// The spec's expectation.
    pub expected: Expected,
    /// fpcheck's analysis.
    pub analysis: Analysis,
}

impl Row {
    /// What fpcheck said, in the shape of [`Expected`].
    pub fn actual(&self) -> Expected {
        Expected {
            version_changed: self.analysis.version_changed,
            code_changed: self.analysis.code_changed,
            marker: self.analysis.updater.writes_marker,
            restart: self.analysis.restart_required,
        }
    }

    /// Whether fpcheck agrees with the spec on this row, the matrix row
    /// included.
    pub fn agrees(&self) -> bool {
        self.actual() == self.expected
            && self.analysis.matrix_row.as_ref().map(|r| r.number) == Some(self.number)
    }
}

/// Errors building the demo repository.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// gix could not write the repository.
    #[error("cannot build the demo repository in {dir}: {message}")]
    Build {
        /// Where.
        dir: String,
        /// gix's message.
        message: String,
    },
    /// The kept repository's files cannot be written.
    #[error(
        "cannot build the demo repository in {dir}: cannot check out the last release: {message}"
    )]
    CheckOut {
        /// Where.
        dir: String,
        /// gix's or the file system's message.
        message: String,
    },
    /// The analysis failed.
    #[error(transparent)]
    Range(#[from] range::RangeError),
}

impl crate::error::Classified for DemoError {
    fn kind(&self) -> crate::error::Kind {
        match self {
            DemoError::Build { .. } => crate::error::Kind::Input,
            DemoError::CheckOut { .. } => crate::error::Kind::Output,
            DemoError::Range(e) => crate::error::Classified::kind(e),
        }
    }
}

type Files = BTreeMap<&'static str, String>;

/// A release: the row it plays, and how it edits the previous tree.
struct Release {
    number: u8,
    edit: fn(&mut Files),
}

const YES: bool = true;
const NO: bool = false;

/// The spec's section 8, row by row.
const EXPECTED: [Expected; 8] = [
    expect(YES, YES, YES, YES),
    expect(YES, YES, YES, YES),
    expect(YES, NO, NO, NO),
    expect(YES, NO, NO, NO),
    expect(YES, NO, NO, NO),
    expect(YES, NO, NO, NO),
    expect(YES, NO, YES, YES),
    expect(YES, YES, YES, YES),
];

/// A row of the matrix: version changed, code changed, marker, restart.
const fn expect(
    version_changed: bool,
    code_changed: bool,
    marker: bool,
    restart: bool,
) -> Expected {
    Expected {
        version_changed,
        code_changed,
        marker,
        restart,
    }
}

fn base() -> Files {
    let mut f = Files::new();
    f.insert("README.md", "# demo server\n".into());
    f.insert("CHANGELOG.md", "## 1.0.0\n- first release\n".into());
    f.insert(
        "src/server.py",
        "from plugins import memory\n\ndef main():\n    memory.serve()\n".into(),
    );
    f.insert("src/plugins/__init__.py", String::new());
    f.insert(
        "src/plugins/memory.py",
        "def serve():\n    return 'v1'\n".into(),
    );
    f.insert("src/scripts/reindex.py", "print('reindex')\n".into());
    f.insert(
        "src/migrations/0001_init.py",
        "UP = 'create table notes'\n".into(),
    );
    f.insert("src/tests/test_memory.py", "def test(): pass\n".into());
    f
}

fn releases() -> [Release; 8] {
    [
        Release {
            number: 1,
            edit: |f| {
                f.insert(
                    "src/plugins/memory.py",
                    "def serve():\n    return 'v2'  # fix\n".into(),
                );
            },
        },
        Release {
            number: 2,
            edit: |f| {
                f.insert(
                    "src/plugins/search.py",
                    "def search(q):\n    return []\n".into(),
                );
            },
        },
        Release {
            number: 3,
            edit: |f| {
                f.insert(
                    "README.md",
                    "# demo server\n\nNow with a launch plan.\n".into(),
                );
                f.insert("blog/launch.md", "We launched.\n".into());
            },
        },
        Release {
            number: 4,
            edit: |f| {
                f.insert(
                    "CHANGELOG.md",
                    "## 1.4.0\n- typo fixes\n## 1.0.0\n- first release\n".into(),
                );
            },
        },
        Release {
            number: 5,
            edit: |f| {
                f.insert("src/scripts/backfill.py", "print('backfill')\n".into());
            },
        },
        Release {
            number: 6,
            edit: |f| {
                f.insert(
                    "src/migrations/0002_add_index.py",
                    "UP = 'create index'\n".into(),
                );
            },
        },
        Release {
            number: 7,
            edit: |_| {},
        },
        Release {
            number: 8,
            edit: |f| {
                // A directory named like a module: the gate cannot hash it.
                f.insert("src/plugins/legacy.py/__init__.py", "x = 1\n".into());
            },
        },
    ]
}

fn version_json(version: &str, force: bool) -> String {
    format!("{{\n  \"version\": \"{version}\",\n  \"force_restart\": {force}\n}}\n")
}

/// Builds the demo repository in `dir` and analyses every release.
pub fn run(dir: &Path) -> Result<Vec<Row>, DemoError> {
    let fail = |e: &dyn std::fmt::Display| DemoError::Build {
        dir: dir.display().to_string(),
        message: e.to_string(),
    };
    let repo = gix::init(dir).map_err(|e| fail(&e))?;
    let mut files = base();
    files.insert("version.json", version_json("1.0.0", false));
    let mut parent = commit(&repo, &files, None, "release 1.0.0").map_err(|e| fail(&e))?;
    tag(&repo, "v1.0.0", parent).map_err(|e| fail(&e))?;
    let mut tags = vec!["v1.0.0".to_string()];
    for (i, release) in releases().into_iter().enumerate() {
        let version = format!("1.{}.0", i + 1);
        (release.edit)(&mut files);
        files.insert("version.json", version_json(&version, release.number == 7));
        parent = commit(&repo, &files, Some(parent), &format!("release {version}"))
            .map_err(|e| fail(&e))?;
        let name = format!("v{version}");
        tag(&repo, &name, parent).map_err(|e| fail(&e))?;
        tags.push(name);
    }

    // Read back as every command reads a repository (no `git replace`).
    drop(repo);
    let session = crate::source::git::Session::open(Some(dir)).map_err(|e| fail(&e))?;
    let mut rows = Vec::new();
    for (i, release) in releases().into_iter().enumerate() {
        let (from, to) = (&tags[i], &tags[i + 1]);
        // Every digest shown, as the matrix's reader compares them.
        let options = range::RangeOptions {
            digests: range::Digests::Always,
            ..range::RangeOptions::new(
                range::RangeSpec::between(from.clone(), Some(to.clone())),
                false,
                crate::config::SettingsRequest::overrides_only(Default::default()),
            )
        };
        let analysis = range::analyse(&session, &options)?;
        rows.push(Row {
            number: release.number,
            touches: range::MATRIX[usize::from(release.number) - 1],
            range: format!("{from}..{to}"),
            expected: EXPECTED[usize::from(release.number) - 1],
            analysis,
        });
    }
    Ok(rows)
}

/// Checks out HEAD's tree in the repository at `dir` (which has only its
/// `.git` so far): writes every file and an index that matches them, so
/// `git status` is clean and `--worktree` compares the files on disk.
pub(crate) fn check_out_head(dir: &Path) -> Result<(), DemoError> {
    let fail = |e: &dyn std::fmt::Display| DemoError::CheckOut {
        dir: dir.display().to_string(),
        message: e.to_string(),
    };
    let session = crate::source::git::Session::open(Some(dir)).map_err(|e| fail(&e))?;
    let head = session.repo().head_id().map_err(|e| fail(&e))?.detach();
    let tree = (session.commit_tree(head, "the commit of HEAD", "HEAD")).map_err(|e| fail(&e))?;
    let mut index = session
        .repo()
        .index_from_tree(&tree)
        .map_err(|e| fail(&e))?;
    for (entry, path) in index.entries_mut_with_paths() {
        let rel = path.to_string();
        let file = dir.join(&rel);
        // The demo writes regular files only; anything else would be a bug
        // here, not something to paper over.
        if entry.mode != gix::index::entry::Mode::FILE {
            return Err(fail(&format!("{rel} is not a regular file")));
        }
        let what = format!("the blob of {rel}");
        let blob = session
            .blob(entry.id, &what, "HEAD")
            .map_err(|e| fail(&e))?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(&e))?;
        }
        std::fs::write(&file, &blob.data).map_err(|e| fail(&format!("{rel}: {e}")))?;
        // The stat the index records is what lets git trust the file
        // without rehashing it.
        let meta = gix::index::fs::Metadata::from_path_no_follow(&file).map_err(|e| fail(&e))?;
        entry.stat = gix::index::entry::Stat::from_fs(&meta).map_err(|e| fail(&e))?;
    }
    index
        .write(gix::index::write::Options::default())
        .map_err(|e| fail(&e))?;
    Ok(())
}

/// Writes `files` as nested trees and commits them on HEAD.
fn commit(
    repo: &gix::Repository,
    files: &Files,
    parent: Option<ObjectId>,
    message: &str,
) -> Result<ObjectId, gix::Error> {
    let tree = write_tree(
        repo,
        files
            .iter()
            .map(|(p, c)| (p.to_string(), c.as_bytes()))
            .collect(),
    )?;
    // A fixed identity and date: the demo is the same on every machine.
    let sig = gix::actor::SignatureRef {
        name: "fpcheck demo".into(),
        email: "demo@fpcheck.invalid".into(),
        time: "1767225600 +0000",
    };
    let id = repo.commit_as(sig, sig, "HEAD", message, tree, parent)?;
    Ok(id.detach())
}

fn tag(repo: &gix::Repository, name: &str, target: ObjectId) -> Result<(), gix::Error> {
    repo.tag_reference(
        name,
        target,
        gix::refs::transaction::PreviousValue::MustNotExist,
    )?;
    Ok(())
}

/// Writes a tree (and its subtrees) for `path → bytes`.
fn write_tree(repo: &gix::Repository, files: Vec<(String, &[u8])>) -> Result<ObjectId, gix::Error> {
    let mut here: Vec<Entry> = Vec::new();
    let mut subdirs: BTreeMap<String, Vec<(String, &[u8])>> = BTreeMap::new();
    for (path, bytes) in files {
        match path.split_once('/') {
            Some((dir, rest)) => subdirs
                .entry(dir.to_string())
                .or_default()
                .push((rest.to_string(), bytes)),
            None => here.push(Entry {
                mode: EntryKind::Blob.into(),
                filename: BString::from(path),
                oid: repo.write_blob(bytes)?.detach(),
            }),
        }
    }
    for (dir, inner) in subdirs {
        here.push(Entry {
            mode: EntryKind::Tree.into(),
            filename: BString::from(dir),
            oid: write_tree(repo, inner)?,
        });
    }
    here.sort();
    Ok(repo
        .write_object(gix::objs::Tree { entries: here })?
        .detach())
}

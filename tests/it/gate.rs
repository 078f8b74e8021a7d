//! `fpcheck snapshot | gate | status | ack` on real directories: the
//! behaviour matrix as simulated updates, every reason code of section 7,
//! the clearing rules, crash safety with killed processes, racing gates,
//! unreadable inputs, markers in the reference's own format, and the cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::Digest;

use crate::support::{fpcheck_in, Run};

mod ack;
mod cache;
mod clearing;
mod crash;
mod edges;
mod fail_closed;
mod model;
mod status;
mod updates;

/// The vectors' `base` tree and its `plugin-changed` sibling.
const BASE_FP: &str = "3c43745c84d45b3a91549d9f364119f930f26b9b87ab5772fd95040bd8d043d6";
const V2_FP: &str = "7e11f47df4a9b650ebefd470c871f4726d28e8e17cfec79fb8bd4d1271f9aa22";
const MARKER: &str = "state/mcp-restart-required.json";
const BEFORE: &str = "state/before.json";

/// A release as installed under `app/`: path to content; a content of
/// `-> TARGET` is a symbolic link.
type Release = BTreeMap<&'static str, String>;

/// Release A: the vectors' base tree at version 1.0.0, with docs around it.
fn release_a() -> Release {
    [
        ("src/server.py", "# entrypoint\n"),
        ("src/cli.py", "# cli\n"),
        ("src/plugins/__init__.py", ""),
        ("src/plugins/memory.py", "def hello(): return 'v1'\n"),
        ("src/scripts/noise.py", "# excluded\n"),
        ("src/tests/noise.py", "# excluded\n"),
        ("src/migrations/0001.py", "# excluded\n"),
        ("src/version.json", "{\"version\": \"1.0.0\"}\n"),
        // The install's home: where the updater itself reads the version.
        ("version.json", "{\"version\": \"1.0.0\"}\n"),
        ("README.md", "# docs\n"),
        ("CHANGELOG.md", "# changes\n"),
    ]
    .into_iter()
    .map(|(p, c)| (p, c.to_string()))
    .collect()
}

/// Release A with its version bumped to 1.1.0 and nothing else.
fn bumped() -> Release {
    let mut r = release_a();
    r.insert("src/version.json", "{\"version\": \"1.1.0\"}\n".into());
    r.insert("version.json", "{\"version\": \"1.1.0\"}\n".into());
    r
}

/// Release B: 1.1.0 with a real fix in `plugins/memory.py` (fingerprint
/// `V2_FP`), the update that needs a restart.
fn release_b() -> Release {
    let mut r = bumped();
    r.insert("src/plugins/memory.py", "def hello(): return 'v2'\n".into());
    r
}

fn sha(bytes: &str) -> String {
    hex::encode(sha2::Sha256::digest(bytes.as_bytes()))
}

/// A production host: the installed runtime in `app/src`, the updater's
/// state (snapshot, marker) in `state/`.
struct Host {
    dir: tempfile::TempDir,
}

impl Host {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fpcheck-gate")
            .tempdir()
            .unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        Host { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn join(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    /// Replaces `app/` with `release`, as an installer would.
    fn install(&self, release: &Release) -> &Self {
        let app = self.join("app");
        if app.exists() {
            std::fs::remove_dir_all(&app).unwrap();
        }
        for (rel, content) in release {
            let path = app.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match content.strip_prefix("-> ") {
                Some(target) => std::os::unix::fs::symlink(target, &path).unwrap(),
                None => std::fs::write(&path, content).unwrap(),
            }
        }
        self
    }

    fn fpcheck(&self, args: &[&str]) -> Run {
        fpcheck_in(self.path(), args)
    }

    fn snapshot(&self) -> Run {
        let run = self.fpcheck(&["snapshot", "--dir", "app/src", "--out", BEFORE]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run
    }

    fn gate_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = Self::gate_args_for(MARKER, &["--json"]);
        args.extend_from_slice(extra);
        args
    }

    /// `gate` of the installed runtime against the snapshot, writing
    /// `marker`, then `extra`.
    fn gate_args_for<'a>(marker: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "gate", "--dir", "app/src", "--before", BEFORE, "--marker", marker,
        ];
        args.extend_from_slice(extra);
        args
    }

    fn gate(&self, extra: &[&str]) -> Run {
        self.fpcheck(&Self::gate_args(extra))
    }

    /// `status --json` for a process that started with `fp` and `version`.
    fn status(&self, fp: &str, version: &str, extra: &[&str]) -> Run {
        let mut args = Self::status_args(MARKER, fp, version, &["--json"]);
        args.extend_from_slice(extra);
        self.fpcheck(&args)
    }

    /// `status` of the installed runtime against `marker`, for a process
    /// that started with `fp` and `version`, then `extra`.
    fn status_args<'a>(
        marker: &'a str,
        fp: &'a str,
        version: &'a str,
        extra: &[&'a str],
    ) -> Vec<&'a str> {
        let mut args = vec![
            "status",
            "--dir",
            "app/src",
            "--marker",
            marker,
            "--process-fingerprint",
            fp,
            "--process-version",
            version,
        ];
        args.extend_from_slice(extra);
        args
    }

    fn marker(&self) -> Option<Value> {
        let bytes = std::fs::read(self.join(MARKER)).ok()?;
        Some(serde_json::from_slice(&bytes).expect("the marker is JSON"))
    }

    fn marker_bytes(&self) -> Vec<u8> {
        std::fs::read(self.join(MARKER)).unwrap()
    }

    fn write(&self, rel: &str, content: &str) {
        std::fs::write(self.join(rel), content).unwrap();
    }

    /// The fpcheck binary, for runs the test must spawn or kill itself.
    fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fpcheck"));
        cmd.current_dir(self.path())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.spawn().unwrap()
    }

    fn temp_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect();
        names.sort();
        names
    }
}

/// Checks a marker has the reference's schema 3 shape and returns it.
fn assert_schema_3(m: &Value) {
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "schema_version",
            "required",
            "from_version",
            "to_version",
            "from_fingerprint",
            "to_fingerprint",
            "reason",
            "updated_at",
            "clients"
        ]
    );
    assert_eq!(
        (&m["schema_version"], &m["required"]),
        (&json!(3), &json!(true))
    );
    let at = m["updated_at"].as_str().unwrap();
    let shape: String = at
        .chars()
        .map(|c| if c.is_ascii_digit() { 'D' } else { c })
        .collect();
    assert_eq!(shape, "DDDD-DD-DDTDD:DD:DDZ", "{at}");
}

/// The marker without its timestamp, for exact comparison.
fn without_time(m: &Value) -> Value {
    let mut m = m.clone();
    m.as_object_mut().unwrap().remove("updated_at");
    m
}

fn changes(j: &Value) -> Vec<(String, String)> {
    j["changed_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["change"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// A host running release A, snapshotted: the state before an update.
fn host_at_a() -> Host {
    let h = Host::new();
    h.install(&release_a());
    h.snapshot();
    h
}

/// A marker from A to B for clients `codex` and `claude_desktop` (named
/// by an alias).
fn host_with_marker() -> Host {
    let h = host_at_a();
    h.install(&release_b());
    let run = h.gate(&["--client", "codex", "--client", "Desktop"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    h
}

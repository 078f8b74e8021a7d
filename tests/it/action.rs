//! The GitHub Action (action.yml and .github/action/) under a simulated
//! runner: tests/action/run_action_test.py, with the binary cargo built;
//! for what act cannot do (the scenarios run under act, in action_act.rs).

use std::process::Command;

#[test]
fn the_action_runs_under_a_simulated_runner() {
    let root = env!("CARGO_MANIFEST_DIR");
    let script = format!("{root}/tests/action/run_action_test.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_fpcheck"))
        .current_dir(root)
        .output()
        .expect("python3 runs (the action test needs Python 3 and git)");
    assert!(
        out.status.success(),
        "python3 {script} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#!/usr/bin/env python3
"""The fpcheck GitHub Action under a simulated runner, for what act cannot do.

The action's scenarios run under a real runner, nektos/act, in
act_action_test.py (tests/it/action_act.rs). This script keeps what act
cannot give: the action's Python functions checked alone (escaping, output
limits, input checks, the exit-code labels), the installer (act fills in
`github.action_ref`, which GitHub's runner leaves empty in composite actions
(actions/runner#2473), and lays actions out its own way, so the installer's
fallback to the runner's `_actions/OWNER/NAME/REF` directory can only be
staged here), and a workspace inside another repository (act always runs
the action in its own copy of the checkout).

The simulated runner reads action.yml as the runner does (inputs with their
defaults, the composite steps, their `env:` expressions, the outputs), and
runs each step's `run:` with bash in the environment a runner gives it, with
GITHUB_API_URL / GITHUB_SERVER_URL pointing at a stub on 127.0.0.1 that
serves release assets and records every request. The runner and the stub
are in simulated_runner.py, the repositories in fixtures.py.

Usage: python3 tests/action/run_action_test.py [--binary target/debug/fpcheck]
(or FPCHECK_BINARY); `cargo test` runs it through tests/it/action.rs.
Python standard library and git only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from action_edges import input_checks, nested_workspace_run
from action_edges import unit_checks as edge_unit_checks
from action_outputs import output_limit_checks
from action_runtimes import unit_checks as runtime_unit_checks
from fixtures import Checks, Fixture
from simulated_runner import ROOT, Runner, Stub, dump, parse_workflow_commands

# The action's modules, for the unit checks.
sys.path.insert(0, str(ROOT / ".github" / "action"))
from fpaction import install, workflow  # noqa: E402


def host_target() -> str | None:
    system, machine = platform.system(), platform.machine().lower()
    return {
        ("Linux", "x86_64"): "x86_64-unknown-linux-musl",
        ("Linux", "aarch64"): "aarch64-unknown-linux-musl",
        ("Linux", "arm64"): "aarch64-unknown-linux-musl",
        ("Darwin", "x86_64"): "x86_64-apple-darwin",
        ("Darwin", "arm64"): "aarch64-apple-darwin",
    }.get((system, machine))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.environ.get("FPCHECK_BINARY") or str(ROOT / "target" / "debug" / "fpcheck"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    binary = Path(args.binary).resolve()
    if not binary.is_file():
        print(f"no fpcheck binary at {binary}: run cargo build first, or pass --binary", file=sys.stderr)
        return 2
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="fpcheck-action-test-"))
    stub = Stub()
    c = Checks()
    try:
        run_all(c, tmp, stub, binary)
    except Exception:
        c.failed += 1
        traceback.print_exc()
    finally:
        stub.close()
        if args.keep or c.failed:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"action test: {time.monotonic() - started:.1f}s")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


def run_all(c: Checks, tmp: Path, stub: Stub, binary: Path) -> None:
    # The action's escaping, unit by unit.
    c.equal(workflow.escape_data("50%\r\nnext"), "50%25%0D%0Anext", "workflow command data escaping")
    c.equal(workflow.escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A", "workflow command property escaping")
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        workflow.log_untrusted("src/evil\n::error title=injected::pwned\n::add-mask::x")
        workflow.command("warning", "50%\n::error::not a command", title="t:1,2")
    parsed = parse_workflow_commands(captured.getvalue())
    c.equal(
        [(n, p, m) for n, p, m in parsed if n != "stop-commands"],
        [("warning", {"title": "t:1,2"}, "50%\n::error::not a command")],
        "untrusted output is printed with workflow commands off",
    )
    output_limit_checks(c)

    edge_unit_checks(c)
    input_checks(c, tmp)
    runtime_unit_checks(c)

    # The runs act cannot make (act's own runs are in act_action_test.py).
    fx = Fixture(tmp)
    runner = Runner(ROOT, tmp, stub)
    nested_workspace_run(c, tmp, runner, binary)

    # ---- 6. the installer: the release binary, its sha256, the fallback.
    target = host_target()
    if target is None:
        print(f"skipping the installer runs: no release target for {platform.system()} {platform.machine()}", file=sys.stderr)
        return
    version = install.cargo_version(ROOT / "Cargo.toml")
    tag = f"v{version}"
    dist = tmp / "dist"
    # The archive carries a small stand-in that runs the built binary (a
    # debug build is too big to gzip quickly); the installer cannot tell.
    stand_in = tmp / "fpcheck-stand-in"
    stand_in.write_text(f'#!/bin/sh\nexec "{binary}" "$@"\n', encoding="utf-8")
    stand_in.chmod(0o755)
    out = subprocess.run(
        ["bash", str(ROOT / ".github" / "action" / "run.sh"), "package", "--target", target, "--tag", tag, "--binary", str(stand_in), "--out", str(dist)],
        capture_output=True,
        text=True,
    )
    c.check(out.returncode == 0, "package builds the release archive", out.stdout + out.stderr)
    wrong = subprocess.run(
        ["bash", str(ROOT / ".github" / "action" / "run.sh"), "package", "--target", target, "--tag", "v0.0.0-not", "--binary", str(stand_in), "--out", str(dist / "x")],
        capture_output=True,
        text=True,
    )
    c.check(wrong.returncode != 0, "package refuses a tag that is not the Cargo version", wrong.stdout)
    for f in dist.iterdir():
        if f.is_file():
            stub.assets[f"{tag}/{f.name}"] = f.read_bytes()
    c.check(len(stub.assets) == 2, "an archive and its .sha256", repr(sorted(stub.assets)))
    # The runner checks actions out under _actions/<owner>/<name>/<ref>; the
    # action finds its repository and ref there when the context is empty.
    action_dir = tmp / "_actions" / "acme" / "fpcheck" / "main"
    action_dir.parent.mkdir(parents=True)
    action_dir.symlink_to(ROOT, target_is_directory=True)
    installer = Runner(action_dir, tmp, stub)
    fake_bin = tmp / "fake-cargo-bin"
    fake_bin.mkdir()
    cargo_log = tmp / "cargo.log"
    (fake_bin / "cargo").write_text(
        "#!/usr/bin/env bash\n"
        f'printf "%s\\n" "$*" >> "{cargo_log}"\n'
        'root=""; while [ $# -gt 0 ]; do [ "$1" = --root ] && root="$2"; shift; done\n'
        'mkdir -p "$root/bin"\n'
        f'ln -s "{binary}" "$root/bin/fpcheck"\n',
        encoding="utf-8",
    )
    (fake_bin / "cargo").chmod(0o755)
    no_binary = {"PATH": f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    inputs = {"from": "v1.1.0", "to": "main"}

    r6 = installer.run(fx.checkout("ws6", fx.base, "refs/remotes/origin/main"), "push", {"after": fx.base}, inputs, no_binary)
    c.check(r6.ok, "run 6: installs the release binary and runs", dump(r6))
    c.equal(r6.step("install")["outputs"].get("source"), "release", "run 6: installed from the release")
    c.check("verified" in r6.step("install")["stdout"], "run 6: says the sha256 was verified", dump(r6))
    c.check(not cargo_log.exists(), "run 6: cargo not used")
    c.equal(r6.outputs.get("reason"), "no_runtime_change", "run 6: the downloaded binary gives the verdict")

    sha_name = f"{tag}/{install.asset_name(tag, target)}.sha256"
    good = stub.assets[sha_name]
    stub.assets[sha_name] = ("0" * 64 + "  tampered\n").encode()
    r7 = installer.run(fx.checkout("ws7", fx.base, "refs/remotes/origin/main"), "push", {"after": fx.base}, inputs, no_binary)
    stub.assets[sha_name] = good
    c.check(not r7.ok and r7.failed_step == "install", "run 7: a checksum mismatch stops the install", dump(r7))
    c.check(any(n == "error" and "sha256 mismatch" in m for n, _, m in r7.commands), "run 7: ::error:: says mismatch", dump(r7))
    c.check(not cargo_log.exists(), "run 7: no fallback to cargo after a mismatch")

    r8 = installer.run(
        fx.checkout("ws8", fx.base, "refs/remotes/origin/main"), "push", {"after": fx.base}, {**inputs, "version": "v9.9.9"}, no_binary
    )
    c.check(r8.ok, "run 8: no such release: builds from the action's source", dump(r8))
    c.equal(r8.step("install")["outputs"].get("source"), "source", "run 8: installed from source")
    calls = cargo_log.read_text(encoding="utf-8") if cargo_log.exists() else ""
    c.check(
        calls.startswith("install --locked --path ") and str(action_dir) in calls,
        "run 8: cargo install --locked from the action's own checkout",
        calls,
    )


if __name__ == "__main__":
    sys.exit(main())

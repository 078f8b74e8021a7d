#!/usr/bin/env python3
"""The fpcheck GitHub Action under a real runner: nektos/act, in host mode,
offline, with the fpcheck binary cargo built.

Each scenario is a workflow a user would write (actions/checkout, then the
action), run by act on a repository made with the git CLI and checked out
shallow as actions/checkout does, with GITHUB_API_URL / GITHUB_SERVER_URL
pointing at a stub of the GitHub API on 127.0.0.1 (bounded in requests and
time). Each asserts the action's outputs as act evaluated them, the job
summary, the annotations act obeyed and the job's result:

  release_pr_runs    (action_scenarios.py) a release pull request, a second
                     push, a push outside pull requests, fetch off, a full
                     clone, a report too long for a comment, a hostile title
  hostile_runs       (action_edges.py) tags named like options or HEAD, `path`
                     and `config` outside the checkout, a redirect, fpcheck's
                     error line
  default_from_runs  (action_edges.py) the default `from` when the base moved
                     on or `to` is a release, a pull request that hides its
                     change in its own fpcheck.toml
  monorepo_runs      (action_runtimes.py) several runtimes, avoidable
                     restarts, tag patterns read from the base
  comment_api_runs   (action_comment.py) the sticky comment: created,
                     updated, one per key, a 403 and a 5xx are warnings

and, over every run, that the token never appears in act's log.

The groups run in parallel, each with its own repositories and stub.

Usage: python3 tests/action/act_action_test.py --act PATH --binary PATH
(or FPCHECK_ACT / FPCHECK_BINARY); `cargo test` runs it through
tests/it/action_act.rs. Python standard library, git and act.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from act_runner import ActRunner
from action_comment import comment_api_runs
from action_edges import default_from_runs, hostile_runs
from action_runtimes import monorepo_runs
from action_scenarios import release_pr_runs
from fixtures import Checks
from simulated_runner import ROOT, TOKEN, Stub

# Longest first, so that two at a time finish together.
GROUPS = (
    ("hostile edges", hostile_runs),
    ("release pull requests", release_pr_runs),
    ("several runtimes", monorepo_runs),
    ("the default from", default_from_runs),
    ("the comment API", comment_api_runs),
)


def run_group(
    c: Checks, name: str, scenarios, tmp: Path, act: Path, binary: Path
) -> list[str]:
    """One group on its own stub; gives back act's logs of its runs."""
    home = tmp / name.replace(" ", "-")
    home.mkdir()
    stub = Stub()
    runner = ActRunner(act, home, stub)
    started = time.monotonic()
    try:
        scenarios(c, home, stub, runner, binary)
    except Exception:
        c.check(False, f"{name}: the scenarios ran to the end", traceback.format_exc())
    finally:
        stub.close()
    c.equal(
        stub.over_budget,
        0,
        f"{name}: the stub stayed within its budget of requests and time",
    )
    slowest = ", ".join(
        f"{name} {seconds:.1f}s"
        for seconds, name in sorted(runner.seconds, reverse=True)[:3]
    )
    print(
        f"act: {name}: {len(runner.logs)} runs in {time.monotonic() - started:.1f}s "
        f"({sum(s for s, _ in runner.seconds):.1f}s in act; slowest: {slowest})",
        flush=True,
    )
    return runner.logs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--act", default=os.environ.get("FPCHECK_ACT", ""))
    parser.add_argument(
        "--binary",
        default=os.environ.get("FPCHECK_BINARY")
        or str(ROOT / "target" / "debug" / "fpcheck"),
    )
    parser.add_argument("--jobs", type=int, default=2, help="groups run at once")
    parser.add_argument(
        "--only", default="", help="run only the group whose name contains this"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary directory"
    )
    args = parser.parse_args()
    act, binary = Path(args.act), Path(args.binary).resolve()
    if not args.act or not act.is_file():
        print(
            f"no act executable at {args.act!r}: pass --act or set FPCHECK_ACT (.ci/install-act installs it)",
            file=sys.stderr,
        )
        return 2
    if not binary.is_file():
        print(
            f"no fpcheck binary at {binary}: run cargo build first, or pass --binary",
            file=sys.stderr,
        )
        return 2
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="fpcheck-act-test-"))
    c = Checks()
    groups = [(n, f) for n, f in GROUPS if args.only in n]
    logs: list[str] = []
    try:
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, args.jobs)
        ) as pool:
            futures = [
                pool.submit(run_group, c, n, f, tmp, act, binary) for n, f in groups
            ]
            for future in futures:
                logs += future.result()
        c.check(bool(logs), "act ran the scenarios")
        leaked = [log for log in logs if TOKEN in log]
        c.equal(len(leaked), 0, "the token never appears in act's log")
        # act masks a secret it knows as ***: a masked token in a log is a
        # leak all the same.
        masked = [line for log in logs for line in log.splitlines() if "***" in line]
        c.equal(masked[:3], [], "no masked secret in act's log either")
        print(f"act: every group in {time.monotonic() - started:.1f}s", flush=True)
    finally:
        if args.keep or c.failed:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"act action test: {time.monotonic() - started:.1f}s")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())

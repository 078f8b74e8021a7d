#!/usr/bin/env python3
"""The fpcheck GitHub Action, one subcommand per step of action.yml.

    install   put an fpcheck binary in place: the one given (`binary` input or
              FPCHECK_BINARY), else the release binary for this runner with
              its sha256 verified, else `cargo install --locked` from the
              action's own source
    check     fetch what the comparison needs, run fpcheck, write the outputs,
              the step summary and the warning annotations
    comment   create or update the sticky pull request comment
    verdict   fail the job when the release forces a restart and
              `fail-on-restart` is on
    package   (release workflow) archive a built binary with its .sha256, in
              the layout `install` expects

Python standard library only; every input arrives through the environment
(action.yml maps `inputs.*` to INPUT_* variables), never through the command
line, so nothing from a pull request is ever interpreted by a shell.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The steps' modules live in fpaction/ next to this file.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fpaction.check import cmd_check  # noqa: E402
from fpaction.comment import cmd_comment  # noqa: E402
from fpaction.install import cmd_install, cmd_package  # noqa: E402
from fpaction.workflow import Fail, bool_input, command, env  # noqa: E402


def cmd_verdict() -> int:
    fail = bool_input("INPUT_FAIL_ON_RESTART", False)
    restart = env("FPCHECK_RESTART_REQUIRED") == "true"
    if restart and fail:
        reason, summary = env("FPCHECK_REASON"), env("FPCHECK_SUMMARY")
        command(
            "error",
            f"this release forces running clients to restart ({reason}{': ' + summary if summary else ''}), "
            "and fail-on-restart is on",
            title="fpcheck: restart required",
        )
        return 1
    return 0


# --------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    commands = {
        "install": cmd_install,
        "check": cmd_check,
        "comment": cmd_comment,
        "verdict": cmd_verdict,
    }
    try:
        if name == "package":
            return cmd_package(rest)
        if name not in commands or rest:
            print(__doc__, file=sys.stderr)
            return 2
        return commands[name]()
    except Fail as e:
        command("error", str(e), title="fpcheck")
        return e.code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The ``fpcheck`` console command: the Rust CLI, run in this process."""

from __future__ import annotations

import signal
import sys

from fpcheck import _native


def main() -> None:
    """Run the CLI on ``sys.argv[1:]`` and exit with its status."""
    # The CLI's own behaviour on Ctrl-C and closed pipes: the default
    # actions, as in the cargo binary (Python would turn them into
    # exceptions it cannot raise while Rust runs).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_native.cli_main(sys.argv[1:]))


if __name__ == "__main__":
    main()

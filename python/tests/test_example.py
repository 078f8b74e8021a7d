"""The runnable example of docs/python.md runs and says what the doc says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "server_gate.py"
DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_the_documented_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "before: False",
        "docs-only release, marker written: False",
        "code release, marker written: True",
        "server must restart: True marker_required",
        "ack: removed",
        "after restart: False",
    ]
    # The doc shows this very file.
    assert EXAMPLE.read_text() in DOC.read_text()

"""One decision, whatever asks, from Python: the rows of the CLI's decision
table (tests/it/decision_table.rs), built with real git, give the same
restart, reason and marker reason through ``analyse`` as through the CLI,
the same marker through ``snapshot`` and ``gate`` over v1's checkout
updated to v2's, and ``status`` tells a process still running v1 to
restart exactly when they say so. The expected values are the Rust
table's, written again here: a package that decided on its own would
pass a test that only compared it with itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import NamedTuple, Optional, Sequence, Tuple

import pytest

import fpcheck
from conftest import fpcheck_cli, git


class Row(NamedTuple):
    name: str
    #: v2 over v1: paths removed first, then files written.
    remove: Sequence[str]
    write: Sequence[Tuple[str, str]]
    #: ``analyse``'s (and the CLI's) ``restart_required`` and ``reason``.
    restart: bool
    reason: str
    #: The marker reason, or None when no marker is written.
    marker: Optional[str]
    #: ``status``'s ``restart_required`` and ``reason`` for a process
    #: still running v1 once the gate is done.
    status: Tuple[bool, str]


ROWS = [
    Row(
        "code and version changed",
        remove=[],
        write=[("src/app.py", "x = 2\n"), ("version.json", '{"version": "1.1.0"}\n')],
        restart=True,
        reason="code_changed",
        marker="brain_update",
        status=(True, "marker_required"),
    ),
    Row(
        "only the version changed",
        remove=[],
        write=[("README.md", "docs\n"), ("version.json", '{"version": "1.1.0"}\n')],
        restart=False,
        reason="no_runtime_change",
        marker=None,
        status=(False, ""),
    ),
    Row(
        "force_restart without a code change",
        remove=[],
        write=[("version.json", '{"version": "1.1.0", "force_restart": true}\n')],
        restart=True,
        reason="forced",
        marker="brain_update_force",
        status=(True, "marker_required"),
    ),
    # What the file says cannot be ruled out: a version change and
    # force_restart are assumed, and the code did not change.
    Row(
        "a version file that cannot be read",
        remove=["src/version.json"],
        write=[("src/version.json/keep", "")],
        restart=True,
        reason="forced",
        marker="brain_update_force",
        status=(True, "marker_required"),
    ),
    Row(
        "an unreadable version file and changed code",
        remove=["src/version.json"],
        write=[("src/version.json/keep", ""), ("src/app.py", "x = 3\n")],
        restart=True,
        reason="code_changed",
        marker="brain_update",
        status=(True, "marker_required"),
    ),
]


def commit_and_tag(repo: Path, tag: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", tag)
    git(repo, "tag", tag)


def releases(repo: Path, row: Row) -> None:
    """v1.0.0, then ``row``'s v2.0.0."""
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("x = 1\n")
    (repo / "src" / "version.json").write_text('{"version": "1.0.0"}\n')
    (repo / "version.json").write_text('{"version": "1.0.0"}\n')
    commit_and_tag(repo, "v1.0.0")
    for rel in row.remove:
        (repo / rel).unlink()
    for rel, content in row.write:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    commit_and_tag(repo, "v2.0.0")


def checkout(repo: Path, rev: str, install: Path) -> None:
    """``rev``'s files in ``install``, replacing what was there."""
    if install.exists():
        shutil.rmtree(install)
    install.mkdir()
    git(repo, f"--work-tree={install}", "checkout", rev, "--", ".")


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_analyse_gate_and_status_give_the_table_s_answer(
    repo: Path, tmp_path: Path, row: Row
) -> None:
    releases(repo, row)

    verdict = fpcheck.analyse(repo, "v1.0.0", "v2.0.0", use_cache=False)
    assert (verdict["restart_required"], verdict["reason"]) == (row.restart, row.reason)
    assert verdict["updater"]["marker_reason"] == row.marker
    cli = fpcheck_cli(
        "v1.0.0..v2.0.0", "--repo", str(repo), "--format", "json", "--no-cache"
    )
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == verdict

    install = tmp_path / "app"
    runtime = install / "src"
    marker = tmp_path / "marker.json"
    checkout(repo, "v1.0.0", install)
    before = fpcheck.snapshot(runtime)
    checkout(repo, "v2.0.0", install)
    decided = fpcheck.gate(before, runtime, marker)
    assert decided["restart_required"] is row.restart
    assert decided["reason"] == row.marker
    assert decided["marker_written"] is (row.marker is not None)
    assert marker.exists() is (row.marker is not None)
    if marker.exists():
        assert json.loads(marker.read_text())["reason"] == row.marker

    running = fpcheck.status(
        runtime,
        marker,
        process_fingerprint=before["fingerprint"],
        process_version=before["version"],
    )
    assert (running["restart_required"], running["reason"]) == row.status
    assert running["marker_exists"] is (row.marker is not None)
    args = ["status", "--dir", str(runtime), "--marker", str(marker), "--json"]
    args += ["--process-fingerprint", before["fingerprint"]]
    args += ["--process-version", before["version"]]
    cli = fpcheck_cli(*args)
    assert cli.returncode == (1 if row.status[0] else 0), cli.stderr
    assert json.loads(cli.stdout) == running

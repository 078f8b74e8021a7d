"""The wheel's ``fpcheck`` command: the same CLI and exit codes."""

from __future__ import annotations

from pathlib import Path

import fpcheck
from conftest import commit_tree, fpcheck_cli


def test_the_command_prints_and_exits_as_the_cli(runtime: Path, repo: Path) -> None:
    version = fpcheck_cli("--version")
    assert (
        version.returncode == 0
        and version.stdout.strip() == f"fpcheck {fpcheck.__version__}"
    )
    printed = fpcheck_cli("fingerprint", "--dir", str(runtime))
    assert printed.returncode == 0
    assert printed.stdout == fpcheck.fingerprint(runtime) + "\n"
    missing = fpcheck_cli("fingerprint", "--dir", str(runtime / "nope"))
    assert missing.returncode == 3 and "unavailable" in missing.stderr
    assert fpcheck_cli("--bogus").returncode == 2
    commit_tree(repo, {"a.py": "1"}, "v1")
    commit_tree(repo, {"a.py": "2"}, "v2")
    assert fpcheck_cli("v1..v2", "--repo", str(repo), "--exit-code").returncode == 1
    assert fpcheck_cli("v1..v9", "--repo", str(repo)).returncode == 4
    assert fpcheck_cli("--help").returncode == 0

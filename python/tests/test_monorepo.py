"""analyse on a repository declaring several runtimes: the CLI's JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

import fpcheck
from conftest import fpcheck_cli, git, write_tree

V1_CONFIG = '[runtimes.server]\nroot = "server"\n[runtimes.api]\nroot = "api"\n'
V2_CONFIG = V1_CONFIG + '[runtimes.worker]\nroot = "worker"\n'


def release(repo: Path, config: str, files: Dict[str, str], tag: str) -> None:
    (repo / "fpcheck.toml").write_text(config)
    write_tree(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", tag)
    git(repo, "tag", tag)


@pytest.fixture
def monorepo(repo: Path) -> Path:
    """v1 declares server and api; v2 declares worker too (its code was
    already there), and changes server's and worker's code, not api's."""
    (repo / "version.json").write_text('{"version": "1.0.0"}\n')
    base = {
        "server/app.py": "s = 1\n",
        "api/routes.py": "r = 1\n",
        "worker/jobs.py": "j = 1\n",
    }
    release(repo, V1_CONFIG, base, "v1")
    changed = {"server/app.py": "s = 2\n", "worker/jobs.py": "j = 2\n"}
    release(repo, V2_CONFIG, changed, "v2")
    return repo


def cli_json(repo: Path, *args: str) -> Dict[str, Any]:
    done = fpcheck_cli("v1..v2", "--repo", str(repo), "--format", "json", *args)
    assert done.returncode == 0, done.stderr
    value: Dict[str, Any] = json.loads(done.stdout)
    return value


def test_analyse_is_the_cli_json_for_every_runtime(monorepo: Path) -> None:
    want = cli_json(monorepo)
    got = fpcheck.analyse(monorepo, "v1", "v2")
    assert got == want
    assert got["restart_required"] is True
    names = [r["name"] for r in got["runtimes"]]
    assert names == ["api", "server", "worker"]
    by_name = {r["name"]: r for r in got["runtimes"]}
    assert by_name["api"]["restart_required"] is False
    assert by_name["worker"]["restart_required"] is True


def test_analyse_takes_one_runtime_or_several_as_the_flag(monorepo: Path) -> None:
    # Declared at the `to` end only: read with its settings at both ends.
    worker = fpcheck.analyse(monorepo, "v1", "v2", runtime="worker")
    assert worker == cli_json(monorepo, "--runtime", "worker")
    assert worker["restart_required"] is True
    assert worker["reason"] == "code_changed"
    two = fpcheck.analyse(monorepo, "v1", "v2", runtime=["api", "server"])
    assert two == cli_json(monorepo, "--runtime", "api", "--runtime", "server")
    assert [r["name"] for r in two["runtimes"]] == ["api", "server"]
    api = fpcheck.analyse(monorepo, "v1", "v2", runtime=["api"], use_cache=False)
    assert api == cli_json(monorepo, "--runtime", "api", "--no-cache")
    assert api["restart_required"] is False
    with pytest.raises(fpcheck.ConfigError, match="nope"):
        fpcheck.analyse(monorepo, "v1", "v2", runtime="nope")
    with pytest.raises(TypeError, match="runtime"):
        fpcheck.analyse(monorepo, "v1", "v2", runtime=3)

"""fingerprint_at and analyse from git objects, against the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fpcheck
from conftest import commit_tree, fpcheck_cli, git

BASE = {"server.py": "# entrypoint\n", "plugins/memory.py": "v1\n", "tests/t.py": "t\n"}


def test_fingerprint_at_equals_the_directory_fingerprint(repo: Path) -> None:
    commit_tree(repo, BASE, "v1.0.0")
    commit_tree(repo, {**BASE, "plugins/memory.py": "v2\n"}, "v1.1.0")
    at_v1 = fpcheck.fingerprint_at(repo, "v1.0.0")
    head = fpcheck.fingerprint_at(str(repo))
    assert head == fpcheck.fingerprint(repo / "src") != at_v1
    assert len(at_v1) == 64
    git(repo, "checkout", "-q", "v1.0.0")
    assert fpcheck.fingerprint(repo / "src") == at_v1
    assert fpcheck.fingerprint_at(repo, "v1.0.0", root="src/plugins", exclude=[]) == (
        fpcheck.fingerprint(repo / "src" / "plugins", exclude=[])
    )
    assert fpcheck.fingerprint_at(repo, "v1.0.0", root="nowhere") == ""


def test_git_errors_are_named_for_their_cause(repo: Path, tmp_path: Path) -> None:
    commit_tree(repo, BASE, "v1.0.0")
    with pytest.raises(fpcheck.RevisionError, match="v9"):
        fpcheck.fingerprint_at(repo, "v9")
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(fpcheck.RepositoryError):
        fpcheck.fingerprint_at(tmp_path / "missing")
    with pytest.raises(fpcheck.RevisionError):
        fpcheck.analyse(repo, "v1.0.0", "nope")
    with pytest.raises(fpcheck.ConfigError):
        fpcheck.fingerprint_at(repo, root="../x")
    for cls in (fpcheck.RevisionError, fpcheck.RepositoryError):
        assert issubclass(cls, fpcheck.InputError)
        assert not issubclass(cls, RuntimeError)


def test_analyse_is_the_cli_json(repo: Path) -> None:
    commit_tree(repo, BASE, "v1.0.0")
    commit_tree(repo, {**BASE, "plugins/memory.py": "v2\n", "README.md": "x"}, "v1.1.0")
    got = fpcheck.analyse(repo, "v1.0.0", "v1.1.0")
    cli = fpcheck_cli("v1.0.0..v1.1.0", "--repo", str(repo), "--format", "json")
    assert cli.returncode == 0, cli.stderr
    assert got == json.loads(cli.stdout)
    assert got["restart_required"] is True
    assert got["changes"]["runtime"][0]["change_kind"] == "code"
    assert got["avoidable"] is False
    plain = fpcheck.analyse(repo, "v1.0.0", "v1.1.0", classify=False)
    cli = fpcheck_cli(
        "v1.0.0..v1.1.0", "--repo", str(repo), "--format", "json", "--no-classify"
    )
    assert plain == json.loads(cli.stdout)
    assert "change_kind" not in plain["changes"]["runtime"][0]
    quiet = fpcheck.analyse(repo, "v1.1.0", use_cache=False)
    assert quiet["restart_required"] is False
    narrowed = fpcheck.analyse(repo, "v1.0.0", "v1.1.0", exclude=["plugins"])
    cli = fpcheck_cli(
        "v1.0.0..v1.1.0",
        "--repo",
        str(repo),
        "--exclude",
        "plugins",
        "--format",
        "json",
    )
    assert narrowed == json.loads(cli.stdout)
    assert narrowed["restart_required"] is False
    with pytest.raises(TypeError, match="colour"):
        fpcheck.analyse(repo, "v1.0.0", colour=True)

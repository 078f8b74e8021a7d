"""fingerprint_at and analyse from git objects, against the CLI."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import List

import pytest

import fpcheck
from conftest import commit_tree, fpcheck_cli, git, write_tree

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
    with pytest.raises(
        fpcheck.RepositoryError, match="pass repo with the path"
    ) as gone:
        fpcheck.fingerprint_at(tmp_path / "missing")
    assert "--repo" not in str(gone.value)
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


def test_fingerprint_at_reads_the_committed_config(repo: Path) -> None:
    """The settings committed at the revision, keywords over them, as the CLI."""
    write_tree(repo / "app", {"main.py": "m\n", "gen/x.py": "g\n", "k.pyi": "s\n"})
    commit_tree(repo, BASE, "v1.0.0")
    (repo / "fpcheck.toml").write_text('[runtime]\nroot = "app"\nexclude = ["gen"]\n')
    git(repo, "add", "fpcheck.toml")
    git(repo, "commit", "-qm", "config")
    git(repo, "tag", "v1.1.0")
    # v1.0.0 has no config: the defaults (src); v1.1.0 says app without gen.
    assert fpcheck.fingerprint_at(repo, "v1.0.0") == fpcheck.fingerprint(repo / "src")
    at = fpcheck.fingerprint_at(repo, "v1.1.0")
    assert at == fpcheck.fingerprint(repo / "app", exclude=["gen"])
    assert at != fpcheck.fingerprint(repo / "app")
    cli = fpcheck_cli("fingerprint", "--repo", str(repo), "--rev", "v1.1.0")
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.split()[0] == at
    # Keywords override the committed keys, one by one.
    assert fpcheck.fingerprint_at(repo, "v1.1.0", exclude=[]) == fpcheck.fingerprint(
        repo / "app", exclude=[]
    )
    assert fpcheck.fingerprint_at(
        repo, "v1.1.0", extensions=[".py", ".pyi"]
    ) == fpcheck.fingerprint(repo / "app", extensions=[".py", ".pyi"], exclude=["gen"])
    assert fpcheck.fingerprint_at(repo, "v1.1.0", root="src") == fpcheck.fingerprint(
        repo / "src", exclude=["gen"]
    )
    # A bad committed config is a ConfigError naming it.
    (repo / "fpcheck.toml").write_text("[runtime]\nroot = 3\n")
    git(repo, "commit", "-qam", "broken")
    with pytest.raises(fpcheck.ConfigError, match="fpcheck.toml at HEAD"):
        fpcheck.fingerprint_at(repo)
    with pytest.raises(fpcheck.RevisionError, match="starts with `-`"):
        fpcheck.fingerprint_at(repo, "--all")


def test_git_functions_run_in_threads_at_once(repo: Path) -> None:
    commit_tree(repo, BASE, "v1.0.0")
    commit_tree(repo, {**BASE, "plugins/memory.py": "v2\n"}, "v1.1.0")
    want = (fpcheck.fingerprint_at(repo, "v1.0.0"), fpcheck.fingerprint_at(repo))
    verdict = fpcheck.analyse(repo, "v1.0.0", "v1.1.0", use_cache=False)
    errors: List[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(5):
                got = (
                    fpcheck.fingerprint_at(repo, "v1.0.0"),
                    fpcheck.fingerprint_at(repo),
                )
                assert got == want
                again = fpcheck.analyse(repo, "v1.0.0", "v1.1.0", use_cache=False)
                assert again == verdict
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_fingerprint_at_and_analyse_follow_the_checkouts_bytes(
    repo: Path, tmp_path: Path
) -> None:
    """A release that only adds ``eol=crlf`` changes the bytes a clone
    installs: ``fingerprint_at`` is the clone's value and ``analyse``
    restarts, as the CLI does."""
    commit_tree(repo, BASE, "v1.0.0")
    (repo / ".gitattributes").write_text("*.py eol=crlf\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "attributes")
    git(repo, "tag", "v1.1.0")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "-b", "v1.1.0", str(repo), str(clone))
    assert (clone / "src" / "server.py").read_bytes() == b"# entrypoint\r\n"
    at_v2 = fpcheck.fingerprint_at(repo, "v1.1.0")
    assert at_v2 == fpcheck.fingerprint(clone / "src")
    assert at_v2 != fpcheck.fingerprint_at(repo, "v1.0.0")
    got = fpcheck.analyse(repo, "v1.0.0", "v1.1.0")
    assert got["restart_required"] is True
    assert got["reason"] == "code_changed"
    cli = fpcheck_cli("v1.0.0..v1.1.0", "--repo", str(repo), "--format", "json")
    assert got == json.loads(cli.stdout)


def test_analyse_returns_the_advice(repo: Path) -> None:
    reader = (
        'from pathlib import Path\n\nDATA = Path(__file__).with_name("data.json")\n'
    )
    base = {**BASE, "catalog.py": reader, "data.json": "{}\n"}
    commit_tree(repo, base, "v1.0.0")
    commit_tree(repo, {**base, "data.json": '{"a": 1}\n'}, "v1.1.0")
    got = fpcheck.analyse(repo, "v1.0.0", "v1.1.0")
    cli = fpcheck_cli("v1.0.0..v1.1.0", "--repo", str(repo), "--format", "json")
    assert got == json.loads(cli.stdout)
    assert got["restart_required"] is False
    assert [(a["kind"], a["cause"], a["evidence"]) for a in got["advice"]] == [
        ("possible_missed_restart", "data_file", ["src/catalog.py:3"])
    ]
    assert "advice" not in fpcheck.analyse(repo, "v1.0.0", "v1.1.0", classify=False)


def test_analyse_takes_the_witness_as_the_flag(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.py text eol=crlf\n")
    commit_tree(repo, BASE, "v1.0.0")
    (repo / "README.md").write_text("docs\n")
    commit_tree(repo, BASE, "v1.1.0")
    got = fpcheck.analyse(repo, "v1.0.0", "v1.1.0", use_cache=False)
    assert got["restart_required"] is False
    assert got["witness"]["status"] == "confirmed"
    assert got["witness"]["mode"] == "auto"
    for when, status in (("always", "confirmed"), ("never", "off")):
        report = fpcheck.analyse(
            repo, "v1.0.0", "v1.1.0", use_cache=False, witness=when
        )
        cli = fpcheck_cli(
            "v1.0.0..v1.1.0",
            "--repo",
            str(repo),
            "--format",
            "json",
            "--no-cache",
            "--witness",
            when,
        )
        assert report == json.loads(cli.stdout)
        assert report["witness"]["status"] == status
    with pytest.raises(ValueError, match="witness must be one of"):
        fpcheck.analyse(repo, "v1.0.0", "v1.1.0", witness="sometimes")

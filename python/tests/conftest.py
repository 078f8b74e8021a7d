"""Shared builders: runtime trees and git repositories in temporary folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, Mapping, Union

import pytest

import fpcheck

REPO_TOP = Path(__file__).resolve().parents[2]
VECTORS = REPO_TOP / "tests" / "data" / "vectors.json"
REFERENCE = REPO_TOP / "tests" / "reference_fingerprint.py"

Content = Union[str, Mapping[str, str]]
Cache = Union[None, bool, Path]


def write_tree(root: Path, files: Mapping[str, Content]) -> None:
    """Writes ``files`` (the vectors' format) below ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_bytes(content.encode("utf-8"))
        elif "hex" in content:
            path.write_bytes(bytes.fromhex(content["hex"]))
        else:
            os.symlink(content["symlink"], path)


def git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_AUTHOR_DATE="2024-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2024-01-01T00:00:00Z",
    )
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def commit_tree(repo: Path, files: Mapping[str, Content], tag: str) -> None:
    """Replaces ``src/`` with ``files``, commits, tags."""
    src = repo / "src"
    if src.exists():
        git(repo, "rm", "-rq", "src")
    write_tree(src, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", tag, "--allow-empty")
    git(repo, "tag", tag)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture
def vectors() -> Dict[str, object]:
    data: Dict[str, object] = json.loads(VECTORS.read_text())
    return data


def reference(root: Path, *extra: str) -> str:
    """The pure-Python reference fingerprint (tests/reference_fingerprint.py)."""
    done = subprocess.run(
        [sys.executable, str(REFERENCE), str(root), *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.split("\n")[0]


def ask(
    runtime: Path, marker: Path, fp: str, cache: Cache = True, **kw: Any
) -> Dict[str, Any]:
    """``fpcheck.status`` for a process running ``fp``, cached by default."""
    return fpcheck.status(runtime, marker, process_fingerprint=fp, cache=cache, **kw)


def fpcheck_cli(
    *args: str, cwd: Union[Path, None] = None
) -> "subprocess.CompletedProcess[str]":
    """The installed ``fpcheck`` command (the wheel's console script)."""
    exe = Path(sys.executable).parent / "fpcheck"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[Path]:
    """An installed runtime: home/src with a version.json in home."""
    home = tmp_path / "home"
    write_tree(
        home / "src",
        {
            "server.py": "# entrypoint\n",
            "plugins/__init__.py": "",
            "plugins/memory.py": "def hello(): return 'v1'\n",
            "tests/noise.py": "# excluded\n",
            "README.md": "docs\n",
        },
    )
    (home / "version.json").write_text('{"version": "1.0.0"}\n')
    yield home / "src"

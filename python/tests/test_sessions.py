"""Calls on two repositories from eight threads at once: each call reads its
own repository, so every answer is the one a lone call gives."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import fpcheck
from conftest import commit_tree, git

BASE = {"server.py": "# entrypoint\n", "plugins/memory.py": "v1\n"}


def two_repositories(tmp_path: Path) -> List[Path]:
    """Two repositories whose releases differ: a code change in ``a``, a
    docs-only release in ``b``, the same tag names in both."""
    repos = []
    for name, change in [("a", {"plugins/memory.py": "v2\n"}), ("b", {})]:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        commit_tree(repo, {**BASE, "server.py": f"# {name}\n"}, "v1.0.0")
        (repo / "README.md").write_text(f"{name}\n")
        commit_tree(repo, {**BASE, "server.py": f"# {name}\n", **change}, "v1.1.0")
        repos.append(repo)
    return repos


def test_threads_on_two_repositories_get_each_ones_own_answers(
    tmp_path: Path,
) -> None:
    repos = two_repositories(tmp_path)
    marker = tmp_path / "marker.json"
    calls: List[Tuple[str, Callable[[], Any]]] = []
    for repo in repos:
        running = fpcheck.fingerprint(repo / "src")
        calls += [
            (
                f"analyse {repo.name}",
                partial(fpcheck.analyse, repo, "v1.0.0", "v1.1.0"),
            ),
            (
                f"analyse {repo.name} cold",
                partial(fpcheck.analyse, repo, "v1.0.0", use_cache=False),
            ),
            (
                f"fingerprint_at {repo.name}",
                partial(fpcheck.fingerprint_at, repo, "v1.0.0"),
            ),
            (f"fingerprint_at {repo.name} HEAD", partial(fpcheck.fingerprint_at, repo)),
            (
                f"status {repo.name}",
                partial(
                    fpcheck.status, repo / "src", marker, process_fingerprint=running
                ),
            ),
        ]
    # Twice alone: the second call reads the caches the first one wrote.
    alone: Dict[str, Any] = {name: call() for name, call in calls}
    assert {name: call() for name, call in calls} == alone
    assert alone["analyse a"]["restart_required"] is True
    assert alone["analyse b"]["restart_required"] is False
    assert alone["fingerprint_at a HEAD"] != alone["fingerprint_at b HEAD"]

    errors: List[BaseException] = []
    wrong: List[str] = []

    def worker(i: int) -> None:
        try:
            for j in range(2 * len(calls)):
                name, call = calls[(i + j) % len(calls)]
                if call() != alone[name]:
                    wrong.append(name)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not wrong

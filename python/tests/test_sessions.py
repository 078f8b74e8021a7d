"""Calls on two repositories from eight threads at once: each call reads its
own repository (its git objects, caches, runtime directory and version
file), so every answer is the one a lone call gives. The repositories
differ in everything a call answers (fingerprints, versions, verdicts,
the restart a running process is told), so a call answered from the
other repository, or from another call's state, shows."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import fpcheck
from conftest import commit_tree, git

BASE = {"server.py": "# entrypoint\n", "plugins/memory.py": "v1\n"}

#: Each repository's versions at v1.0.0 and v1.1.0 (the tag names are the
#: same in both, the versions are not).
VERSIONS = {"a": ("1.0.0", "1.1.0"), "b": ("2.0.0", "2.0.1")}

Calls = List[Tuple[str, Callable[[], Any]]]


def version_json(version: str) -> str:
    return f'{{"version": "{version}"}}\n'


def two_repositories(tmp_path: Path) -> List[Path]:
    """Two repositories whose releases differ: a code change in ``a``, a
    docs-only release in ``b``, the same tag names in both, the working
    tree at v1.1.0."""
    repos = []
    for name, change in [("a", {"plugins/memory.py": "v2\n"}), ("b", {})]:
        old, new = VERSIONS[name]
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        own = {**BASE, "server.py": f"# {name}\n"}
        commit_tree(repo, {**own, "version.json": version_json(old)}, "v1.0.0")
        (repo / "README.md").write_text(f"{name}\n")
        commit_tree(
            repo, {**own, **change, "version.json": version_json(new)}, "v1.1.0"
        )
        repos.append(repo)
    return repos


def calls_on(repo: Path, marker: Path) -> Calls:
    """Every call under test on ``repo``, named; ``status`` asks for a
    process still running v1.0.0."""
    name = repo.name
    running = fpcheck.fingerprint_at(repo, "v1.0.0")
    return [
        (f"analyse {name}", partial(fpcheck.analyse, repo, "v1.0.0", "v1.1.0")),
        (
            f"analyse {name} cold",
            partial(fpcheck.analyse, repo, "v1.0.0", use_cache=False),
        ),
        (
            f"analyse {name} worktree",
            partial(fpcheck.analyse, repo, "v1.0.0", worktree=True, use_cache=False),
        ),
        (f"fingerprint_at {name}", partial(fpcheck.fingerprint_at, repo, "v1.0.0")),
        (f"fingerprint_at {name} HEAD", partial(fpcheck.fingerprint_at, repo)),
        (
            f"status {name}",
            partial(
                fpcheck.status,
                repo / "src",
                marker,
                process_fingerprint=running,
                process_version=VERSIONS[name][0],
            ),
        ),
        (
            f"status {name} watched",
            partial(
                watched_status,
                repo / "src",
                marker,
                running,
                VERSIONS[name][0],
            ),
        ),
    ]


def watched_status(runtime: Path, marker: Path, fp: str, version: str) -> Any:
    """``status`` with this process's watcher (``cache=True``), without
    the ``cache`` field (a miss the first time, hits after)."""
    got = fpcheck.status(
        runtime, marker, process_fingerprint=fp, process_version=version, cache=True
    )
    assert got.pop("cache") in ("hit", "miss")
    return got


def test_threads_on_two_repositories_get_each_ones_own_answers(
    tmp_path: Path,
) -> None:
    a, b = two_repositories(tmp_path)
    calls = calls_on(a, tmp_path / "a-marker.json")
    calls += calls_on(b, tmp_path / "b-marker.json")
    # Twice alone: the second call reads the caches the first one wrote.
    alone: Dict[str, Any] = {name: call() for name, call in calls}
    assert {name: call() for name, call in calls} == alone

    # The two repositories answer every call differently.
    for name, _ in calls:
        if name.split()[1] == "a":
            other = name.replace(" a", " b", 1)
            assert alone[name] != alone[other], name
    assert alone["analyse a"]["restart_required"] is True
    assert alone["analyse b"]["restart_required"] is False
    assert alone["analyse a"]["to"]["version"] == "1.1.0"
    assert alone["analyse b"]["to"]["version"] == "2.0.1"
    assert alone["status a"]["restart_required"] is True
    assert alone["status a"]["reason"] == "fingerprint_mismatch"
    assert alone["status b"]["restart_required"] is False
    assert alone["status a"]["installed_version"] == "1.1.0"
    assert alone["status b"]["installed_version"] == "2.0.1"
    assert alone["fingerprint_at b"] == alone["fingerprint_at b HEAD"]

    # Eight threads, each call many times, in an order that interleaves
    # the repositories and the functions differently in every thread.
    rounds = 6
    start = threading.Barrier(8)
    wrong: List[str] = []

    def worker(i: int) -> int:
        order = calls[i:] + calls[:i]
        if i % 2:
            order.reverse()
        start.wait()
        done = 0
        for _ in range(rounds):
            for name, call in order:
                if call() != alone[name]:
                    wrong.append(f"thread {i}: {name}")
                done += 1
        return done

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(worker, range(8)))
    assert not wrong
    assert counts == [rounds * len(calls)] * 8

"""The repositories the action's tests run on: a server with releases, a
release pull request and its bare remote, made with the git CLI; and the
checks' bookkeeping."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from simulated_runner import OWNER_REPO, PR, git_env

MARKER = "<!-- fpcheck:report -->"
HOSTILE = "src/app/<img src=x onerror=alert(1)>|**x**`@team`.py"
NEWLINE_NAME = "src/app/evil\n::error title=injected::pwned.py"


TICK = [1_700_000_000]


def git(cwd: Path, *args: str) -> str:
    TICK[0] += 60
    e = git_env()
    e["GIT_AUTHOR_DATE"] = e["GIT_COMMITTER_DATE"] = f"@{TICK[0]} +0000"
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
        cwd=cwd,
        env=e,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise AssertionError(f"git {args} failed: {out.stderr}")
    return out.stdout.strip()


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = repo / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def version_json(v: str) -> str:
    return json.dumps({"version": v}) + "\n"


class Fixture:
    """A server repository with releases, a release pull request, and its
    bare remote."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        src = tmp / "source"
        src.mkdir()
        self.src = src
        git(src, "init", "-q")
        commit(
            src,
            {
                "src/version.json": version_json("1.0.0"),
                "src/app/server.py": "def serve():\n    return 1\n",
                "src/app/util.py": "X = 1\n",
                "README.md": "# server\n",
            },
            "1.0.0",
        )
        git(src, "tag", "-a", "v1.0.0", "-m", "release 1.0.0")
        self.v110 = commit(src, {"src/app/util.py": "X = 2\n", "src/version.json": version_json("1.1.0")}, "1.1.0")
        git(src, "tag", "-a", "v1.1.0", "-m", "release 1.1.0")
        self.base = commit(src, {"README.md": "# server\n\nDocs.\n"}, "docs after 1.1.0")
        # A pre-release tag on the base: `tag-exclude: '*-rc*'` must skip it.
        git(src, "tag", "v1.2.0-rc1")
        git(src, "checkout", "-q", "-b", "release/1.2")
        self.head1 = commit(
            src,
            {
                "src/app/server.py": "def serve():\n    return 2\n",
                HOSTILE: "Y = 1\n",
                NEWLINE_NAME: "Z = 1\n",
                "CHANGELOG.md": "1.2.0\n",
            },
            "the 1.2 release",
        )
        git(src, "checkout", "-q", "main")
        self.make_remote()
        self.merge1 = self.publish_pr(self.head1)

    def make_remote(self) -> None:
        """The bare remote the checkouts fetch from, as GitHub serves it
        (filters and reachable commits by id allowed)."""
        self.remote = self.tmp / "remote.git"
        git(self.tmp, "clone", "-q", "--bare", str(self.src), str(self.remote))
        for key, value in (
            ("uploadpack.allowFilter", "true"),
            ("uploadpack.allowReachableSHA1InWant", "true"),
        ):
            git(self.remote, "config", key, value)
        self.url = self.remote.resolve().as_uri()

    def publish_pr(self, head: str) -> str:
        """Points refs/pull/N/head at `head` and refs/pull/N/merge at a test
        merge into main, as GitHub does on every push to the PR."""
        src = self.src
        git(src, "checkout", "-q", "--detach", self.base)
        git(src, "merge", "-q", "--no-ff", "-m", f"Merge {head[:7]} into {self.base[:7]}", head)
        merge = git(src, "rev-parse", "HEAD")
        git(src, "checkout", "-q", "main")
        git(src, "push", "-q", "--force", str(self.remote), f"{head}:refs/heads/release/1.2")
        git(src, "push", "-q", "--force", str(self.remote), f"{head}:refs/pull/{PR}/head", f"{merge}:refs/pull/{PR}/merge")
        return merge

    def push_to_pr(self) -> tuple[str, str]:
        git(self.src, "checkout", "-q", "release/1.2")
        head = commit(self.src, {"src/version.json": version_json("1.2.0")}, "bump to 1.2.0")
        git(self.src, "checkout", "-q", "main")
        return head, self.publish_pr(head)

    def checkout(self, name: str, sha: str, ref: str, depth: int | None = 1) -> Path:
        """What actions/checkout does: a fresh repository, one fetch of one
        commit at depth 1 (no tags), a detached checkout."""
        ws = self.tmp / name
        ws.mkdir()
        git(ws, "init", "-q")
        git(ws, "remote", "add", "origin", self.url)
        args = ["fetch", "-q", "--no-tags", "--prune"]
        if depth:
            args.append(f"--depth={depth}")
            args += ["origin", f"+{sha}:{ref}"]
        else:
            args += ["origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*", f"+{sha}:{ref}"]
        git(ws, *args)
        git(ws, "checkout", "-q", "--force", ref)
        return ws


# Two runtimes in one repository, each with its own root and
# version file.
TWO_RUNTIMES = '[runtimes.server]\nroot = "server"\n[runtimes.worker]\nroot = "worker"\n'
WORKER_V1 = 'def work():\n    """Work."""\n    return 1\n'
# The worker's change in the release: a docstring and a comment only.
WORKER_COSMETIC = 'def work():\n    """Work, well."""\n    return 1  # tuned\n'


class Monorepo(Fixture):
    """A server and a worker in one repository: v1.0.0, a docs commit on
    main (the base), and a release pull request that changes the server's
    code and only the worker's docstring and comments."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        src = tmp / "source"
        src.mkdir()
        self.src = src
        git(src, "init", "-q")
        self.v100 = commit(
            src,
            {
                "fpcheck.toml": TWO_RUNTIMES,
                "server/app.py": "serve = 1\n",
                "server/version.json": version_json("1.0.0"),
                "worker/job.py": WORKER_V1,
                "worker/version.json": version_json("1.0.0"),
            },
            "1.0.0",
        )
        git(src, "tag", "-a", "v1.0.0", "-m", "release 1.0.0")
        self.base = commit(src, {"README.md": "# mono\n"}, "docs after 1.0.0")
        git(src, "checkout", "-q", "-b", "release/1.2")
        self.head1 = commit(src, {"server/app.py": "serve = 2\n", "worker/job.py": WORKER_COSMETIC}, "the 1.1 release")
        git(src, "checkout", "-q", "main")
        self.make_remote()
        self.merge1 = self.publish_pr(self.head1)


# The same two runtimes, each released under its own tag prefix.
PREFIXED_RUNTIMES = (
    '[runtimes.server]\nroot = "server"\ntag_pattern = "server-v*"\n'
    '[runtimes.worker]\nroot = "worker"\ntag_pattern = "worker-v*"\n'
)


class PrefixedMonorepo(Fixture):
    """A server and a worker released as `server-v*` and `worker-v*`: both
    at 1.0.0, then worker-v1.1.0 (the nearest tag to the base, the
    worker's), a docs commit (the base), and a release pull request that
    changes the server."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        src = tmp / "source"
        src.mkdir()
        self.src = src
        git(src, "init", "-q")
        self.v100 = commit(
            src,
            {"fpcheck.toml": PREFIXED_RUNTIMES, "server/app.py": "serve = 1\n", "worker/job.py": "work = 1\n"},
            "1.0.0",
        )
        git(src, "tag", "-a", "server-v1.0.0", "-m", "server 1.0.0")
        git(src, "tag", "worker-v1.0.0")
        self.worker110 = commit(src, {"worker/job.py": "work = 2\n"}, "worker 1.1.0")
        git(src, "tag", "worker-v1.1.0")
        self.base = commit(src, {"README.md": "# mono\n"}, "docs")
        git(src, "checkout", "-q", "-b", "release/1.2")
        self.head1 = commit(src, {"server/app.py": "serve = 2\n"}, "the server's 1.1")
        git(src, "checkout", "-q", "main")
        self.make_remote()
        self.merge1 = self.publish_pr(self.head1)


# --------------------------------------------------------------------------
# The checks


class Checks:
    """Counts passed and failed checks; safe to share between threads (the
    act scenarios run in parallel)."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.lock = threading.Lock()

    def check(self, ok: bool, what: str, detail: str = "") -> None:
        with self.lock:
            if ok:
                self.passed += 1
            else:
                self.failed += 1
                print(f"FAIL: {what}\n{detail}", file=sys.stderr)

    def equal(self, actual, expected, what: str) -> None:
        self.check(actual == expected, what, f"  expected {expected!r}\n  actual   {actual!r}")


def pr_event(head: str, merge: str, base: str) -> dict:
    return {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "merge_commit_sha": merge,
            "base": {"ref": "main", "sha": base},
            "head": {"ref": "release/1.2", "sha": head},
        },
        "repository": {"full_name": OWNER_REPO},
    }


def shallow(ws: Path) -> bool:
    return git(ws, "rev-parse", "--is-shallow-repository") == "true"

"""The repository: resolving the two releases to commits and fetching, from
`origin`, only what the comparison needs (the history of one commit without
trees, the tags, two trees)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .workflow import Fail, command, log, log_untrusted

# The remote that actions/checkout configures.
REMOTE = "origin"
HEX40 = re.compile(r"[0-9a-f]{40}")


@dataclass
class Rev:
    name: str  # what fpcheck is given and the report shows
    sha: str


class Repo:
    def __init__(self, path: Path, fetch: bool):
        self.path = path
        self.fetch_enabled = fetch
        self.fetched: list[str] = []
        # Tips whose commit history and tags are already fetched.
        self.histories: set[str] = set()
        self.env = dict(os.environ)
        self.env["GIT_TERMINAL_PROMPT"] = "0"

    def git(self, *args: str, check: bool = True, lazy: bool = False) -> subprocess.CompletedProcess:
        e = dict(self.env)
        if not lazy:
            # Local queries must not trigger promisor fetches (git 2.44+).
            e["GIT_NO_LAZY_FETCH"] = "1"
        out = subprocess.run(
            ["git", *args], cwd=self.path, env=e, capture_output=True, text=True, encoding="utf-8", errors="replace"
        )
        if check and out.returncode != 0:
            raise Fail(f"git {' '.join(args[:3])} failed: {out.stderr.strip()}", 4)
        return out

    def commit_of(self, rev: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
        return out.stdout.strip() if out.returncode == 0 else None

    def complete(self, sha: str) -> bool:
        """The commit and its whole tree are here (what fpcheck reads)."""
        out = self.git("rev-list", "--objects", "--missing=print", "-n1", sha, check=False)
        return out.returncode == 0 and not any(line.startswith("?") for line in out.stdout.splitlines())

    def shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository", check=False).stdout.strip() == "true"

    def partial(self) -> bool:
        if self.git("config", "--get", "extensions.partialclone", check=False).stdout.strip():
            return True
        out = self.git("config", "--get", f"remote.{REMOTE}.promisor", check=False)
        return out.stdout.strip() == "true"

    def fetch(self, args: list[str], what: str, optional: bool = False) -> bool:
        if not self.fetch_enabled:
            raise Fail(f"{what} is missing from the checkout and `fetch` is off", 4)
        cmd = ["fetch", "--no-tags", "--no-write-fetch-head", *args]
        log(f"fetching {what}: git {' '.join(cmd)}")
        started = time.monotonic()
        out = self.git(*cmd, check=False, lazy=True)
        log_untrusted(out.stderr)
        if out.returncode != 0:
            if optional:
                command(
                    "warning",
                    f"could not fetch {what} (git exit {out.returncode}); going on with what the checkout has",
                    title="fpcheck",
                )
                return False
            raise Fail(f"git fetch of {what} failed (exit {out.returncode})", 4)
        self.fetched.append(f"{what} ({time.monotonic() - started:.1f}s)")
        return True

    def tree_flags(self) -> list[str]:
        """How to fetch single commits with their trees: one commit deep in a
        shallow or partial clone (a tree comparison needs no history), and
        without the clone's object filter."""
        flags = []
        partial = self.partial()
        if self.shallow() or partial:
            flags.append("--depth=1")
        if partial:
            flags.append("--no-filter")
        return flags

    def resolve(self, rev: str, role: str) -> Rev:
        """Finds `rev` here or on the remote, fetching the ref if needed."""
        if not rev or rev.startswith("-") or ".." in rev or any(c.isspace() for c in rev):
            raise Fail(f"`{role}` is not a revision: {rev!r}", 2)
        sha = self.commit_of(rev)
        if sha:
            return Rev(rev, sha)
        if HEX40.fullmatch(rev):
            self.fetch([*self.tree_flags(), REMOTE, rev], f"commit {rev[:12]} ({role})")
            sha = self.commit_of(rev)
            if sha:
                return Rev(rev, sha)
            raise Fail(f"the remote has no commit {rev} ({role})", 4)
        if not self.fetch_enabled:
            raise Fail(f"`{rev}` ({role}) is not in the checkout and `fetch` is off", 4)
        patterns = [rev] if rev.startswith("refs/") else [f"refs/tags/{rev}", f"refs/heads/{rev}"]
        listed = self.git("ls-remote", REMOTE, *patterns, check=False, lazy=True)
        refs = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if "\t" in line]
        for wanted in patterns:
            if wanted not in refs:
                continue
            if wanted.startswith("refs/tags/"):
                local, name = wanted, wanted.removeprefix("refs/tags/")
            elif wanted.startswith("refs/heads/"):
                short = wanted.removeprefix("refs/heads/")
                local, name = f"refs/remotes/{REMOTE}/{short}", f"{REMOTE}/{short}"
            else:
                local = name = f"refs/fpcheck/{wanted.removeprefix('refs/')}"
            self.fetch([*self.tree_flags(), REMOTE, f"+{wanted}:{local}"], f"{wanted} ({role})")
            sha = self.commit_of(local)
            if sha:
                return Rev(name, sha)
        raise Fail(f"`{rev}` ({role}) is neither in the checkout nor a tag or branch of {REMOTE}", 4)

    def ensure_trees(self, revs: list[Rev]) -> None:
        """Makes sure each commit's tree is here, fetching them at depth 1."""
        missing = [r for r in revs if not self.complete(r.sha)]
        if not missing:
            return
        shas = sorted({r.sha for r in missing})
        flags = self.tree_flags()
        if self.partial():
            # The commits are here without their trees (a treeless history
            # fetch): ask for them again, this time whole.
            flags.append("--refetch")
        names = " and ".join(f"{r.name} ({r.sha[:12]})" for r in missing)
        self.fetch([*flags, REMOTE, *shas], f"the trees of {names}")
        still = [r for r in missing if not self.complete(r.sha)]
        if still:
            raise Fail(
                "the trees of " + ", ".join(r.name for r in still) + f" are still incomplete after fetching from {REMOTE}",
                4,
            )

    def fetch_history(self, tip: str, where: str) -> None:
        """Makes sure the commit history of `tip` (commits only, no trees or
        blobs) and the tags are here, which finding a release tag needs."""
        if tip in self.histories:
            return
        if not self.fetch_enabled and (self.shallow() or self.commit_of(tip) is None):
            raise Fail(
                f"the checkout lacks the history of {where} and the tags (a shallow clone), and `fetch` is off: "
                "check out with fetch-depth: 0, turn `fetch` on, or set `from`",
                4,
            )
        if self.fetch_enabled:
            shallow = self.shallow()
            if shallow or self.partial() or self.commit_of(tip) is None:
                args = ["--filter=tree:0"]
                if shallow:
                    args.append("--unshallow")
                self.fetch(
                    [*args, REMOTE, tip, "+refs/tags/*:refs/tags/*"],
                    f"the commit history of {where} (commits only, --filter=tree:0) and the tags",
                )
            else:
                # A complete clone: only the tags may be new. Without
                # credentials (persist-credentials: false on a private
                # repository) the tags it has will do.
                self.fetch([REMOTE, "+refs/tags/*:refs/tags/*"], "the tags", optional=True)
        self.histories.add(tip)

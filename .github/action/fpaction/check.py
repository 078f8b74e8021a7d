"""The comparison (`check`): the checkout and the settings, the two ends
(the default `from` asked of fpcheck), one fpcheck run for the three
reports, then the summary, the outputs and the annotations (outputs.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .fetch import HEX40, Repo, Rev
from .outputs import annotate, step_outputs
from .workflow import Fail, bool_input, env, group, load_event, log, log_untrusted, pull_request, set_output, temp_root

# GitHub's limits: 1 MiB for one step's summary, 65,536 characters for a
# comment body. Both are kept with a margin for the footer.
SUMMARY_LIMIT_BYTES = 1_000_000
COMMENT_LIMIT_BYTES = 65_000
# A full commit id, SHA-1 or SHA-256: the only form fpcheck is given.
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def inside(path: Path, top: Path) -> bool:
    return path == top or top in path.parents


def checkout_path(workspace: Path, given: str) -> Path:
    """The checkout the `path` input names, which must stay inside the
    workspace: the action fetches into it and fpcheck writes its cache in
    its git directory, so `../other`, an absolute path elsewhere or a link
    pointing out would make them write into some other repository."""
    ws = workspace.resolve()
    repo = (ws / (given or ".")).resolve()
    if not inside(repo, ws):
        raise Fail(
            f"input `path`: `{given}` leads to {repo}, outside the workspace {ws}: the action fetches into "
            "the checkout and fpcheck writes its cache there, so name a directory inside GITHUB_WORKSPACE "
            "(actions/checkout's `path`)",
            2,
        )
    if not repo.is_dir():
        raise Fail(f"input `path`: {repo} is not a directory (check actions/checkout's `path`)", 2)
    return repo


def repository_top(repo: Repo, workspace: Path) -> Path:
    """The top of the repository around the checkout; like the checkout, it
    must be inside the workspace (a plain directory in the workspace would
    otherwise lead git and fpcheck to a repository above it)."""
    out = repo.git("rev-parse", "--show-toplevel", check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise Fail(f"input `path`: {repo.path} is not a git checkout: check the repository out first (actions/checkout)", 4)
    top = Path(out.stdout.strip()).resolve()
    if not inside(top, workspace.resolve()):
        raise Fail(
            f"input `path`: {repo.path} belongs to the repository at {top}, outside the workspace: "
            "check the repository out inside GITHUB_WORKSPACE",
            2,
        )
    return top


def config_outside(top: Path, base: Path, given: str) -> Path:
    """The `config` input, as an absolute path outside the checkout. A config
    file in the checkout is the pull request's own file; fpcheck would apply
    it to both ends, the base included, so a pull request could exclude its
    own changes. Without `config`, fpcheck reads each end's fpcheck.toml
    from that end's commit."""
    named = base / given
    for candidate in (Path(os.path.normpath(named)), named.resolve()):
        if inside(candidate, top):
            raise Fail(
                f"input `config`: `{given}` is inside the checkout ({candidate}), i.e. the pull request's own "
                "file, and would decide the settings of the base side too: leave `config` empty (fpcheck reads "
                "each end's fpcheck.toml from that end's commit), or name a file outside the checkout that the "
                "workflow controls",
                2,
            )
    real = named.resolve()
    if not real.is_file():
        raise Fail(f"input `config`: {real} is not a file", 2)
    return real


def settings_flags(top: Path, base: Path) -> list[str]:
    """fpcheck's settings flags from the inputs, in the `--flag=value` form
    (a value starting with `-` stays a value)."""
    args = []
    for flag, name in (("--root", "INPUT_ROOT"), ("--runtime", "INPUT_RUNTIME")):
        value = env(name)
        if value:
            args.append(f"{flag}={value}")
    config = env("INPUT_CONFIG")
    if config:
        args.append(f"--config={config_outside(top, base, config)}")
    # An end without its own fpcheck.toml reads the base's, never the pull
    # request's (fpcheck's default is the `to` end's, else HEAD's).
    args.append("--config-fallback=from")
    return args


@dataclass
class Fpcheck:
    """One comparison: the binary, the repository, the settings flags and the
    two ends, which fpcheck is given as commit ids only."""

    binary: str
    repo: Path
    settings: list[str]
    frm: Rev
    to: Rev

    def command(self, extra: list[str]) -> list[str]:
        """Options first, then `--`, then FROM..TO as two full commit ids. Never
        a name as a revision: a tag called `--root=x` would be read as an
        option, one called `HEAD` as the checkout's HEAD. The names only
        label the ends in the report (`--from-name=NAME`, a value)."""
        for rev in (self.frm, self.to):
            if not OBJECT_ID.fullmatch(rev.sha):
                raise Fail(f"{rev.name} did not resolve to a commit id ({rev.sha!r})", 4)
        names = [f"--from-name={self.frm.name}", f"--to-name={self.to.name}"]
        return [self.binary, f"--repo={self.repo}", *self.settings, *names, *extra, "--", f"{self.frm.sha}..{self.to.sha}"]

    def run(self, extra: list[str]) -> None:
        run_fpcheck(self.command(extra), self.repo)


def run_fpcheck(cmd: list[str], cwd: Path) -> str:
    """Runs fpcheck; its stderr goes to the log (escaped), and a failure is
    the step's failure with fpcheck's own error line. Returns stdout."""
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace")
    log_untrusted(out.stderr)
    if out.returncode != 0:
        raise Fail(f"fpcheck failed with exit {out.returncode}, {exit_meaning(out.returncode)}: {error_line(out.stderr)}", out.returncode)
    return out.stdout


# fpcheck's exit codes, as the README's exit table says them.
EXIT_MEANINGS = {
    1: "a restart would be forced (--exit-code)",
    2: "usage error (check the inputs and the config)",
    3: "the fingerprint is unavailable",
    4: "input error (a revision or objects are missing)",
    5: "output error",
    6: "internal error (a bug in fpcheck: please report it)",
}


def exit_meaning(code: int) -> str:
    """What fpcheck's exit `code` means; a code outside the table (a signal,
    a crash) is an error all the same."""
    return EXIT_MEANINGS.get(code, "error")


def resolve_command(
    binary: str,
    repo: Path,
    to: Rev,
    pattern: str,
    exclude: str,
    settings: list[str] | None = None,
    pattern_at: Rev | None = None,
) -> list[str]:
    """fpcheck's own rule for a range without FROM, asked of fpcheck itself
    (`--resolve-only` reads commits and tags, and `to`'s fpcheck.toml for
    the runtime's `tag_pattern`, so the treeless history fetch and `to`'s
    tree are enough): the latest release tag reachable from `to`, or the
    one before it when `to` is itself a release. `to` is given as a commit
    id after `--`; the globs and the settings flags (which runtime, which
    config) as option values. Without a `tag-pattern` input, the runtime's
    `tag_pattern` decides, as it does for `fpcheck ..TO` on the branch;
    `pattern_at` (a pull request's base) names the commit whose
    fpcheck.toml gives it, so that a pull request cannot pick the release
    it is compared with by editing its own."""
    for rev in (to, pattern_at):
        if rev and not OBJECT_ID.fullmatch(rev.sha):
            raise Fail(f"{rev.name} did not resolve to a commit id ({rev.sha!r})", 4)
    globs = [f"--tag-match={pattern}"] if pattern else []
    if pattern_at and not pattern:
        globs.append(f"--tag-pattern-at={pattern_at.sha}")
    globs += [f"--tag-exclude={exclude}"] if exclude else []
    return [binary, f"--repo={repo}", *(settings or []), "--resolve-only", "--format=json", *globs, "--", f"..{to.sha}"]


def parse_resolved(stdout: str) -> tuple[Rev, list[str]]:
    """The `from` end of `fpcheck --resolve-only --format=json`: the tag's
    name as fpcheck gives it (`refs/tags/NAME` when the short name would
    read as something else) and its commit id, which is all fpcheck is
    given afterwards; and fpcheck's notes on how it chose."""
    try:
        parsed = json.loads(stdout)
        end = parsed["from"]
        name, sha = str(end["ref"]), str(end["commit"])
        notes = [str(n) for n in parsed.get("notes") or []]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise Fail(f"fpcheck --resolve-only printed no `from` end ({e}): {stdout[:200]!r}", 4) from e
    if not OBJECT_ID.fullmatch(sha):
        raise Fail(f"fpcheck named the release {name!r} with no commit id ({sha!r})", 4)
    return Rev(name, sha), notes


def default_from(
    binary: str, repo: Repo, to: Rev, pattern: str, exclude: str, settings: list[str], base: Rev | None = None
) -> Rev:
    """The default `from`: the commit history of `to` and the tags fetched
    (commits only), the tree whose fpcheck.toml names the runtime's tags
    (the pull request's base, else `to`'s), then fpcheck's own rule."""
    # The tree before the history: a tree fetched one commit deep into a
    # treeless history would cut it there. A `tag-pattern` input needs no
    # fpcheck.toml; a pull request's base was fetched before its history.
    if not pattern and not base:
        repo.ensure_trees([to])
    repo.fetch_history(to.sha, to.name)
    try:
        command = resolve_command(binary, repo.path, to, pattern, exclude, settings, base)
        stdout = run_fpcheck(command, repo.path)
    except Fail as e:
        raise Fail(f"no default `from` for {to.name}: {e}; set the `from` input", e.code) from e
    frm, notes = parse_resolved(stdout)
    log_untrusted("\n".join(notes))
    return frm


def error_line(stderr: str) -> str:
    """The line that says what went wrong: the last `error:` line (fpcheck's
    own, or clap's, which ends with usage lines and "For more information,
    try '--help'."), else the last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if line.startswith(("fpcheck: error:", "error:")):
            return line
    return lines[-1] if lines else "(no message)"


def report_flags(max_files: int, json_path: Path, summary_path: Path, comment_path: Path) -> list[str]:
    """One fpcheck run writes the three reports: the JSON, the Markdown for the
    step summary and the one for the comment, each within GitHub's limit
    (fpcheck leaves out whole rows and says how many; a limit in bytes bounds
    the characters too). Both fingerprints are computed even when the
    ends select the same files (fpcheck leaves them out then), so an empty
    `from-fingerprint` / `to-fingerprint` only ever means unavailable."""
    return [
        "--compute-fingerprints",
        "--format=json",
        f"--output={json_path}",
        f"--max-files={max_files}",
        f"--report=markdown:{SUMMARY_LIMIT_BYTES}={summary_path}",
        f"--report=markdown:{COMMENT_LIMIT_BYTES}={comment_path}",
    ]


def max_files_input() -> int:
    raw = env("INPUT_MAX_FILES") or "50"
    if not raw.isdigit() or int(raw) < 1:
        raise Fail(f"input `max-files` must be a positive number, not `{raw}`", 2)
    return int(raw)


def choose_ends(repo: Repo, pr: dict | None, binary: str, settings: list[str] | None = None) -> tuple[Rev, Rev]:
    """The two releases, resolved to commits and fetched: the inputs, else
    the pull request's head (outside pull requests, the triggering commit)
    and the release before it, by fpcheck's own rule."""
    to_input, from_input = env("INPUT_TO"), env("INPUT_FROM")
    # No `tag-pattern` (or the old default `*`, every tag): the runtime's
    # `tag_pattern` in `to`'s fpcheck.toml decides, else every tag.
    pattern, exclude = env("INPUT_TAG_PATTERN"), env("INPUT_TAG_EXCLUDE")
    pattern = "" if pattern == "*" else pattern
    # A pull request's own fpcheck.toml must not choose the release it is
    # compared with: its base's `tag_pattern` applies. The base's tree is
    # fetched first (one commit deep), before the commit history is
    # unshallowed, so that the history walk is not cut at the base.
    base = None
    if pr and not from_input and not pattern:
        base_sha = str((pr.get("base") or {}).get("sha", ""))
        if HEX40.fullmatch(base_sha):
            base = repo.resolve(base_sha, "the pull request's base")
            repo.ensure_trees([base])
    if to_input:
        to = repo.resolve(to_input, "to")
    elif pr:
        head = str(pr["head"].get("sha", ""))
        if not HEX40.fullmatch(head):
            raise Fail("the pull_request event has no head sha")
        if not from_input:
            # The head's history and the tags first: in a shallow checkout
            # of the merge commit that brings the head commit too.
            repo.fetch_history(head, f"the pull request's head ({head[:12]})")
        to = repo.resolve(head, "the pull request's head")
    else:
        to = repo.resolve(env("GITHUB_SHA") or "HEAD", "to")
    frm = (
        repo.resolve(from_input, "from")
        if from_input
        else default_from(binary, repo, to, pattern, exclude, settings or [], base)
    )
    repo.ensure_trees([frm, to])
    if to.name == to.sha:
        # A bare commit id reads better shortened in the outputs.
        to = Rev(to.sha[:12], to.sha)
    return frm, to


def append_summary(markdown: str) -> None:
    """Appends fpcheck's Markdown to the step summary. fpcheck already fits
    it to SUMMARY_LIMIT_BYTES; should it not, it is cut at a line and says
    so, rather than let GitHub refuse the whole summary."""
    summary_file = env("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as f:
            f.write(fit_summary(markdown))


SUMMARY_CUT = "\n\n*The summary was cut here to fit GitHub's limit; the whole report is in the `report-json` output's file.*\n"


def fit_summary(markdown: str, limit: int = SUMMARY_LIMIT_BYTES) -> str:
    text = markdown.rstrip("\n") + "\n"
    if len(text.encode("utf-8")) <= limit:
        return text
    room = limit - len(SUMMARY_CUT.encode("utf-8"))
    head = text.encode("utf-8")[:room].decode("utf-8", "ignore")
    return head[: head.rfind("\n") + 1].rstrip("\n") + SUMMARY_CUT


def cmd_check() -> int:
    binary = env("FPCHECK_BIN") or env("FPCHECK_BINARY") or shutil.which("fpcheck") or ""
    if not binary:
        raise Fail("no fpcheck binary: the install step did not run")
    max_files = max_files_input()
    workspace = Path(env("GITHUB_WORKSPACE") or os.getcwd())
    repo_path = checkout_path(workspace, env("INPUT_PATH") or ".")
    repo = Repo(repo_path, bool_input("INPUT_FETCH", True))
    settings = settings_flags(repository_top(repo, workspace), repo_path)
    with group("fpcheck: the two releases"):
        frm, to = choose_ends(repo, pull_request(load_event()), binary, settings)
        log_untrusted(f"from: {frm.name} ({frm.sha})\nto:   {to.name} ({to.sha})")
        log("fetched: " + ("; ".join(repo.fetched) if repo.fetched else "nothing, the checkout had it all"))

    out_dir = Path(tempfile.mkdtemp(prefix="fpcheck-report-", dir=temp_root()))
    paths = {name: out_dir / f"{name}.{ext}" for name, ext in (("json", "json"), ("summary", "md"), ("comment", "md"))}
    Fpcheck(binary, repo_path, settings, frm, to).run(
        report_flags(max_files, paths["json"], paths["summary"], paths["comment"])
    )
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    append_summary(paths["summary"].read_text(encoding="utf-8"))
    values = step_outputs(report, frm, to, paths, env("INPUT_RUNTIME"))
    for name, value in values.items():
        set_output(name, value)
    annotate(report, values["truncated"])
    return 0

#!/usr/bin/env python3
"""The fpcheck GitHub Action, one subcommand per step of action.yml.

    install   put an fpcheck binary in place: the one given (`binary` input or
              FPCHECK_BINARY), else the release binary for this runner with
              its sha256 verified, else `cargo install --locked` from the
              action's own source
    check     fetch what the comparison needs, run fpcheck, write the outputs,
              the step summary and the warning annotations
    comment   create or update the sticky pull request comment
    verdict   fail the job when the release forces a restart and
              `fail-on-restart` is on
    package   (release workflow) archive a built binary with its .sha256, in
              the layout `install` expects

Python standard library only; every input arrives through the environment
(action.yml maps `inputs.*` to INPUT_* variables), never through the command
line, so nothing from a pull request is ever interpreted by a shell.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import io
import json
import os
import platform
import re
import secrets
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

# The first line of fpcheck's Markdown report (templates/report.md.tera): how
# the sticky comment is found again.
MARKER = "<!-- fpcheck:report -->"
# A second hidden line that tells apart several reports on one pull request.
KEY_PREFIX = "<!-- fpcheck:key="
# GitHub's limits: 1 MiB for one step's summary, 65,536 characters for a
# comment body. Both are kept with a margin for the footer.
SUMMARY_LIMIT_BYTES = 1_000_000
COMMENT_LIMIT_BYTES = 65_000
# The remote that actions/checkout configures.
REMOTE = "origin"
# Release targets by (RUNNER_OS, RUNNER_ARCH); release.yml builds each one.
TARGETS = {
    ("Linux", "X64"): "x86_64-unknown-linux-musl",
    ("Linux", "ARM64"): "aarch64-unknown-linux-musl",
    ("macOS", "X64"): "x86_64-apple-darwin",
    ("macOS", "ARM64"): "aarch64-apple-darwin",
    ("Windows", "X64"): "x86_64-pc-windows-msvc",
}
HEX40 = re.compile(r"[0-9a-f]{40}")
# A full commit id, SHA-1 or SHA-256: the only form fpcheck is given.
OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
VERSION_TAG = re.compile(r"v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)")
HTTP_TIMEOUT = 60
USER_AGENT = "fpcheck-action"


class Fail(Exception):
    """A failure the step reports as an ::error:: and exits with."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------
# Workflow commands and logging


def escape_data(text: str) -> str:
    """Escapes a workflow command's message (`::warning::<here>`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escapes a workflow command's property value (`title=<here>`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: str) -> None:
    """Prints `::name k=v,...::message`, every part escaped."""
    attrs = ",".join(f"{k}={escape_property(v)}" for k, v in props.items() if v)
    sep = " " if attrs else ""
    print(f"::{name}{sep}{attrs}::{escape_data(message)}", flush=True)


def log(text: str = "") -> None:
    """Prints text the action wrote itself (no repository content)."""
    print(text, flush=True)


def log_untrusted(text: str) -> None:
    """Prints text that may hold repository content (file or ref names, tool
    output) with workflow commands switched off, so that a line such as
    `::set-output ...` in a file name is printed, not obeyed."""
    text = text.rstrip("\n")
    if not text:
        return
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    print(text, flush=True)
    print(f"::{token}::", flush=True)


@contextlib.contextmanager
def group(title: str):
    print(f"::group::{escape_data(title)}", flush=True)
    try:
        yield
    finally:
        print("::endgroup::", flush=True)


def set_output(name: str, value: str) -> None:
    """Appends one step output to $GITHUB_OUTPUT (heredoc form, so any value
    is safe)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def bool_input(name: str, default: bool = False) -> bool:
    raw = env(name)
    if raw == "":
        return default
    if raw.lower() in ("true", "yes", "1", "on"):
        return True
    if raw.lower() in ("false", "no", "0", "off"):
        return False
    pretty = name.removeprefix("INPUT_").lower().replace("_", "-")
    raise Fail(f"input `{pretty}` must be true or false, not `{raw}`", 2)


def temp_root() -> Path:
    return Path(env("RUNNER_TEMP") or tempfile.gettempdir())


def action_path() -> Path:
    given = env("GITHUB_ACTION_PATH")
    return Path(given) if given else Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------
# Release assets: one naming scheme for `package` and `install`


def asset_name(tag: str, target: str) -> str:
    ext = ".zip" if "windows" in target else ".tar.gz"
    return f"fpcheck-{tag}-{target}{ext}"


def binary_name(target: str) -> str:
    return "fpcheck.exe" if "windows" in target else "fpcheck"


def member_name(tag: str, target: str) -> str:
    """The binary's path inside the archive."""
    return f"fpcheck-{tag}-{target}/{binary_name(target)}"


def cargo_version(manifest: Path) -> str:
    """The `version` of [package] in a Cargo.toml (tomllib is 3.11+ only)."""
    section = None
    for line in manifest.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
            continue
        m = re.match(r'version\s*=\s*"([^"]+)"', stripped)
        if section == "[package]" and m:
            return m.group(1)
    raise Fail(f"no [package] version in {manifest}")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def cmd_package(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="fpcheck_action.py package")
    parser.add_argument("--target", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--binary", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--manifest",
        type=Path,
        default=action_path() / "Cargo.toml",
        help="the Cargo.toml whose version the tag must name",
    )
    args = parser.parse_args(argv)
    if args.target not in TARGETS.values():
        raise Fail(f"unknown target {args.target}: the installer knows {sorted(TARGETS.values())}", 2)
    version = cargo_version(args.manifest)
    if args.tag != f"v{version}":
        raise Fail(
            f"tag {args.tag} does not name the version in {args.manifest} ({version}): "
            f"the action installs v<Cargo version>, so tag v{version}",
            2,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    name = asset_name(args.tag, args.target)
    archive = args.out / name
    data = args.binary.read_bytes()
    member = member_name(args.tag, args.target)
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
            info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    else:
        with tarfile.open(archive, "w:gz") as t:
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mode = 0o755
            info.mtime = int(time.time())
            t.addfile(info, io.BytesIO(data))
    digest = sha256_file(archive)
    (args.out / f"{name}.sha256").write_text(f"{digest}  {name}\n", encoding="utf-8")
    log(f"{archive}  sha256 {digest}")
    return 0


# --------------------------------------------------------------------------
# HTTP


class NotFound(Exception):
    pass


def http_get(url: str, limit: int = 200 << 20) -> bytes:
    """GETs a URL (following redirects), retrying transient failures."""
    last: Exception | None = None
    for attempt in range(3):
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
                data = response.read(limit + 1)
                if len(data) > limit:
                    raise Fail(f"{url} is larger than {limit} bytes")
                return data
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise NotFound(url) from e
            last = e
            if e.code < 500 and e.code != 429:
                break
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            last = e
        time.sleep(2**attempt)
    raise Fail(f"cannot download {url}: {last}")


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port: what must match for a request to carry the
    token."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


class RedirectRefused(urllib.error.URLError):
    """A redirect to another origin, not followed."""


class SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme, host and port. urllib
    copies every header, Authorization included, onto the redirected
    request, so following an API response to another host would hand it the
    token."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if origin(newurl) != origin(req.full_url):
            fp.close()
            raise RedirectRefused(
                f"HTTP {code} redirect from {origin(req.full_url)[1]} to {origin(newurl)[1] or newurl} "
                "not followed: the token is only ever sent to GITHUB_API_URL's host"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


API_OPENER = urllib.request.build_opener(SameOriginRedirects())


@dataclass
class ApiResponse:
    status: int
    data: object
    error: str = ""


def api(method: str, url: str, token: str, body: dict | None = None) -> ApiResponse:
    """One GitHub REST call; never raises for HTTP errors."""
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": USER_AGENT,
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=payload, headers=headers, method=method)
    try:
        with API_OPENER.open(request, timeout=HTTP_TIMEOUT) as response:
            raw = response.read()
            return ApiResponse(response.status, json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:500]
        try:
            detail = json.loads(detail).get("message", detail)
        except (ValueError, AttributeError):
            pass
        return ApiResponse(e.code, None, str(detail))
    except RedirectRefused as e:
        return ApiResponse(0, None, str(e.reason))
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        return ApiResponse(0, None, str(e))


# --------------------------------------------------------------------------
# install


def runner_target() -> str | None:
    os_name = env("RUNNER_OS") or {"Linux": "Linux", "Darwin": "macOS", "Windows": "Windows"}.get(
        platform.system(), ""
    )
    arch = env("RUNNER_ARCH") or {
        "x86_64": "X64",
        "AMD64": "X64",
        "amd64": "X64",
        "arm64": "ARM64",
        "aarch64": "ARM64",
    }.get(platform.machine(), "")
    return TARGETS.get((os_name, arch))


def action_ref_and_repository() -> tuple[str, str]:
    """The action's ref and owner/name. github.action_ref and
    github.action_repository (passed through env) are empty in some composite
    contexts (actions/runner#2473), so the runner's checkout path
    `.../_actions/<owner>/<name>/<ref>` is the fallback."""
    ref = env("FPCHECK_ACTION_REF")
    repository = env("FPCHECK_ACTION_REPOSITORY")
    parts = Path(env("GITHUB_ACTION_PATH")).parts if env("GITHUB_ACTION_PATH") else ()
    if "_actions" in parts:
        i = len(parts) - 1 - parts[::-1].index("_actions")
        rest = parts[i + 1 :]
        if len(rest) >= 3:
            repository = repository or f"{rest[0]}/{rest[1]}"
            ref = ref or rest[2]
    return ref, repository


def release_tag(requested: str) -> tuple[str, str]:
    """The release to download and why: `version` if given, else the action's
    ref when it names a version, else the version in the action's Cargo.toml
    (the action is pinned by commit SHA or used from a branch)."""
    if requested and requested not in ("auto", "latest"):
        m = VERSION_TAG.fullmatch(requested)
        if not m:
            raise Fail(f"input `version` must be a release like v1.2.3, `auto` or `source`, not `{requested}`", 2)
        return f"v{m.group(1)}", "the `version` input"
    ref, _ = action_ref_and_repository()
    m = VERSION_TAG.fullmatch(ref) if ref else None
    if m:
        return f"v{m.group(1)}", f"the action's ref {ref}"
    manifest = action_path() / "Cargo.toml"
    version = cargo_version(manifest)
    return f"v{version}", f"the version in the action's Cargo.toml (ref {ref or 'unknown'})"


def check_binary(path: Path, expect: str | None = None) -> str:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise Fail(f"cannot run {path}: {e}") from e
    if out.returncode != 0:
        raise Fail(f"{path} --version failed: {out.stderr.strip()}")
    reported = out.stdout.strip()
    if expect and reported.split()[-1:] != [expect]:
        raise Fail(f"{path} reports `{reported}`, expected fpcheck {expect}")
    return reported


def download_release(tag: str, target: str, repository: str, dest: Path) -> Path:
    server = env("GITHUB_SERVER_URL") or "https://github.com"
    name = asset_name(tag, target)
    base = f"{server.rstrip('/')}/{repository}/releases/download/{urllib.parse.quote(tag)}"
    sums = http_get(f"{base}/{name}.sha256", limit=1 << 16).decode("utf-8", "replace")
    m = re.match(r"\s*([0-9a-fA-F]{64})\b", sums)
    if not m:
        raise Fail(f"{base}/{name}.sha256 holds no sha256")
    expected = m.group(1).lower()
    data = http_get(f"{base}/{name}")
    actual = hashlib.sha256(data).hexdigest()
    if not hmac.compare_digest(actual, expected):
        # Never fall back to anything else here: this is tampering or
        # corruption, and the run must stop.
        raise Fail(
            f"sha256 mismatch for {base}/{name}: the download hashes to {actual}, "
            f"its .sha256 says {expected}; refusing to run it"
        )
    log(f"downloaded {base}/{name}")
    log(f"sha256 {actual} verified against {name}.sha256")
    member = member_name(tag, target)
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            try:
                content = z.read(member)
            except KeyError as e:
                raise Fail(f"{name} has no {member}") from e
    else:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
            try:
                info = t.getmember(member)
            except KeyError as e:
                raise Fail(f"{name} has no {member}") from e
            if not info.isfile():
                raise Fail(f"{member} in {name} is not a regular file")
            extracted = t.extractfile(info)
            assert extracted is not None
            content = extracted.read()
    dest.mkdir(parents=True, exist_ok=True)
    binary = dest / binary_name(target)
    binary.write_bytes(content)
    binary.chmod(0o755)
    return binary


def build_from_source(dest: Path, why: str) -> Path:
    source = action_path()
    cargo = shutil.which("cargo")
    if not cargo:
        raise Fail(f"{why}, and cargo is not installed to build fpcheck from {source}: install Rust, or set `version` to a release")
    log(f"{why}: building fpcheck from the action's source ({source}) with cargo install --locked")
    cmd = [
        cargo,
        "install",
        "--locked",
        "--path",
        str(source),
        "--root",
        str(dest),
        "--target-dir",
        str(temp_root() / "fpcheck-cargo-target"),
        "--bin",
        "fpcheck",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True)
    log_untrusted(out.stderr)
    if out.returncode != 0:
        raise Fail(f"cargo install failed (exit {out.returncode})")
    exe = ".exe" if platform.system() == "Windows" else ""
    return dest / "bin" / f"fpcheck{exe}"


def cmd_install() -> int:
    given = env("INPUT_BINARY") or env("FPCHECK_BINARY")
    if given:
        path = Path(given) if os.sep in given or "/" in given else Path(shutil.which(given) or given)
        if not path.is_file():
            raise Fail(f"the fpcheck binary {given} does not exist")
        reported = check_binary(path)
        log(f"using {path} ({reported}); installation skipped (binary input or FPCHECK_BINARY)")
        set_output("binary", str(path.resolve()))
        set_output("source", "given")
        return 0
    requested = env("INPUT_VERSION")
    dest = Path(tempfile.mkdtemp(prefix="fpcheck-bin-", dir=temp_root()))
    if requested == "source":
        binary = build_from_source(dest, "version: source")
        source = "source"
    else:
        tag, why = release_tag(requested)
        target = runner_target()
        _, repository = action_ref_and_repository()
        log(f"fpcheck {tag} (from {why}) for {target or 'an unsupported runner'}")
        if target is None:
            binary = build_from_source(dest, "no release binary exists for this runner's OS and architecture")
            source = "source"
        elif not repository:
            binary = build_from_source(dest, "the action's repository is unknown, so no release can be downloaded")
            source = "source"
        else:
            try:
                binary = download_release(tag, target, repository, dest)
                source = "release"
            except NotFound as e:
                binary = build_from_source(dest, f"{repository} has no release asset {e}")
                source = "source"
        if source == "release":
            check_binary(binary, tag[1:])
    reported = check_binary(binary)
    log(f"installed {reported} at {binary}")
    set_output("binary", str(binary))
    set_output("source", source)
    return 0


# --------------------------------------------------------------------------
# git


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

    def describe(self, start: str, pattern: str, exclude: str) -> Rev | None:
        """The latest tag matching `pattern` (and not `exclude`) reachable
        from commit `start`, looked up by its full ref name."""
        cmd = ["describe", "--tags", "--abbrev=0", f"--match={pattern or '*'}"]
        if exclude:
            cmd.append(f"--exclude={exclude}")
        out = self.git(*cmd, "--end-of-options", start, check=False)
        tag = out.stdout.strip()
        if out.returncode != 0 or not tag:
            return None
        sha = self.commit_of(f"refs/tags/{tag}")
        if not sha:
            raise Fail(f"git describe named the tag {tag!r}, which does not lead to a commit", 4)
        return Rev(tag, sha)

    def release_before(self, to: Rev, pattern: str, exclude: str) -> Rev:
        """fpcheck's own rule for a range without FROM (`fpcheck ..TO
        --tag-match P --tag-exclude E`): the latest release tag reachable from
        `to`; when `to` itself carries one, the one before it, reachable from
        its first parent."""
        self.fetch_history(to.sha, to.name)
        found = self.describe(to.sha, pattern, exclude)
        if found is None:
            raise Fail(
                f"no tag matching `{pattern or '*'}` is reachable from {to.name}, so there is no "
                "previous release to compare with: set the `from` input, or tag the last release",
                4,
            )
        if found.sha != to.sha:
            return found
        parent = self.commit_of(f"{to.sha}^1")
        before = self.describe(parent, pattern, exclude) if parent else None
        if before is None:
            raise Fail(
                f"{to.name} is the release {found.name} and no release tag comes before it: set the `from` input",
                4,
            )
        return before


# --------------------------------------------------------------------------
# check


def load_event() -> dict:
    path = env("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, dict) else {}


def pull_request(event: dict) -> dict | None:
    pr = event.get("pull_request")
    return pr if isinstance(pr, dict) and pr.get("base") and pr.get("head") else None


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
        a name: a tag called `--root=x` would be read as an option, one called
        `HEAD` as the checkout's HEAD."""
        for rev in (self.frm, self.to):
            if not OBJECT_ID.fullmatch(rev.sha):
                raise Fail(f"{rev.name} did not resolve to a commit id ({rev.sha!r})", 4)
        return [self.binary, f"--repo={self.repo}", *self.settings, *extra, "--", f"{self.frm.sha}..{self.to.sha}"]

    def run(self, extra: list[str]) -> None:
        out = subprocess.run(
            self.command(extra), cwd=self.repo, capture_output=True, text=True, encoding="utf-8", errors="replace"
        )
        log_untrusted(out.stderr)
        if out.returncode != 0:
            meaning = {
                2: "usage error (check the inputs and the config)",
                4: "input error (a revision or objects are missing)",
                5: "output error",
            }.get(out.returncode, "error")
            raise Fail(f"fpcheck failed with exit {out.returncode}, {meaning}: {error_line(out.stderr)}", out.returncode)


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
    the characters too)."""
    return [
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


def choose_ends(repo: Repo, pr: dict | None) -> tuple[Rev, Rev]:
    """The two releases, resolved to commits and fetched: the inputs, else
    the pull request's head (outside pull requests, the triggering commit)
    and the release before it, by fpcheck's own rule."""
    to_input, from_input = env("INPUT_TO"), env("INPUT_FROM")
    pattern, exclude = env("INPUT_TAG_PATTERN") or "*", env("INPUT_TAG_EXCLUDE")
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
    frm = repo.resolve(from_input, "from") if from_input else repo.release_before(to, pattern, exclude)
    repo.ensure_trees([frm, to])
    if to.name == to.sha:
        # A bare commit id reads better shortened in the outputs.
        to = Rev(to.sha[:12], to.sha)
    return frm, to


def step_outputs(report: dict, frm: Rev, to: Rev, paths: dict[str, Path]) -> dict[str, str]:
    """The step's outputs: the verdict from the JSON report, the ends as the
    action resolved them, the report files."""
    sides = {end: report.get(end) if isinstance(report.get(end), dict) else {} for end in ("from", "to")}
    runtime = (report.get("changes") or {}).get("runtime") or []
    return {
        "restart-required": "true" if report.get("restart_required") else "false",
        "reason": str(report.get("reason", "")),
        "summary": str(report.get("summary", "")),
        "from-ref": frm.name,
        "to-ref": to.name,
        "from-commit": frm.sha,
        "to-commit": to.sha,
        "from-version": str(sides["from"].get("version") or ""),
        "to-version": str(sides["to"].get("version") or ""),
        "from-fingerprint": str(sides["from"].get("fingerprint") or ""),
        "to-fingerprint": str(sides["to"].get("fingerprint") or ""),
        "changed-runtime-files": json.dumps([c.get("path", "") for c in runtime], ensure_ascii=False),
        "report-json": str(paths["json"]),
        "report-markdown": str(paths["summary"]),
        "comment-body": str(paths["comment"]),
    }


def append_summary(markdown: str) -> None:
    summary_file = env("GITHUB_STEP_SUMMARY")
    if summary_file:
        with open(summary_file, "a", encoding="utf-8") as f:
            f.write(markdown.rstrip("\n") + "\n")


def annotate(report: dict) -> None:
    """A ::warning:: per report warning (settings_changed included) and a
    ::notice:: with the verdict."""
    for w in report.get("warnings", []):
        command("warning", str(w.get("message", "")), title=f"fpcheck: {w.get('code', 'warning')}")
    verdict = "restart required" if report.get("restart_required") else "no restart"
    command("notice", str(report.get("summary", "")), title=f"fpcheck: {verdict}")


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
        frm, to = choose_ends(repo, pull_request(load_event()))
        log_untrusted(f"from: {frm.name} ({frm.sha})\nto:   {to.name} ({to.sha})")
        log("fetched: " + ("; ".join(repo.fetched) if repo.fetched else "nothing, the checkout had it all"))

    out_dir = Path(tempfile.mkdtemp(prefix="fpcheck-report-", dir=temp_root()))
    paths = {name: out_dir / f"{name}.{ext}" for name, ext in (("json", "json"), ("summary", "md"), ("comment", "md"))}
    Fpcheck(binary, repo_path, settings, frm, to).run(
        report_flags(max_files, paths["json"], paths["summary"], paths["comment"])
    )
    report = json.loads(paths["json"].read_text(encoding="utf-8"))
    append_summary(paths["summary"].read_text(encoding="utf-8"))
    for name, value in step_outputs(report, frm, to, paths).items():
        set_output(name, value)
    annotate(report)
    return 0


# --------------------------------------------------------------------------
# comment


def key_line(key: str) -> str:
    return f"{KEY_PREFIX}{key} -->" if key else ""


def is_report(comment: dict, key: str) -> bool:
    body = comment.get("body") or ""
    if not body.lstrip().startswith(MARKER):
        return False
    return key_line(key) in body if key else KEY_PREFIX not in body


def trusted_author(comment: dict) -> bool:
    """A comment the action may have written: by a bot (the GITHUB_TOKEN
    writes as github-actions[bot]) or by someone with write access (a
    personal token). A drive-by commenter who copies the marker is ignored."""
    user = comment.get("user") or {}
    return (
        user.get("type") == "Bot"
        or user.get("login") == "github-actions[bot]"
        or comment.get("author_association") in ("OWNER", "MEMBER", "COLLABORATOR")
    )


def comment_body(report: str, key: str, run_url: str) -> str:
    """The report, a footer linking the run, and the key line when there is
    a key (the marker stays the first line)."""
    footer = "<sub>Written by the fpcheck action"
    if run_url:
        footer += f" in [run {run_url.rsplit('/', 1)[-1]}]({run_url})"
    footer += "; updated in place on every push.</sub>"
    return f"{report.rstrip(chr(10))}\n\n{footer}\n" + (f"{key_line(key)}\n" if key else "")


def run_url(event: dict) -> str:
    server, repo, run_id = env("GITHUB_SERVER_URL") or "https://github.com", env("GITHUB_REPOSITORY"), env("GITHUB_RUN_ID")
    repo = repo or str((event.get("repository") or {}).get("full_name", ""))
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}" if run_id and repo else ""


def find_sticky(issues: str, number: int, token: str, key: str) -> tuple[dict | None, ApiResponse | None]:
    """Our earlier comment on the pull request, if any (paging through at
    most 5,000 comments), or the failed response."""
    for page in range(1, 51):
        r = api("GET", f"{issues}/{number}/comments?per_page=100&page={page}", token)
        if r.status != 200 or not isinstance(r.data, list):
            return None, r
        found = next((c for c in r.data if is_report(c, key) and trusted_author(c)), None)
        if found or len(r.data) < 100:
            return found, None
    return None, None


def cmd_comment() -> int:
    if not bool_input("INPUT_COMMENT", False):
        log("comment: off")
        return 0
    event = load_event()
    number = (pull_request(event) or {}).get("number") or event.get("number")
    if not isinstance(number, int):
        command("warning", "comment: true, but this run is not for a pull request: no comment written", title="fpcheck")
        return 0
    token = env("INPUT_GITHUB_TOKEN")
    if not token:
        command("warning", "comment: true, but `github-token` is empty: no comment written", title="fpcheck")
        return 0
    body_path = env("FPCHECK_COMMENT_BODY")
    if not body_path or not Path(body_path).is_file():
        raise Fail("no report to comment with: the check step did not run")
    key = env("INPUT_COMMENT_KEY")
    if key and not re.fullmatch(r"[A-Za-z0-9._/-]{1,64}", key):
        raise Fail("input `comment-key` may hold only letters, digits and . _ / - (64 at most)", 2)
    body = comment_body(Path(body_path).read_text(encoding="utf-8"), key, run_url(event))
    repo = env("GITHUB_REPOSITORY") or str((event.get("repository") or {}).get("full_name", ""))
    issues = f"{(env('GITHUB_API_URL') or 'https://api.github.com').rstrip('/')}/repos/{repo}/issues"
    existing, failed = find_sticky(issues, number, token, key)
    if failed:
        return comment_failed("list the pull request's comments", failed)
    if existing:
        r = api("PATCH", f"{issues}/comments/{existing['id']}", token, {"body": body})
    else:
        r = api("POST", f"{issues}/{number}/comments", token, {"body": body})
    if r.status not in (200, 201) or not isinstance(r.data, dict):
        return comment_failed(f"{'update' if existing else 'create'} the comment", r)
    url = str(r.data.get("html_url", ""))
    log(f"comment {'updated' if existing else 'created'}: {url or r.data.get('id')}")
    set_output("comment-url", url)
    set_output("comment-id", str(r.data.get("id", "")))
    return 0


def comment_failed(what: str, r: ApiResponse) -> int:
    hint = ""
    if r.status in (401, 403, 404):
        hint = (
            " The token needs `pull-requests: write` (add it to the job's permissions); "
            "pull requests from forks only get a read-only token, so leave `comment` off for them."
        )
    command(
        "warning",
        f"comment: could not {what} (HTTP {r.status or 'error'}: {r.error}).{hint} The verdict is in the job summary.",
        title="fpcheck",
    )
    return 0


# --------------------------------------------------------------------------
# verdict


def cmd_verdict() -> int:
    fail = bool_input("INPUT_FAIL_ON_RESTART", False)
    restart = env("FPCHECK_RESTART_REQUIRED") == "true"
    if restart and fail:
        reason = env("FPCHECK_REASON")
        command(
            "error",
            f"this release forces running clients to restart ({reason}), and fail-on-restart is on",
            title="fpcheck: restart required",
        )
        return 1
    return 0


# --------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    name, rest = argv[0], argv[1:]
    commands = {
        "install": cmd_install,
        "check": cmd_check,
        "comment": cmd_comment,
        "verdict": cmd_verdict,
    }
    try:
        if name == "package":
            return cmd_package(rest)
        if name not in commands or rest:
            print(__doc__, file=sys.stderr)
            return 2
        return commands[name]()
    except Fail as e:
        command("error", str(e), title="fpcheck")
        return e.code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Putting fpcheck in place (`install`) and packaging release binaries for
it (`package`, the release workflow): one naming scheme for both."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import io
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from .workflow import HTTP_TIMEOUT, USER_AGENT, Fail, action_path, env, log, log_untrusted, set_output, temp_root

# Release targets by (RUNNER_OS, RUNNER_ARCH); release.yml builds each one.
TARGETS = {
    ("Linux", "X64"): "x86_64-unknown-linux-musl",
    ("Linux", "ARM64"): "aarch64-unknown-linux-musl",
    ("macOS", "X64"): "x86_64-apple-darwin",
    ("macOS", "ARM64"): "aarch64-apple-darwin",
    ("Windows", "X64"): "x86_64-pc-windows-msvc",
}
VERSION_TAG = re.compile(r"v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)")


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

"""What the warm status's watcher cannot vouch for: writes through a memory
mapping, mounts, file systems whose changes make no event here."""

from __future__ import annotations

import mmap
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fpcheck
from conftest import ask


def test_a_write_through_a_mapping_is_seen_within_the_verify_interval(
    runtime: Path, tmp_path: Path
) -> None:
    """inotify reports no write through a mapping made before the watch:
    the watched fingerprint is re-verified once its last full check is
    older than ``verify_interval``."""
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    path = runtime / "plugins" / "memory.py"
    with open(path, "r+b") as f, mmap.mmap(f.fileno(), 0) as mapped:
        interval = 1.0
        assert ask(runtime, marker, fp, verify_interval=interval)["cache"] == "miss"
        assert ask(runtime, marker, fp, verify_interval=interval)["cache"] == "hit"
        mapped[0:3] = b"DEF"
        written = time.monotonic()
        assert fpcheck.fingerprint(runtime) != fp
        # Every call starting `interval` after the write sees it.
        while time.monotonic() - written < interval:
            time.sleep(0.05)
        got = ask(runtime, marker, fp, verify_interval=interval)
        assert got["restart_required"], got
        assert got["installed_fingerprint"] == fpcheck.fingerprint(runtime)
        assert ask(runtime, marker, fp, verify_interval=interval)["restart_required"]
        # Zero: every call is a full check, the watcher is never trusted.
        new = fpcheck.fingerprint(runtime)
        for _ in range(3):
            got = ask(runtime, marker, new, verify_interval=0)
            assert got["cache"] == "miss" and not got["restart_required"]
        mapped[0:3] = b"GHI"
        got = ask(runtime, marker, new, verify_interval=0)
        assert got["restart_required"], got
    with pytest.raises(ValueError, match="verify_interval"):
        ask(runtime, marker, fp, verify_interval=-1.0)


def test_the_default_interval_keeps_the_watcher_warm(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    ask(runtime, marker, fp)
    answers = [ask(runtime, marker, fp)["cache"] for _ in range(20)]
    # Two seconds by default: 20 quick calls are (nearly) all warm.
    assert answers.count("hit") >= 19, answers


def in_private_mount_namespace(script: str, tmp_path: Path) -> str:
    """Runs ``script`` (Python, with ``fpcheck`` imported and ``base`` the
    tmp folder) in a private mount namespace: its mounts never reach the
    machine's. Skips where a namespace cannot be made (not root)."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1)")
    probe = subprocess.run(
        [unshare, "-m", "--propagation", "private", "true"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.decode().strip()}")
    code = "import fpcheck, os, subprocess, sys\nfrom pathlib import Path\n"
    code += f"base = Path({str(tmp_path)!r})\n" + textwrap.dedent(script)
    done = subprocess.run(
        [unshare, "-m", "--propagation", "private", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_mount_over_a_directory_of_the_root_drops_the_watch(
    tmp_path: Path,
) -> None:
    out = in_private_mount_namespace(
        """
        root = base / "rt"
        (root / "pkg").mkdir(parents=True)
        (base / "other").mkdir()
        (root / "pkg" / "a.py").write_text("x = 1\\n")
        (base / "other" / "a.py").write_text("x = 2\\n")
        marker = base / "marker.json"
        fp = fpcheck.fingerprint(root)
        def ask():
            r = fpcheck.status(root, marker, process_fingerprint=fp, cache=True)
            return r["cache"], r["restart_required"]
        assert ask() == ("miss", False)
        assert ask() == ("hit", False)
        subprocess.run(["mount", "--bind", str(base / "other"), str(root / "pkg")],
                       check=True)
        try:
            assert fpcheck.fingerprint(root) != fp
            print(ask(), ask())
        finally:
            subprocess.run(["umount", str(root / "pkg")], check=True)
        print(ask())
        """,
        tmp_path,
    )
    # The mount seen at once; the watch placed again over the mounted tree
    # (a local file system) is trusted; the unmount is seen too.
    assert out.splitlines() == [
        "('miss', True) ('hit', True)",
        "('miss', False)",
    ]


def test_no_watcher_on_a_file_system_it_cannot_vouch_for(tmp_path: Path) -> None:
    """An overlay's layer changed directly makes no event on the overlay:
    there, as on NFS or FUSE, every call is a full check."""
    out = in_private_mount_namespace(
        """
        for d in ("lower", "upper", "work", "merged", "tmp"):
            (base / d).mkdir()
        (base / "lower" / "a.py").write_text("x = 1\\n")
        r = subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
            f"lowerdir={base}/lower,upperdir={base}/upper,workdir={base}/work",
            str(base / "merged")], capture_output=True, text=True)
        if r.returncode != 0:
            print("SKIP", r.stderr.strip())
            sys.exit(0)
        marker = base / "marker.json"
        def answers(root):
            fp = fpcheck.fingerprint(root)
            got = [fpcheck.status(root, marker, process_fingerprint=fp,
                                  cache=True)["cache"] for _ in range(3)]
            return fp, got
        try:
            root = base / "merged"
            fp, got = answers(root)
            print(got)
            (base / "lower" / "b.py").write_text("y = 1\\n")
            r = fpcheck.status(root, marker, process_fingerprint=fp, cache=True)
            print(r["restart_required"], r["installed_fingerprint"] == fp)
            # A tmpfs (trusted) holding the runtime, an overlay mounted below it.
            subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(base / "tmp")],
                           check=True)
            (base / "tmp" / "rt" / "sub").mkdir(parents=True)
            (base / "tmp" / "rt" / "m.py").write_text("m = 1\\n")
            print(answers(base / "tmp" / "rt")[1])
            subprocess.run(["mount", "--bind", str(root),
                            str(base / "tmp" / "rt" / "sub")], check=True)
            print(answers(base / "tmp" / "rt")[1])
        finally:
            subprocess.run(["umount", "-R", str(base / "tmp")])
            subprocess.run(["umount", str(base / "merged")], check=True)
        """,
        tmp_path,
    )
    if out.startswith("SKIP"):
        pytest.skip(out)
    assert out.splitlines() == [
        "['miss', 'miss', 'miss']",
        "True False",
        "['miss', 'hit', 'hit']",
        "['miss', 'miss', 'miss']",
    ]

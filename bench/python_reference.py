"""The reference gate's ``compute_mcp_runtime_fingerprint``, rewritten for the bench.

A pure-Python copy of what the reference does (docs/spec.md sections 1-3),
in fpcheck's own words, including its hot-path cache: with
``use_cache=True`` it walks the runtime, stats every selected file, and
returns the digest stored in a JSON cache file beside the runtime when the
tree's signature (file count, total size, newest mtime) is unchanged. That
signature misses a rename that keeps all three, which is why fpcheck's
``status`` does not use it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import List, Optional, Tuple

EXCLUDED = frozenset(
    {
        "scripts",
        "tests",
        "migrations",
        "crons",
        "__pycache__",
        "node_modules",
        ".git",
        "versions",
    }
)


def runtime_files(root: Path) -> List[Path]:
    """Every ``.py`` under ``root`` outside excluded folders, in hash order."""
    if not root.is_dir():
        return []
    kept = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if EXCLUDED.isdisjoint(rel.parts):
            kept.append((rel.as_posix(), path))
    kept.sort(key=lambda item: item[0])
    return [path for _, path in kept]


def _signature(root: Path, files: List[Path]) -> Optional[Tuple[int, int, int]]:
    total, newest = 0, 0
    for path in files:
        try:
            st = path.stat()
        except OSError:
            return None
        total += st.st_size
        newest = max(newest, st.st_mtime_ns)
    return (len(files), total, newest)


def _cache_file(root: Path) -> Path:
    return root.parent / (root.name + ".fingerprint-cache.json")


def compute_mcp_runtime_fingerprint(root: Path, *, use_cache: bool = False) -> str:
    """The 64-hex fingerprint of ``root``, ``""`` when unavailable."""
    root = Path(root)
    files = runtime_files(root)
    if not files:
        return ""
    signature = _signature(root, files) if use_cache else None
    if signature is not None:
        try:
            cached = json.loads(_cache_file(root).read_text())
            if tuple(cached["signature"]) == signature:
                return str(cached["digest"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode("utf-8"))
        digest.update(b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            return ""
        digest.update(b"\n")
    hexdigest = digest.hexdigest()
    if signature is not None:
        tmp = _cache_file(root).with_suffix(".tmp")
        tmp.write_text(json.dumps({"signature": list(signature), "digest": hexdigest}))
        os.replace(tmp, _cache_file(root))
    return hexdigest

#!/usr/bin/env python3
"""The plain Python hash of a checked-out runtime root (docs/spec.md
sections 1-2, as the reference gate does it): rglob("*.py"), drop excluded
segments, sort, SHA-256 of `path NUL bytes LF`.

    python3 pyhash.py ROOT
"""
import hashlib
import sys
from pathlib import Path

EXCLUDE = {"scripts", "tests", "migrations", "crons", "__pycache__", "node_modules", ".git", "versions"}


def fingerprint(root):
    root = Path(root)
    files = []
    for p in root.rglob("*.py"):
        rel = p.relative_to(root)
        if any(part in EXCLUDE for part in rel.parts):
            continue
        files.append((rel.as_posix(), p))
    files.sort()
    h = hashlib.sha256()
    for rel, p in files:
        h.update(rel.encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\n")
    return h.hexdigest() if files else ""


if __name__ == "__main__":
    print(fingerprint(sys.argv[1]))

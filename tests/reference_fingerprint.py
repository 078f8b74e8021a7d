#!/usr/bin/env python3
"""Reference runtime fingerprint: docs/spec.md sections 1-3, the Python way.

This is the oracle fpcheck's tests compare against, so it does what the
reference gate does with the standard library and nothing cleverer:

- the selection is what ``Path(R).rglob("*" + ext)`` yields for each
  extension (Python 3.11: symbolic links to directories are not descended,
  and entries of any kind whose name matches are yielded, directories
  included), minus every path with a segment equal to an excluded name;
- paths relative to R, with ``/`` separators, are sorted by code point;
- the digest is SHA-256 over ``path NUL bytes LF`` per file, the bytes read
  through the path (so symbolic links are followed);
- anything the gate could not hash makes the fingerprint unavailable.

Usage:
    python3 tests/reference_fingerprint.py ROOT [--exclude a,b,...] [--ext .py,...] [--list]

Prints the lowercase hex digest, or an empty line when the fingerprint is
unavailable (the reason goes to stderr). With --list, the selected paths
follow, one per line, in hash order (none when unavailable). The exit
status is 0 either way; 2 for usage errors.
"""

import argparse
import hashlib
import os
import stat
import sys
from pathlib import Path

DEFAULT_EXCLUDE = (
    "scripts",
    "tests",
    "migrations",
    "crons",
    "__pycache__",
    "node_modules",
    ".git",
    "versions",
)
DEFAULT_EXTENSIONS = (".py",)


class Unavailable(Exception):
    """The gate's empty string, with the reason it has none."""


def select(root, exclude, extensions):
    """The selected files as (relative posix path, Path), in hash order."""
    if not root.is_dir():  # follows a link, like rglob itself
        raise Unavailable(f"{root} does not exist or is not a directory")
    found = set()
    for ext in extensions:
        found.update(root.rglob("*" + ext))
    selected = []
    for path in found:
        rel = path.relative_to(root)
        if any(part in exclude for part in rel.parts):
            continue
        selected.append((rel.as_posix(), path))
    if not selected:
        raise Unavailable(f"no {' or '.join(extensions)} files under {root}")
    for rel, _ in selected:
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            raise Unavailable(f"{os.fsencode(rel)!r} is not valid UTF-8") from None
    selected.sort(key=lambda item: item[0])
    return selected


def fingerprint(root, exclude=DEFAULT_EXCLUDE, extensions=DEFAULT_EXTENSIONS):
    """(hex digest, selected relative paths); raises Unavailable."""
    selected = select(root, exclude, extensions)
    digest = hashlib.sha256()
    for rel, path in selected:
        try:
            # Through links to the final target: a directory, a broken or
            # looping link, or a FIFO/socket/device cannot be hashed.
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
                raise Unavailable(f"{rel} is {kind}")
            data = path.read_bytes()
        except OSError as e:
            raise Unavailable(f"{rel}: {e.strerror}") from None
        digest.update(rel.encode("utf-8"))
        digest.update(b"\0")
        digest.update(data)
        digest.update(b"\n")
    return digest.hexdigest(), [rel for rel, _ in selected]


def names(text):
    """A comma-separated list; an empty string is the empty list."""
    return tuple(part for part in text.split(",") if part)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="the runtime root directory (R)")
    parser.add_argument(
        "--exclude",
        type=names,
        default=DEFAULT_EXCLUDE,
        help="comma-separated excluded names (replaces the defaults)",
    )
    parser.add_argument(
        "--ext",
        type=names,
        default=DEFAULT_EXTENSIONS,
        help="comma-separated extensions (replaces .py)",
    )
    parser.add_argument(
        "--list", action="store_true", help="also print the selected paths"
    )
    args = parser.parse_args(argv)

    out = sys.stdout.buffer
    try:
        digest, files = fingerprint(Path(args.root), args.exclude, args.ext)
    except Unavailable as e:
        print(f"unavailable: {e}", file=sys.stderr)
        out.write(b"\n")
        return 0
    out.write(digest.encode("ascii") + b"\n")
    if args.list:
        for rel in files:
            out.write(rel.encode("utf-8") + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

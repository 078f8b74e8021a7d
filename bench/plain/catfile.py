#!/usr/bin/env python3
"""(b) The plain way without a checkout: `git ls-tree -r -z` of the runtime
root, then `git cat-file --batch` of the selected blobs, streamed into
hashlib (a file's bytes are never held whole in memory).

    python3 catfile.py REPO REV ROOT [--rss]

--rss prints, to stderr, this process's peak RSS and its largest child's
(git cat-file), in KiB.
"""
import hashlib
import resource
import subprocess
import sys
import threading

EXCLUDE = {b"scripts", b"tests", b"migrations", b"crons", b"__pycache__", b"node_modules", b".git", b"versions"}


def selection(repo, rev, root):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "-z", f"{rev}:{root}"],
                         check=True, stdout=subprocess.PIPE).stdout
    files = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid = meta.split(b" ")
        if not path.endswith(b".py") or any(s in EXCLUDE for s in path.split(b"/")):
            continue
        if kind != b"blob" or mode == b"120000":
            raise SystemExit(f"{path!r}: not a plain file (this script does not follow links)")
        files.append((path, oid))
    files.sort()
    return files


def fingerprint(repo, rev, root):
    files = selection(repo, rev, root)
    if not files:
        return ""
    p = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 16)

    def feed():
        p.stdin.write(b"".join(oid + b"\n" for _, oid in files))
        p.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    out = p.stdout
    h = hashlib.sha256()
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    for path, oid in files:
        header = out.readline().split()
        size = int(header[2])
        h.update(path)
        h.update(b"\0")
        while size:
            n = out.readinto(view[: min(size, len(buf))])
            h.update(view[:n])
            size -= n
        out.read(1)  # the LF after the object
        h.update(b"\n")
    p.wait()
    return h.hexdigest()


if __name__ == "__main__":
    print(fingerprint(sys.argv[1], sys.argv[2], sys.argv[3]))
    if "--rss" in sys.argv:
        me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"rss {me} {child}", file=sys.stderr)

#!/usr/bin/env python3
"""Monorepo benchmark (issue 16): every runtime in one run vs the largest
runtime alone, peak memory vs the number of runtimes, and the everyday
"selection unchanged" range vs `git diff --quiet` on the same pathspec.

    python3 bench/monorepo.py [--files N] [--runs R] [--fpcheck BIN] [--dir DIR]

The repository is generated once with `git fast-import` (deterministic:
fixed seed and dates) under DIR (default $FPCHECK_BENCH_DIR or
/tmp/fpcheck-bench)/monorepo-N. Five runtimes with overlapping roots:

    a = svc/a, b = svc/b, c = svc/c, shared = shared, platform = svc
    (platform holds a, b and c: the largest runtime)

Tags: v1 (base), v2 (3 files of svc/a and 1 of shared changed, versions
bumped), v3 (README only: every runtime's selection unchanged).
Times are medians of R runs (wall clock), memory the peak RSS of the run
(/usr/bin/time). Prints a Markdown table.

The limit for "every runtime's fingerprint" is that of their union: each
distinct (path, blob) selected by any runtime at v1 or v2, inflated once
(`git cat-file --batch` of their ids to /dev/null) plus SHA-256 of their
byte stream once (hashlib, in memory, timed inside this process).
"""

import argparse
import hashlib
import os
import random
import statistics
import subprocess
import sys
import time

RUNTIMES = {"a": "svc/a", "b": "svc/b", "c": "svc/c", "shared": "shared", "platform": "svc"}
EXCLUDE = {"scripts", "tests", "migrations", "crons", "__pycache__", "node_modules", ".git", "versions"}
GEN = "fpcheck-monorepo-gen-1"


def lines_pool(rng, n=5000):
    words = ["self", "data", "value", "result", "config", "request", "items",
             "name", "path", "key", "node", "ctx", "args", "state", "cache"]
    out = []
    for i in range(n):
        w = rng.sample(words, 3)
        out.append(f"    {w[0]}_{i % 97} = {w[1]}.get('{w[2]}', {rng.randint(0, 10**6)})\n")
    return out


def layout(n_files):
    """(path, kind) for every file: 60% runtime code under svc/{a,b,c},
    10% under shared/, the rest tests, docs and data."""
    paths = []
    per = {"svc/a": 0.2, "svc/b": 0.2, "svc/c": 0.2, "shared": 0.1}
    for root, share in per.items():
        k = int(n_files * share)
        for i in range(k):
            paths.append(f"{root}/pkg{i // 200:04d}/mod{i % 200:03d}.py")
    rest = n_files - len(paths)
    for i in range(rest):
        if i % 3 == 0:
            paths.append(f"svc/a/tests/t{i // 200:04d}/test_{i % 200:03d}.py")
        elif i % 3 == 1:
            paths.append(f"docs/d{i // 200:04d}/page{i % 200:03d}.md")
        else:
            paths.append(f"data/x{i // 200:04d}/f{i % 200:03d}.json")
    return paths


def content(rng, pool, path, salt=""):
    n = rng.randint(10, 40)
    body = "".join(rng.choice(pool) for _ in range(n))
    return f"# {path} {salt}\ndef f():\n{body}".encode()


def generate(target, n_files):
    stamp = os.path.join(target, ".done")
    if os.path.exists(stamp) and open(stamp).read() == f"{GEN} {n_files}":
        return
    subprocess.run(["rm", "-rf", target], check=True)
    os.makedirs(target)
    subprocess.run(["git", "init", "-q", target], check=True)
    rng = random.Random(f"monorepo:{n_files}")
    pool = lines_pool(rng)
    paths = layout(n_files)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=target,
                            stdin=subprocess.PIPE)
    out = proc.stdin

    def data(b):
        out.write(f"data {len(b)}\n".encode())
        out.write(b)
        out.write(b"\n")

    def commit(n, msg, files, tag):
        out.write(b"commit refs/heads/main\n")
        out.write(f"committer Bench <b@example.com> {1_600_000_000 + n} +0000\n".encode())
        data(msg.encode())
        for p, b in files:
            out.write(f"M 100644 inline {p}\n".encode())
            data(b)
        out.write(f"reset refs/tags/{tag}\nfrom refs/heads/main\n\n".encode())

    toml = "".join(f'[runtimes.{n}]\nroot = "{r}"\n' for n, r in RUNTIMES.items())
    base = [(p, content(rng, pool, p)) for p in paths]
    base += [("fpcheck.toml", toml.encode()), ("README.md", b"# mono\n"),
             ("version.json", b'{"version": "1.0.0"}\n')]
    commit(1, "v1", base, "v1")
    changed = [p for p in paths if p.startswith("svc/a/pkg")][:3] + \
              [p for p in paths if p.startswith("shared/")][:1]
    commit(2, "v2", [(p, content(rng, pool, p, "v2")) for p in changed] +
           [("version.json", b'{"version": "1.1.0"}\n')], "v2")
    commit(3, "v3", [("README.md", b"# mono, docs only\n")], "v3")
    out.close()
    if proc.wait() != 0:
        sys.exit("git fast-import failed")
    subprocess.run(["git", "-C", target, "repack", "-adq"], check=True)
    with open(stamp, "w") as f:
        f.write(f"{GEN} {n_files}")


def timed(cmd, cwd, runs, ok=(0, 1)):
    """Median wall seconds and max peak RSS (MiB) over `runs` runs."""
    walls, rss = [], []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, cwd=cwd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls.append(time.perf_counter() - t)
        if r.returncode not in ok:
            sys.exit(f"{cmd} failed ({r.returncode}): {r.stderr.decode()[-500:]}")
        rss.append(int(r.stderr.decode().strip().splitlines()[-1]) / 1024)
    return statistics.median(walls), max(rss)


def union(repo, revs):
    """Distinct (blob id, path) of every runtime's selection at `revs`."""
    out = set()
    for rev in revs:
        ls = subprocess.run(["git", "-C", repo, "ls-tree", "-r", rev, "--", *sorted(set(RUNTIMES.values()))],
                            check=True, capture_output=True, text=True).stdout
        for line in ls.splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, oid = meta.split()
            if kind == "blob" and path.endswith(".py") and not EXCLUDE & set(path.split("/")):
                out.add((oid, path))
    return sorted(out, key=lambda t: t[1])


def root_trees(repo, rev, root, workdir):
    """(file of ids, count, inflated bytes) of the trees a scan of `root`
    at `rev` reads: the root's and every subtree's outside excluded names."""
    ls = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "-t", "-z", rev, "--", root],
                        check=True, capture_output=True).stdout
    ids = [subprocess.run(["git", "-C", repo, "rev-parse", f"{rev}:{root}"], check=True,
                          capture_output=True, text=True).stdout.strip()]
    for rec in ls.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid = meta.split()
        parts = path.decode().split("/")
        if kind == b"tree" and path.decode().startswith(root + "/") and not EXCLUDE & set(parts):
            ids.append(oid.decode())
    out = os.path.join(workdir, f"trees-{rev}.ids")
    with open(out, "w") as f:
        f.writelines(f"{i}\n" for i in ids)
    sizes = subprocess.run(["git", "-C", repo, "cat-file", "--batch-check=%(objectsize)"], input="".join(f"{i}\n" for i in ids),
                           check=True, capture_output=True, text=True).stdout.split()
    return out, len(ids), sum(int(x) for x in sizes)


def union_limit(repo, revs, runs, workdir):
    """(seconds to inflate, seconds to hash, files, bytes) of the union."""
    files = union(repo, revs)
    ids = os.path.join(workdir, f"union-{'-'.join(revs)}.ids")
    with open(ids, "w") as f:
        f.writelines(f"{oid}\n" for oid, _ in files)
    inflate, _ = timed(["sh", "-c", f'git -C "{repo}" cat-file --batch < "{ids}" > /dev/null'], repo, runs)
    # The byte stream, as a fingerprint hashes it (path NUL bytes LF).
    proc = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input=open(ids, "rb").read(),
                          check=True, capture_output=True)
    data, pos, stream = proc.stdout, 0, bytearray()
    for _, path in files:
        nl = data.index(b"\n", pos)
        size = int(data[pos:nl].split()[2])
        stream += path.encode() + b"\0" + data[nl + 1:nl + 1 + size] + b"\n"
        pos = nl + 1 + size + 1
    hashes = []
    for _ in range(max(runs, 3)):
        t = time.perf_counter()
        hashlib.sha256(stream).hexdigest()
        hashes.append(time.perf_counter() - t)
    return inflate, statistics.median(hashes), len(files), len(stream)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fpcheck", default="target/release/fpcheck")
    ap.add_argument("--dir", default=os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench"))
    a = ap.parse_args()
    fp = os.path.abspath(a.fpcheck)
    repo = os.path.join(a.dir, f"monorepo-{a.files}")
    t = time.perf_counter()
    generate(repo, a.files)
    # fast-import writes refs/heads/main; HEAD must name it for the default range.
    subprocess.run(["git", "-C", repo, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    print(f"repository: {repo} ({a.files} files, generated/checked in {time.perf_counter() - t:.1f}s)\n")
    rows = []

    def row(label, cmd, cwd=repo, ok=(0, 1)):
        w, m = timed(cmd, cwd, a.runs, ok)
        rows.append((label, w, m))
        return w, m

    names = list(RUNTIMES)
    all_w, _ = row("all 5 runtimes, v1..v2, no cache", [fp, "v1..v2", "--no-cache", "--format", "json"])
    big_w, _ = row("platform alone (largest), v1..v2, no cache",
                   [fp, "v1..v2", "--no-cache", "--format", "json", "--runtime", "platform"])
    for k in range(1, 6):
        sel = []
        for n in names[:k]:
            sel += ["--runtime", n]
        row(f"{k} runtime(s) ({', '.join(names[:k])}), v1..v2, no cache",
            [fp, "v1..v2", "--no-cache", "--format", "json"] + sel)
    # Selection unchanged (v2..v3: README only).
    cold_w, _ = row("runtime a, v2..v3 (unchanged), cold (--no-cache)",
                    [fp, "v2..v3", "--no-cache", "--format", "json", "--runtime", "a"])
    subprocess.run([fp, "v2..v3", "--format", "json", "--runtime", "a"], cwd=repo,
                   stdout=subprocess.DEVNULL, check=True)
    warm_w, _ = row("runtime a, v2..v3 (unchanged), warm (cache)",
                    [fp, "v2..v3", "--format", "json", "--runtime", "a"])
    git_w, _ = row("git diff --quiet v2 v3 -- svc/a", ["git", "diff", "--quiet", "v2", "v3", "--", "svc/a"])
    # What any correct cold answer must read: every tree below the root
    # outside excluded folders (only they show whether a selected link
    # leaves the root), here inflated by git itself.
    trees = root_trees(repo, "v3", "svc/a", a.dir)
    row(f"floor: inflate the {trees[1]} trees below svc/a (git cat-file --batch, {trees[2] / 2**20:.1f} MiB)",
        ["sh", "-c", f'git -C "{repo}" cat-file --batch < "{trees[0]}" > /dev/null'])
    row("git ls-tree -r v3 -- svc/a", ["git", "ls-tree", "-r", "v3", "--", "svc/a"])
    all_cold, _ = row("all 5, v2..v3 (unchanged), cold", [fp, "v2..v3", "--no-cache", "--format", "json"])
    subprocess.run([fp, "v2..v3", "--format", "json"], cwd=repo, stdout=subprocess.DEVNULL, check=True)
    all_warm, _ = row("all 5, v2..v3 (unchanged), warm", [fp, "v2..v3", "--format", "json"])
    git_all, _ = row("git diff --quiet v2 v3 -- svc shared", ["git", "diff", "--quiet", "v2", "v3", "--", "svc", "shared"])
    # Process start-up: a range whose ends are the same commit.
    row("start-up: runtime a, v3..v3, cold", [fp, "v3..v3", "--no-cache", "--format", "json", "--runtime", "a"])
    row("start-up: default range (latest tag..HEAD), runtime a, cold", [fp, "--no-cache", "--format", "json", "--runtime", "a"])
    inflate, hashing, n_union, bytes_union = union_limit(repo, ["v1", "v2"], a.runs, a.dir)
    rows.append((f"limit: inflate the union once (git cat-file --batch, {n_union} blobs)", inflate, float("nan")))
    rows.append((f"limit: SHA-256 of the union's stream once (hashlib, {bytes_union / 2**20:.0f} MiB)", hashing, float("nan")))

    print("| job | median wall (s) | peak RSS (MiB) |\n|---|---|---|")
    for label, w, m in rows:
        mem = "" if m != m else f"{m:.0f}"
        print(f"| {label} | {w:.3f} | {mem} |")
    print()
    print(f"- all 5 / platform alone: {all_w / big_w:.2f}x (target 1.3x)")
    print(f"- all 5, v1..v2, no cache / limit of the union (inflate + hash): {all_w / (inflate + hashing):.2f}x (target 1.2x);"
          f" / max(inflate, hash): {all_w / max(inflate, hashing):.2f}x")
    print(f"- unchanged, runtime a, cold / git diff --quiet: {cold_w / git_w:.1f}x (target 2x)")
    print(f"- unchanged, runtime a, warm / git diff --quiet: {warm_w / git_w:.1f}x (target 1.5x)")
    print(f"- unchanged, all 5, cold / warm / git diff --quiet: {all_cold / git_all:.1f}x / {all_warm / git_all:.1f}x")


if __name__ == "__main__":
    main()

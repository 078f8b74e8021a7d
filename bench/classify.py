#!/usr/bin/env python3
"""The cost of classification in `fpcheck history` (issue 17: at most 1.5x).

Builds (once) a repository of real Python files -- a deterministic sample of
the machine's standard library under src/ -- with RELEASES version tags;
each release edits 1 to 3 files, some with comments only, some with code.
Then times `fpcheck history --no-cache` with and without --no-classify,
alternating, and prints medians and the ratio.

    python3 bench/classify.py --fpcheck target/release/fpcheck
    python3 bench/classify.py --fpcheck ... --releases 600 --files 300 --runs 7

Not part of `cargo test`. The repository goes to $FPCHECK_BENCH_DIR
(default /tmp/fpcheck-bench)/classify-<releases>-<files>.
"""

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time


def git(repo, *args, env=None):
    subprocess.run(["git", "-C", repo, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sample(n, rng):
    root = sysconfig.get_path("stdlib")
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("site-packages", "__pycache__", "test", "tests"))
        for name in sorted(names):
            p = os.path.join(d, name)
            if name.endswith(".py") and 2_000 < os.path.getsize(p) < 64_000:
                files.append(p)
    rng.shuffle(files)
    out = []
    for p in files:
        try:
            src = open(p, encoding="utf-8").read()
            compile(src, p, "exec")
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        out.append((os.path.relpath(p, root).replace(os.sep, "_"), src))
        if len(out) == n:
            break
    return out


def build(path, releases, nfiles, seed=17):
    if os.path.exists(os.path.join(path, ".done")):
        return
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.join(path, "src"))
    rng = random.Random(seed)
    files = dict(sample(nfiles, rng))
    names = sorted(files)
    git(path, "init", "-q")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@b", GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    for r in range(releases):
        if r > 0:
            for name in rng.sample(names, rng.randint(1, 3)):
                roll = rng.random()
                if roll < 0.4:
                    files[name] = f"# release {r}: comments only\n" + files[name]
                elif roll < 0.5:
                    files[name] = files[name].replace("\n\n", "\n\n\n", 1)
                else:
                    files[name] += f"\n_release_{r} = {r}\n"
        for name in names:
            with open(os.path.join(path, "src", name), "w", encoding="utf-8") as f:
                f.write(files[name])
        with open(os.path.join(path, "version.json"), "w") as f:
            json.dump({"version": f"1.{r}.0"}, f)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"1.{r}.0", env=env)
        git(path, "tag", f"v1.{r}.0")
    git(path, "gc", "-q")
    open(os.path.join(path, ".done"), "w").close()


def timed(argv):
    """Wall-clock seconds, CPU seconds (user + system) and the JSON output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fpcheck", required=True)
    ap.add_argument("--releases", type=int, default=400)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    base = os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench")
    repo = os.path.join(base, f"classify-{args.releases}-{args.files}")
    t0 = time.perf_counter()
    build(repo, args.releases, args.files)
    print(f"repository {repo} ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    cmd = [args.fpcheck, "history", "--repo", repo, "--format", "json", "--no-cache",
           "--threads", str(args.threads)]
    on, off, on_cpu, off_cpu = [], [], [], []
    timed(cmd)  # warm the page cache
    # Alternated in one run, so that other load on the machine hits both.
    for _ in range(args.runs):
        t, c, plain = timed(cmd + ["--no-classify"])
        off.append(t)
        off_cpu.append(c)
        t, c, classified = timed(cmd)
        on.append(t)
        on_cpu.append(c)
    s = classified["summary"]
    a, b = statistics.median(off), statistics.median(on)
    ca, cb = statistics.median(off_cpu), statistics.median(on_cpu)
    print(f"history of {s['releases']} releases, {args.files} runtime files: "
          f"{s['restarts_forced']} restarts, {s['avoidable_restarts']} avoidable")
    print(f"  --no-classify: median {a * 1000:.0f} ms (min {min(off) * 1000:.0f}), CPU {ca * 1000:.0f} ms")
    print(f"  classified:    median {b * 1000:.0f} ms (min {min(on) * 1000:.0f}), CPU {cb * 1000:.0f} ms")
    print(f"  ratio {b / a:.2f}x wall, {cb / ca:.2f}x CPU (target <= 1.5x)")
    assert plain["summary"]["avoidable_restarts"] is None


if __name__ == "__main__":
    main()

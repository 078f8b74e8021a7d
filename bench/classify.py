#!/usr/bin/env python3
"""The cost of classification in `fpcheck history` (issue 17: at most 1.5x).

Builds (once) a repository of real Python files -- a deterministic sample of
the machine's standard library under src/ -- with RELEASES version tags;
each release edits 1 to 3 files, some with comments only, some with code.
Then times `fpcheck history` with and without --no-classify, cold
(`--no-cache`) and warm (the persistent caches filled by a first run),
interleaved run after run, and prints medians and the ratios as a Markdown
table (docs/classify.md keeps the figures).

    python3 bench/classify.py --fpcheck target/release/fpcheck
    python3 bench/classify.py --fpcheck ... --releases 600 --files 300 --runs 7
    python3 bench/classify.py --fpcheck old/fpcheck --fpcheck new/fpcheck --modes cold

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
    ap.add_argument("--fpcheck", required=True, action="append",
                    help="the binary; repeat it to compare builds (all runs interleaved)")
    ap.add_argument("--releases", type=int, default=400)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--modes", default="cold,warm",
                    help="cold (--no-cache: nothing remembered), warm (the caches in .git/fpcheck, "
                         "filled by a first run), or both")
    args = ap.parse_args()
    base = os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench")
    repo = os.path.join(base, f"classify-{args.releases}-{args.files}")
    t0 = time.perf_counter()
    build(repo, args.releases, args.files)
    print(f"repository {repo} ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    modes = args.modes.split(",")
    # Every (binary, mode, classified?) command, run once per round, in
    # turn, so that other load on the machine hits them all alike.
    cmds = {}
    for b, binary in enumerate(args.fpcheck):
        for mode in modes:
            cmd = [binary, "history", "--repo", repo, "--format", "json", "--threads", str(args.threads)]
            if mode == "cold":
                cmd.append("--no-cache")
            cmds[(b, mode, False)] = cmd + ["--no-classify"]
            cmds[(b, mode, True)] = cmd
    # The caches are filled (the first warm run writes them) and the page
    # cache warmed, outside the timings.
    shutil.rmtree(os.path.join(repo, ".git", "fpcheck"), ignore_errors=True)
    for cmd in cmds.values():
        timed(cmd)
    wall = {k: [] for k in cmds}
    cpu = {k: [] for k in cmds}
    out = {}
    for _ in range(args.runs):
        for k, cmd in cmds.items():
            t, c, j = timed(cmd)
            wall[k].append(t)
            cpu[k].append(c)
            out[k] = j
    s = out[(0, modes[0], True)]["summary"]
    print(f"history of {s['releases']} releases, {args.files} runtime files: "
          f"{s['restarts_forced']} restarts, {s['avoidable_restarts']} avoidable; "
          f"{args.runs} runs each, medians; load average {os.getloadavg()[0]:.1f}")
    print("| build | mode | `--no-classify` | classified | ratio (wall) | ratio (CPU) | parses |")
    print("|---|---|---:|---:|---:|---:|---:|")
    med = statistics.median
    for b, binary in enumerate(args.fpcheck):
        for mode in modes:
            off, on = (b, mode, False), (b, mode, True)
            assert out[off]["summary"]["avoidable_restarts"] is None
            assert out[on]["summary"] == s, "every build and mode answers the same"
            flags = [u["avoidable"] for u in out[on]["releases"]]
            assert flags == [u["avoidable"] for u in out[(0, modes[0], True)]["releases"]]
            parses = out[on]["stats"].get("classify_parsed", "?")
            print(f"| {binary} | {mode} | {med(wall[off]):.2f} s, CPU {med(cpu[off]):.2f} s "
                  f"| {med(wall[on]):.2f} s, CPU {med(cpu[on]):.2f} s "
                  f"| {med(wall[on]) / med(wall[off]):.2f}x | {med(cpu[on]) / med(cpu[off]):.2f}x | {parses} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""fpcheck's benchmark suite: every job of issue 8, timed as whole processes
side by side with the plain way, medians and ratios, checked against the
targets. Run it through `bench/run`, which builds the binaries first.

    bench/bench.py --fpcheck BIN --limit BIN [--dir DIR] [--runs N] [--only GROUP ...]
                   [--real REPO] [--quick] [--no-wait] [--out bench/RESULTS.md]

`--real REPO` adds the group `real`: the history of a real project (the
reference project, cloned), cold and warm, with and without the
classification of avoidable restarts, beside one `git cat-file --batch`
process reading every runtime blob of its release tags once.

Every command's output is checked (all ways must print the same
fingerprint), so a fast wrong answer cannot win.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PLAIN = os.path.join(HERE, "plain")
EXCLUDE = ["scripts", "tests", "migrations", "crons", "__pycache__", "node_modules", ".git", "versions"]


# ---------------------------------------------------------------- machine


def cpu_busy(seconds=1.0):
    """Share of CPU time not idle over `seconds` (while this script sleeps)."""
    def read():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = read()
    time.sleep(seconds)
    t1, i1 = read()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_quiet(args, what):
    """Waits (up to --max-wait s) until the other processes leave the CPUs alone."""
    if args.no_wait:
        return cpu_busy(0.5)
    deadline = time.time() + args.max_wait
    while True:
        busy = cpu_busy(1.0)
        if busy < 0.10 or time.time() > deadline:
            if busy >= 0.10:
                log(f"  [{what}] machine still busy ({busy:.0%}) after {args.max_wait} s; measuring anyway")
            return busy
        log(f"  [{what}] waiting for a quiet machine (busy {busy:.0%}, load {os.getloadavg()[0]:.2f})")
        time.sleep(10)


def machine():
    model = "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = re.search(r"Model name:\s*(.+)", out).group(1).strip()
    except Exception:
        pass
    with open("/proc/meminfo") as f:
        mem_kb = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1))
    ver = lambda cmd: subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--", "../src", "../Cargo.toml"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": model,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "git": ver(["git", "--version"]),
        "python": platform.python_version(),
        "rustc": ver(["rustc", "--version"]),
        "fpcheck": commit + (" + uncommitted changes in src/" if dirty else ""),
    }


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- timing


class Cmd:
    def __init__(self, label, argv, expect=None, before=None, runs=None, parse=None, stdin=None):
        self.label, self.argv, self.expect = label, argv, expect
        self.before, self.runs, self.parse, self.stdin = before, runs, parse, stdin
        # Slow commands (their own, smaller run count) skip the warm-up run:
        # the others have warmed the page cache for the same repository.
        self.warm_up = runs is None
        self.times = []
        self.cpu = []  # user + system seconds of the process and its children

    def run_once(self):
        if self.before:
            self.before()
        stdin = open(self.stdin, "rb") if self.stdin else subprocess.DEVNULL
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        p = subprocess.run(self.argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if self.stdin:
            stdin.close()
        if p.returncode not in (0, 1):
            raise SystemExit(f"{self.label}: exit {p.returncode}\n{' '.join(self.argv)}\n{p.stderr.decode()[-2000:]}")
        out = p.stdout.decode(errors="replace")
        got = self.parse(out) if self.parse else out.strip()
        if self.expect is not None and got != self.expect:
            raise SystemExit(f"{self.label}: printed {got!r}, expected {self.expect!r}\n{' '.join(self.argv)}")
        self.times.append(dt)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return dt

    @property
    def median(self):
        return statistics.median(self.times)


def twin(args, c):
    """The same command run by the build `--compare` names, or None when `c`
    does not run this build's fpcheck."""
    if not args.compare or not c.argv or c.argv[0] != args.fpcheck:
        return None
    return Cmd(c.label, [args.compare, *c.argv[1:]], c.expect, c.before, c.runs, c.parse, c.stdin)


def time_group(args, name, cmds, runs):
    """Runs the commands interleaved, round after round, so that drift in the
    machine's speed hits all of them alike. A warm-up round is not timed.
    With `--compare BIN`, each fpcheck command runs beside its twin on BIN in
    the same rounds (the twins are kept apart: groups read `cmds` by place)."""
    busy = wait_quiet(args, name)
    twins = [(c, t) for c in cmds if (t := twin(args, c)) is not None]
    timed = cmds + [t for _, t in twins]
    log(f"{name}: {len(timed)} commands x {runs} runs (busy {busy:.0%})")
    for c in timed:
        if c.warm_up:
            c.run_once()
            c.times.clear()
    for i in range(runs):
        for c in cmds:
            if i < (c.runs or runs):
                c.run_once()
                t = twin_of(twins, c)
                if t is not None:
                    t.run_once()
    for c in cmds:
        log(f"  {c.label:<58} {fmt(c.median)}  (min {fmt(min(c.times))}, {len(c.times)} runs)")
    for c, t in twins:
        log(f"  {c.label:<58} {fmt(t.median)}  --compare build: this / it = {c.median / t.median:.3f}x wall, "
            f"{statistics.median(c.cpu) / max(statistics.median(t.cpu), 1e-9):.3f}x CPU")
    return {"group": name, "busy_before": busy, "busy_after": cpu_busy(0.5), "cmds": cmds, "twins": twins}


def twin_of(twins, c):
    return next((t for k, t in twins if k is c), None)


def fmt(s):
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    return f"{s:.3f} s"


# ---------------------------------------------------------------- repositories


def git(repo, *a, text=True):
    return subprocess.run(["git", "-C", repo, *a], check=True, capture_output=True, text=text).stdout


def selection(repo, rev, root="src"):
    """(path, id, size) of the runtime files at rev, in hash order."""
    out = git(repo, "ls-tree", "-r", "-l", "-z", f"{rev}:{root}", text=False)
    files = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid, size = meta.split()
        parts = path.decode().split("/")
        if path.endswith(b".py") and not any(p in EXCLUDE for p in parts):
            files.append((path.decode(), oid.decode(), int(size)))
    files.sort(key=lambda f: f[0].encode())
    return files


def tags(repo):
    return git(repo, "tag", "--list", "v*", "--sort=v:refname").split()


def pathspec(root="src"):
    """The runtime selection as git pathspecs: what `git diff --quiet` needs."""
    return [f":(glob){root}/**/*.py"] + [f":(exclude,glob){root}/**/{n}/**" for n in EXCLUDE]


def repo_shape(repo, rev):
    files = selection(repo, rev)
    pack = sum(os.path.getsize(os.path.join(repo, "objects/pack", f))
               for f in os.listdir(os.path.join(repo, "objects/pack")) if f.endswith(".pack"))
    return {"files": len(files), "bytes": sum(f[2] for f in files), "pack": pack, "tags": len(tags(repo))}


# ---------------------------------------------------------------- jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fpcheck", required=True)
    ap.add_argument("--limit", required=True)
    ap.add_argument("--dir", default=os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench"))
    ap.add_argument("--runs", type=int, default=11, help="timed runs per fast command (median)")
    ap.add_argument("--slow-runs", type=int, default=3, help="timed runs per slow command (history loop, checkouts)")
    ap.add_argument("--only", nargs="*", help="groups: small medium large range history dir memory attrs")
    ap.add_argument("--quick", action="store_true", help="3 runs, 1 slow run; a smoke test, not for RESULTS")
    ap.add_argument("--no-wait", action="store_true", help="do not wait for a quiet machine")
    ap.add_argument("--max-wait", type=int, default=900, help="seconds to wait for a quiet machine per group")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--real", help="a real repository (a clone of the reference project): adds the group `real`")
    ap.add_argument("--before", help="group attrs: another fpcheck build, timed beside this one on (a) and (b)")
    ap.add_argument("--compare", help="another fpcheck build: every fpcheck command of every group runs on it too, "
                    "in the same rounds, and the log and RESULTS give this build's time over its (a redesign: "
                    "ratios within noise)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.slow_runs = 3, 1
    only = set(args.only or ["small", "medium", "large", "range", "history", "dir", "memory", "attrs"]
               + (["real"] if args.real else []))
    if "real" in only and not args.real:
        raise SystemExit("the group real needs --real REPO")
    F, L, D = args.fpcheck, args.limit, args.dir
    # Only the repositories the chosen groups read are generated.
    needs = {"small": {"small", "range", "history"}, "medium": {"medium", "attrs"}, "large": {"large", "memory"},
             "rt300": {"dir"}, "rt20k": {"dir"}}
    wanted = [n for n, groups in needs.items() if groups & only]
    if wanted:
        subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), "--dir", D, *wanted],
                       check=True, stdout=subprocess.DEVNULL)
    repos = {n: os.path.join(D, f"{n}.git") for n in ("small", "medium", "large")}
    info = machine()
    results, targets, memory, shapes = [], [], [], {}
    N, S = args.runs, args.slow_runs

    def fp_cmds(repo, rev, expect, slow_a=False):
        return [
            Cmd("fpcheck fingerprint", [F, "fingerprint", "--repo", repo, "--rev", rev], expect),
            Cmd("(a) git archive, tar -x, Python hash", ["sh", f"{PLAIN}/archive.sh", repo, rev, "src"], expect,
                runs=S if slow_a else None),
            Cmd("(b) git ls-tree + cat-file --batch -> hashlib", [sys.executable, f"{PLAIN}/catfile.py", repo, rev, "src"], expect),
        ]

    def expected(repo, rev):
        return subprocess.run([F, "fingerprint", "--repo", repo, "--rev", rev], check=True,
                              capture_output=True, text=True).stdout.strip()

    # -- fingerprint at one tag: small, medium (whole process) ----------
    for name in ("small", "medium"):
        if name not in only:
            continue
        repo = repos[name]
        rev = tags(repo)[-1]
        shapes[name] = repo_shape(repo, rev)
        g = time_group(args, f"fingerprint at {rev}, {name} repository", fp_cmds(repo, rev, expected(repo, rev)), N)
        results.append(g)
        fp, a, b = g["cmds"]
        if name == "small":
            targets.append(("reference-sized repository: fingerprint vs (b)", f"{b.median / fp.median:.1f}x faster",
                            ">= 4x faster", b.median / fp.median >= 4))

    # -- fingerprint at one tag, large: and the limit ---------------------
    if "large" in only:
        repo = repos["large"]
        rev = "v1.0.0"
        shapes["large"] = repo_shape(repo, rev)
        files = selection(repo, rev)
        lst = os.path.join(D, "large-v1.0.0.list")
        ids = os.path.join(D, "large-v1.0.0.ids")
        with open(lst, "w") as f:
            f.writelines(f"{oid} {p}\n" for p, oid, _ in files)
        with open(ids, "w") as f:
            f.writelines(f"{oid}\n" for p, oid, _ in files)
        exp = expected(repo, rev)
        total = sum(s for _, _, s in files)
        cmds = fp_cmds(repo, rev, exp, slow_a=True) + [
            # cat-file's output is ~1 GB: to /dev/null, not through a pipe.
            Cmd("limit: git cat-file --batch of those blobs > /dev/null",
                ["sh", "-c", f'git -C "{repo}" cat-file --batch < "{ids}" > /dev/null']),
            Cmd("limit: gix inflate of those blobs (no hashing)", [L, "inflate", repo, lst], str(total)),
        ]
        # This VM keeps little page cache (~1.2 GB) and (a) writes ~1 GB per
        # run: read the pack back in before every timed command, so that each
        # starts from the same warm cache instead of paying (a)'s evictions.
        packs = [os.path.join(repo, "objects/pack", f) for f in os.listdir(os.path.join(repo, "objects/pack"))]
        for c in cmds:
            c.before = lambda packs=packs: warm_page_cache(packs)
        g = time_group(args, f"fingerprint at {rev}, large repository", cmds, max(3, N - 4))
        # SHA-256 of the same byte stream, in memory (timed inside the process).
        out = subprocess.run([L, "hash", repo, lst, str(N)], check=True, capture_output=True, text=True).stdout.split()
        sha2_s, digest = float(out[0]), out[1]
        if digest != exp:
            raise SystemExit(f"limit hash: {digest} != {exp}")
        hl = hashlib_inmem(repo, files, N)
        g["extra"] = {"sha2 in memory (Rust, same crate as fpcheck)": sha2_s, "hashlib in memory (Python/OpenSSL)": hl}
        results.append(g)
        fp, a, b, cat, inflate = g["cmds"]
        inflate_best = min(cat.median, inflate.median)
        hash_best = min(sha2_s, hl)
        limit = max(inflate_best, hash_best)
        g["limit"] = limit
        targets.append(("large: fingerprint vs the limit max(inflate, hash)",
                        f"{fp.median / limit:.3f}x the limit ({fmt(fp.median)} vs {fmt(limit)})",
                        "<= 1.1x", fp.median <= 1.1 * limit))
        targets.append(("large: fingerprint vs (b)", f"{b.median / fp.median:.1f}x faster", ">= 1.25x faster",
                        b.median / fp.median >= 1.25))
        targets.append(("large: fingerprint vs (a)", f"{a.median / fp.median:.1f}x faster", ">= 10x faster",
                        a.median / fp.median >= 10))

    # -- ranges ---------------------------------------------------------
    if "range" in only:
        repo = repos["small"]
        hist = json.loads(subprocess.run([F, "history", "--repo", repo, "--format", "json", "--no-cache"],
                                         check=True, capture_output=True, text=True).stdout)
        steps = hist["releases"]
        same = [s for s in steps if s["runtime_files_changed"] == 0 and s["changed_anything"]
                and s["from_fingerprint"] == s["to_fingerprint"]][-1]
        diff = [s for s in steps if s["runtime_files_changed"] > 0][-1]
        A, B = same["from"], same["to"]
        cache_file = os.path.join(repo, "fpcheck", "fingerprints-v3")
        rm_cache = lambda: os.path.exists(cache_file) and os.remove(cache_file)
        verdict = lambda out: json.loads(out)["reason"]
        cmds = [
            Cmd("git diff --quiet A B -- <runtime pathspec>", ["git", "-C", repo, "diff", "--quiet", A, B, "--", *pathspec()]),
            Cmd("fpcheck A..B (fingerprint cache warm)", [F, "--repo", repo, f"{A}..{B}", "--format", "json"],
                "no_runtime_change", parse=verdict),
            Cmd("fpcheck A..B --no-cache", [F, "--repo", repo, f"{A}..{B}", "--format", "json", "--no-cache"],
                "no_runtime_change", parse=verdict),
        ]
        subprocess.run(cmds[1].argv, check=True, capture_output=True)  # prime the cache
        g = time_group(args, f"range with an unchanged selection, small repository ({A}..{B})", cmds, N)
        results.append(g)
        gd, warm, cold = g["cmds"]
        targets.append(("range, unchanged selection vs git diff --quiet",
                        f"{warm.median / gd.median:.2f}x (cache warm); {cold.median / gd.median:.2f}x with --no-cache",
                        "<= 1.5x", warm.median <= 1.5 * gd.median))
        A, B = diff["from"], diff["to"]
        both = lambda tool: ["sh", "-c", f'{tool} "{repo}" {A} src && {tool} "{repo}" {B} src']
        cmds = [
            Cmd("fpcheck A..B --no-cache", [F, "--repo", repo, f"{A}..{B}", "--format", "json", "--no-cache"],
                "code_changed", parse=verdict),
            Cmd("(a) twice: archive + Python hash of A and of B", both(f"sh {PLAIN}/archive.sh")),
            Cmd("(b) twice: ls-tree + cat-file of A and of B", both(f"{sys.executable} {PLAIN}/catfile.py")),
            Cmd("git diff --quiet A B -- <runtime pathspec> (yes/no only)",
                ["git", "-C", repo, "diff", "--quiet", A, B, "--", *pathspec()]),
        ]
        g = time_group(args, f"range with a changed selection, small repository ({A}..{B})", cmds, N)
        results.append(g)
        fp, a2 = g["cmds"][0], g["cmds"][1]
        targets.append(("range, changed selection vs (a) twice", f"{a2.median / fp.median:.1f}x faster", "(report)", None))

    # -- history ---------------------------------------------------------
    if "history" in only:
        repo = repos["small"]
        n_tags = len(tags(repo))
        last = lambda out: json.loads(out)["tags"][-1]["fingerprint"]
        exp = expected(repo, tags(repo)[-1])
        cmds = [
            Cmd("fpcheck history --no-cache (cold)", [F, "history", "--repo", repo, "--format", "json", "--no-cache"], exp, parse=last),
            Cmd("fpcheck history (persistent cache warm)", [F, "history", "--repo", repo, "--format", "json"], exp, parse=last),
            Cmd(f"(b) per tag, {n_tags} tags (loop_catfile.sh)", ["sh", f"{PLAIN}/loop_catfile.sh", repo, "src"], exp,
                parse=lambda out: out.strip().splitlines()[-1].split()[1], runs=S),
        ]
        subprocess.run(cmds[1].argv, check=True, capture_output=True)  # prime the cache
        g = time_group(args, f"history of {n_tags} tags, small repository", cmds, N)
        stats = json.loads(subprocess.run(cmds[0].argv, check=True, capture_output=True).stdout)["stats"]
        wstats = json.loads(subprocess.run(cmds[1].argv, check=True, capture_output=True).stdout)["stats"]
        g["extra_text"] = f"cold stats: {stats}; warm stats: {wstats}"
        results.append(g)
        cold, warm, loop = g["cmds"]
        targets.append(("history vs a (b) loop, cold", f"{loop.median / cold.median:.0f}x faster", ">= 20x faster",
                        loop.median / cold.median >= 20))
        targets.append(("history vs a (b) loop, persistent cache warm", f"{loop.median / warm.median:.0f}x faster",
                        ">= 100x faster", loop.median / warm.median >= 100))

    # -- installed runtimes -------------------------------------------------
    if "dir" in only:
        for rt, n_runs in (("rt300", N), ("rt20k", max(3, N - 2))):
            d = os.path.join(D, rt)
            fp = subprocess.run([sys.executable, f"{PLAIN}/pyhash.py", d], check=True, capture_output=True, text=True).stdout.strip()
            cache = os.path.join(D, f"{rt}.status-cache")
            marker = os.path.join(D, "no-marker.json")
            rm = lambda cache=cache: os.path.exists(cache) and os.remove(cache)
            status = [F, "status", "--dir", d, "--marker", marker, "--process-fingerprint", fp,
                      "--process-version", "7.11.0", "--json"]
            restart = lambda out: json.loads(out)["restart_required"]
            cmds = [
                Cmd("fpcheck fingerprint --dir", [F, "fingerprint", "--dir", d], fp),
                Cmd("Python hash of the directory (pyhash.py)", [sys.executable, f"{PLAIN}/pyhash.py", d], fp),
                Cmd("fpcheck status (no cache)", status, False, parse=restart),
                Cmd("fpcheck status --cache, cold (no cache file)", status + ["--cache", cache], False, parse=restart, before=rm),
                Cmd("fpcheck status --cache, warm", status + ["--cache", cache], False, parse=restart),
                Cmd("Python gate status (gate_status.py)", [sys.executable, f"{PLAIN}/gate_status.py", d, marker, fp, "7.11.0"],
                    False, parse=restart),
            ]
            # Order matters: the cold run deletes the cache, the warm one after it rebuilds... so
            # give the warm command its own primed cache file.
            wcache = cache + ".warm"
            cmds[4].argv = status + ["--cache", wcache]
            subprocess.run(cmds[4].argv, check=True, capture_output=True)
            hit = json.loads(subprocess.run(cmds[4].argv, check=True, capture_output=True).stdout).get("cache")
            g = time_group(args, f"installed runtime, {rt} ({len(selection_dir(d))} files)", cmds, n_runs)
            g["extra_text"] = f"warm status cache: {hit}"
            results.append(g)
            fpd, py, st, cold, warm, pyst = g["cmds"]
            if rt == "rt300":
                targets.append(("status --cache warm, 300 files, vs Python gate", f"{pyst.median / warm.median:.1f}x faster",
                                ">= 10x faster", pyst.median / warm.median >= 10))
                targets.append(("status --cache cold, 300 files, vs Python gate", f"{pyst.median / cold.median:.1f}x faster",
                                "faster", pyst.median > cold.median))
            else:
                targets.append(("status --cache warm / cold, 20,000 files, vs Python gate",
                                f"{pyst.median / warm.median:.1f}x / {pyst.median / cold.median:.1f}x faster", "(report)", None))

    # -- memory ---------------------------------------------------------
    if "memory" in only:
        repo = repos["large"]
        wait_quiet(args, "memory")
        big = [f for f in selection(repo, "v1.1.0-big") if f[0].startswith("zz_generated/")][0]
        for rev in ("v1.0.0", "v1.1.0-big"):
            largest = max(s for _, _, s in selection(repo, rev))
            fp_rss = rss([F, "fingerprint", "--repo", repo, "--rev", rev])
            b_self, b_child = rss_b(repo, rev)
            memory.append((rev, largest, fp_rss, b_self, b_child))
            log(f"memory {rev}: largest file {largest / 1e6:.1f} MB, fpcheck {fp_rss / 1024:.0f} MiB, "
                f"(b) python {b_self / 1024:.0f} MiB + cat-file {b_child / 1024:.0f} MiB")
        (_, _, f0, s0, c0), (_, _, f1, s1, c1) = memory
        targets.append(("peak memory, large repository, vs (b)",
                        f"{f0 / 1024:.0f} MiB vs {(s0 + c0) / 1024:.0f} MiB", "no higher", f0 <= s0 + c0))
        grow = (f1 - f0) * 1024
        targets.append(("peak memory flat in the largest file",
                        f"+{grow / 1e6:.0f} MB for a {big[2] / 1e6:.0f} MB file ((b): +{(s1 + c1 - s0 - c0) * 1024 / 1e6:.0f} MB)",
                        "flat (< 10% of the file)", grow < 0.1 * big[2]))

    if "attrs" in only:
        attributes_job(args, repos["medium"], results, targets)

    if "real" in only:
        real_history(args, results, targets)

    report(args, info, shapes, results, targets, memory)


def real_blobs(repo, settings, out):
    """Writes to `out` the ids of every runtime blob of the repository's
    release tags, each once (what one `git cat-file --batch` process reads
    for the whole history); returns how many."""
    root = settings["root"].strip("/")
    exts, exclude = tuple(settings["extensions"]), set(settings["exclude"])
    seen = set()
    for tag in git(repo, "tag", "--list").split():
        try:
            listing = git(repo, "ls-tree", "-r", "-z", f"{tag}^{{commit}}:{root}" if root else f"{tag}^{{commit}}",
                          text=False)
        except subprocess.CalledProcessError:
            continue
        for rec in listing.split(b"\0"):
            if not rec:
                continue
            meta, path = rec.split(b"\t", 1)
            mode, kind, oid = meta.split()
            parts = path.decode(errors="replace").split("/")
            if kind == b"blob" and parts[-1].endswith(exts) and not exclude.intersection(parts):
                seen.add(oid.decode())
    with open(out, "w") as f:
        f.write("".join(f"{oid}\n" for oid in sorted(seen)))
    return len(seen)


def real_history(args, results, targets):
    """The history of a real repository: cold and warm, with and without
    the classification, side by side in one run, beside one `git cat-file
    --batch` process over its runtime blobs. Every classified run must
    mark the same restarts avoidable."""
    F, repo, N = args.fpcheck, os.path.abspath(args.real), args.runs
    base = [F, "history", "--repo", repo, "--format", "json"]
    first = json.loads(subprocess.run(base + ["--no-cache"], check=True, capture_output=True).stdout)
    flags = json.dumps([u["avoidable"] for u in first["releases"]])
    avoidable = lambda out: json.dumps([u["avoidable"] for u in json.loads(out)["releases"]])
    none = json.dumps([None] * len(first["releases"]))
    ids = os.path.join(args.dir, "real-blobs.txt")
    n_blobs = real_blobs(repo, first["settings"], ids)
    cmds = [
        Cmd("fpcheck history --no-cache --no-classify (cold)", base + ["--no-cache", "--no-classify"], none, parse=avoidable),
        Cmd("fpcheck history --no-cache (cold, classified)", base + ["--no-cache"], flags, parse=avoidable),
        Cmd("fpcheck history --no-classify (caches warm)", base + ["--no-classify"], none, parse=avoidable),
        Cmd("fpcheck history (caches warm, classified)", base, flags, parse=avoidable),
        Cmd(f"git cat-file --batch of the {n_blobs:,} runtime blobs of all tags, one process",
            ["git", "-C", repo, "cat-file", "--batch"], stdin=ids),
    ]
    subprocess.run(base, check=True, capture_output=True)  # fills the caches
    name = os.path.basename(repo.rstrip("/"))
    s = first["summary"]
    g = time_group(args, f"history of a real repository ({name}: {s['releases']} releases, {s['updates']} updates, "
                         f"{s['restarts_forced']} restarts, {s['avoidable_restarts']} avoidable)", cmds, N)
    off, on, woff, won, cat = g["cmds"]
    cpu = lambda c: statistics.median(c.cpu)
    g["extra_text"] = (f"CPU (user + system, medians): cold {fmt(cpu(off))} / classified {fmt(cpu(on))} "
                       f"({cpu(on) / cpu(off):.2f}x); warm {fmt(cpu(woff))} / classified {fmt(cpu(won))} "
                       f"({cpu(won) / cpu(woff):.2f}x); git cat-file {fmt(cpu(cat))}. "
                       f"Cold classified stats: {first['stats']}")
    results.append(g)
    targets.append((f"real history ({name}), cold: classified vs --no-classify", f"{on.median / off.median:.2f}x",
                    "<= 1.25x", on.median / off.median <= 1.25))
    targets.append((f"real history ({name}), warm: classified vs --no-classify", f"{won.median / woff.median:.2f}x",
                    "<= 1.1x", won.median / woff.median <= 1.1))
    targets.append((f"real history ({name}), cold --no-classify vs one git cat-file --batch",
                    f"{off.median / cat.median:.2f}x ({fmt(off.median)} vs {fmt(cat.median)})", "(report)", None))


# The `.gitattributes` variants of the medium repository: (label, content).
ATTRIBUTES = [
    ("c", "`*.md text` (no converting attribute on a selected path)", "*.md text\n"),
    ("b", "`* text=auto eol=lf` (every selected file looked up, bytes unchanged)", "* text=auto eol=lf\n"),
    ("d", "`* text eol=crlf` (every selected file converted)", "* text eol=crlf\n"),
]


def with_attributes(base, dest, content):
    """A clone of `base` whose HEAD is one more commit, adding a top-level
    `.gitattributes` with `content` (rebuilt on every run: under a second)."""
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--bare", base, dest], check=True)
    blob = subprocess.run(["git", "-C", dest, "hash-object", "-w", "--stdin"], input=content, check=True,
                          capture_output=True, text=True).stdout.strip()
    tree_in = git(dest, "ls-tree", "HEAD") + f"100644 blob {blob}\t.gitattributes\n"
    tree = subprocess.run(["git", "-C", dest, "mktree"], input=tree_in, check=True, capture_output=True,
                          text=True).stdout.strip()
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    commit = subprocess.run(["git", "-C", dest, "commit-tree", "-p", "HEAD", "-m", "Add .gitattributes", tree],
                            env=env, check=True, capture_output=True, text=True).stdout.strip()
    git(dest, "update-ref", "HEAD", commit)
    return dest


def attributes_job(args, base, results, targets):
    """The cost of fingerprinting the bytes a checkout writes: the medium
    repository as is (a) beside the same with one more commit adding a
    top-level `.gitattributes` (b, c, d), `fingerprint --rev HEAD` and a
    range with no cache (both ends fingerprinted), side by side with the
    plain ways; (a) twice, so that the run's own noise is in the table."""
    F, D, N = args.fpcheck, args.dir, args.runs
    repos = {"a": base}
    for key, _, content in ATTRIBUTES:
        repos[key] = with_attributes(base, os.path.join(D, f"medium-attributes-{key}.git"), content)
    label = {"a": "(a) medium as is"} | {k: f"({k}) {what}" for k, what, _ in ATTRIBUTES}
    fp = {k: subprocess.run([F, "fingerprint", "--repo", r, "--rev", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip() for k, r in repos.items()}
    # Ranges with no cache, from a tag (no attributes) to HEAD: one whose
    # selection did not change (the trees' ids decide, unless attributes
    # can convert), and the newest whose selection changed (both ends read).
    same, changed = None, None
    for t in reversed(tags(base)[:-1]):
        differs = subprocess.run(["git", "-C", base, "diff", "--quiet", t, "HEAD", "--", *pathspec()]).returncode
        if differs and changed is None:
            changed = t
        elif not differs and same is None:
            same = t
        if same and changed:
            break
    verdict = lambda out: json.loads(out)["reason"]
    range_argv = lambda k, start: [F, "--repo", repos[k], f"{start}..HEAD", "--format", "json", "--no-cache"]
    range_verdict = lambda k, start: verdict(subprocess.run(range_argv(k, start), capture_output=True, text=True).stdout)
    fingerprint = lambda k: [F, "fingerprint", "--repo", repos[k], "--rev", "HEAD"]
    cmds = [Cmd(f"fpcheck fingerprint --rev HEAD, {label['a']}", fingerprint("a"), fp["a"])]
    cmds += [Cmd(f"fpcheck fingerprint --rev HEAD, {label[k]}", fingerprint(k), fp[k]) for k in "cbd"]
    cmds.append(Cmd(f"fpcheck fingerprint --rev HEAD, {label['a']}, again (the run's noise)", fingerprint("a"), fp["a"]))
    if args.before:
        # Its own answer: a build from before checkouts' bytes hashes the blobs.
        for k in "ab":
            argv = [args.before, "fingerprint", "--repo", repos[k], "--rev", "HEAD"]
            own = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()
            cmds.append(Cmd(f"fpcheck fingerprint --rev HEAD, {label[k]}, the build --before", argv, own))
    for start, which, keys in ((same, "unchanged", "acb"), (changed, "changed", "acbd")):
        cmds += [Cmd(f"fpcheck {start}..HEAD --no-cache ({which} selection), {label[k]}", range_argv(k, start),
                     range_verdict(k, start), parse=verdict) for k in keys]
    # The witness (git's own checkout of both ends confirms a "no restart"):
    # (c) and (b) say no restart from `same`, on a tree with attributes, so
    # `auto` runs it; beside `never` and git's own checkout-index of the
    # same paths of both ends. On (a), nothing calls for it: within noise.
    witness_argv = lambda k, when: range_argv(k, same) + ["--witness", when]
    for k in "cba":
        for when in ("auto", "never"):
            cmds.append(Cmd(f"fpcheck {same}..HEAD --no-cache --witness {when}, {label[k]}", witness_argv(k, when),
                            range_verdict(k, same), parse=verdict))
    cmds += [Cmd(f"git read-tree + checkout-index of src at {same} and HEAD, {label[k]}",
                 ["sh", f"{PLAIN}/checkout_index.sh", repos[k], "src", same, "HEAD"], "ok") for k in "cb"]
    # (b) of the medium job reads the blobs, so it agrees where the bytes are the blobs';
    # git archive writes a checkout's bytes, so it agrees everywhere.
    cmds += [Cmd(f"(b) git ls-tree + cat-file --batch -> hashlib, {label[k]}",
                 [sys.executable, f"{PLAIN}/catfile.py", repos[k], "HEAD", "src"], fp[k]) for k in "ab"]
    cmds += [Cmd(f"(a) git archive, tar -x, Python hash, {label[k]}",
                 ["sh", f"{PLAIN}/archive.sh", repos[k], "HEAD", "src"], fp[k]) for k in "abd"]
    # (a) `git archive` leaves ~17 MB of written and deleted files behind it:
    # flushed before each fpcheck run (untimed), so that the write-back does
    # not land on whichever command follows it in the round.
    for c in cmds:
        if c.argv[0] in (F, args.before):
            c.before = os.sync
    load = os.getloadavg()[0]
    g = time_group(args, f".gitattributes: fingerprint of the checkout's bytes, medium repository (HEAD = {tags(base)[-1]} "
                         f"+ one commit)", cmds, N)
    results.append(g)
    by = {c.label: c for c in g["cmds"]}
    a, c_, b, d, again = g["cmds"][:5]
    cpu = lambda c: statistics.median(c.cpu)
    g["extra_text"] = ("CPU (user + system, medians) of the fingerprints: "
                       + "; ".join(f"{k} {fmt(cpu(c))} ({cpu(c) / cpu(a):.2f}x)"
                                   for k, c in zip(["(a)", "(c)", "(b)", "(d)", "(a) again"], [a, c_, b, d, again]))
                       + ". Fingerprints: " + ", ".join(f"({k}) {fp[k][:12]}" for k in "acbd")
                       + f". Machine: CPU busy {g['busy_before']:.0%} before the group, {g['busy_after']:.0%} after; "
                         f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after.")
    noise = abs(again.median / a.median - 1)
    targets.append((".gitattributes `* text=auto eol=lf` on every file, medium: fingerprint (b) vs (a)",
                    f"{b.median / a.median:.2f}x (CPU {cpu(b) / cpu(a):.2f}x)", "<= 1.3x", b.median <= 1.3 * a.median))
    targets.append(("no converting attribute on a selected path (`*.md text`), medium: fingerprint (c) vs (a)",
                    f"{c_.median / a.median:.2f}x (CPU {cpu(c_) / cpu(a):.2f}x); (a) vs itself {again.median / a.median:.2f}x",
                    "within noise", abs(c_.median / a.median - 1) <= max(0.05, 2 * noise)))
    if args.before:
        before = {k: by[f"fpcheck fingerprint --rev HEAD, {label[k]}, the build --before"] for k in "ab"}
        targets.append(("medium as is: fingerprint, this build vs the build --before",
                        f"{a.median / before['a'].median:.2f}x (CPU {cpu(a) / cpu(before['a']):.2f}x)", "within noise",
                        abs(a.median / before["a"].median - 1) <= max(0.05, 2 * noise)))
        targets.append(("`* text=auto eol=lf`: fingerprint (b), this build vs the build --before",
                        f"{b.median / before['b'].median:.2f}x (CPU {cpu(b) / cpu(before['b']):.2f}x)", "(report)", None))
    w = lambda k, when: by[f"fpcheck {same}..HEAD --no-cache --witness {when}, {label[k]}"]
    co = lambda k: by[f"git read-tree + checkout-index of src at {same} and HEAD, {label[k]}"]
    for k in "cb":
        extra = w(k, "auto").median - w(k, "never").median
        targets.append((f"witness on {label[k]}: range auto - never vs git's checkout-index of both ends",
                        f"+{fmt(extra)} vs {fmt(co(k).median)} ({extra / co(k).median:.2f}x; range "
                        f"{fmt(w(k, 'never').median)} -> {fmt(w(k, 'auto').median)})",
                        "<= git's checkout + fingerprint", None))
    targets.append(("witness, ordinary tree (a): range auto vs never",
                    f"{w('a', 'auto').median / w('a', 'never').median:.2f}x; (a) vs itself {again.median / a.median:.2f}x",
                    "within noise", abs(w("a", "auto").median / w("a", "never").median - 1) <= max(0.05, 2 * noise)))
    targets.append((".gitattributes `* text eol=crlf` on every file (all converted), medium: fingerprint (d) vs (a)",
                    f"{d.median / a.median:.2f}x", "(report)", None))
    for start, which in ((same, "unchanged"), (changed, "changed")):
        r = {k: by[f"fpcheck {start}..HEAD --no-cache ({which} selection), {label[k]}"] for k in "acb"}
        targets.append((f"range {start}..HEAD --no-cache ({which} selection), medium: (c) and (b) vs (a)",
                        f"(c) {r['c'].median / r['a'].median:.2f}x, (b) {r['b'].median / r['a'].median:.2f}x "
                        f"({fmt(r['a'].median)} / {fmt(r['c'].median)} / {fmt(r['b'].median)})", "(report)", None))


def warm_page_cache(paths):
    """Reads files into the page cache (untimed)."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(8 << 20):
                pass


def selection_dir(d):
    out = []
    for root, dirs, names in os.walk(d):
        rel = os.path.relpath(root, d)
        if any(p in EXCLUDE for p in rel.split(os.sep)):
            continue
        out += [n for n in names if n.endswith(".py")]
    return out


def hashlib_inmem(repo, files, runs):
    """SHA-256 (Python's hashlib, OpenSSL) of the fingerprint's byte stream,
    already in memory; timed inside the process."""
    code = r"""
import hashlib, subprocess, sys, time, statistics
repo, lst, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = [l.split(" ", 1) for l in open(lst).read().splitlines()]
p = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input=b"".join(o.encode() + b"\n" for o, _ in files),
                   stdout=subprocess.PIPE, check=True)
out, pos, parts = p.stdout, 0, []
for oid, path in files:
    nl = out.index(b"\n", pos)
    size = int(out[pos:nl].split()[2])
    parts += [path.encode(), b"\0", out[nl + 1:nl + 1 + size], b"\n"]
    pos = nl + 1 + size + 1
stream = b"".join(parts)
del out, parts
times = []
for _ in range(runs):
    t = time.perf_counter(); d = hashlib.sha256(stream).hexdigest(); times.append(time.perf_counter() - t)
print(statistics.median(times), d)
"""
    lst = os.path.join(os.path.dirname(repo), "large-v1.0.0.list")
    out = subprocess.run([sys.executable, "-c", code, repo, lst, str(runs)], check=True, capture_output=True, text=True).stdout
    return float(out.split()[0])


def rss(argv):
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True, check=True)
    return int(p.stderr.strip().splitlines()[-1])


def rss_b(repo, rev):
    p = subprocess.run([sys.executable, f"{PLAIN}/catfile.py", repo, rev, "src", "--rss"], capture_output=True, text=True, check=True)
    m = re.search(r"rss (\d+) (\d+)", p.stderr)
    return int(m.group(1)), int(m.group(2))


# ---------------------------------------------------------------- report


def md(text):
    """Table-safe text."""
    return text.replace("|", "\\|")


def report(args, info, shapes, results, targets, memory):
    lines = []
    w = lines.append
    w("# fpcheck benchmark results")
    w("")
    w(f"Generated by `bench/run` on {info['date']}. Whole processes, wall-clock medians of interleaved runs "
      f"(one untimed warm-up run each, except the slow plain loops; page cache warm). "
      f"Ratios are other / fpcheck unless the row says otherwise.")
    w("")
    busy = max(g["busy_before"] for g in results) if results else 0
    quiet = busy < 0.10
    w(f"- Machine: {info['nproc']} CPUs, {info['cpu']}, {info['memory']} RAM, Linux {info['kernel']}")
    w(f"- Tools: {info['rustc']}; {info['git']}; Python {info['python']}; fpcheck {info['fpcheck']}")
    w(f"- Quiet machine: {'yes' if quiet else 'NO'} (highest CPU use by other processes just before a group: {busy:.0%}; "
      f"the suite waits for < 10% before each group)")
    w("- (a) unpacks each checkout to disk under $FPCHECK_BENCH_DIR and deletes it: its times vary with the "
      "disk's write-back (compare medians and minimums).")
    w("- The large repository's pack is read back into the page cache before each timed command of its group "
      "(untimed): this VM keeps little page cache, and (a) writes ~1 GB per run.")
    w("- The limit is timed in separate processes: `limit inflate` (bench/limit, gix and zlib-rs as in fpcheck, "
      "no hashing) and SHA-256 of the same stream already in memory, timed inside the process.")
    w("")
    if shapes:
        w("| repository | runtime files | runtime bytes | pack | release tags |")
        w("|---|---:|---:|---:|---:|")
        for n, s in shapes.items():
            w(f"| {n} | {s['files']:,} | {s['bytes'] / 1e6:,.1f} MB | {s['pack'] / 1e6:,.1f} MB | {s['tags']} |")
        w("")
    if targets:
        w("## Targets (issue 8)")
        w("")
        w("| target | measured | wanted | |")
        w("|---|---|---|---|")
        for name, got, want, ok in targets:
            mark = "met" if ok else ("-" if ok is None else "**missed**")
            w(f"| {name} | {got} | {want} | {mark} |")
        w("")
    compared = [(g["group"], c, t) for g in results for c, t in g.get("twins", [])]
    if compared:
        w(f"## This build against `--compare` ({md(args.compare)})")
        w("")
        w("Each fpcheck command ran on both builds in the same rounds. Noise: compare with the spread of "
          "the ratios around 1.00x.")
        w("")
        w("| group | command | this build | --compare | wall | CPU |")
        w("|---|---|---:|---:|---:|---:|")
        for group, c, t in compared:
            cpu = statistics.median(c.cpu) / max(statistics.median(t.cpu), 1e-9)
            w(f"| {md(group)} | {md(c.label)} | {fmt(c.median)} | {fmt(t.median)} | {c.median / t.median:.3f}x | {cpu:.3f}x |")
        w("")
    w("## Medians")
    w("")
    for g in results:
        w(f"### {g['group']}")
        w("")
        base = g["cmds"][0]
        w(f"| command | median | min | runs | vs `{md(base.label)}` |")
        w("|---|---:|---:|---:|---:|")
        for c in g["cmds"]:
            ratio = c.median / base.median
            w(f"| {md(c.label)} | {fmt(c.median)} | {fmt(min(c.times))} | {len(c.times)} | {ratio:.2f}x |")
        for k, v in g.get("extra", {}).items():
            w(f"| {k} | {fmt(v)} | | | {v / base.median:.2f}x |")
        if "limit" in g:
            w(f"| **the limit: max(fastest inflate, fastest hash)** | {fmt(g['limit'])} | | | {g['limit'] / base.median:.2f}x |")
        w("")
        if g.get("extra_text"):
            w(g["extra_text"])
            w("")
    if memory:
        w("### Peak memory (max RSS), large repository")
        w("")
        w("| tag | largest file | fpcheck fingerprint | (b) python | (b) git cat-file | (b) total |")
        w("|---|---:|---:|---:|---:|---:|")
        for rev, largest, f, s, c in memory:
            w(f"| {rev} | {largest / 1e6:.1f} MB | {f / 1024:.0f} MiB | {s / 1024:.0f} MiB | {c / 1024:.0f} MiB | {(s + c) / 1024:.0f} MiB |")
        w("")
        w("Max RSS counts the pages of the mmapped pack that a process touched (git and gix both map packs), "
          "so both sides include most of the pack's size.")
        w("")
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        with open(args.out, "w") as f:
            f.write(text)
        log(f"written to {args.out}")


if __name__ == "__main__":
    main()

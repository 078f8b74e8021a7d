#!/usr/bin/env python3
"""fpcheck's Python package against the reference gate, side by side in one run.

    python3 bench/python_bench.py [--files 300] [--rounds 200] [--one-cpu] [--check]

Needs ``import fpcheck`` (the wheel, built in release mode for real figures:
``maturin build --release -m python/Cargo.toml``). Builds a runtime of
``--files`` ``.py`` files (~16 KB each, in nested folders, plus excluded
folders and non-runtime files), then times, with medians:

- cold fingerprint: the reference's ``compute_mcp_runtime_fingerprint(root)``
  (bench/python_reference.py) vs ``fpcheck.fingerprint(root)``;
- warm check: the reference's ``compute_mcp_runtime_fingerprint(root,
  use_cache=True)`` vs ``fpcheck.status(root, marker, ..., cache=True)`` (the
  in-process watcher) and ``cache=PATH``.

The warm figure that counts is the amortised one: the watcher re-verifies
its fingerprint by a full one every ``verify_interval`` (2 s by default), so
``status(..., cache=True)`` is also called for ``--window`` seconds
(several intervals), each call after one reference warm check (a server's
other work between tool calls, ~100 calls a second), and the mean per
call, re-verifications included, is compared with the reference's median.

``--one-cpu`` pins the process to one CPU before anything runs (fpcheck
then reads and hashes on one thread): the machine as a loaded one leaves
it. ``--check`` exits 1 unless cold is >= 3x and warm (amortised) >= 30x
faster.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fpcheck  # noqa: E402
from python_reference import compute_mcp_runtime_fingerprint  # noqa: E402


def build_runtime(root: Path, files: int) -> None:
    rng = random.Random(300)
    words = ["def", "return", "self", "value", "import", "class", "for", "in", "if"]
    for i in range(files):
        folder = root / f"pkg{i % 12}" / f"mod{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            " ".join(rng.choice(words) for _ in range(8))
            for _ in range(rng.randint(300, 500))
        ]
        (folder / f"file{i}.py").write_text("\n".join(lines))
    for extra in ["tests", "scripts", "__pycache__"]:
        (root / extra).mkdir(exist_ok=True)
        (root / extra / "x.py").write_text("excluded\n")
    (root / "README.md").write_text("docs\n")
    (root.parent / "version.json").write_text('{"version": "1.0.0"}\n')


CPU_MS: Dict[int, float] = {}


def alternating_ms(fns: Sequence[Callable[[], object]], rounds: int) -> List[float]:
    """Median milliseconds of each of ``fns``, run in turn every round (so
    both sides see the same machine load), after one untimed warm-up. Each
    one's mean CPU time per call (every thread of the process: fpcheck
    hashes on a second one) goes to ``CPU_MS[id(fn)]``: on a loaded machine
    the wall times swing with the scheduler, the CPU times much less."""
    times: List[List[float]] = [[] for _ in fns]
    cpu = [0.0 for _ in fns]
    for fn in fns:
        fn()
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            c = time.process_time()
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
            cpu[i] += time.process_time() - c
    for fn, total in zip(fns, cpu):
        CPU_MS[id(fn)] = total / rounds * 1000
    return [statistics.median(t) * 1000 for t in times]


def amortised_ms(
    fn: Callable[[], str], between: Callable[[], object], seconds: float
) -> tuple[float, int, int]:
    """Mean milliseconds per call of ``fn`` over ``seconds``, every call
    counted (the periodic re-verifications included), with the number of
    calls and of calls that were not hits. ``between`` runs untimed before
    each call: the other work of a server between two tool calls (here the
    reference's own warm check), so caches are as cold as in the medians
    and the call rate is a server's, not a tight loop's."""
    calls = misses = 0
    total = 0.0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        between()
        t = time.perf_counter()
        misses += fn() != "hit"
        total += time.perf_counter() - t
        calls += 1
    return total / calls * 1000, calls, misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--one-cpu", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.one_cpu:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "server" / "src"
        root.mkdir(parents=True)
        build_runtime(root, args.files)
        marker = Path(tmp) / "marker.json"
        ref_fp = compute_mcp_runtime_fingerprint(root)
        fp = fpcheck.fingerprint(root)
        assert fp == ref_fp, (fp, ref_fp)
        cold_rounds = max(args.rounds // 4, 10)
        cold_fns = [
            lambda: compute_mcp_runtime_fingerprint(root),
            lambda: fpcheck.fingerprint(root),
        ]
        cold_ref, cold_fp = alternating_ms(cold_fns, cold_rounds)
        cpu_ref, cpu_fp = (CPU_MS[id(fn)] for fn in cold_fns)

        def ask(cache: object) -> str:
            answer = fpcheck.status(
                root,
                marker,
                process_fingerprint=fp,
                process_version="1.0.0",
                cache=cache,
            )
            assert (
                answer["installed_fingerprint"] == fp and not answer["restart_required"]
            )
            return str(answer.get("cache"))

        cache_file = Path(tmp) / "status.cache"
        warm_ref, warm_watch, warm_file = alternating_ms(
            [
                lambda: compute_mcp_runtime_fingerprint(root, use_cache=True),
                lambda: ask(True),
                lambda: ask(cache_file),
            ],
            args.rounds,
        )
        (full,) = alternating_ms([lambda: ask(None)], cold_rounds)
        amortised, calls, misses = amortised_ms(
            lambda: ask(True),
            lambda: compute_mcp_runtime_fingerprint(root, use_cache=True),
            args.window,
        )

    cold_ratio, warm_ratio = cold_ref / cold_fp, warm_ref / amortised
    rows = [
        ("cold: reference compute_mcp_runtime_fingerprint(root)", cold_ref, ""),
        (
            "cold: fpcheck.fingerprint(root)",
            cold_fp,
            f"{cold_ratio:.1f}x faster (target 3x)",
        ),
        ("warm: reference (..., use_cache=True)", warm_ref, ""),
        (
            "warm: fpcheck.status(..., cache=True), median",
            warm_watch,
            f"{warm_ref / warm_watch:.1f}x faster",
        ),
        (
            f"warm: cache=True, mean of {calls} calls in {args.window:g} s",
            amortised,
            f"{warm_ratio:.1f}x faster (target 30x; amortised:"
            f" {misses} re-verifications included)",
        ),
        (
            "warm: fpcheck.status(..., cache=PATH)",
            warm_file,
            f"{warm_ref / warm_file:.1f}x",
        ),
        ("full: fpcheck.status(..., cache=None)", full, ""),
    ]
    print(
        f"{args.files} runtime files, medians (ms) of runs alternating with the"
        f" reference, Python {sys.version.split()[0]},"
        f" {len(os.sched_getaffinity(0))} of {os.cpu_count()} CPUs, load average"
        f" {os.getloadavg()[0]:.1f}"
    )
    for name, ms, note in rows:
        print(f"  {name:<56} {ms:9.3f}  {note}")
    print(
        f"  cold, CPU time per call (all threads): reference {cpu_ref:.2f} ms,"
        f" fpcheck {cpu_fp:.2f} ms ({cpu_ref / cpu_fp:.1f}x)"
    )
    ok = cold_ratio >= 3 and warm_ratio >= 30
    if args.check and not ok:
        print("TARGETS MISSED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

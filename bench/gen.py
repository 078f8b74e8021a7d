#!/usr/bin/env python3
"""Deterministic benchmark repositories for fpcheck, written with `git fast-import`.

    python3 bench/gen.py [--dir DIR] [small|medium|large|rt300|rt20k|all ...]

DIR defaults to $FPCHECK_BENCH_DIR, else /tmp/fpcheck-bench. Each target is
built once and reused: a finished target has a `.done` stamp holding the
generator version, and a stale or half-built one is rebuilt from scratch.

Shapes (the runtime root is `src/`, the default `.py` selection):

- small:  ~300 runtime files, ~6 MB, 380 release tags (the reference
          project's shape: most releases touch a few runtime files, some
          only docs, some only excluded folders or non-runtime files).
- medium: ~1,000 runtime files, ~17 MB, 150 release tags.
- large:  ~45,000 runtime files, ~0.9 GB of source (~0.3 GB packed), tags
          v1.0.0 (base), v1.0.1 (docs only), v1.0.2 (3 runtime files
          changed), v1.0.3 (tests only), and v1.1.0-big (v1.0.0 plus one
          ~180 MB runtime file, for memory flatness).
- rt300 / rt20k: installed runtimes (directories) of 300 (~5 MB) and 20,000
          (~370 MB) files.

Content is Python-like text drawn from a fixed pool of generated lines, so
it compresses about like real code (~3x with zlib) and files do not delta
against each other. Everything derives from fixed seeds: the same Python
version gives the same bytes, commits and tags (dates are fixed too).
"""

import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import time

GEN_VERSION = "fpcheck-bench-gen-5"
EXCLUDED_DIRS = ["tests", "scripts", "migrations", "crons"]
EPOCH = 1_600_000_000


# ---------------------------------------------------------------- content


def make_pool(seed, n_lines=200_000):
    """A pool of distinct-ish Python-looking lines (with their newlines)."""
    rng = random.Random(f"pool:{seed}")
    syll = ["ra", "to", "ken", "mi", "da", "lo", "ver", "sa", "ne", "pi", "co",
            "tri", "gu", "fa", "mel", "or", "ux", "bel", "ta", "qua", "zen",
            "dor", "li", "pe", "sto", "ar", "mon", "ic", "el", "hu"]
    words = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(1, 3)))
                    for _ in range(1200)})
    common = ["self", "data", "value", "result", "config", "request", "items",
              "name", "path", "key", "node", "ctx", "args", "kwargs", "state"]
    errs = ["ValueError", "KeyError", "TypeError", "RuntimeError", "LookupError"]

    def ident():
        k = rng.random()
        if k < 0.3:
            return rng.choice(common)
        if k < 0.8:
            return rng.choice(words)
        return f"{rng.choice(words)}_{rng.choice(words)}"

    def call():
        args = ", ".join(ident() for _ in range(rng.randint(0, 3)))
        return f"{ident()}.{ident()}({args})" if rng.random() < 0.5 else f"{ident()}({args})"

    def sentence(n):
        return " ".join(rng.choice(words) for _ in range(n))

    templates = [
        lambda: f"def {ident()}({', '.join(['self'] + [ident() for _ in range(rng.randint(0, 3))])}):",
        lambda: f"class {ident().title().replace('_', '')}({rng.choice(['object', 'Base', 'Exception', 'dict'])}):",
        lambda: f"    {ident()} = {call()}",
        lambda: f"        {ident()} = {call()}",
        lambda: f"        {ident()}.{ident()} = {ident()}",
        lambda: f"    return {call()}",
        lambda: f"        return {ident()}",
        lambda: f"    if {ident()} is None:",
        lambda: f"        if not {ident()}.{ident()}({ident()}):",
        lambda: f"            raise {rng.choice(errs)}(\"{sentence(rng.randint(2, 6))}\")",
        lambda: f"    for {ident()} in {call()}:",
        lambda: f"            {ident()}[{ident()!r}] = {rng.randint(0, 9999)}",
        lambda: f"    # {sentence(rng.randint(3, 10))}",
        lambda: f'    """{sentence(rng.randint(4, 12)).capitalize()}."""',
        lambda: f"from {ident()}.{ident()} import {ident()}, {ident()}",
        lambda: f"import {ident()}",
        lambda: f"        {call()}",
        lambda: f"    {ident()}: {rng.choice(['int', 'str', 'list', 'dict', 'Optional[str]'])} = {rng.randint(0, 999)}",
        lambda: "",
        lambda: "",
    ]
    return [rng.choice(templates)() + "\n" for _ in range(n_lines)]


def file_text(pool, seed, size):
    """About `size` bytes of lines from the pool, chosen by `seed`."""
    rng = random.Random(seed)
    k = max(3, size // 38)
    # Lines recur within a file (as identifiers and idioms do in real code),
    # which gives zlib about the ratio it gets on real Python (~3x); across
    # files they rarely do, so files do not delta against each other.
    local = rng.choices(pool, k=k * 3 // 2)
    return "".join(rng.choices(local, k=k))


def sizes(rng, n, mean):
    """Log-normal file sizes (median ~0.6 x mean, a long tail), capped."""
    sigma = 1.0
    mu = math.log(mean) - sigma * sigma / 2
    return [min(int(rng.lognormvariate(mu, sigma)), 40 * mean) + 60 for _ in range(n)]


def runtime_paths(rng, n):
    """Package-like paths below src/, with an (often empty) __init__.py per package."""
    n_pkg = max(4, int(n ** 0.5 / 2))
    paths = []
    pkgs = [f"{rng.choice(['core', 'api', 'tools', 'plugins', 'memory', 'server', 'utils', 'models'])}{i}"
            for i in range(n_pkg)]
    subs = {p: [f"{p}/sub{j}" for j in range(rng.randint(0, 6))] for p in pkgs}
    dirs = [d for p in pkgs for d in [p] + subs[p]]
    inits = [f"{d}/__init__.py" for d in dirs]
    i = 0
    while len(paths) + len(inits) < n:
        d = rng.choice(dirs)
        paths.append(f"{d}/mod_{i:05d}.py")
        i += 1
    return sorted(paths), inits


# ---------------------------------------------------------------- fast-import


class Importer:
    """A `git fast-import` process writing into a bare repository."""

    def __init__(self, repo):
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", repo], check=True)
        self.p = subprocess.Popen(
            ["git", "-C", repo, "fast-import", "--quiet", "--done", "--depth=50"],
            stdin=subprocess.PIPE)
        self.out = self.p.stdin
        self.mark = 0
        self.tick = 0

    def _data(self, data):
        self.out.write(b"data %d\n" % len(data))
        self.out.write(data)
        self.out.write(b"\n")

    def commit(self, message, changes, parent):
        """changes: list of ('M', path, bytes) or ('D', path). Returns the mark."""
        self.mark += 1
        self.tick += 3600
        when = EPOCH + self.tick
        self.out.write(b"commit refs/heads/main\nmark :%d\n" % self.mark)
        self.out.write(b"author Bench <bench@example.org> %d +0000\n" % when)
        self.out.write(b"committer Bench <bench@example.org> %d +0000\n" % when)
        self._data(message.encode())
        if parent:
            self.out.write(b"from :%d\n" % parent)
        for c in changes:
            if c[0] == "M":
                self.out.write(b"M 100644 inline %s\n" % c[1].encode())
                self._data(c[2])
            else:
                self.out.write(b"D %s\n" % c[1].encode())
        self.out.write(b"\n")
        return self.mark

    def tag(self, name, mark, annotated):
        if annotated:
            self.out.write(b"tag %s\nfrom :%d\n" % (name.encode(), mark))
            self.out.write(b"tagger Bench <bench@example.org> %d +0000\n" % (EPOCH + self.tick))
            self._data(f"Release {name}\n".encode())
        else:
            self.out.write(b"reset refs/tags/%s\nfrom :%d\n\n" % (name.encode(), mark))

    def done(self):
        self.out.write(b"done\n")
        self.out.close()
        if self.p.wait() != 0:
            raise SystemExit("git fast-import failed")


def version_json(v, force=False):
    extra = ', "force_restart": true' if force else ""
    return f'{{"name": "bench-server", "version": "{v}"{extra}}}\n'.encode()


def edit(rng, pool, text):
    """A realistic small edit: replace, insert or delete a few lines."""
    lines = text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    kind = rng.random()
    if kind < 0.5 and lines:
        n = rng.randint(1, 8)
        lines[at:at + n] = rng.choices(pool, k=rng.randint(1, 10))
    elif kind < 0.85:
        lines[at:at] = rng.choices(pool, k=rng.randint(1, 30))
    elif lines:
        del lines[at:at + rng.randint(1, 10)]
    return "".join(lines)


# ---------------------------------------------------------------- repositories


def history_repo(repo, seed, n_files, mean_size, n_tags):
    """A project with `n_tags` releases of realistic churn."""
    rng = random.Random(f"history:{seed}")
    pool = make_pool(seed)
    paths, inits = runtime_paths(rng, n_files)
    files = {}
    for i, (p, s) in enumerate(zip(paths, sizes(rng, len(paths), mean_size))):
        files[f"src/{p}"] = file_text(pool, f"{seed}:{p}", s)
    for d in inits:
        # Most packages have an empty __init__.py (one shared blob), some export names.
        files[f"src/{d}"] = "" if rng.random() < 0.7 else file_text(pool, f"{seed}:{d}", 300)
    other = {}
    for d in EXCLUDED_DIRS:
        for j in range(max(3, n_files // (20 if d == "tests" else 80))):
            other[f"src/{d}/{d}_{j:03d}.py"] = file_text(pool, f"{seed}:{d}:{j}", 3000)
    for j in range(max(3, n_files // 60)):
        other[f"src/data/table_{j:03d}.json"] = '{"rows": [%s]}\n' % ", ".join(
            str(rng.randint(0, 999)) for _ in range(200))
    docs = {f"docs/page{j:02d}.md": f"# Page {j}\n\n" + file_text(pool, f"{seed}:doc{j}", 2000)
            for j in range(12)}
    docs["README.md"] = "# bench-server\n\n" + file_text(pool, f"{seed}:readme", 4000)
    changelog = ["# Changelog\n"]

    imp = Importer(repo)
    version = [1, 0, 0]
    vstr = lambda: "%d.%d.%d" % tuple(version)
    initial = [("M", p, t.encode()) for p, t in {**files, **other, **docs}.items()]
    initial.append(("M", "version.json", version_json(vstr())))
    initial.append(("M", "CHANGELOG.md", "".join(changelog).encode()))
    head = imp.commit("Initial import\n", initial, None)
    imp.tag("v" + vstr(), head, annotated=True)
    next_id = len(paths)
    runtime = sorted(p for p in files if not p.endswith("__init__.py"))

    for t in range(1, n_tags):
        r = rng.random()
        if r < 0.01:
            version[0] += 1; version[1] = 0; version[2] = 0
        elif r < 0.2:
            version[1] += 1; version[2] = 0
        else:
            version[2] += 1
        # One or two commits per release; the tag goes on the last.
        kind = rng.random()
        changes = {}
        if kind < 0.60:  # a fix or feature: a few runtime files
            for p in rng.sample(runtime, min(len(runtime), rng.choice([1, 1, 1, 2, 2, 3, 4, 6, 9]))):
                files[p] = edit(rng, pool, files[p])
                changes[p] = files[p]
            if rng.random() < 0.1:  # a new module
                d = rng.choice(inits).rsplit("/", 1)[0]
                p = f"src/{d}/mod_{next_id:05d}.py"
                next_id += 1
                files[p] = file_text(pool, f"{seed}:{p}", sizes(rng, 1, mean_size)[0])
                runtime.append(p); runtime.sort()
                changes[p] = files[p]
            if rng.random() < 0.04 and len(runtime) > 10:  # a removal
                p = rng.choice(runtime)
                runtime.remove(p); del files[p]
                changes[p] = None
            if rng.random() < 0.5:  # tests come with it
                p = rng.choice(sorted(q for q in other if "/tests/" in q))
                other[p] = edit(rng, pool, other[p]); changes[p] = other[p]
        elif kind < 0.75:  # docs only
            p = rng.choice(sorted(docs))
            docs[p] = edit(rng, pool, docs[p]); changes[p] = docs[p]
        elif kind < 0.90:  # excluded folders only
            for p in rng.sample(sorted(other), rng.randint(1, 3)):
                other[p] = edit(rng, pool, other[p]) if p.endswith(".py") else other[p] + " "
                changes[p] = other[p]
        else:  # version bump only (a re-release)
            pass
        changelog.append(f"\n## {vstr()}\n\n- {' '.join(rng.choices(pool[:50], k=1)).strip()}\n")
        ops = [("D", p) if c is None else ("M", p, c.encode()) for p, c in sorted(changes.items())]
        if len(ops) > 1 and rng.random() < 0.4:
            head = imp.commit(f"Work towards {vstr()}\n", ops[: len(ops) // 2], head)
            ops = ops[len(ops) // 2:]
        force = rng.random() < 0.01
        ops.append(("M", "version.json", version_json(vstr(), force)))
        ops.append(("M", "CHANGELOG.md", "".join(changelog).encode()))
        head = imp.commit(f"Release {vstr()}\n", ops, head)
        imp.tag("v" + vstr(), head, annotated=rng.random() < 0.8)
    imp.done()
    gc(repo)


def large_repo(repo, seed, n_files, mean_size, big_size):
    rng = random.Random(f"large:{seed}")
    pool = make_pool(seed)
    paths, inits = runtime_paths(rng, n_files)
    imp = Importer(repo)
    size_of = dict(zip(paths, sizes(rng, len(paths), mean_size)))
    total = [0]

    def initial():  # streamed into fast-import: 0.9 GB never sits in memory
        for p, s in size_of.items():
            data = file_text(pool, f"{seed}:{p}", s).encode()
            total[0] += len(data)
            yield ("M", f"src/{p}", data)
        for d in inits:
            yield ("M", f"src/{d}", b"")
        for j in range(200):
            yield ("M", f"src/tests/test_{j:03d}.py", file_text(pool, f"{seed}:t{j}", 4000).encode())
        yield ("M", "README.md", b"# large bench project\n")
        yield ("M", "version.json", version_json("1.0.0"))

    base = imp.commit("Initial import\n", initial(), None)
    print(f"  large: {len(paths) + len(inits)} runtime files, {total[0] / 1e9:.2f} GB", file=sys.stderr)
    imp.tag("v1.0.0", base, True)
    c1 = imp.commit("Docs\n", [("M", "README.md", b"# large bench project\n\nNow documented.\n"),
                               ("M", "version.json", version_json("1.0.1"))], base)
    imp.tag("v1.0.1", c1, True)
    # Three runtime files change: regenerate their originals (same seed and
    # size as above) and edit them.
    changed = rng.sample(paths, 3)
    ops = []
    for p in changed:
        orig = file_text(pool, f"{seed}:{p}", size_of[p])
        ops.append(("M", f"src/{p}", edit(rng, pool, orig).encode()))
    ops.append(("M", "version.json", version_json("1.0.2")))
    c2 = imp.commit("Fix three modules\n", ops, c1)
    imp.tag("v1.0.2", c2, True)
    c3 = imp.commit("Tests only\n", [("M", "src/tests/test_000.py", b"def test_x():\n    assert True\n"),
                                     ("M", "version.json", version_json("1.0.3"))], c2)
    imp.tag("v1.0.3", c3, True)
    # One very large runtime file on top of v1.0.0, for memory flatness.
    big = file_text(pool, f"{seed}:big", big_size).encode()
    c4 = imp.commit("One big generated module\n", [("M", "src/zz_generated/big_table.py", big),
                                                   ("M", "version.json", version_json("1.1.0-big"))], base)
    imp.tag("v1.1.0-big", c4, True)
    imp.done()
    gc(repo)


def gc(repo):
    t = time.time()
    # -f: search deltas afresh, as `git gc --aggressive` would. fast-import
    # deltas each blob against the one written before it, whatever its
    # path, which leaves chains of unrelated files that no real repository
    # has; git's own search only keeps deltas that pay off.
    subprocess.run(["git", "-C", repo, "-c", "gc.auto=0", "-c", "pack.threads=2", "repack", "-a", "-d", "-f",
                    "-q", "--window=10", "--depth=50"], check=True)
    subprocess.run(["git", "-C", repo, "pack-refs", "--all"], check=True)
    subprocess.run(["git", "-C", repo, "prune"], check=True)
    print(f"  repacked {repo} in {time.time() - t:.0f} s", file=sys.stderr)


def runtime_dir(path, seed, n_files, mean_size):
    rng = random.Random(f"rt:{seed}")
    pool = make_pool(seed, 50_000)
    paths, inits = runtime_paths(rng, n_files)
    for p, s in zip(paths, sizes(rng, len(paths), mean_size)):
        full = os.path.join(path, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(file_text(pool, f"{seed}:{p}", s))
    for d in inits:
        with open(os.path.join(path, d), "w") as f:
            f.write("")
    for d in ("tests", "scripts", "__pycache__"):
        os.makedirs(os.path.join(path, d), exist_ok=True)
        with open(os.path.join(path, d, "x.py"), "w") as f:
            f.write("x = 1\n")
    with open(os.path.join(path, "version.json"), "w") as f:
        f.write('{"version": "7.11.0"}\n')
    # Age the files past the status cache's racy-clean margin (2 s), as an
    # installed runtime is: otherwise every warm run would re-hash.
    old = EPOCH
    for dirpath, _, names in os.walk(path):
        for n in names:
            os.utime(os.path.join(dirpath, n), (old, old))


TARGETS = {
    "small": lambda p: history_repo(p, 1, 300, 22_000, 380),
    "medium": lambda p: history_repo(p, 2, 1000, 19_500, 150),
    "large": lambda p: large_repo(p, 3, 45_000, 23_000, 200_000_000),
    "rt300": lambda p: runtime_dir(p, 4, 300, 20_000),
    "rt20k": lambda p: runtime_dir(p, 5, 20_000, 20_000),
}
PATHS = {"small": "small.git", "medium": "medium.git", "large": "large.git",
         "rt300": "rt300", "rt20k": "rt20k"}


def ensure(base, name):
    path = os.path.join(base, PATHS[name])
    stamp = path + ".done"
    if os.path.exists(stamp) and open(stamp).read().strip() == GEN_VERSION and os.path.exists(path):
        return path
    if os.path.exists(path):
        shutil.rmtree(path)
    t = time.time()
    print(f"generating {name} in {path} ...", file=sys.stderr)
    TARGETS[name](path)
    with open(stamp, "w") as f:
        f.write(GEN_VERSION + "\n")
    print(f"  {name} done in {time.time() - t:.0f} s", file=sys.stderr)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench"))
    ap.add_argument("targets", nargs="*", default=["all"])
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    names = list(TARGETS) if "all" in a.targets else a.targets
    for n in names:
        if n not in TARGETS:
            ap.error(f"unknown target {n}")
        print(ensure(a.dir, n))


if __name__ == "__main__":
    main()

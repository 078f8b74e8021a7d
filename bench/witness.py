"""The witness's cost in one run: a range on an ordinary tree with and
without it, a range on a tree with attributes with and without it, and
git's own checkout-index of the same paths of both ends (figures in
RESULTS.md). Usage: witness.py FPCHECK [RUNS] [CHECKOUT_SCRIPT]"""
import os, subprocess, sys, time, statistics, random, shutil

here = os.path.dirname(os.path.abspath(__file__))
F = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 11
D = os.environ.get("FPCHECK_BENCH_DIR", "/tmp/fpcheck-bench") + "/witness"; R = D + "/repo"
env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x",
           GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@x")
def git(*a): subprocess.run(["git", "-C", R, *a], check=True, env=env, capture_output=True)
if not os.path.exists(R + "/.git"):
    shutil.rmtree(D, ignore_errors=True); os.makedirs(R)
    git("init", "-q", "-b", "main")
    rnd = random.Random(1)
    for i in range(1008):
        p = f"{R}/src/pkg{i % 40}/mod{i}.py"; os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("".join(f"def f{j}(x):\n    return x * {rnd.randint(0, 10**6)}  # {'y' * 20}\n" for j in range(300)))
    open(R + "/version.json", "w").write('{"version": "1.0.0"}\n')
    git("add", "-A"); git("commit", "-qm", "1"); git("tag", "v1.0.0")
    open(R + "/README.md", "w").write("docs\n"); open(R + "/version.json", "w").write('{"version": "1.1.0"}\n')
    git("add", "-A"); git("commit", "-qm", "2"); git("tag", "v1.1.0")
    open(R + "/.gitattributes", "w").write("*.md text\n"); open(R + "/version.json", "w").write('{"version": "1.2.0"}\n')
    git("add", "-A"); git("commit", "-qm", "3"); git("tag", "v1.2.0")
    git("gc", "-q")
cmds = {
    "ordinary v1.0.0..v1.1.0 --witness auto": [F, "--repo", R, "v1.0.0..v1.1.0", "--no-cache", "--format", "json", "--witness", "auto"],
    "ordinary v1.0.0..v1.1.0 --witness never": [F, "--repo", R, "v1.0.0..v1.1.0", "--no-cache", "--format", "json", "--witness", "never"],
    "attrs v1.1.0..v1.2.0 --witness auto": [F, "--repo", R, "v1.1.0..v1.2.0", "--no-cache", "--format", "json", "--witness", "auto"],
    "attrs v1.1.0..v1.2.0 --witness never": [F, "--repo", R, "v1.1.0..v1.2.0", "--no-cache", "--format", "json", "--witness", "never"],
    "git read-tree + checkout-index of src at v1.1.0 and v1.2.0": ["sh", (sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "plain", "checkout_index.sh")), R + "/.git", "src", "v1.1.0", "v1.2.0"],
}
import json
for k, c in cmds.items():
    out = subprocess.run(c, capture_output=True, text=True, env=dict(os.environ, FPCHECK_BENCH_DIR=D))
    if c[0] == F: print(k, "->", json.loads(out.stdout)["witness"]["status"], json.loads(out.stdout)["reason"])
times = {k: [] for k in cmds}
for r in range(N + 1):
    for k, c in cmds.items():
        t = time.perf_counter(); subprocess.run(c, check=True, capture_output=True, env=dict(os.environ, FPCHECK_BENCH_DIR=D)); dt = time.perf_counter() - t
        if r: times[k].append(dt)
for k, v in times.items():
    print(f"{k}: median {statistics.median(v)*1000:.1f} ms, min {min(v)*1000:.1f} ms")

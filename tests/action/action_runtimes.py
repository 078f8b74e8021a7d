"""Several runtimes and avoidable restarts through
the action, under the simulated runner: the outputs of every runtime, one
sticky comment with every runtime, the `avoidable` output and sentence; with
the output functions checked alone first."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fixtures import MARKER, PREFIXED_RUNTIMES, Checks, Monorepo, PrefixedMonorepo, commit, git, pr_event
from act_runner import ActRunner, dump
from simulated_runner import PR, ROOT, Stub

# The action's modules, for the unit checks.
sys.path.insert(0, str(ROOT / ".github" / "action"))
from fpaction import check, fetch, outputs, workflow  # noqa: E402

# A pull request's own config that excludes the worker's only file.
TWO_EXCLUDING_JOB = '[runtimes.server]\nroot = "server"\n[runtimes.worker]\nroot = "worker"\nexclude = ["job.py"]\n'
AVOIDABLE_LINE = "**This restart is avoidable:** 1 file changed only comments or docstrings; hold it for the next code release."


def one(name: str, restart: bool, reason: str, avoidable: object, fp: tuple[str, str], files: list[str], version="1.0") -> dict:
    """A single-runtime report as fpcheck's JSON has it, with a name."""
    return {
        "name": name,
        "restart_required": restart,
        "reason": reason,
        "avoidable": avoidable,
        "summary": f"{name}: {reason}",
        "from": {"version": version, "fingerprint": fp[0]},
        "to": {"version": version, "fingerprint": fp[1]},
        "changes": {"runtime": [{"path": f} for f in files]},
        "warnings": [{"code": "code_changed_version_unchanged", "message": f"{name} w"}] if restart else [],
    }


def unit_checks(c: Checks) -> None:
    a, b = "a" * 40, "b" * 40
    # The default `from` is asked of fpcheck, with the commit id after `--`.
    c.equal(
        check.resolve_command("fpcheck", Path("/r"), fetch.Rev("HEAD", b), "v*", "*-rc*"),
        ["fpcheck", "--repo=/r", "--resolve-only", "--format=json", "--tag-match=v*", "--tag-exclude=*-rc*", "--", f"..{b}"],
        "resolve_command: fpcheck's rule, globs as values, the commit id after --",
    )
    c.equal(
        check.resolve_command("fpcheck", Path("/r"), fetch.Rev("x", b), "", "")[-3:],
        ["--format=json", "--", f"..{b}"],
        "resolve_command: no glob, no flag",
    )
    c.equal(
        check.resolve_command("fpcheck", Path("/r"), fetch.Rev("x", b), "", "", ["--runtime=server", "--config=/c.toml"]),
        ["fpcheck", "--repo=/r", "--runtime=server", "--config=/c.toml", "--resolve-only", "--format=json", "--", f"..{b}"],
        "resolve_command: the settings flags choose the runtime whose tag_pattern applies",
    )
    for bad in (fetch.Rev("v1", "v1"), fetch.Rev("--root=x", "--root=x")):
        try:
            check.resolve_command("fpcheck", Path("/r"), bad, "*", "")
            c.check(False, f"resolve_command refuses {bad.sha!r}, not a commit id")
        except workflow.Fail:
            c.check(True, f"resolve_command refuses {bad.sha!r}, not a commit id")
    resolved = json.dumps({"from": {"ref": "refs/tags/HEAD", "commit": a}, "to": {"ref": b, "commit": b}, "notes": ["n"]})
    c.equal(check.parse_resolved(resolved), (fetch.Rev("refs/tags/HEAD", a), ["n"]), "parse_resolved: the name and commit fpcheck found")
    for bad in ("", "{}", "[]", json.dumps({"from": {"ref": "v1", "commit": None}})):
        try:
            check.parse_resolved(bad)
            c.check(False, f"parse_resolved refuses {bad!r}")
        except workflow.Fail:
            c.check(True, f"parse_resolved refuses {bad!r}")

    # Several runtimes: what holds for all of them.
    server = one("server", True, "code_changed", False, ("f1", "f2"), ["server/app.py"])
    worker = one("worker", True, "code_changed", True, ("w1", "w2"), ["worker/job.py"])
    forced = one("worker", True, "forced", None, ("w1", "w1"), [])
    quiet = one("worker", False, "no_runtime_change", False, ("w1", "w1"), [])
    pairs = lambda *rs: [(r["name"], r) for r in rs]  # noqa: E731
    c.equal(outputs.overall_reason(pairs(server, worker)), "code_changed", "overall_reason: one shared reason")
    c.equal(outputs.overall_reason(pairs(server, forced)), "code_changed,forced", "overall_reason: each restarting runtime's reason once")
    c.equal(outputs.overall_reason(pairs(server, quiet)), "code_changed", "overall_reason: the runtimes that restart only")
    c.equal(
        outputs.overall_reason(pairs(quiet, {**quiet, "name": "x", "reason": "unavailable_version_unchanged"})),
        "no_runtime_change,unavailable_version_unchanged",
        "overall_reason: every runtime's when none restarts",
    )
    c.equal(outputs.overall_avoidable(pairs(server, worker)), "false", "overall_avoidable: one runtime restarts for code")
    c.equal(outputs.overall_avoidable(pairs(worker, quiet)), "true", "overall_avoidable: every restarting runtime avoidably")
    c.equal(outputs.overall_avoidable(pairs(worker, forced)), "", "overall_avoidable: unknown when a restarting one is unclassified")
    c.equal(outputs.overall_avoidable(pairs(server, forced)), "false", "overall_avoidable: false wins over unknown")
    c.equal(outputs.overall_avoidable(pairs(quiet)), "false", "overall_avoidable: no restart, nothing to avoid")
    c.equal(outputs.overall_avoidable(pairs({**quiet, "avoidable": None})), "", "overall_avoidable: unknown without classification")
    c.equal(outputs.shared(["1.0", "1.0"]), "1.0", "shared: the value all have")
    c.equal(outputs.shared(["1.0", "1.1"]), "", "shared: empty when they differ")
    c.equal(outputs.shared([None, ""]), "", "shared: none is empty")

    report = {"restart_required": True, "summary": "server restarts; worker restarts", "runtimes": [server, worker]}
    paths = {"json": Path("j"), "summary": Path("s"), "comment": Path("c")}
    o = outputs.step_outputs(report, fetch.Rev("v1", a), fetch.Rev("abc", b), paths)
    c.equal(
        (o["restart-required"], o["reason"], o["avoidable"], o["summary"], o["from-version"], o["from-fingerprint"]),
        ("true", "code_changed", "false", "server restarts; worker restarts", "1.0", ""),
        "step_outputs, several runtimes: any, the reasons, shared values",
    )
    c.equal(json.loads(o["changed-runtime-files"]), ["server/app.py", "worker/job.py"], "step_outputs: every runtime's files")
    runtimes = json.loads(o["runtimes"])
    c.equal(sorted(runtimes), ["server", "worker"], "step_outputs: runtimes maps each name")
    c.equal(
        runtimes["worker"],
        {
            "restart_required": True,
            "reason": "code_changed",
            "avoidable": True,
            "summary": "worker: code_changed",
            "from_version": "1.0",
            "to_version": "1.0",
            "from_fingerprint": "w1",
            "to_fingerprint": "w2",
            "changed_runtime_files": ["worker/job.py"],
        },
        "step_outputs: a runtime's verdict",
    )
    single = {k: v for k, v in worker.items() if k != "name"}
    o = outputs.step_outputs(single, fetch.Rev("v1", a), fetch.Rev("abc", b), paths)
    c.equal((o["reason"], o["avoidable"], o["runtimes"], o["from-fingerprint"]), ("code_changed", "true", "{}", "w1"), "step_outputs: one runtime")
    o = outputs.step_outputs({**single, "avoidable": None}, fetch.Rev("v1", a), fetch.Rev("abc", b), paths, "worker")
    c.equal((o["avoidable"], sorted(json.loads(o["runtimes"]))), ("", ["worker"]), "step_outputs: the runtime input names it")
    c.equal(
        outputs.annotations(report),
        [
            ("warning", "fpcheck: code_changed_version_unchanged (runtime server)", "server w"),
            ("warning", "fpcheck: code_changed_version_unchanged (runtime worker)", "worker w"),
            ("notice", "fpcheck: restart required", "server restarts; worker restarts"),
        ],
        "annotations: every runtime's warnings, named",
    )
    c.equal(
        outputs.annotations(single)[-1],
        ("notice", "fpcheck: restart required, avoidable", "worker: code_changed"),
        "annotations: the notice says avoidable",
    )
    # The advice's possible missed restart: an output and the notice.
    missed = {"kind": "possible_missed_restart", "cause": "data_file", "message": "m", "evidence": ["src/a.py:3"]}
    quiet_one = {**single, "restart_required": False, "reason": "no_runtime_change", "avoidable": False}
    c.equal(outputs.step_outputs(quiet_one, fetch.Rev("v1", a), fetch.Rev("abc", b), paths)["possible-missed-restart"], "false", "step_outputs: no advice, no missed restart")
    advised = {**quiet_one, "advice": [missed]}
    c.equal(outputs.step_outputs(advised, fetch.Rev("v1", a), fetch.Rev("abc", b), paths)["possible-missed-restart"], "true", "step_outputs: a possible missed restart")
    c.equal(outputs.missed_restart({"runtimes": [{**advised, "name": "w"}, {**quiet_one, "name": "s"}]}), "true", "missed_restart: any runtime's")
    c.equal(outputs.missed_restart({**quiet_one, "advice": [{**missed, "kind": "mcp_surface"}]}), "false", "missed_restart: other advice does not count")
    c.equal(
        outputs.annotations(advised)[-1][1],
        "fpcheck: no restart, possible missed restart (see the advice; set force_restart)",
        "annotations: the notice says possible missed restart",
    )


def monorepo_runs(c: Checks, tmp: Path, stub: Stub, runner: ActRunner, binary: Path) -> None:
    home = tmp / "monorepo"
    home.mkdir()
    fx = Monorepo(home)
    bin_env = {"FPCHECK_BINARY": str(binary)}
    pr = pr_event(fx.head1, fx.merge1, fx.base)

    # ---- M1. no `runtime` input: every runtime in one run, one comment.
    before = len(stub.requests)
    r = runner.run(fx.checkout("m1", fx.merge1, f"refs/remotes/pull/{PR}/merge"), "pull_request", pr, {"comment": "true", "comment-key": "mono"}, bin_env)
    c.check(r.ok, "M1: several runtimes: the run succeeds", dump(r))
    o = r.outputs
    c.equal((o.get("restart-required"), o.get("reason"), o.get("avoidable")), ("true", "code_changed", "false"), "M1: any restarts, one reason, not avoidable")
    c.equal(o.get("summary"), "server and worker restart", "M1: the overall summary")
    c.equal((o.get("from-ref"), o.get("from-commit"), o.get("to-commit")), ("v1.0.0", fx.v100, fx.head1), "M1: the ends")
    c.equal((o.get("from-version"), o.get("to-version")), ("1.0.0", "1.0.0"), "M1: the version both runtimes have")
    c.equal((o.get("from-fingerprint"), o.get("to-fingerprint")), ("", ""), "M1: no single fingerprint for two runtimes")
    c.equal(json.loads(o.get("changed-runtime-files") or "null"), ["server/app.py", "worker/job.py"], "M1: every runtime's files")
    runtimes = json.loads(o.get("runtimes") or "{}")
    report = r.report()
    by_name = {x["name"]: x for x in report.get("runtimes", [])}
    c.equal(sorted(runtimes), ["server", "worker"], "M1: runtimes names every runtime")
    c.equal(
        [(n, v["restart_required"], v["reason"], v["avoidable"], v["changed_runtime_files"]) for n, v in sorted(runtimes.items())],
        [("server", True, "code_changed", False, ["server/app.py"]), ("worker", True, "code_changed", True, ["worker/job.py"])],
        "M1: each runtime's verdict, the worker's avoidable",
    )
    c.equal(
        {n: (v["from_fingerprint"], v["to_fingerprint"]) for n, v in runtimes.items()},
        {n: (x["from"]["fingerprint"], x["to"]["fingerprint"]) for n, x in by_name.items()},
        "M1: each runtime's fingerprints, as the report has them",
    )
    c.check(all(len(v["to_fingerprint"]) == 64 for v in runtimes.values()), "M1: real fingerprints", repr(runtimes))
    s = r.summary
    c.check(s.startswith(MARKER) and s.count(MARKER) == 1, "M1: the summary is one report", s[:300])
    c.check("<code>server</code>: restart required" in s and "<code>worker</code>: restart required" in s, "M1: a section per runtime", s)
    c.equal(s.count(AVOIDABLE_LINE), 1, "M1: the worker's avoidable sentence, once")
    titles = [p.get("title") for n, p, _ in r.commands if n == "warning"]
    c.check(
        "fpcheck: code_changed_version_unchanged (runtime server)" in titles
        and "fpcheck: code_changed_version_unchanged (runtime worker)" in titles,
        "M1: each runtime's warnings are annotations, named",
        repr(titles),
    )
    writes = [q for q in stub.requests[before:] if q["method"] in ("POST", "PATCH")]
    c.equal([q["method"] for q in writes], ["POST"], "M1: one comment")
    body = stub.comments[-1]["body"] if writes else ""
    c.check(
        body.startswith(MARKER) and "<code>server</code>: restart required" in body and "<code>worker</code>: restart required" in body,
        "M1: the comment has every runtime",
        body[:1500],
    )
    c.check(AVOIDABLE_LINE in body and "fpcheck:key=mono" in body, "M1: the comment says avoidable in one line", body[-1500:])

    # ---- M2. `runtime: worker`: the single-runtime report, avoidable.
    r = runner.run(fx.checkout("m2", fx.merge1, f"refs/remotes/pull/{PR}/merge"), "pull_request", pr, {"runtime": "worker"}, bin_env)
    c.check(r.ok, "M2: one runtime chosen: the run succeeds", dump(r))
    o = r.outputs
    c.equal((o.get("restart-required"), o.get("reason"), o.get("avoidable")), ("true", "code_changed", "true"), "M2: an avoidable restart")
    c.equal(sorted(json.loads(o.get("runtimes") or "{}")), ["worker"], "M2: runtimes holds the chosen one")
    c.equal(len(o.get("to-fingerprint", "")), 64, "M2: the runtime's own fingerprint")
    c.equal(json.loads(o.get("changed-runtime-files") or "null"), ["worker/job.py"], "M2: its files")
    c.check(AVOIDABLE_LINE in r.summary and "| runtime |" not in r.summary, "M2: the job summary says avoidable", r.summary)
    c.check(
        any(n == "notice" and p.get("title") == "fpcheck: restart required, avoidable" for n, p, _ in r.commands),
        "M2: the notice says avoidable",
        repr(r.commands),
    )

    # ---- M3. the pull request excludes the worker's file in its own
    # fpcheck.toml and changes its code: the worker still restarts, and the
    # settings change is in the summary, the comment and an annotation
    # naming the runtime.
    git(fx.src, "checkout", "-q", "-b", "sneaky", fx.base)
    sneaky = commit(
        fx.src,
        {"worker/job.py": "def work():\n    return 2\n", "fpcheck.toml": TWO_EXCLUDING_JOB},
        "exclude the worker's job",
    )
    git(fx.src, "checkout", "-q", "main")
    merge = fx.publish_pr(sneaky)
    r = runner.run(
        fx.checkout("m3", merge, f"refs/remotes/pull/{PR}/merge"),
        "pull_request",
        pr_event(sneaky, merge, fx.base),
        {"comment": "true", "comment-key": "mono3", "fail-on-restart": "true"},
        bin_env,
    )
    o = r.outputs
    c.equal((o.get("restart-required"), o.get("avoidable")), ("true", "false"), "M3: the worker's hidden change still restarts")
    runtimes = json.loads(o.get("runtimes") or "{}")
    c.equal(
        {n: (v["restart_required"], v["reason"]) for n, v in runtimes.items()},
        {"server": (False, "no_runtime_change"), "worker": (True, "settings_changed_runtime_changed")},
        "M3: each runtime's verdict",
    )
    c.equal((o.get("reason"), o.get("summary")), ("settings_changed_runtime_changed", "worker restarts; server does not"), "M3: reason and summary")
    c.check("settings_changed" in r.summary, "M3: the settings change is in the job summary", r.summary)
    body = stub.comments[-1]["body"] if stub.comments else ""
    c.check("fpcheck:key=mono3" in body and "settings_changed" in body, "M3: and in the comment", body[-2000:])
    titles = [p.get("title") for n, p, _ in r.commands if n == "warning"]
    c.check("fpcheck: settings_changed (runtime worker)" in titles, "M3: and an annotation naming the runtime", repr(titles))
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(
        not r.ok and r.failed_step == r.steps[-1]["id"] and any("worker restarts; server does not" in m for m in errors),
        "M3: fail-on-restart fails the last step, saying which runtime restarts",
        repr(errors),
    )

    prefixed_runs(c, tmp, runner, binary)


def prefixed_runs(c: Checks, tmp: Path, runner: ActRunner, binary: Path) -> None:
    """The default `from` follows the runtime's `tag_pattern`, as `fpcheck
    ..TO --runtime NAME` does on the branch."""
    home = tmp / "prefixed"
    home.mkdir()
    fx = PrefixedMonorepo(home)
    bin_env = {"FPCHECK_BINARY": str(binary)}
    pr = pr_event(fx.head1, fx.merge1, fx.base)
    ws = fx.checkout("p1", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    r = runner.run(ws, "pull_request", pr, {"runtime": "server"}, bin_env)
    c.check(r.ok, "P1: runtime server: the run succeeds", dump(r))
    o = r.outputs
    c.equal((o.get("from-ref"), o.get("from-commit")), ("server-v1.0.0", fx.v100), "P1: the server's last release, not the nearest tag")
    c.equal((o.get("restart-required"), o.get("reason")), ("true", "code_changed"), "P1: the server's change restarts")
    r = runner.run(fx.checkout("p2", fx.merge1, f"refs/remotes/pull/{PR}/merge"), "pull_request", pr, {"runtime": "worker"}, bin_env)
    c.check(r.ok, "P2: runtime worker: the run succeeds", dump(r))
    c.equal((r.outputs.get("from-ref"), r.outputs.get("from-commit")), ("worker-v1.1.0", fx.worker110), "P2: the worker's last release")
    c.equal(r.outputs.get("restart-required"), "false", "P2: the worker did not change")
    # No runtime input: the runtimes' previous releases differ.
    r = runner.run(fx.checkout("p3", fx.merge1, f"refs/remotes/pull/{PR}/merge"), "pull_request", pr, {}, bin_env)
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(
        not r.ok and any("name their release tags differently" in m and "set the `from` input" in m for m in errors),
        "P3: several patterns and no runtime: a clear failure",
        repr(errors),
    )
    # An explicit tag-pattern input still wins.
    r = runner.run(fx.checkout("p4", fx.merge1, f"refs/remotes/pull/{PR}/merge"), "pull_request", pr, {"runtime": "server", "tag-pattern": "worker-v*"}, bin_env)
    c.check(r.ok, "P4: tag-pattern input: the run succeeds", dump(r))
    c.equal(r.outputs.get("from-ref"), "worker-v1.1.0", "P4: the input's glob, as --tag-match")
    # The pull request's own fpcheck.toml points the server at the
    # worker's tags: the base's pattern still chooses the server's release.
    git(fx.src, "checkout", "-q", "release/1.2")
    own = PREFIXED_RUNTIMES.replace('"server-v*"', '"worker-v*"')
    head2 = commit(fx.src, {"fpcheck.toml": own}, "the server read by the worker's tags")
    git(fx.src, "checkout", "-q", "main")
    merge2 = fx.publish_pr(head2)
    r = runner.run(
        fx.checkout("p5", merge2, f"refs/remotes/pull/{PR}/merge"),
        "pull_request",
        pr_event(head2, merge2, fx.base),
        {"runtime": "server"},
        bin_env,
    )
    c.check(r.ok, "P5: a pull request that edits tag_pattern: the run succeeds", dump(r))
    c.equal(r.outputs.get("from-ref"), "server-v1.0.0", "P5: the base's tag_pattern, not the pull request's")
    c.equal(
        check.resolve_command("fpcheck", Path("/r"), fetch.Rev("x", "b" * 40), "", "", [], fetch.Rev("base", "c" * 40))[-4:],
        ["--format=json", f"--tag-pattern-at={'c' * 40}", "--", f"..{'b' * 40}"],
        "resolve_command: the base's commit gives the patterns",
    )

"""The release pull request scenarios, run through a runner (act's, in
act_action_test.py): a release pull request (outputs, summary, annotations,
a new sticky comment, escaped hostile file names, the shallow-clone
fetches); a second push to it (the same comment PATCHed, fail-on-restart
failing the job after the comment); explicit from/to outside a pull request
(no restart, no API call); fetch off; a full clone; a report too long for a
comment, under another comment-key."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from act_runner import ActRunner, dump
from fixtures import HOSTILE, MARKER, NEWLINE_NAME, Checks, Fixture, commit, git, pr_event, shallow
from simulated_runner import PR, TOKEN, Stub


HOSTILE_TITLE = "Release 1.2 $(touch pwned-title) `touch pwned-title`\n::error title=injected::from the title"
HOSTILE_BRANCH = "release/$(touch${IFS}pwned-branch)"


def release_pr_runs(c: Checks, tmp: Path, stub: Stub, runner: ActRunner, binary: Path) -> None:
    fx = Fixture(tmp)
    bin_env = {"FPCHECK_BINARY": str(binary)}

    # The PR already has 100 unrelated comments (so ours is on page 2) and a
    # drive-by comment that copies the marker: it must not be taken over.
    for n in range(100):
        stub.add_comment(f"comment {n}", "reviewer", "User", "CONTRIBUTOR")
    fake = stub.add_comment(MARKER + "\nfake report", "drive-by", "User", "NONE")

    # ---- 1. a release pull request, shallow checkout of the merge commit
    ws1 = fx.checkout("ws1", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    c.check(shallow(ws1), "the checkout starts shallow")
    # The pull request's title and branch name are the author's: shell and
    # workflow-command syntax in them must stay text (the runner puts the
    # branch in GITHUB_HEAD_REF).
    event1 = pr_event(fx.head1, fx.merge1, fx.base)
    event1["pull_request"]["title"] = HOSTILE_TITLE
    event1["pull_request"]["head"]["ref"] = HOSTILE_BRANCH
    r1 = runner.run(ws1, "pull_request", event1, {"comment": "true", "tag-exclude": "*-rc*"}, bin_env)
    c.check(r1.ok, "run 1 succeeds", dump(r1))
    c.equal(sorted(str(p) for p in tmp.rglob("pwned*")), [], "run 1: nothing in the title or branch name ran")
    o = r1.outputs
    c.equal(o.get("restart-required"), "true", "run 1: restart-required")
    c.equal(o.get("reason"), "code_changed", "run 1: reason")
    c.equal(o.get("avoidable"), "false", "run 1: a code change is not avoidable")
    c.equal(o.get("runtimes"), "{}", "run 1: one runtime, no runtimes map")
    c.equal(o.get("from-ref"), "v1.1.0", "run 1: from is the latest release tag reachable from the base, rc excluded")
    c.equal(o.get("to-ref"), fx.head1[:12], "run 1: to is the PR head")
    c.equal((o.get("from-commit"), o.get("to-commit")), (fx.v110, fx.head1), "run 1: from-commit, to-commit")
    c.check(re.fullmatch(r"[0-9a-f]{64}", o.get("from-fingerprint", "")) is not None, "run 1: from-fingerprint", repr(o))
    c.check(re.fullmatch(r"[0-9a-f]{64}", o.get("to-fingerprint", "")) is not None, "run 1: to-fingerprint", repr(o))
    c.check(o.get("from-fingerprint") != o.get("to-fingerprint"), "run 1: fingerprints differ")
    changed = json.loads(o.get("changed-runtime-files") or "null")
    c.equal(sorted(changed or []), sorted([HOSTILE, NEWLINE_NAME, "src/app/server.py"]), "run 1: changed-runtime-files")
    report = r1.report()
    c.equal(report["to"]["commit"], fx.head1, "run 1: report-json names the head commit")
    c.equal(report["from"]["commit"], fx.v110, "run 1: report-json names v1.1.0's commit")
    c.check(r1.has_markdown_report(), "run 1: report-markdown exists")
    # The summary: the report, escaped.
    s = r1.summary
    c.check(s.startswith(MARKER), "run 1: the summary is the report", s[:200])
    # fpcheck is given commit ids, and the names only as labels.
    c.check("Restart required" in s and f"<code>v1.1.0</code> → <code>{fx.head1[:12]}</code>" in s, "run 1: the summary has the verdict", s[:400])
    c.check(f"Updating from v1.1.0 to {fx.head1[:12]} forces" in s, "run 1: the summary names the ends", s[:600])
    c.check("&lt;img src=x onerror=alert(1)&gt;" in s, "run 1: the hostile name arrives escaped", s)
    c.check("<img" not in s and "|**x**" not in s and "`@team`" not in s, "run 1: no raw HTML or Markdown from names", s)
    c.check("pwned" in s and "\n::error" not in s, "run 1: a newline in a name stays on its line", s)
    # The fetches: what was fetched is said, and the checkout got what it needed.
    check_log = r1.step("check")["stdout"]
    c.check("commit history" in check_log and "the trees of" in check_log, "run 1: says what it fetched", check_log)
    # Annotations: the warning, escaped; nothing injected by file names.
    cmds = r1.commands
    warnings = [(p, m) for n, p, m in cmds if n == "warning"]
    c.check(
        any(p.get("title") == "fpcheck: code_changed_version_unchanged" for p, _ in warnings),
        "run 1: a ::warning:: per report warning",
        repr(cmds),
    )
    c.check(not any(n == "error" for n, _, _ in cmds), "run 1: no ::error:: (none injected)", repr(cmds))
    # The comment: created once, through the API, with the token.
    api1 = stub.api_requests()
    posts = [r for r in api1 if r["method"] == "POST"]
    c.equal(len(posts), 1, "run 1: one comment POSTed")
    c.check(all(r["authorization"] == f"Bearer {TOKEN}" for r in api1), "run 1: every API call carries the token")
    c.check(all(r["api_version"] == "2022-11-28" for r in api1), "run 1: API version header")
    c.check(
        any(r["method"] == "GET" and r["query"].get("page") == "2" for r in api1),
        "run 1: the comment list is paged through",
        repr([(r["method"], r["query"]) for r in api1]),
    )
    c.equal(fake["body"], MARKER + "\nfake report", "run 1: the drive-by comment is untouched")
    ours = [x for x in stub.comments if x["user"]["login"] == "github-actions[bot]"]
    c.equal(len(ours), 1, "run 1: one bot comment")
    body1 = ours[0]["body"] if ours else ""
    c.check(body1.startswith(MARKER), "run 1: the comment starts with the marker", body1[:200])
    c.check("&lt;img" in body1 and "<img" not in body1, "run 1: the comment escapes the hostile name", body1)
    c.equal(r1.outputs.get("comment-url"), ours[0]["html_url"] if ours else None, "run 1: comment-url output")

    # ---- 2. a second push to the PR: the same comment is updated; the
    # version bump is there, and fail-on-restart fails the job after the
    # comment.
    head2, merge2 = fx.push_to_pr()
    ws2 = fx.checkout("ws2", merge2, f"refs/remotes/pull/{PR}/merge")
    before = len(stub.requests)
    r2 = runner.run(
        ws2,
        "pull_request",
        pr_event(head2, merge2, fx.base),
        {"comment": "true", "tag-exclude": "*-rc*", "fail-on-restart": "true", "max-files": "1"},
        bin_env,
    )
    c.check(not r2.ok and r2.failed_step == r2.steps[-1]["id"], "run 2: the last step fails the job", dump(r2))
    errors = [m for n, _, m in r2.commands if n == "error"]
    c.check(any("fail-on-restart" in m for m in errors), "run 2: ::error:: says why", repr(errors))
    c.equal(r2.outputs.get("restart-required"), "true", "run 2: restart-required")
    c.equal(r2.outputs.get("to-version"), "1.2.0", "run 2: to-version")
    c.equal(r2.outputs.get("from-version"), "1.1.0", "run 2: from-version")
    api2 = [r for r in stub.requests[before:] if r["path"].startswith("/repos/")]
    c.equal([r["method"] for r in api2 if r["method"] != "GET"], ["PATCH"], "run 2: PATCH, no new POST")
    c.check(
        bool(ours) and api2 and api2[-1]["path"].endswith(f"/issues/comments/{ours[0]['id']}"),
        "run 2: the same comment is PATCHed",
        repr(api2),
    )
    c.equal(len([x for x in stub.comments if x["user"]["login"] == "github-actions[bot]"]), 1, "run 2: still one bot comment")
    body2 = ours[0]["body"] if ours else ""
    c.check(head2[:12] in body2 and body2 != body1, "run 2: the comment shows the new head", body2[:600])
    c.check("more not shown" in r2.summary, "run 2: max-files truncates with a count", r2.summary)

    # ---- 3. outside a pull request, explicit from/to: a docs-only change.
    ws3 = fx.checkout("ws3", fx.base, "refs/remotes/origin/main")
    before = len(stub.requests)
    r3 = runner.run(ws3, "push", {"after": fx.base}, {"from": "v1.1.0", "to": "main"}, bin_env)
    c.check(r3.ok, "run 3 succeeds", dump(r3))
    c.equal(r3.outputs.get("restart-required"), "false", "run 3: restart-required")
    c.equal(r3.outputs.get("reason"), "no_runtime_change", "run 3: reason")
    c.equal(r3.outputs.get("avoidable"), "false", "run 3: no restart, nothing to avoid")
    c.equal(r3.outputs.get("changed-runtime-files"), "[]", "run 3: no runtime files")
    # Both ends select the same files, where fpcheck on its own leaves the
    # fingerprints out (`fingerprint_skipped`): the action computes them, so
    # they are the digests `fpcheck fingerprint --rev` gives for each end
    # (asked of the source repository, which has both).
    report3 = r3.report()
    c.equal(
        [report3[end].get("fingerprint_skipped") for end in ("from", "to")],
        [None, None],
        "run 3: the report computes both fingerprints of an unchanged selection",
    )
    for end in ("from", "to"):
        commit_id = r3.outputs.get(f"{end}-commit", "")
        alone = subprocess.run(
            [str(binary), "fingerprint", f"--repo={fx.src}", f"--rev={commit_id}"], capture_output=True, text=True
        )
        c.check(alone.returncode == 0, f"run 3: fpcheck fingerprint --rev {commit_id}", alone.stderr)
        c.check(re.fullmatch(r"[0-9a-f]{64}", r3.outputs.get(f"{end}-fingerprint", "")) is not None, f"run 3: {end}-fingerprint is computed", repr(r3.outputs))
        c.equal(r3.outputs.get(f"{end}-fingerprint"), alone.stdout.strip(), f"run 3: {end}-fingerprint is fpcheck fingerprint --rev's")
    c.equal(r3.outputs.get("from-fingerprint"), r3.outputs.get("to-fingerprint"), "run 3: equal fingerprints")
    c.check("not computed" not in r3.summary, "run 3: the summary shows the fingerprints", r3.summary)
    c.equal(stub.requests[before:], [], "run 3: comment off, no API call")

    # ---- 4. fetch off in a shallow checkout: a clear failure, not a guess.
    ws4 = fx.checkout("ws4", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    r4 = runner.run(ws4, "pull_request", pr_event(fx.head1, fx.merge1, fx.base), {"fetch": "false"}, bin_env)
    c.check(not r4.ok and r4.failed_step == "check", "run 4: fails in the check step", dump(r4))
    c.check(
        any(n == "error" and "fetch" in m for n, _, m in r4.commands),
        "run 4: the error says fetch is off",
        repr(r4.commands),
    )
    c.equal(r4.outputs.get("restart-required"), "", "run 4: no verdict output on failure")

    # ---- 5. a full clone (fetch-depth: 0): nothing but the tags fetched,
    # and the clone stays complete.
    ws5 = fx.checkout("ws5", fx.merge1, f"refs/remotes/pull/{PR}/merge", depth=None)
    r5 = runner.run(
        ws5, "pull_request", pr_event(fx.head1, fx.merge1, fx.base), {"tag-pattern": "v*.*.?"}, bin_env, keep_workspace=True
    )
    c.check(r5.ok, "run 5 succeeds", dump(r5))
    c.equal(r5.outputs.get("from-ref"), "v1.1.0", "run 5: tag-pattern skips the rc")
    ws5_after = r5.workspace or Path("no-workspace-kept")
    c.check((ws5_after / ".git").is_dir() and not shallow(ws5_after), "run 5: the full clone is not made shallow")
    log5 = r5.step("check")["stdout"]
    c.check("fetching the tags" in log5 and "commit history" not in log5, "run 5: only the tags fetched", log5)

    # The same full clone with fetch off: the checkout has it all.
    r5b = runner.run(
        ws5, "pull_request", pr_event(fx.head1, fx.merge1, fx.base), {"fetch": "false", "tag-exclude": "*-rc*"}, bin_env
    )
    c.check(r5b.ok, "run 5b: a full clone works with fetch off", dump(r5b))
    c.equal(r5b.outputs.get("from-ref"), "v1.1.0", "run 5b: from-ref")
    c.check("fetched: nothing" in r5b.step("check")["stdout"], "run 5b: nothing fetched", dump(r5b))

    # ---- 5c. a release with hundreds of long file names: the summary lists
    # them all, the comment is cut to fit GitHub's 65,536 characters, and a
    # comment-key keeps it apart from the first report.
    git(fx.src, "checkout", "-q", "-b", "big", fx.v110)
    commit(fx.src, {f"src/app/{'m' * 180}_{n:03}.py": f"N = {n}\n" for n in range(400)}, "many modules")
    git(fx.src, "checkout", "-q", "main")
    git(fx.src, "push", "-q", str(fx.remote), "big")
    before = len(stub.requests)
    r9 = runner.run(
        fx.checkout("ws9", fx.merge1, f"refs/remotes/pull/{PR}/merge"),
        "pull_request",
        pr_event(fx.head1, fx.merge1, fx.base),
        {"from": "v1.1.0", "to": "big", "comment": "true", "comment-key": "big", "max-files": "1000"},
        bin_env,
    )
    c.check(r9.ok, "run 9 succeeds", dump(r9))
    c.equal(len(json.loads(r9.outputs.get("changed-runtime-files") or "[]")), 400, "run 9: 400 runtime files")
    c.check("more not shown" not in r9.summary and r9.summary.count("&#95;399.py") == 1, "run 9: the summary lists all")
    api9 = [r for r in stub.requests[before:] if r["method"] in ("POST", "PATCH")]
    c.equal([r["method"] for r in api9], ["POST"], "run 9: another key, another comment")
    big = stub.comments[-1]["body"] if api9 else ""
    c.check(len(big) <= 65536 and "more not shown" in big, "run 9: the comment fits", f"{len(big)} characters")
    c.check(big.startswith(MARKER) and "<!-- fpcheck:key=big -->" in big, "run 9: marker and key", big[-300:])
    cut = [line for line in big.splitlines() if line.startswith("|") and not line.endswith("|")]
    c.equal(cut, [], "run 9: the comment leaves out whole rows, never cuts one")
    c.equal(ours[0]["body"] if ours else None, body2, "run 9: the first report's comment is untouched")


    # ---- 10. a release whose changed files overflow an output (GitHub takes
    # 1 MB an output): the JSON output keeps the leading whole paths and
    # stays valid, `truncated` says what was cut, a warning says it too, and
    # the report keeps every path.
    git(fx.src, "checkout", "-q", "-b", "huge", fx.v110)
    deep = "/".join(c * 250 for c in "def")
    names = [f"src/app/{deep}/{n:04}{'g' * 240}.py" for n in range(1000)]
    commit(fx.src, {name: f"N = {n}\n" for n, name in enumerate(names)}, "1,000 modules under long names")
    git(fx.src, "checkout", "-q", "main")
    git(fx.src, "push", "-q", str(fx.remote), "huge")
    r10 = runner.run(
        fx.checkout("ws10", fx.base, "refs/remotes/origin/main"), "push", {"after": fx.base}, {"from": "v1.1.0", "to": "huge"}, bin_env
    )
    c.check(r10.ok, "run 10 succeeds", dump(r10))
    listed = json.loads(r10.outputs.get("changed-runtime-files") or "null")
    kept = len(listed or [])
    c.check(0 < kept < 1000 and listed == sorted(names)[:kept], "run 10: changed-runtime-files keeps the leading whole paths", f"{kept} paths")
    c.check(len(r10.outputs.get("changed-runtime-files", "").encode()) <= 900_000, "run 10: the output fits its cap")
    c.equal(
        r10.outputs.get("truncated"),
        f"outputs cut to fit GitHub's limits (the whole report is in report-json): changed-runtime-files: {kept:,} of 1,000 files",
        "run 10: truncated says what was cut",
    )
    c.check(
        any(n == "warning" and p.get("title") == "fpcheck: outputs truncated" for n, p, _ in r10.commands),
        "run 10: a warning says it too",
        repr([(n, p) for n, p, _ in r10.commands]),
    )
    c.equal(len(r10.report().get("changes", {}).get("runtime", [])), 1000, "run 10: report-json keeps every path")

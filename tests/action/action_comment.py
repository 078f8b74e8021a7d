"""The sticky comment against a fake GitHub API on 127.0.0.1 (the stub):
the first run creates one comment, the next updates it, a second
`comment-key` keeps its own, and a 403 or a 5xx from the API is a warning,
never a lost verdict (the outputs, the summary and fail-on-restart stand)."""

from __future__ import annotations

from pathlib import Path

from act_runner import ActRunner, dump
from fixtures import MARKER, Checks, Fixture, pr_event
from simulated_runner import PR, TOKEN, Stub

BOT = "github-actions[bot]"


def bot_comments(stub: Stub) -> list[dict]:
    return [x for x in stub.comments if x["user"]["login"] == BOT]


def writes(stub: Stub, since: int) -> list[str]:
    return [
        r["method"] for r in stub.requests[since:] if r["method"] in ("POST", "PATCH")
    ]


def comment_api_runs(
    c: Checks, tmp: Path, stub: Stub, runner: ActRunner, binary: Path
) -> None:
    home = tmp / "comments"
    home.mkdir()
    fx = Fixture(home)
    bin_env = {"FPCHECK_BINARY": str(binary)}
    pr = pr_event(fx.head1, fx.merge1, fx.base)
    inputs = {"comment": "true", "tag-exclude": "*-rc*"}
    n = [0]

    def run(extra: dict, event: dict = pr):
        n[0] += 1
        ws = fx.checkout(f"c{n[0]}", fx.merge1, f"refs/remotes/pull/{PR}/merge")
        return runner.run(ws, "pull_request", event, {**inputs, **extra}, bin_env)

    def verdict_stands(r, label: str) -> None:
        c.equal(
            (
                r.outputs.get("restart-required"),
                r.outputs.get("reason"),
                r.outputs.get("from-ref"),
            ),
            ("true", "code_changed", "v1.1.0"),
            f"{label}: the verdict's outputs",
        )
        c.check(
            r.summary.startswith(MARKER) and "Restart required" in r.summary,
            f"{label}: the job summary has the report",
            r.summary[:300],
        )

    # ---- C1. the first run creates one comment.
    before = len(stub.requests)
    r = run({})
    c.check(r.ok, "C1: runs", dump(r))
    verdict_stands(r, "C1")
    c.equal(writes(stub, before), ["POST"], "C1: one comment created")
    first = bot_comments(stub)
    c.equal(len(first), 1, "C1: one bot comment")
    c.equal(
        r.outputs.get("comment-url"),
        first[0]["html_url"] if first else None,
        "C1: comment-url",
    )
    c.check(
        all(q["authorization"] == f"Bearer {TOKEN}" for q in stub.requests[before:]),
        "C1: the API calls carry the token",
    )

    # ---- C2. the next run updates it in place.
    body1 = first[0]["body"] if first else ""
    first[0]["body"] = body1.replace("Restart required", "stale")
    before = len(stub.requests)
    r = run({})
    c.check(r.ok, "C2: runs", dump(r))
    c.equal(writes(stub, before), ["PATCH"], "C2: PATCH, no new comment")
    c.equal(len(bot_comments(stub)), 1, "C2: still one bot comment")
    c.equal(
        first[0]["body"] if first else None,
        body1,
        "C2: the comment holds the report again",
    )

    # ---- C3. another comment-key keeps its own comment.
    before = len(stub.requests)
    r = run({"comment-key": "worker"})
    c.check(r.ok, "C3: runs", dump(r))
    c.equal(writes(stub, before), ["POST"], "C3: a second key creates its own comment")
    ours = bot_comments(stub)
    c.equal(len(ours), 2, "C3: two bot comments")
    c.check(
        len(ours) == 2 and "<!-- fpcheck:key=worker -->" in ours[1]["body"],
        "C3: the new one carries its key",
    )
    c.equal(
        first[0]["body"] if first else None, body1, "C3: the first comment is untouched"
    )
    before = len(stub.requests)
    r = run({"comment-key": "worker"})
    c.equal(
        writes(stub, before), ["PATCH"], "C3: the keyed comment is updated in place"
    )
    c.check(
        bool(ours)
        and stub.requests[-1]["path"].endswith(f"/issues/comments/{ours[-1]['id']}"),
        "C3: the keyed comment, not the first",
        repr(stub.requests[-1]),
    )

    # ---- C4. a 403 (a read-only token): a warning, and the verdict stands.
    stub.failure = (403, {"GET", "POST", "PATCH"})
    try:
        r = run({})
    finally:
        stub.failure = None
    c.check(r.ok and r.failed_step is None, "C4: a 403 does not fail the job", dump(r))
    verdict_stands(r, "C4")
    warnings = [m for name, _, m in r.commands if name == "warning"]
    c.check(
        any(
            "HTTP 403" in m
            and "pull-requests: write" in m
            and "verdict is in the job summary" in m
            for m in warnings
        ),
        "C4: the warning says what failed and what to do",
        repr(warnings),
    )
    c.equal(r.outputs.get("comment-url"), "", "C4: no comment-url")

    # ---- C5. a 502 on the update: a warning, the comment as it was.
    stub.failure = (502, {"PATCH"})
    before = len(stub.requests)
    try:
        r = run({})
    finally:
        stub.failure = None
    c.check(r.ok, "C5: a 5xx does not fail the job", dump(r))
    verdict_stands(r, "C5")
    c.equal(writes(stub, before), ["PATCH"], "C5: the update was tried once")
    warnings = [m for name, _, m in r.commands if name == "warning"]
    c.check(
        any("could not update the comment (HTTP 502" in m for m in warnings),
        "C5: the warning names the 502",
        repr(warnings),
    )
    c.equal(first[0]["body"] if first else None, body1, "C5: the comment is unchanged")

    # ---- C6. a 500 with fail-on-restart: the job still fails for the
    # restart, in the verdict step, not for the comment.
    stub.failure = (500, {"GET", "POST", "PATCH"})
    try:
        r = run({"fail-on-restart": "true"})
    finally:
        stub.failure = None
    c.check(
        not r.ok and r.failed_step == (r.steps[-1]["id"] if r.steps else None),
        "C6: the verdict step fails the job",
        dump(r),
    )
    errors = [m for name, _, m in r.commands if name == "error"]
    c.check(
        any("fail-on-restart" in m for m in errors),
        "C6: the error is the restart's",
        repr(errors),
    )
    c.check(
        any("HTTP 500" in m for name, _, m in r.commands if name == "warning"),
        "C6: the comment's failure is a warning",
        repr(r.commands),
    )
    verdict_stands(r, "C6")

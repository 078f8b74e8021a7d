"""The action's hostile edges, under the simulated runner: names that
would become options, a `path` outside the workspace, a redirect to another
host, the error line, settings the pull request would choose, and the
default `from`; with the script's small functions checked alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fixtures import MARKER, Checks, Fixture, commit, git, pr_event, shallow
from act_runner import ActRunner, dump
from simulated_runner import PR, ROOT, Runner, Stub

# The action's modules, for the unit checks.
sys.path.insert(0, str(ROOT / ".github" / "action"))
from fpaction import check, comment, fetch, workflow  # noqa: E402


def unit_checks(c: Checks) -> None:
    """The script's small functions, alone."""
    clap = (
        "error: unexpected argument '--no-such-flag' found\n\n"
        "  tip: to pass '--no-such-flag' as a value, use '-- --no-such-flag'\n\n"
        "Usage: fpcheck [OPTIONS] [RANGE] [COMMAND]\n\nFor more information, try '--help'.\n"
    )
    c.equal(check.error_line(clap), "error: unexpected argument '--no-such-flag' found", "error_line: clap's error, not its last line")
    c.equal(
        check.error_line("fpcheck: warning: w\nfpcheck: error: unknown revision `x`\n"),
        "fpcheck: error: unknown revision `x`",
        "error_line: fpcheck's error after a warning",
    )
    c.equal(check.error_line("killed\n"), "killed", "error_line: no error line, the last line")
    # A runtime's exact name (JSON `summary`) reaches the log visibly escaped.
    c.equal(
        workflow.visible("w\x1b[31m and s\u202eyp\u2066\x9b restart\n"),
        "w\\x1b[31m and s\\u{202e}yp\\u{2066}\\x9b restart\n",
        "visible: controls and bidi escaped, newlines left to the command",
    )
    c.equal(
        workflow.visible("ser\u200bver \u2060\ufeffworker"),
        "ser\\u{200b}ver \\u{2060}\\u{feff}worker",
        "visible: zero-width characters escaped as fpcheck's terminal output does",
    )
    a, b = "a" * 40, "b" * 40
    fp = check.Fpcheck("fpcheck", Path("/r"), ["--root=src"], fetch.Rev("--root=x", a), fetch.Rev("HEAD", b))
    c.equal(
        fp.command(["--format=json"]),
        ["fpcheck", "--repo=/r", "--root=src", "--from-name=--root=x", "--to-name=HEAD", "--format=json", "--", f"{a}..{b}"],
        "fpcheck gets options, then --, then two commit ids (the names only as option values)",
    )
    try:
        check.Fpcheck("fpcheck", Path("/r"), [], fetch.Rev("v1", "v1"), fetch.Rev("HEAD", b)).command([])
        c.check(False, "a name that is not a commit id is refused")
    except workflow.Fail:
        c.check(True, "a name that is not a commit id is refused")
    c.equal(
        check.report_flags(7, Path("/t/j.json"), Path("/t/s.md"), Path("/t/c.md")),
        [
            "--compute-fingerprints",
            "--format=json",
            "--output=/t/j.json",
            "--max-files=7",
            "--report=markdown:1000000=/t/s.md",
            "--report=markdown:65000=/t/c.md",
        ],
        "one fpcheck run writes the JSON, the summary and the comment, each within its limit, with both fingerprints",
    )
    outs = check.step_outputs(
        {"restart_required": True, "reason": "forced", "from": {"version": "1.0"}, "to": None, "changes": {"runtime": [{"path": "src/a.py"}]}},
        fetch.Rev("v1", a),
        fetch.Rev("abc", b),
        {"json": Path("j"), "summary": Path("s"), "comment": Path("c")},
    )
    c.equal(
        (outs["restart-required"], outs["from-ref"], outs["from-commit"], outs["from-version"], outs["to-version"], outs["changed-runtime-files"]),
        ("true", "v1", a, "1.0", "", '["src/a.py"]'),
        "step_outputs: the verdict from the report, the ends as resolved",
    )
    c.equal(
        comment.comment_body("<!-- fpcheck:report -->\nreport\n\n", "k1", "https://gh/acme/s/actions/runs/42"),
        "<!-- fpcheck:report -->\nreport\n\n<sub>Written by the fpcheck action in [run 42](https://gh/acme/s/actions/runs/42); "
        "updated in place on every push.</sub>\n<!-- fpcheck:key=k1 -->\n",
        "comment_body: the report, the footer, the key line",
    )
    bot = {"user": {"login": "github-actions[bot]", "type": "Bot"}, "author_association": "NONE"}
    c.check(comment.is_report({**bot, "body": comment.comment_body(MARKER, "", "")}, ""), "is_report: our comment without a key")
    c.check(not comment.is_report({**bot, "body": comment.comment_body(MARKER, "k1", "")}, ""), "is_report: a keyed comment is another report")
    c.check(
        not comment.trusted_author({"user": {"login": "x", "type": "User"}, "author_association": "CONTRIBUTOR"}),
        "trusted_author: a contributor's copy of the marker is not ours",
    )
    c.equal(comment.origin("https://API.github.com/x"), ("https", "api.github.com", 443), "origin: default port")
    c.check(
        comment.origin("http://127.0.0.1:1/a") != comment.origin("http://127.0.0.1:2/a"),
        "origin: another port is another origin",
    )


def fails(c: Checks, what: str, call, says: str) -> None:
    """`call()` raises the step's Fail, whose message holds `says`."""
    try:
        call()
        c.check(False, what, "no failure")
    except workflow.Fail as e:
        c.check(says in str(e), what, str(e))


def input_checks(c: Checks, tmp: Path) -> None:
    """The checks on `path`, `config` and `max-files`, alone."""
    ws = tmp / "unit-ws"
    (ws / "repo").mkdir(parents=True)
    (tmp / "unit-outside").mkdir()
    (ws / "out").symlink_to(tmp / "unit-outside", target_is_directory=True)
    c.equal(check.checkout_path(ws, "repo"), (ws / "repo").resolve(), "checkout_path: inside the workspace")
    c.equal(check.checkout_path(ws, ""), ws.resolve(), "checkout_path: empty is the workspace")
    for given in ("../unit-outside", str(tmp / "unit-outside"), "out"):
        fails(c, f"checkout_path refuses {given}", lambda g=given: check.checkout_path(ws, g), "outside the workspace")
    fails(c, "checkout_path: not a directory", lambda: check.checkout_path(ws, "missing"), "is not a directory")
    top = ws / "repo"
    (top / "fpcheck.toml").write_text("[runtime]\n", encoding="utf-8")
    (ws / "workflow.toml").write_text("[runtime]\n", encoding="utf-8")
    (ws / "link.toml").symlink_to(top / "fpcheck.toml")
    fails(c, "config_outside: the checkout's own file", lambda: check.config_outside(top, top, "fpcheck.toml"), "inside the checkout")
    fails(c, "config_outside: a link into the checkout", lambda: check.config_outside(top, top, "../link.toml"), "inside the checkout")
    c.equal(check.config_outside(top, top, "../workflow.toml"), (ws / "workflow.toml").resolve(), "config_outside: the workflow's file")
    fails(c, "config_outside: no such file", lambda: check.config_outside(top, top, "../none.toml"), "is not a file")
    # Every exit code of the README's table has its meaning in the step's
    # error, the new 3 and 6 included; others are an error all the same.
    stub = tmp / "unit-exit"
    stub.write_text("#!/bin/sh\necho \"fpcheck: error: boom\" >&2\nexit \"$1\"\n", encoding="utf-8")
    stub.chmod(0o755)
    for code, says in (
        (3, "exit 3, the fingerprint is unavailable: fpcheck: error: boom"),
        (6, "exit 6, internal error (a bug in fpcheck: please report it): fpcheck: error: boom"),
        (2, "exit 2, usage error"),
        (4, "exit 4, input error"),
        (5, "exit 5, output error"),
        (1, "exit 1, a restart would be forced"),
        (101, "exit 101, error: fpcheck: error: boom"),
    ):
        fails(c, f"run_fpcheck labels exit {code}", lambda n=code: check.run_fpcheck([str(stub), str(n)], tmp), says)
        try:
            check.run_fpcheck([str(stub), str(code)], tmp)
        except workflow.Fail as e:
            c.equal(e.code, code, f"run_fpcheck keeps exit {code}")
    saved = os.environ.get("INPUT_MAX_FILES")
    try:
        for raw, expected in (("", 50), ("7", 7)):
            os.environ["INPUT_MAX_FILES"] = raw
            c.equal(check.max_files_input(), expected, f"max_files_input: {raw!r}")
        for raw in ("0", "-3", "ten"):
            os.environ["INPUT_MAX_FILES"] = raw
            fails(c, f"max_files_input refuses {raw!r}", check.max_files_input, "positive number")
    finally:
        if saved is None:
            os.environ.pop("INPUT_MAX_FILES", None)
        else:
            os.environ["INPUT_MAX_FILES"] = saved


def hostile_runs(c: Checks, tmp: Path, stub: Stub, runner: ActRunner, binary: Path) -> None:
    """The action's hostile edges: names that would become options, a
    `path` outside the workspace, a redirect to another host, the error
    line, and settings the pull request would choose."""
    home = tmp / "hostile"
    home.mkdir()
    fx = Fixture(home)
    bin_env = {"FPCHECK_BINARY": str(binary)}
    no_rc = {"tag-exclude": "*-rc*"}
    pr = pr_event(fx.head1, fx.merge1, fx.base)

    def tag_on_remote(name: str, sha: str | None) -> None:
        # git tag refuses names starting with `-`; a remote can hold them.
        if sha:
            git(fx.remote, "update-ref", f"refs/tags/{name}", sha)
        else:
            git(fx.remote, "update-ref", "-d", f"refs/tags/{name}")

    # ---- H1. the latest release is tagged `--root=9.0.0` (its version read
    # through the tag pattern `--root=*`): it must stay a name.
    tag_on_remote("--root=9.0.0", fx.base)
    ws = fx.checkout("h1", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    r = runner.run(ws, "pull_request", pr, {**no_rc, "tag-pattern": "--root=*"}, bin_env)
    tag_on_remote("--root=9.0.0", None)
    c.check(r.ok, "H1: a tag named --root=9.0.0: the run succeeds", dump(r))
    # fpcheck's own rule names a tag by its full ref when the short name
    # would read as an option.
    c.equal(r.outputs.get("from-ref"), "refs/tags/--root=9.0.0", "H1: from-ref names the tag, unambiguously")
    c.equal((r.outputs.get("from-commit"), r.outputs.get("to-commit")), (fx.base, fx.head1), "H1: the tag's commit and the head")
    c.equal((r.outputs.get("restart-required"), r.outputs.get("reason")), ("true", "code_changed"), "H1: the verdict is not flipped")
    report = r.report()
    c.equal(
        (report.get("from", {}).get("commit"), report.get("to", {}).get("commit"), report.get("settings", {}).get("root")),
        (fx.base, fx.head1, "src"),
        "H1: fpcheck compared the commits the outputs name, with the default root",
    )

    # ---- H2. the latest release is tagged `--patch-out=9.0.0` (read through
    # the tag pattern `--patch-out=*`): nothing is written.
    tag_on_remote("--patch-out=9.0.0", fx.base)
    ws = fx.checkout("h2", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    r = runner.run(ws, "pull_request", pr, {**no_rc, "tag-pattern": "--patch-out=*"}, bin_env)
    tag_on_remote("--patch-out=9.0.0", None)
    c.check(r.ok, "H2: a tag named --patch-out=FILE: the run succeeds", dump(r))
    c.equal(r.outputs.get("from-commit"), fx.base, "H2: from-commit is the tag's commit")
    pwned = [str(f) for f in home.rglob("9.0.0*")]
    c.equal(pwned, [], "H2: no patch file written")

    # ---- H3. a tag named `HEAD`, outside a pull request: it names no
    # version, so it is no release, and `from` is never the checkout's HEAD
    # (which is `to`).
    tag_on_remote("HEAD", fx.base)
    ws = fx.checkout("h3", fx.head1, "refs/remotes/origin/release/1.2")
    r = runner.run(ws, "push", {"after": fx.head1}, no_rc, bin_env)
    tag_on_remote("HEAD", None)
    c.check(r.ok, "H3: a tag named HEAD: the run succeeds", dump(r))
    c.check(
        r.outputs.get("from-ref") not in ("HEAD", "refs/tags/HEAD") and r.outputs.get("from-commit") != fx.head1,
        "H3: from is a release, not the tag HEAD nor HEAD",
        dump(r),
    )
    c.equal(r.outputs.get("to-commit"), fx.head1, "H3: to is the pushed commit")
    report = r.report()
    c.equal(report.get("from", {}).get("commit"), r.outputs.get("from-commit"), "H3: fpcheck compared the commit from names")

    # ---- H4. `path` outside the workspace: refused before any fetch.
    other = fx.checkout("h4-other", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    refs_before = git(other, "for-each-ref")
    ws = fx.checkout("h4", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    (ws / "out-link").symlink_to(other, target_is_directory=True)
    for label, path in (("../h4-other", "../h4-other"), ("an absolute path", str(other)), ("a link out", "out-link")):
        r = runner.run(ws, "pull_request", pr, {**no_rc, "path": path}, bin_env)
        c.check(not r.ok and r.failed_step == "check", f"H4: path {label}: the check step fails", dump(r))
        errors = [m for n, _, m in r.commands if n == "error"]
        c.check(any("input `path`" in m and "outside the workspace" in m for m in errors), f"H4: path {label}: the error says why", repr(errors))
    c.equal(git(other, "for-each-ref"), refs_before, "H4: nothing fetched into the other repository")
    c.check(shallow(other) and not (other / ".git" / "fpcheck").exists(), "H4: the other repository is untouched")
    # The runner's workspace is act's copy of the checkout: an absolute path
    # into it comes from the `github.workspace` expression, as in a workflow.
    r = runner.run(ws, "pull_request", pr, {**no_rc, "path": "${{ github.workspace }}"}, bin_env)
    c.check(r.ok, "H4: an absolute path inside the workspace is fine", dump(r))

    # ---- H5. the API redirects to another host: the token never leaves.
    elsewhere = Stub()
    try:
        stub.redirect = elsewhere.url
        ws = fx.checkout("h5", fx.merge1, f"refs/remotes/pull/{PR}/merge")
        r = runner.run(ws, "pull_request", pr, {**no_rc, "comment": "true"}, bin_env)
    finally:
        stub.redirect = None
        elsewhere.close()
    c.check(r.ok, "H5: a refused redirect is a warning, not a failure", dump(r))
    c.equal([q["authorization"] for q in elsewhere.requests], [], "H5: the other host got no request, so no token")
    warnings = [m for n, _, m in r.commands if n == "warning"]
    c.check(any("redirect" in m and "not followed" in m for m in warnings), "H5: the warning says the redirect was refused", repr(warnings))

    # ---- H6. fpcheck fails with a usage error: the error line is the error.
    wrapper = home / "fpcheck-bad-flag"
    wrapper.write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && exec "{binary}" --version\nexec "{binary}" --no-such-flag "$@"\n', encoding="utf-8"
    )
    wrapper.chmod(0o755)
    ws = fx.checkout("h6", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    r = runner.run(ws, "pull_request", pr, no_rc, {"FPCHECK_BINARY": str(wrapper)})
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(not r.ok and r.failed_step == "check", "H6: fpcheck's failure fails the check step", dump(r))
    c.check(
        len(errors) == 1 and "unexpected argument '--no-such-flag'" in errors[0] and "--help" not in errors[0],
        "H6: the ::error:: line is fpcheck's error, not its last line",
        repr(errors),
    )

    # ---- H7. `config` inside the checkout is the pull request's own file:
    # refused. One outside the checkout, the workflow's, is used.
    ws = fx.checkout("h7", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    (ws / "fpcheck.toml").write_text('[runtime]\nexclude = ["server.py"]\n', encoding="utf-8")
    r = runner.run(ws, "pull_request", pr, {**no_rc, "config": "fpcheck.toml"}, bin_env)
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(not r.ok and r.failed_step == "check", "H7: config in the checkout: refused", dump(r))
    c.check(any("input `config`" in m and "inside the checkout" in m for m in errors), "H7: the error says why", repr(errors))
    (home / "workflow.toml").write_text('[runtime]\nroot = "src/app"\n', encoding="utf-8")
    # Outside the checkout, named by its absolute path (act runs in a copy of
    # the checkout, whose parent is act's).
    r = runner.run(ws, "pull_request", pr, {**no_rc, "config": str(home / "workflow.toml")}, bin_env)
    c.check(r.ok, "H7: a config outside the checkout is used", dump(r))
    report = r.report()
    c.equal(report.get("settings", {}).get("root"), "src/app", "H7: for both ends, as the workflow asked")



def default_from_runs(c: Checks, tmp: Path, stub: Stub, runner: ActRunner, binary: Path) -> None:
    """The default `from` when the base moved on or `to` is a release, and
    a pull request that hides its change in its own fpcheck.toml."""
    home = tmp / "default-from"
    home.mkdir()
    fx = Fixture(home)
    bin_env = {"FPCHECK_BINARY": str(binary)}
    no_rc = {"tag-exclude": "*-rc*"}
    pr = pr_event(fx.head1, fx.merge1, fx.base)

    # ---- H9. the default `from` is fpcheck's own rule: the latest release
    # tag reachable from `to` (here the head), not from the base, which has
    # moved on to a release the head does not contain.
    git(fx.src, "checkout", "-q", "main")
    newer = commit(fx.src, {"README.md": "# server\n\n1.1.1\n"}, "1.1.1 on main")
    git(fx.src, "tag", "-a", "v1.1.1", "-m", "release 1.1.1")
    git(fx.src, "push", "-q", str(fx.remote), "main", "v1.1.1")
    ws = fx.checkout("h9", fx.merge1, f"refs/remotes/pull/{PR}/merge")
    moved = {**pr, "pull_request": {**pr["pull_request"], "base": {"ref": "main", "sha": newer}}}
    r = runner.run(ws, "pull_request", moved, no_rc, bin_env)
    c.check(r.ok, "H9: runs", dump(r))
    own = subprocess.run(
        [str(binary), f"--repo={fx.src}", "--format=json", "--tag-exclude=*-rc*", "--", f"..{fx.head1}"],
        capture_output=True,
        text=True,
    )
    mine = json.loads(own.stdout)["from"] if own.returncode == 0 else {"error": own.stderr}
    c.equal((r.outputs.get("from-ref"), r.outputs.get("from-commit")), ("v1.1.0", fx.v110), "H9: from is v1.1.0, reachable from the head")
    c.equal((mine.get("ref"), mine.get("commit")), ("v1.1.0", fx.v110), "H9: fpcheck ..HEAD --tag-exclude picks the same release")

    # ---- H10. `to` is itself a release (a workflow on a tag push): the
    # release before it, by fpcheck's rule, which skips `tag-exclude`d tags
    # and counts them without it; each as `fpcheck --resolve-only` says.
    v100 = git(fx.src, "rev-parse", "v1.0.0^{commit}")
    rc1 = git(fx.src, "rev-parse", "v1.2.0-rc1^{commit}")
    for n, (label, inputs, expected) in enumerate((
        ("v1.1.0", {"to": "v1.1.0"}, ("v1.0.0", v100)),
        ("v1.1.1, rc excluded", {"to": "v1.1.1", **no_rc}, ("v1.1.0", fx.v110)),
        ("v1.1.1, rc counted", {"to": "v1.1.1"}, ("v1.2.0-rc1", rc1)),
        ("v1.1.1, only v*.*.?", {"to": "v1.1.1", "tag-pattern": "v*.*.?"}, ("v1.1.0", fx.v110)),
    )):
        ws = fx.checkout(f"h10-{n}", fx.base, "refs/remotes/origin/main")
        r = runner.run(ws, "push", {"after": fx.base}, inputs, bin_env)
        c.check(r.ok, f"H10: to {label}: runs", dump(r))
        c.equal((r.outputs.get("from-ref"), r.outputs.get("from-commit")), expected, f"H10: to {label}: the release before it")
        flags = [f"--tag-match={inputs['tag-pattern']}"] if "tag-pattern" in inputs else []
        flags += [f"--tag-exclude={inputs['tag-exclude']}"] if "tag-exclude" in inputs else []
        own = subprocess.run(
            [str(binary), f"--repo={fx.src}", "--resolve-only", "--format=json", *flags, "--", f"..{inputs['to']}"],
            capture_output=True,
            text=True,
        )
        mine = json.loads(own.stdout)["from"] if own.returncode == 0 else {"error": own.stderr}
        c.equal((mine.get("ref"), mine.get("commit")), expected, f"H10: to {label}: fpcheck --resolve-only agrees")
        c.check("is tagged" in r.step("check")["stdout"], f"H10: to {label}: the log says how from was chosen", dump(r))
    # The same on a tag push, as the runner gives it: no `to` input, the
    # tag's commit checked out and in GITHUB_SHA.
    v111 = git(fx.src, "rev-parse", "v1.1.1^{commit}")
    ws = fx.checkout("h10-tag-push", v111, "refs/tags/v1.1.1")
    r = runner.run(ws, "push", {"ref": "refs/tags/v1.1.1", "after": v111}, no_rc, bin_env)
    c.check(r.ok, "H10: a push of the tag v1.1.1: runs", dump(r))
    c.equal(
        (r.outputs.get("from-ref"), r.outputs.get("from-commit"), r.outputs.get("to-commit")),
        ("v1.1.0", fx.v110, v111),
        "H10: a push of the tag v1.1.1: the release before it, rc excluded",
    )
    # No release before the first one: a clear failure naming the input.
    ws = fx.checkout("h10-first", fx.base, "refs/remotes/origin/main")
    r = runner.run(ws, "push", {"after": fx.base}, {"to": "v1.0.0"}, bin_env)
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(not r.ok and r.failed_step == "check", "H10: to the first release: fails", dump(r))
    c.check(
        any("no previous release" in m and "set the `from` input" in m for m in errors),
        "H10: fpcheck's error says why, and what to do",
        repr(errors),
    )

    # ---- H8. a pull request that changes a runtime file and excludes it in
    # its own fpcheck.toml: still a restart, and the settings change is in
    # the summary and the comment.
    git(fx.src, "checkout", "-q", "-b", "sneaky", fx.base)
    sneaky = commit(
        fx.src,
        {"src/app/server.py": "def serve():\n    return 3\n", "fpcheck.toml": '[runtime]\nexclude = ["server.py"]\n'},
        "exclude what changed",
    )
    git(fx.src, "checkout", "-q", "main")
    merge = fx.publish_pr(sneaky)
    ws = fx.checkout("h8", merge, f"refs/remotes/pull/{PR}/merge")
    r = runner.run(ws, "pull_request", pr_event(sneaky, merge, fx.base), {**no_rc, "comment": "true", "comment-key": "h8"}, bin_env)
    c.check(r.ok, "H8: runs", dump(r))
    c.equal(r.outputs.get("restart-required"), "true", "H8: the pull request's own config does not hide its change")
    c.check("settings_changed" in r.summary, "H8: the settings change is in the job summary", r.summary)
    body = stub.comments[-1]["body"] if stub.comments else ""
    c.check("fpcheck:key=h8" in body and "settings_changed" in body, "H8: and in the comment", body[-2000:])
    c.check("**settings_changed**:" in r.summary, "H8: as a warning of the summary's list", r.summary)
    titles = [p.get("title") for n, p, _ in r.commands if n == "warning"]
    c.check("fpcheck: settings_changed" in titles, "H8: and as an annotation", repr(titles))


def nested_workspace_run(c: Checks, tmp: Path, runner: Runner, binary: Path) -> None:
    """A workspace that is a plain directory inside some repository: git and
    fpcheck would find that repository above it. (act always gives the
    action its own copy of the checkout, so only the simulated runner can
    place the workspace inside another repository.)"""
    home = tmp / "nested"
    home.mkdir()
    fx = Fixture(home)
    nested = fx.src / "nested-workspace"
    nested.mkdir()
    r = runner.run(nested, "pull_request", pr_event(fx.head1, fx.merge1, fx.base), {"tag-exclude": "*-rc*"}, {"FPCHECK_BINARY": str(binary)})
    errors = [m for n, _, m in r.commands if n == "error"]
    c.check(not r.ok and r.failed_step == "check", "H4: a repository above the workspace: refused", dump(r))
    c.check(any("outside the workspace" in m and str(fx.src.resolve()) in m for m in errors), "H4: the error names it", repr(errors))
    nested.rmdir()

"""The step's outputs under a hostile pull request: thousands of changed
files under long names, thousands of runtimes, a version of megabytes.
GitHub caps one output at 1 MB and a step summary at 1 MiB; each output
must stay within its cap, JSON outputs must stay valid (whole entries, in
order), and the `truncated` output and a warning must say what was cut."""

from __future__ import annotations

import json
from pathlib import Path

from fixtures import Checks
from simulated_runner import ROOT
import sys

sys.path.insert(0, str(ROOT / ".github" / "action"))
from fpaction import check, fetch, outputs  # noqa: E402

A, B = "a" * 40, "b" * 40
PATHS = {"json": Path("j"), "summary": Path("s"), "comment": Path("c")}
MB = 1_000_000


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def report_of(name: str, files: list[str], version: str = "1.0", warnings: int = 1) -> dict:
    """One runtime's report as fpcheck's JSON has it."""
    return {
        "name": name,
        "restart_required": True,
        "reason": "code_changed",
        "avoidable": False,
        "summary": f"{name} restarts",
        "from": {"version": version, "fingerprint": "f1"},
        "to": {"version": version, "fingerprint": "f2"},
        "changes": {"runtime": [{"path": f} for f in files]},
        "warnings": [{"code": "code_changed_version_unchanged", "message": f"{name} w{i}"} for i in range(warnings)],
    }


def most_that_fit(items: list, limit: int) -> int:
    """The most leading items whose JSON array fits in `limit` bytes, found
    with json.dumps itself."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if size(json.dumps(items[:mid], ensure_ascii=False)) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def step(report: dict) -> dict[str, str]:
    return outputs.step_outputs(report, fetch.Rev("v1", A), fetch.Rev("abc", B), PATHS)


def output_limit_checks(c: Checks) -> None:
    c.check(outputs.JSON_OUTPUT_LIMIT_BYTES < MB, "the JSON output cap is under GitHub's 1 MB")

    # Within the limits nothing changes and nothing is said.
    small = report_of("app", ["src/a.py", "src/b.py"])
    small.pop("name")
    o = step(small)
    c.equal((o["truncated"], json.loads(o["changed-runtime-files"])), ("", ["src/a.py", "src/b.py"]), "outputs within the limits are whole")
    c.equal([a[0] for a in outputs.annotations(small, o["truncated"])], ["warning", "notice"], "no truncation warning when nothing is cut")

    # 6,000 changed files under 400-character names (2.4 MB of JSON), and
    # a version file of 2 MB (fpcheck reads up to 16 MiB).
    files = [f"src/{i:05d}/" + "n" * 390 + ".py" for i in range(6000)]
    huge = "9" * (2 * MB)
    r = report_of("app", files, version=huge)
    r.pop("name")
    o = step(r)
    kept = most_that_fit(files, outputs.JSON_OUTPUT_LIMIT_BYTES)
    listed = json.loads(o["changed-runtime-files"])
    c.check(0 < kept < len(files), "the hostile file list needs cutting", str(kept))
    c.equal(listed, files[:kept], "changed-runtime-files: the leading whole paths that fit")
    c.check(size(o["changed-runtime-files"]) <= outputs.JSON_OUTPUT_LIMIT_BYTES, "changed-runtime-files within its cap")
    for name in ("from-version", "to-version"):
        c.check(size(o[name]) <= outputs.TEXT_OUTPUT_LIMIT_BYTES, f"{name} within its cap", str(size(o[name])))
        c.check(o[name].startswith("999") and o[name].endswith(outputs.CUT), f"{name}: its start, then the note")
    c.equal(
        o["truncated"],
        "outputs cut to fit GitHub's limits (the whole report is in report-json): "
        f"changed-runtime-files: {kept:,} of 6,000 files; "
        "from-version: its first 16,384 bytes; to-version: its first 16,384 bytes",
        "truncated: which outputs were cut and how",
    )
    c.check(all(size(v) < MB for v in o.values()), "every output under 1 MB")
    c.check(
        ("warning", "fpcheck: outputs truncated", o["truncated"]) in outputs.annotations(r, o["truncated"]),
        "a warning annotation says what was cut",
    )

    # 2,000 runtimes, each with 100 changed files and three warnings: the
    # verdicts keep every runtime without their file lists.
    many = [report_of(f"rt{i:04d}", [f"rt{i:04d}/{j:03d}" + "x" * 60 + ".py" for j in range(100)], warnings=3) for i in range(2000)]
    report = {"restart_required": True, "summary": "; ".join(f"{r['name']} restarts" for r in many), "runtimes": many}
    o = step(report)
    verdicts = json.loads(o["runtimes"])
    c.check(size(o["runtimes"]) <= outputs.JSON_OUTPUT_LIMIT_BYTES, "runtimes within its cap", str(size(o["runtimes"])))
    c.equal(sorted(verdicts), [r["name"] for r in many], "runtimes: every runtime kept")
    c.check(all(v["changed_runtime_files"] is None for v in verdicts.values()), "runtimes: the file lists are null")
    c.equal(verdicts["rt0007"]["reason"], "code_changed", "runtimes: a verdict is whole otherwise")
    every_file = [f for r in many for f in outputs.changed_files(r)]
    kept = most_that_fit(every_file, outputs.JSON_OUTPUT_LIMIT_BYTES)
    c.equal(json.loads(o["changed-runtime-files"]), every_file[:kept], "changed-runtime-files across runtimes: the leading paths")
    c.equal(
        o["truncated"],
        "outputs cut to fit GitHub's limits (the whole report is in report-json): "
        f"changed-runtime-files: {kept:,} of 200,000 files; "
        "runtimes: each runtime's changed_runtime_files is null; "
        "summary: its first 16,384 bytes",
        "truncated: files, runtimes and the summary",
    )
    notes = outputs.annotations(report, o["truncated"])
    c.equal(len(notes), outputs.MAX_WARNING_ANNOTATIONS + 3, "annotations: capped, then one saying how many more")
    c.equal(notes[outputs.MAX_WARNING_ANNOTATIONS], ("warning", "fpcheck: more warnings", "5,950 more warnings (the whole report is in report-json)"), "annotations: how many more")
    c.check(all(size(t) <= outputs.TEXT_OUTPUT_LIMIT_BYTES and size(m) <= outputs.TEXT_OUTPUT_LIMIT_BYTES for _, t, m in notes), "annotations: each capped")

    # 20,000 runtimes under 100-character names: even without file lists
    # they do not fit; the leading runtimes in name order do.
    crowd = [report_of(f"{i:05d}" + "r" * 95, [], warnings=0) for i in range(20000)]
    o = step({"restart_required": True, "summary": "crowd", "runtimes": crowd})
    verdicts = json.loads(o["runtimes"])
    names = sorted(r["name"] for r in crowd)
    c.check(0 < len(verdicts) < len(crowd), "the crowd needs cutting", str(len(verdicts)))
    c.equal(sorted(verdicts), names[: len(verdicts)], "runtimes: the leading whole runtimes in name order")
    c.check(size(o["runtimes"]) <= outputs.JSON_OUTPUT_LIMIT_BYTES, "runtimes (crowd) within its cap")
    slim = {n: {**outputs.verdict(r), "changed_runtime_files": None} for n, r in ((r["name"], r) for r in crowd)}
    fits = json.dumps({n: slim[n] for n in names[: len(verdicts) + 1]}, ensure_ascii=False, sort_keys=True)
    c.check(size(fits) > outputs.JSON_OUTPUT_LIMIT_BYTES, "runtimes (crowd): one more would not fit")
    c.check(
        o["truncated"].endswith(f"runtimes: each runtime's changed_runtime_files is null, and {len(verdicts):,} of 20,000 runtimes are listed"),
        "truncated: how many runtimes are listed",
        o["truncated"],
    )

    # The step summary: fpcheck fits it already; a longer one is cut at a
    # line, with a note, never refused whole by GitHub.
    markdown = "".join(f"| row {i} | " + "y" * 200 + " |\n" for i in range(10000))
    fitted = check.fit_summary(markdown)
    c.check(size(fitted) <= check.SUMMARY_LIMIT_BYTES, "the summary within GitHub's limit", str(size(fitted)))
    c.check(fitted.endswith(check.SUMMARY_CUT) and fitted[: -len(check.SUMMARY_CUT)].endswith(" |"), "the summary: whole lines, then the note")
    c.equal(check.fit_summary("# ok\n\n"), "# ok\n", "a summary within the limit is kept")

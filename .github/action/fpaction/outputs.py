"""The step's outputs and annotations from fpcheck's JSON report, of one
runtime or of several (a monorepo whose config declares several runtimes
and no `runtime` input: fpcheck's report then holds a `runtimes` array of
single-runtime reports, each with its `name`, and a top-level
`restart_required` that is true when any runtime restarts)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from .fetch import Rev
from .workflow import command

# GitHub caps one output at 1 MB (all of a job's at 50 MB), and shows only
# the first annotations of a step. A hostile pull request can pass those
# with thousands of files under long names, thousands of runtimes, or a
# version file of megabytes (fpcheck reads up to 16 MiB). Each output is
# therefore cut to a limit, keeping JSON valid (whole entries, in order),
# and says so in the `truncated` output and a warning; the report file
# (`report-json`) always holds everything.
JSON_OUTPUT_LIMIT_BYTES = 900_000
TEXT_OUTPUT_LIMIT_BYTES = 16_384
MAX_WARNING_ANNOTATIONS = 50
CUT = " … (truncated: the whole value is in report-json)"


def runtime_reports(report: dict) -> list[tuple[str, dict]]:
    """Each runtime's report with its name: `[]` for a single-runtime
    report (which is itself the one runtime's)."""
    runtimes = report.get("runtimes")
    if not isinstance(runtimes, list):
        return []
    return [(str(r.get("name", "")), r) for r in runtimes if isinstance(r, dict)]


def side(report: dict, end: str) -> dict:
    value = report.get(end)
    return value if isinstance(value, dict) else {}


def changed_files(report: dict) -> list[str]:
    """The changed runtime files of one runtime's report, repository paths."""
    return [str(c.get("path", "")) for c in (report.get("changes") or {}).get("runtime") or []]


def avoidable_text(value: object) -> str:
    """`true`/`false`, or empty when not known (classification off)."""
    return "" if value is None else ("true" if value else "false")


def size(text: str) -> int:
    """Bytes in GITHUB_OUTPUT (UTF-8)."""
    return len(text.encode("utf-8"))


def cap_text(text: str, limit: int = TEXT_OUTPUT_LIMIT_BYTES) -> tuple[str, bool]:
    """`text`, or its first characters and a note saying it was cut, in at
    most `limit` bytes; and whether it was cut."""
    if size(text) <= limit:
        return text, False
    head = text.encode("utf-8")[: limit - size(CUT)].decode("utf-8", "ignore")
    return head + CUT, True


def cap_optional(value: object) -> object:
    """A version as the report has it (text or null), capped."""
    return value if value is None else cap_text(str(value))[0]


def json_list(items: list[str], limit: int = JSON_OUTPUT_LIMIT_BYTES) -> tuple[str, int]:
    """The JSON array of the leading `items` that fit in `limit` bytes (as
    `json.dumps` writes it), and how many it holds."""
    pieces = leading_fit((json.dumps(item, ensure_ascii=False) for item in items), limit)
    return "[" + ", ".join(pieces) + "]", len(pieces)


def leading_fit(pieces: Iterable[str], limit: int) -> list[str]:
    """The leading `pieces` that, joined by `, ` inside a pair of brackets,
    fit in `limit` bytes (the one rule both JSON outputs are cut by)."""
    kept: list[str] = []
    used = 2
    for piece in pieces:
        grown = used + size(piece) + (2 if kept else 0)
        if grown > limit:
            break
        used = grown
        kept.append(piece)
    return kept


def json_runtimes(verdicts: dict[str, dict], limit: int = JSON_OUTPUT_LIMIT_BYTES) -> tuple[str, str]:
    """The `runtimes` output within `limit` bytes, and a note when it is
    not whole: first each runtime's `changed_runtime_files` becomes null
    (the files are in `changed-runtime-files` and the report), then whole
    runtimes are left out, in name order."""
    full = json.dumps(verdicts, ensure_ascii=False, sort_keys=True)
    if size(full) <= limit:
        return full, ""
    slim = {name: {**v, "changed_runtime_files": None} for name, v in verdicts.items()}
    pieces = leading_fit(
        (json.dumps(name, ensure_ascii=False) + ": " + json.dumps(slim[name], ensure_ascii=False, sort_keys=True) for name in sorted(slim)),
        limit,
    )
    note = "each runtime's changed_runtime_files is null"
    if len(pieces) < len(slim):
        note += f", and {len(pieces):,} of {len(slim):,} runtimes are listed"
    return "{" + ", ".join(pieces) + "}", note


def verdict(report: dict) -> dict:
    """One runtime's verdict, for the `runtimes` output (its text capped)."""
    return {
        "restart_required": bool(report.get("restart_required")),
        "reason": str(report.get("reason", "")),
        "avoidable": report.get("avoidable"),
        "summary": cap_text(str(report.get("summary", "")))[0],
        "from_version": cap_optional(side(report, "from").get("version")),
        "to_version": cap_optional(side(report, "to").get("version")),
        "from_fingerprint": str(side(report, "from").get("fingerprint") or ""),
        "to_fingerprint": str(side(report, "to").get("fingerprint") or ""),
        "changed_runtime_files": changed_files(report),
    }


def overall_reason(runtimes: list[tuple[str, dict]]) -> str:
    """The reasons of the runtimes that restart (of every runtime when none
    does), each once, comma-separated, in runtime name order: a value from
    the reason vocabulary when they agree, and `contains()` still finds
    `forced` when one runtime is forced."""
    restarting = [r for _, r in runtimes if r.get("restart_required")]
    reasons: list[str] = []
    for r in restarting or [r for _, r in runtimes]:
        reason = str(r.get("reason", ""))
        if reason not in reasons:
            reasons.append(reason)
    return ",".join(reasons)


def overall_avoidable(runtimes: list[tuple[str, dict]]) -> str:
    """Avoidable when some runtime restarts and every runtime that restarts
    does so avoidably; not when one of them restarts for code; unknown
    (empty) when a restarting runtime's changes were not classified."""
    values = [r.get("avoidable") for _, r in runtimes if r.get("restart_required")]
    if not values:
        # No restart: nothing to avoid, unless nothing was classified.
        return "" if all(r.get("avoidable") is None for _, r in runtimes) else "false"
    if any(v is False for v in values):
        return "false"
    if any(v is None for v in values):
        return ""
    return "true"


def missed_restart(report: dict) -> str:
    """`true` when fpcheck's advice finds a possible missed restart in any
    runtime (a free release that changed the dependencies or a data file a
    module reads: set force_restart), else `false` (also when the changes
    were not classified, which turns the advice off)."""
    reports = [r for _, r in runtime_reports(report)] or [report]
    found = any(
        isinstance(item, dict) and item.get("kind") == "possible_missed_restart"
        for r in reports
        for item in (r.get("advice") or [])
    )
    return "true" if found else "false"


def shared(values: list[object]) -> str:
    """The value every runtime has, else empty."""
    distinct = {str(v or "") for v in values}
    return distinct.pop() if len(distinct) == 1 else ""


def step_outputs(report: dict, frm: Rev, to: Rev, paths: dict[str, Path], runtime_input: str = "") -> dict[str, str]:
    """The step's outputs: the verdict from the JSON report, the ends as the
    action resolved them, the report files. With several runtimes, the
    single-value outputs say what holds for all of them (see action.yml)
    and `runtimes` has each runtime's verdict. Every output is capped (see
    JSON_OUTPUT_LIMIT_BYTES); `truncated` says which were cut and how, and
    is empty when none was."""
    runtimes = runtime_reports(report)
    if runtimes:
        verdicts = {name: verdict(r) for name, r in runtimes}
        # Each path once, in order; a set, as a hostile release may list
        # hundreds of thousands (a list's `in` made this quadratic).
        files = list(dict.fromkeys(f for _, r in runtimes for f in changed_files(r)))
        per_end = {
            f"{end}-{key}": shared([side(r, end).get(key) for _, r in runtimes])
            for end in ("from", "to")
            for key in ("version", "fingerprint")
        }
        reason, avoidable = overall_reason(runtimes), overall_avoidable(runtimes)
    else:
        verdicts = {runtime_input: verdict(report)} if runtime_input else {}
        files = changed_files(report)
        per_end = {
            f"{end}-{key}": str(side(report, end).get(key) or "") for end in ("from", "to") for key in ("version", "fingerprint")
        }
        reason, avoidable = str(report.get("reason", "")), avoidable_text(report.get("avoidable"))
    notes: list[str] = []
    files_json, kept = json_list(files)
    if kept < len(files):
        notes.append(f"changed-runtime-files: {kept:,} of {len(files):,} files")
    runtimes_json, runtimes_note = json_runtimes(verdicts)
    if runtimes_note:
        notes.append(f"runtimes: {runtimes_note}")
    text = {
        "reason": reason,
        "summary": str(report.get("summary", "")),
        "from-ref": frm.name,
        "to-ref": to.name,
        **per_end,
    }
    for name, value in text.items():
        text[name], cut = cap_text(value)
        if cut:
            notes.append(f"{name}: its first {TEXT_OUTPUT_LIMIT_BYTES:,} bytes")
    return {
        "restart-required": "true" if report.get("restart_required") else "false",
        "avoidable": avoidable,
        "possible-missed-restart": missed_restart(report),
        "from-commit": frm.sha,
        "to-commit": to.sha,
        **text,
        "changed-runtime-files": files_json,
        "runtimes": runtimes_json,
        "truncated": truncation_note(notes),
        "report-json": str(paths["json"]),
        "report-markdown": str(paths["summary"]),
        "comment-body": str(paths["comment"]),
    }


def truncation_note(notes: list[str]) -> str:
    """What was cut to fit GitHub's limits, in one sentence; empty when
    nothing was."""
    if not notes:
        return ""
    return "outputs cut to fit GitHub's limits (the whole report is in report-json): " + "; ".join(notes)


def annotations(report: dict, truncated: str = "") -> list[tuple[str, str, str]]:
    """(command, title, message): a ::warning:: per report warning (a
    settings change included), every runtime's with its name, at most
    MAX_WARNING_ANNOTATIONS and then one saying how many more; a warning
    when outputs were cut (`truncated`); then a ::notice:: with the
    verdict. Titles and messages are capped."""
    warnings = []
    runtimes = runtime_reports(report)
    for name, r in runtimes or [("", report)]:
        where = f" (runtime {name})" if runtimes else ""
        for w in r.get("warnings") or []:
            warnings.append(("warning", f"fpcheck: {w.get('code', 'warning')}{where}", str(w.get("message", ""))))
    out = warnings[:MAX_WARNING_ANNOTATIONS]
    if len(warnings) > MAX_WARNING_ANNOTATIONS:
        more = len(warnings) - MAX_WARNING_ANNOTATIONS
        out.append(("warning", "fpcheck: more warnings", f"{more:,} more warning{'s' if more != 1 else ''} (the whole report is in report-json)"))
    if truncated:
        out.append(("warning", "fpcheck: outputs truncated", truncated))
    verdict_words = "restart required" if report.get("restart_required") else "no restart"
    avoidable = overall_avoidable(runtimes) if runtimes else avoidable_text(report.get("avoidable"))
    if avoidable == "true":
        verdict_words += ", avoidable"
    if missed_restart(report) == "true":
        verdict_words += ", possible missed restart (see the advice; set force_restart)"
    out.append(("notice", f"fpcheck: {verdict_words}", str(report.get("summary", ""))))
    return [(kind, cap_text(title)[0], cap_text(message)[0]) for kind, title, message in out]


def annotate(report: dict, truncated: str = "") -> None:
    for name, title, message in annotations(report, truncated):
        command(name, message, title=title)

"""The step's outputs and annotations from fpcheck's JSON report, of one
runtime or of several (a monorepo whose config declares several runtimes
and no `runtime` input: fpcheck's report then holds a `runtimes` array of
single-runtime reports, each with its `name`, and a top-level
`restart_required` that is true when any runtime restarts)."""

from __future__ import annotations

import json
from pathlib import Path

from .fetch import Rev
from .workflow import command


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


def verdict(report: dict) -> dict:
    """One runtime's verdict, for the `runtimes` output."""
    return {
        "restart_required": bool(report.get("restart_required")),
        "reason": str(report.get("reason", "")),
        "avoidable": report.get("avoidable"),
        "summary": str(report.get("summary", "")),
        "from_version": side(report, "from").get("version"),
        "to_version": side(report, "to").get("version"),
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


def shared(values: list[object]) -> str:
    """The value every runtime has, else empty."""
    distinct = {str(v or "") for v in values}
    return distinct.pop() if len(distinct) == 1 else ""


def step_outputs(report: dict, frm: Rev, to: Rev, paths: dict[str, Path], runtime_input: str = "") -> dict[str, str]:
    """The step's outputs: the verdict from the JSON report, the ends as the
    action resolved them, the report files. With several runtimes, the
    single-value outputs say what holds for all of them (see action.yml)
    and `runtimes` has each runtime's verdict."""
    runtimes = runtime_reports(report)
    if runtimes:
        verdicts = {name: verdict(r) for name, r in runtimes}
        files: list[str] = []
        for _, r in runtimes:
            files += [f for f in changed_files(r) if f not in files]
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
    return {
        "restart-required": "true" if report.get("restart_required") else "false",
        "reason": reason,
        "avoidable": avoidable,
        "summary": str(report.get("summary", "")),
        "from-ref": frm.name,
        "to-ref": to.name,
        "from-commit": frm.sha,
        "to-commit": to.sha,
        **per_end,
        "changed-runtime-files": json.dumps(files, ensure_ascii=False),
        "runtimes": json.dumps(verdicts, ensure_ascii=False, sort_keys=True),
        "report-json": str(paths["json"]),
        "report-markdown": str(paths["summary"]),
        "comment-body": str(paths["comment"]),
    }


def annotations(report: dict) -> list[tuple[str, str, str]]:
    """(command, title, message): a ::warning:: per report warning (a
    settings change included), every runtime's with its name, then a
    ::notice:: with the verdict."""
    out = []
    runtimes = runtime_reports(report)
    for name, r in runtimes or [("", report)]:
        where = f" (runtime {name})" if runtimes else ""
        for w in r.get("warnings") or []:
            out.append(("warning", f"fpcheck: {w.get('code', 'warning')}{where}", str(w.get("message", ""))))
    verdict_words = "restart required" if report.get("restart_required") else "no restart"
    avoidable = overall_avoidable(runtimes) if runtimes else avoidable_text(report.get("avoidable"))
    if avoidable == "true":
        verdict_words += ", avoidable"
    out.append(("notice", f"fpcheck: {verdict_words}", str(report.get("summary", ""))))
    return out


def annotate(report: dict) -> None:
    for name, title, message in annotations(report):
        command(name, message, title=title)

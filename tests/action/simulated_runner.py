"""A GitHub Actions runner, simulated for the action's tests: action.yml read
as the runner reads it (a YAML subset), each composite step run with bash in
a runner's environment, and a stub GitHub on 127.0.0.1 (the comment API and
release downloads) that records every request."""

from __future__ import annotations

import http.server
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_simulated_token"
OWNER_REPO = "acme/server"
PR = 7


# --------------------------------------------------------------------------
# A YAML subset: block mappings and sequences, plain and quoted scalars,
# literal block scalars, comments. Enough for action.yml, which keeps to it.


class YamlSubset:
    KEY = re.compile(r"^([A-Za-z0-9_.-]+):(?:\s+(.*))?$")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.i = 0

    @staticmethod
    def strip_comment(s: str) -> str:
        quote = None
        for j, c in enumerate(s):
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (j == 0 or s[j - 1] in " \t"):
                return s[:j].rstrip()
        return s.rstrip()

    @staticmethod
    def indent(line: str) -> int:
        return len(line) - len(line.lstrip(" "))

    def skip(self) -> None:
        while self.i < len(self.lines) and not self.strip_comment(self.lines[self.i]).strip():
            self.i += 1

    def parse(self):
        self.skip()
        value = self.block(self.indent(self.lines[self.i]))
        self.skip()
        if self.i < len(self.lines):
            raise ValueError(f"action.yml line {self.i + 1}: not understood: {self.lines[self.i]!r}")
        return value

    def block(self, ind: int):
        self.skip()
        content = self.strip_comment(self.lines[self.i]).strip()
        return self.seq(ind) if content == "-" or content.startswith("- ") else self.mapping(ind)

    @staticmethod
    def scalar(s: str) -> str:
        if s.startswith('"'):
            assert s.endswith('"') and len(s) >= 2, s
            return json.loads(s)
        if s.startswith("'"):
            assert s.endswith("'") and len(s) >= 2, s
            return s[1:-1].replace("''", "'")
        if s.startswith(("[", "{", "&", "*", "!", ">")):
            raise ValueError(f"outside the YAML subset: {s!r}")
        return s

    def literal(self, parent: int) -> str:
        out, ind = [], None
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and self.indent(line) <= parent:
                break
            if line.strip() and ind is None:
                ind = self.indent(line)
            out.append(line[ind:] if ind is not None and line.strip() else "")
            self.i += 1
        while out and not out[-1]:
            out.pop()
        return "\n".join(out) + "\n"

    def value_after_key(self, rest: str | None, ind: int):
        if rest is None or rest == "":
            self.skip()
            if self.i < len(self.lines):
                nxt = self.lines[self.i]
                content = self.strip_comment(nxt).strip()
                if self.indent(nxt) > ind or (self.indent(nxt) == ind and content.startswith("- ")):
                    return self.block(self.indent(nxt))
            return ""
        if rest == "|":
            return self.literal(ind)
        return self.scalar(rest)

    def mapping(self, ind: int) -> dict:
        out: dict = {}
        while True:
            self.skip()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            if self.indent(line) < ind:
                return out
            if self.indent(line) > ind:
                raise ValueError(f"action.yml line {self.i + 1}: unexpected indentation")
            content = self.strip_comment(line).strip()
            if content.startswith("- "):
                return out
            m = self.KEY.match(content)
            if not m:
                raise ValueError(f"action.yml line {self.i + 1}: not a key: {content!r}")
            self.i += 1
            rest = m.group(2)
            out[m.group(1)] = self.value_after_key(rest.strip() if rest else rest, ind)

    def seq(self, ind: int) -> list:
        out: list = []
        while True:
            self.skip()
            if self.i >= len(self.lines):
                return out
            line = self.lines[self.i]
            content = self.strip_comment(line).strip()
            if self.indent(line) != ind or not (content == "-" or content.startswith("- ")):
                return out
            rest = content[1:].lstrip()
            if not rest:
                self.i += 1
                out.append(self.block(self.indent(self.lines[self.i])))
            elif self.KEY.match(rest):
                item_indent = ind + (len(content) - len(rest))
                self.lines[self.i] = " " * item_indent + rest
                out.append(self.mapping(item_indent))
            else:
                self.i += 1
                out.append(self.scalar(rest))


# --------------------------------------------------------------------------
# The stub: the GitHub REST API's comment endpoints and release downloads.


class Stub:
    """Bounded: past `max_requests` requests or `seconds` after it starts,
    every request is answered 503 and counted in `over_budget` (a run that
    loops on the API fails its test instead of spinning), and a client that
    stops sending is dropped after HANDLER_TIMEOUT seconds."""

    HANDLER_TIMEOUT = 10

    def __init__(self, max_requests: int = 2000, seconds: float = 900):
        self.max_requests = max_requests
        self.deadline = time.monotonic() + seconds
        self.over_budget = 0
        # When set, (status, methods): API calls with those methods are
        # answered with that status (a 403 of a read-only token, a 5xx).
        self.failure: tuple[int, set[str]] | None = None
        self.requests: list[dict] = []
        self.comments: list[dict] = []
        self.assets: dict[str, bytes] = {}
        # When set, every API call is answered with a 307 to this URL + path
        # (a redirect to another host).
        self.redirect: str | None = None
        self.next_id = 1
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            timeout = Stub.HANDLER_TIMEOUT

            def log_message(self, *args):
                pass

            def reply(self, status: int, data=None, raw: bytes | None = None):
                body = raw if raw is not None else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def handle_any(self, method: str):
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with stub.lock:
                    stub.requests.append(
                        {
                            "method": method,
                            "path": url.path,
                            "query": dict(urllib.parse.parse_qsl(url.query)),
                            "authorization": self.headers.get("Authorization"),
                            "api_version": self.headers.get("X-GitHub-Api-Version"),
                            "body": json.loads(body) if body else None,
                        }
                    )
                    redirect = stub.redirect if url.path.startswith("/repos/") else None
                    over = len(stub.requests) > stub.max_requests or time.monotonic() > stub.deadline
                    if over:
                        stub.over_budget += 1
                if over:
                    self.reply(503, {"message": "the test's stub is over its budget of requests or time"})
                    return
                if redirect:
                    self.send_response(307)
                    self.send_header("Location", redirect + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with stub.lock:
                    status, data, raw = stub.route(method, url.path, dict(urllib.parse.parse_qsl(url.query)), body, self.headers)
                self.reply(status, data, raw)

            def do_GET(self):
                self.handle_any("GET")

            def do_POST(self):
                self.handle_any("POST")

            def do_PATCH(self):
                self.handle_any("PATCH")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def add_comment(self, body: str, login: str, kind: str, association: str) -> dict:
        c = {
            "id": self.next_id,
            "body": body,
            "user": {"login": login, "type": kind},
            "author_association": association,
            "html_url": f"https://github.example/{OWNER_REPO}/pull/{PR}#issuecomment-{self.next_id}",
        }
        self.next_id += 1
        self.comments.append(c)
        return c

    def api_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].startswith("/repos/")]

    def route(self, method, path, query, body, headers):
        m = re.fullmatch(r"/[^/]+/[^/]+/releases/download/([^/]+)/([^/]+)", path)
        if m and method == "GET":
            data = self.assets.get(f"{m.group(1)}/{m.group(2)}")
            return (200, None, data) if data is not None else (404, {"message": "Not Found"}, None)
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials"}, None
        if self.failure and method in self.failure[1]:
            status = self.failure[0]
            message = "Resource not accessible by integration" if status == 403 else "Server Error"
            return status, {"message": message}, None
        base = f"/repos/{OWNER_REPO}/issues"
        if path == f"{base}/{PR}/comments" and method == "GET":
            per_page, page = int(query.get("per_page", 30)), int(query.get("page", 1))
            return 200, self.comments[(page - 1) * per_page : page * per_page], None
        if path == f"{base}/{PR}/comments" and method == "POST":
            c = self.add_comment(json.loads(body)["body"], "github-actions[bot]", "Bot", "NONE")
            return 201, c, None
        m = re.fullmatch(rf"{base}/comments/(\d+)", path)
        if m and method == "PATCH":
            for c in self.comments:
                if c["id"] == int(m.group(1)):
                    c["body"] = json.loads(body)["body"]
                    return 200, c, None
            return 404, {"message": "Not Found"}, None
        return 404, {"message": "Not Found"}, None


def git_env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_", "RUNNER_", "INPUT_", "FPCHECK_"))}
    e.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    return e


# --------------------------------------------------------------------------
# The simulated runner


def parse_workflow_commands(stdout: str) -> list[tuple[str, dict, str]]:
    """The workflow commands the runner would obey, honouring stop-commands."""

    def unescape(s: str, prop: bool = False) -> str:
        if prop:
            s = s.replace("%3A", ":").replace("%2C", ",")
        return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")

    out, stopped = [], None
    for line in stdout.splitlines():
        t = line.strip()
        if stopped is not None:
            if t == f"::{stopped}::":
                stopped = None
            continue
        m = re.match(r"^::([a-z-]+)(?: ([^:]*))?::(.*)$", t)
        if not m:
            continue
        name, props_raw, message = m.group(1), m.group(2) or "", m.group(3)
        if name == "stop-commands":
            stopped = message
            continue
        props = {}
        for part in filter(None, props_raw.split(",")):
            k, _, v = part.partition("=")
            props[k.strip()] = unescape(v, prop=True)
        out.append((name, props, unescape(message)))
    return out


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's two forms: name=value and name<<DELIMITER."""
    out, lines, i = {}, path.read_text(encoding="utf-8").split("\n"), 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value = []
            while lines[i] != delim:
                value.append(lines[i])
                i += 1
            i += 1
            out[name] = "\n".join(value)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


class Result:
    def __init__(self):
        self.ok = True
        self.steps: list[dict] = []
        self.outputs: dict[str, str] = {}
        self.stdout = ""
        self.summary = ""
        self.failed_step = None
        # The checkout the action ran in.
        self.workspace: Path | None = None

    def report(self) -> dict:
        """The report-json output's file, read; {} without one."""
        path = self.outputs.get("report-json")
        return json.loads(Path(path).read_text(encoding="utf-8")) if path else {}

    def has_markdown_report(self) -> bool:
        path = self.outputs.get("report-markdown")
        return Path(path).is_file() if path else False

    def step(self, step_id: str) -> dict:
        return next(s for s in self.steps if s["id"] == step_id)

    @property
    def commands(self):
        return parse_workflow_commands(self.stdout)


class Runner:
    def __init__(self, action_dir: Path, tmp: Path, stub: Stub):
        self.action_dir = action_dir
        self.action = YamlSubset((ROOT / "action.yml").read_text(encoding="utf-8")).parse()
        self.tmp = tmp
        self.stub = stub
        self.count = 0

    def run(self, workspace: Path, event_name: str, event: dict, inputs: dict, extra_env: dict | None = None) -> Result:
        work = Path(tempfile.mkdtemp(prefix="runner-", dir=self.tmp))
        (work / "temp").mkdir()
        event_path = work / "event.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        spec = self.action["inputs"]
        unknown = set(inputs) - set(spec)
        assert not unknown, f"inputs not declared in action.yml: {unknown}"
        system, machine = platform.system(), platform.machine().lower()
        base_env = git_env()
        base_env.update(
            GITHUB_ACTIONS="true",
            CI="true",
            GITHUB_WORKSPACE=str(workspace),
            GITHUB_EVENT_NAME=event_name,
            GITHUB_EVENT_PATH=str(event_path),
            GITHUB_REPOSITORY=OWNER_REPO,
            GITHUB_SHA=str(event.get("after") or event.get("pull_request", {}).get("merge_commit_sha", "")),
            GITHUB_API_URL=stub_url(self.stub),
            GITHUB_SERVER_URL=stub_url(self.stub),
            GITHUB_RUN_ID="4242",
            GITHUB_ACTION_PATH=str(self.action_dir),
            RUNNER_TEMP=str(work / "temp"),
            RUNNER_OS={"Linux": "Linux", "Darwin": "macOS", "Windows": "Windows"}.get(system, system),
            RUNNER_ARCH={"x86_64": "X64", "amd64": "X64", "arm64": "ARM64", "aarch64": "ARM64"}.get(machine, machine),
        )
        base_env.update(extra_env or {})
        ctx_inputs = {}
        for name, meta in spec.items():
            ctx_inputs[name] = str(inputs[name]) if name in inputs else meta.get("default", "")
        result = Result()
        result.workspace = workspace
        step_outputs: dict[str, dict] = {}

        def evaluate(expr: str) -> str:
            expr = expr.strip()
            if expr == "github.token":
                return TOKEN
            if expr in ("github.action_ref", "github.action_repository"):
                # Empty in composite actions (actions/runner#2473): the
                # action must cope.
                return ""
            m = re.fullmatch(r"inputs\.([A-Za-z0-9_-]+)", expr)
            if m:
                return substitute(ctx_inputs[m.group(1)])
            m = re.fullmatch(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", expr)
            if m:
                return step_outputs.get(m.group(1), {}).get(m.group(2), "")
            raise AssertionError(f"expression the simulated runner does not know: {expr}")

        def substitute(text: str) -> str:
            return re.sub(r"\$\{\{(.*?)\}\}", lambda m: evaluate(m.group(1)), text)

        runs = self.action["runs"]
        assert runs["using"] == "composite"
        for step in runs["steps"]:
            assert "if" not in step, "the simulated runner runs every step; keep conditions in the script"
            assert "uses" not in step, "no nested actions"
            assert step.get("shell") == "bash", step
            assert "${{" not in step["run"], f"an expression inside run: {step['run']!r}"
            step_id = step.get("id", f"step{len(result.steps)}")
            files = work / step_id
            files.mkdir()
            (files / "output").touch()
            (files / "summary").touch()
            env = dict(base_env)
            for k, v in (step.get("env") or {}).items():
                env[k] = substitute(v)
            env["GITHUB_OUTPUT"] = str(files / "output")
            env["GITHUB_STEP_SUMMARY"] = str(files / "summary")
            script = files / "run.sh"
            script.write_text(step["run"], encoding="utf-8")
            started = time.monotonic()
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=workspace,
                env=env,
                capture_output=True,
                text=True,
            )
            outputs = read_outputs(files / "output")
            step_outputs[step_id] = outputs
            summary = (files / "summary").read_text(encoding="utf-8")
            result.steps.append(
                {
                    "id": step_id,
                    "name": step.get("name"),
                    "code": proc.returncode,
                    "stdout": proc.stdout,
                    "stderr": proc.stderr,
                    "outputs": outputs,
                    "seconds": time.monotonic() - started,
                }
            )
            result.stdout += proc.stdout
            result.summary += summary
            if os.environ.get("FPCHECK_ACTION_TEST_VERBOSE"):
                print(f"[{step_id}] exit {proc.returncode} in {time.monotonic() - started:.2f}s\n{proc.stdout}{proc.stderr}", file=sys.stderr)
            if proc.returncode != 0:
                result.ok = False
                result.failed_step = step_id
                break
        for name, meta in self.action.get("outputs", {}).items():
            result.outputs[name] = substitute(meta["value"])
        return result


def stub_url(stub: Stub) -> str:
    return stub.url


def dump(result: Result) -> str:
    parts = []
    for s in result.steps:
        parts.append(f"--- step {s['id']} exit {s['code']}\n{s['stdout']}\n{s['stderr']}")
    return "\n".join(parts)

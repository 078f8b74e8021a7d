"""Workflow commands, logging, step outputs and inputs: how a step talks to
the runner. Everything from the repository is printed escaped or with
workflow commands switched off."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import tempfile
import uuid
from pathlib import Path

HTTP_TIMEOUT = 60
USER_AGENT = "fpcheck-action"


class Fail(Exception):
    """A failure the step reports as an ::error:: and exits with."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def escape_data(text: str) -> str:
    """Escapes a workflow command's message (`::warning::<here>`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escapes a workflow command's property value (`title=<here>`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


# What fpcheck's `term::escape` writes as `\u{...}`: bidirectional controls
# (they reorder what follows) and zero-width characters (they make two
# different names look the same). Keep in step with src/term.rs.
BIDI = {0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}
ZERO_WIDTH = {*range(0x200B, 0x200E), *range(0x2060, 0x2066), 0xFEFF}
HIDDEN = BIDI | ZERO_WIDTH


def visible(text: str) -> str:
    """Control, bidirectional and zero-width characters written as visible escapes
    (`\\x1b`, `\\u{202e}`), as fpcheck's terminal output writes them; `\\n`
    and `\\r` are left to the command's own escaping. Names in fpcheck's JSON
    are exact (a runtime's name in `summary`): a log line shows them so."""
    out = []
    for ch in text:
        n = ord(ch)
        if ch in "\n\r":
            out.append(ch)
        elif n < 0x20 or 0x7F <= n < 0xA0:
            out.append(f"\\x{n:02x}")
        elif n in HIDDEN:
            out.append(f"\\u{{{n:x}}}")
        else:
            out.append(ch)
    return "".join(out)


def command(name: str, message: str, **props: str) -> None:
    """Prints `::name k=v,...::message`, every part escaped."""
    attrs = ",".join(f"{k}={escape_property(visible(v))}" for k, v in props.items() if v)
    sep = " " if attrs else ""
    print(f"::{name}{sep}{attrs}::{escape_data(visible(message))}", flush=True)


def log(text: str = "") -> None:
    """Prints text the action wrote itself (no repository content)."""
    print(text, flush=True)


def log_untrusted(text: str) -> None:
    """Prints text that may hold repository content (file or ref names, tool
    output) with workflow commands switched off, so that a line such as
    `::set-output ...` in a file name is printed, not obeyed."""
    text = text.rstrip("\n")
    if not text:
        return
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    print(text, flush=True)
    print(f"::{token}::", flush=True)


@contextlib.contextmanager
def group(title: str):
    print(f"::group::{escape_data(title)}", flush=True)
    try:
        yield
    finally:
        print("::endgroup::", flush=True)


def set_output(name: str, value: str) -> None:
    """Appends one step output to $GITHUB_OUTPUT (heredoc form, so any value
    is safe)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def bool_input(name: str, default: bool = False) -> bool:
    raw = env(name)
    if raw == "":
        return default
    if raw.lower() in ("true", "yes", "1", "on"):
        return True
    if raw.lower() in ("false", "no", "0", "off"):
        return False
    pretty = name.removeprefix("INPUT_").lower().replace("_", "-")
    raise Fail(f"input `{pretty}` must be true or false, not `{raw}`", 2)


def temp_root() -> Path:
    return Path(env("RUNNER_TEMP") or tempfile.gettempdir())


def action_path() -> Path:
    given = env("GITHUB_ACTION_PATH")
    return Path(given) if given else Path(__file__).resolve().parents[3]


def load_event() -> dict:
    path = env("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, dict) else {}


def pull_request(event: dict) -> dict | None:
    pr = event.get("pull_request")
    return pr if isinstance(pr, dict) and pr.get("base") and pr.get("head") else None

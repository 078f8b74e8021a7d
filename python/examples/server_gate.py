"""A Python server's restart gate, with fpcheck instead of hand-written code.

Run it: ``python server_gate.py`` builds a runtime in a temporary folder,
starts a "server" on it, plays an update, and prints what each side sees.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Dict

import fpcheck


class Server:
    """The long-running process: fingerprint at start-up, status per call."""

    def __init__(self, runtime: Path, marker: Path, client: str) -> None:
        self.runtime, self.marker, self.client = runtime, marker, client
        # 1. At start-up: what this process loaded.
        self.fingerprint = fpcheck.fingerprint(runtime) or "unknown"
        self.version = json.loads((runtime.parent / "version.json").read_text())[
            "version"
        ]

    def on_tool_call(self) -> Dict[str, Any]:
        # 2. On every tool call: must I restart? cache=True keeps a watcher
        # in this process, so an unchanged runtime costs no file read.
        return fpcheck.status(
            self.runtime,
            self.marker,
            process_fingerprint=self.fingerprint,
            process_version=self.version,
            client=self.client,
            cache=True,
        )


def update(runtime: Path, marker: Path, version: str, code: str) -> Dict[str, Any]:
    """The updater: snapshot, install the release, gate."""
    before = fpcheck.snapshot(runtime)  # 3a. before installing
    (runtime / "app.py").write_text(code)
    (runtime.parent / "version.json").write_text(json.dumps({"version": version}))
    return fpcheck.gate(before, runtime, marker, client="codex")  # 3b. after


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Path(tmp) / "server" / "src"
        runtime.mkdir(parents=True)
        (runtime / "app.py").write_text("print('v1')\n")
        (runtime.parent / "version.json").write_text('{"version": "1.0.0"}')
        marker = Path(tmp) / "mcp-restart-required.json"

        server = Server(runtime, marker, client="codex")
        print("before:", server.on_tool_call()["restart_required"])

        # A docs-only release: new version, same runtime bytes: no marker.
        (runtime.parent / "README.md").write_text("docs")
        decided = update(runtime, marker, "1.0.1", "print('v1')\n")
        print("docs-only release, marker written:", decided["marker_written"])

        decided = update(runtime, marker, "1.1.0", "print('v2')\n")
        print("code release, marker written:", decided["marker_written"])
        answer = server.on_tool_call()
        print("server must restart:", answer["restart_required"], answer["reason"])

        # The restart: a new process, which acknowledges it runs the
        # installed code (its fingerprint equals the runtime's).
        server = Server(runtime, marker, client="codex")
        done = fpcheck.ack(
            marker,
            "codex",
            runtime_root=runtime,
            process_fingerprint=server.fingerprint,
            process_version=server.version,
        )
        print("ack:", done["action"])
        print("after restart:", server.on_tool_call()["restart_required"])


if __name__ == "__main__":
    main()

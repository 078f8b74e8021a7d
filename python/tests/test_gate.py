"""snapshot / gate / status / ack: the CLI's objects, the warm path that
never goes stale, errors, and threads."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import fpcheck
from conftest import Cache, ask, fpcheck_cli


def test_status_is_the_cli_json(runtime: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    args = ["status", "--dir", str(runtime), "--marker", str(marker), "--json"]
    for process_fp, version, client in [
        (fp, "", ""),
        ("0" * 64, "0.9", "codex"),
        ("unknown", "", ""),
    ]:
        got = fpcheck.status(
            runtime,
            marker,
            process_fingerprint=process_fp,
            process_version=version,
            client=client,
        )
        extra = ["--process-fingerprint", process_fp, "--process-version", version]
        extra += ["--client", client] if client else []
        cli = fpcheck_cli(*args, *extra)
        assert cli.returncode in (0, 1), cli.stderr
        assert got == json.loads(cli.stdout)
    marker.write_text("{not json")
    got = ask(runtime, marker, fp, cache=None)
    assert got["restart_required"] and got["reason"] == "marker_corrupt"
    assert got == json.loads(
        fpcheck_cli(*args, "--process-fingerprint", fp, "--process-version", "").stdout
    )


def test_warm_status_sees_a_rename_that_keeps_count_sizes_and_mtimes(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    assert ask(runtime, marker, fp)["cache"] == "miss"
    assert ask(runtime, marker, fp)["cache"] == "hit"
    old = runtime / "plugins" / "memory.py"
    st = os.stat(old)
    os.rename(old, runtime / "plugins" / "memorx.py")
    os.utime(runtime / "plugins" / "memorx.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    after = ask(runtime, marker, fp)
    assert after["restart_required"] and after["reason"] == "fingerprint_mismatch"
    assert after["installed_fingerprint"] == fpcheck.fingerprint(runtime) != fp
    assert after["cache"] == "miss"


@pytest.mark.parametrize("cache", ["memory", "file"])
def test_warm_status_sees_an_edit_on_the_very_next_call(
    runtime: Path, tmp_path: Path, cache: str
) -> None:
    marker = tmp_path / "marker.json"
    chosen: Cache = True if cache == "memory" else tmp_path / "status.cache"
    fp = fpcheck.fingerprint(runtime)
    for _ in range(3):
        assert not ask(runtime, marker, fp, chosen)["restart_required"]
    assert ask(runtime, marker, fp, chosen)["cache"] == "hit"
    target = runtime / "server.py"
    st = os.stat(target)
    target.write_text("# entrypoinT\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    after = ask(runtime, marker, fp, chosen)
    assert after["restart_required"] and after["installed_fingerprint"] != fp
    # A new file, a new folder, a deletion: each seen at once.
    fp2 = after["installed_fingerprint"]
    assert ask(runtime, marker, fp2, chosen)["cache"] == "hit"
    (runtime / "new").mkdir()
    assert ask(runtime, marker, fp2, chosen)["cache"] == "miss"
    assert ask(runtime, marker, fp2, chosen)["cache"] == "hit"
    (runtime / "new" / "x.py").write_text("x")
    assert ask(runtime, marker, fp2, chosen)["restart_required"]
    os.remove(runtime / "new" / "x.py")
    assert not ask(runtime, marker, fp2, chosen)["restart_required"]


def test_warm_status_ignores_bytecode_but_not_a_hard_link(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    ask(runtime, marker, fp)
    (runtime / "__pycache__").mkdir()
    ask(runtime, marker, fp)
    (runtime / "plugins" / "memory.cpython-311.pyc").write_bytes(b"\0")
    assert ask(runtime, marker, fp)["cache"] == "hit"
    outside = tmp_path / "outside.py"
    os.link(runtime / "server.py", outside)
    ask(runtime, marker, fp)
    assert ask(runtime, marker, fp)["cache"] == "hit"
    with open(outside, "a") as f:
        f.write("# changed through another link\n")
    assert ask(runtime, marker, fp)["restart_required"]


def test_warm_status_sees_a_re_pointed_root_link(tmp_path: Path) -> None:
    for name, body in [("v1", "one"), ("v2", "two")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "app.py").write_text(body)
    current = tmp_path / "current"
    os.symlink("v1", current)
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(current)
    ask(current, marker, fp)
    assert ask(current, marker, fp)["cache"] == "hit"
    tmp_link = tmp_path / "next"
    os.symlink("v2", tmp_link)
    os.replace(tmp_link, current)
    assert ask(current, marker, fp)["restart_required"]


def test_version_and_marker_are_read_on_every_warm_call(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    ask(runtime, marker, fp, process_version="1.0.0")
    assert ask(runtime, marker, fp, process_version="1.0.0")["cache"] == "hit"
    marker.write_text(json.dumps({"required": True, "to_fingerprint": fp}))
    got = ask(runtime, marker, fp, process_version="1.0.0")
    assert got["cache"] == "hit" and got["restart_required"]
    assert got["reason"] == "marker_required"
    marker.unlink()
    (runtime.parent / "version.json").write_text('{"version": "2.0.0"}\n')
    got = ask(runtime, marker, fp, process_version="1.0.0")
    assert got["installed_version"] == "2.0.0"


def test_threads_call_concurrently(runtime: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    errors: List[BaseException] = []
    answers: List[str] = []

    def worker(i: int) -> None:
        try:
            for j in range(30):
                if j % 3 == 0:
                    answers.append(fpcheck.fingerprint(runtime))
                else:
                    got = ask(runtime, marker, fp, cache=True if i % 2 else None)
                    answers.append(got["installed_fingerprint"])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert answers == [fp] * 240


def test_snapshot_gate_ack_round_trip(runtime: Path, tmp_path: Path) -> None:
    marker = tmp_path / "state" / "marker.json"
    marker.parent.mkdir()
    before = fpcheck.snapshot(runtime, out=tmp_path / "before.json")
    assert before["fingerprint"] == fpcheck.fingerprint(runtime)
    assert json.loads((tmp_path / "before.json").read_text()) == before
    old_fp = before["fingerprint"]
    # The update: new code, new version.
    (runtime / "plugins" / "memory.py").write_text("def hello(): return 'v2'\n")
    (runtime.parent / "version.json").write_text('{"version": "1.1.0"}\n')
    decided = fpcheck.gate(before, runtime, marker, client="codex")
    assert decided["restart_required"] and decided["marker_written"]
    assert decided["changed_files"] == [
        {"path": "plugins/memory.py", "change": "modified"}
    ]
    assert marker.exists()
    new_fp = fpcheck.fingerprint(runtime)
    assert ask(runtime, marker, old_fp, process_version="1.0.0")["restart_required"]
    refused = fpcheck.ack(
        marker, "codex", runtime_root=runtime, process_fingerprint=old_fp
    )
    assert refused["action"] == "refused" and marker.exists()
    done = fpcheck.ack(
        marker, "codex", runtime_root=runtime, process_fingerprint=new_fp
    )
    assert done["action"] == "removed" and not marker.exists()
    assert not ask(runtime, marker, new_fp, process_version="1.1.0")["restart_required"]
    # The same gate from the snapshot file equals the CLI's object.
    again = fpcheck.gate(tmp_path / "before.json", runtime, marker)
    cli = fpcheck_cli(
        "gate",
        "--dir",
        str(runtime),
        "--before",
        str(tmp_path / "before.json"),
        "--marker",
        str(marker),
        "--json",
    )
    assert cli.returncode == 0, cli.stderr
    assert again == json.loads(cli.stdout)


def test_gate_errors_raise_with_the_conservative_report(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(fpcheck.SnapshotError) as caught:
        fpcheck.gate(bad, runtime, marker)
    report = caught.value.report
    assert report["restart_required"] and report["marker_written"] and marker.exists()
    with pytest.raises(fpcheck.SnapshotError):
        fpcheck.gate({"kind": "other"}, runtime, marker)
    # A missing marker directory is created (as the reference does); a
    # regular file in the way of it cannot be.
    (tmp_path / "in-the-way").write_text("")
    with pytest.raises(fpcheck.OutputError):
        fpcheck.gate(
            fpcheck.snapshot(runtime), runtime, tmp_path / "in-the-way" / "m.json"
        )
    marker.write_text("[1]")
    with pytest.raises(fpcheck.MarkerError):
        fpcheck.ack(marker, "codex", runtime_root=runtime, process_fingerprint="")
    with pytest.raises(TypeError):
        fpcheck.gate(42, runtime, marker)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ask(runtime, marker, "", cache=3)  # type: ignore[arg-type]


def test_a_bad_snapshot_dict_is_named_as_the_argument(
    runtime: Path, tmp_path: Path
) -> None:
    """Not as the private file the dict is handed to the gate in."""
    marker = tmp_path / "marker.json"
    taken = fpcheck.snapshot(runtime)
    for bad, why in [
        ({"a": float("nan")}, "NaN or infinity"),
        ({**taken, "fingerprint": float("inf")}, "NaN or infinity"),
        ({"kind": "other"}, "not an fpcheck snapshot"),
    ]:
        with pytest.raises(fpcheck.SnapshotError) as caught:
            fpcheck.gate(bad, runtime, marker)
        message = str(caught.value)
        assert message.startswith("the snapshot argument (a dict) is not a usable")
        assert why in message and "/tmp" not in message
        assert caught.value.report["error"] == message
        assert caught.value.report["restart_required"] and marker.exists()


def test_a_forked_child_does_not_share_the_parents_watcher(
    runtime: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    ask(runtime, marker, fp)
    assert ask(runtime, marker, fp)["cache"] == "hit"
    pid = os.fork()
    if pid == 0:  # the child: its first answer is its own full check
        ok = ask(runtime, marker, fp)["cache"] == "miss"
        ok = ok and ask(runtime, marker, fp)["cache"] == "hit"
        os._exit(0 if ok else 1)
    _, code = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(code) == 0
    (runtime / "server.py").write_text("# changed after the fork\n")
    assert ask(runtime, marker, fp)["restart_required"]


NO_TO = '{"required": true, "clients": {"codex": "restart_session_required"}}'


def test_ack_proves_the_process_current_against_runtime_root(
    runtime: Path, tmp_path: Path
) -> None:
    """Section 7's clearing: the installed fingerprint, else the version."""
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    other = "0" * 64

    def ack(process_fp: str, version: str = "") -> Dict[str, Any]:
        got = fpcheck.ack(
            marker,
            "codex",
            runtime_root=runtime,
            process_fingerprint=process_fp,
            process_version=version,
        )
        return got

    # The same object as `fpcheck ack --dir ... --json`, marker by marker.
    for process_fp, version in [(fp, ""), (other, "1.0.0"), ("unknown", "0.9")]:
        marker.write_text(NO_TO)
        got = ack(process_fp, version)
        marker.write_text(NO_TO)
        cli = fpcheck_cli(
            "ack",
            "--marker",
            str(marker),
            "--client",
            "codex",
            "--dir",
            str(runtime),
            "--process-fingerprint",
            process_fp,
            "--process-version",
            version,
            "--json",
        )
        assert cli.returncode in (0, 1), cli.stderr
        assert got == json.loads(cli.stdout)
    marker.write_text(NO_TO)
    done = ack(fp)
    assert (done["action"], done["installed_fingerprint"]) == ("removed", fp)
    assert done["installed_version"] == "1.0.0" and not marker.exists()
    # Other code than installed: refused, the marker untouched.
    marker.write_text(NO_TO)
    refused = ack(other, "1.0.0")
    assert refused["action"] == "refused" and marker.read_text() == NO_TO
    assert "is not the installed runtime's" in refused["because"]
    # No usable fingerprint: the process version decides.
    assert ack("unknown", "0.9")["action"] == "refused"
    assert marker.read_text() == NO_TO
    kept = ack("unknown")
    assert kept["action"] == "acknowledged" and marker.exists()
    marker.write_text(NO_TO)
    assert ack("", "1.0.0")["action"] == "removed" and not marker.exists()
    # A runtime_root that changed since the process started: refused.
    marker.write_text(NO_TO)
    (runtime / "server.py").write_text("# updated under the process\n")
    assert ack(fp)["action"] == "refused"
    # A reason that names a setting names this function's keyword.
    marker.write_text(json.dumps({"to_fingerprint": fp, "clients": {"codex": "r"}}))
    assert ack("unknown")["because"] == (
        "the process has not proven it loaded the marker's to_fingerprint"
        " (pass process_fingerprint)"
    )


def test_gate_failures_raise_the_class_of_their_cause(
    runtime: Path, tmp_path: Path
) -> None:
    """The class comes from the library's typed cause, not the message."""
    import fcntl

    marker = tmp_path / "marker.json"
    before = fpcheck.snapshot(runtime)
    (runtime / "server.py").write_text("# new code\n")
    (runtime.parent / "version.json").write_text('{"version": "2.0.0"}\n')
    # Another gate holds the lock: LockError, the report says restart.
    with open(tmp_path / "marker.json.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(fpcheck.LockError) as caught:
            fpcheck.gate(before, runtime, marker, lock_timeout=0)
        assert caught.value.report["restart_required"]
        assert not caught.value.report["marker_written"] and not marker.exists()
        with pytest.raises(fpcheck.LockError):
            fpcheck.ack(
                marker,
                "codex",
                runtime_root=runtime,
                process_fingerprint="",
                lock_timeout=0,
            )
    # The marker's place is a directory: WriteError (after deciding).
    marker.mkdir()
    with pytest.raises(fpcheck.WriteError) as write:
        fpcheck.gate(before, runtime, marker)
    assert write.value.report["reason"] == "brain_update"
    marker.rmdir()
    # A snapshot that is no snapshot: SnapshotError.
    bad = tmp_path / "lock.json"
    bad.write_text("[]")
    with pytest.raises(fpcheck.SnapshotError):
        fpcheck.gate(bad, runtime, marker)
    assert fpcheck.gate(before, runtime, marker)["marker_written"]
    with pytest.raises(fpcheck.ConfigError, match="not a known client"):
        fpcheck.ack(marker, "nobody", runtime_root=runtime, process_fingerprint="")


def test_the_gil_is_released_while_fpcheck_works(runtime: Path, tmp_path: Path) -> None:
    """A Python thread runs while a call waits inside fpcheck: here the gate
    waits for a lock that only that thread can release, so with the GIL
    held the gate would time out instead."""
    import fcntl

    marker = tmp_path / "marker.json"
    before = fpcheck.snapshot(runtime)
    (runtime / "server.py").write_text("# new code\n")
    (runtime.parent / "version.json").write_text('{"version": "2.0.0"}\n')
    held = open(tmp_path / "marker.json.lock", "w")
    fcntl.flock(held, fcntl.LOCK_EX)

    def release() -> None:
        time.sleep(0.3)  # needs the GIL back to go on
        fcntl.flock(held, fcntl.LOCK_UN)
        held.close()

    helper = threading.Thread(target=release)
    helper.start()
    start = time.monotonic()
    decided = fpcheck.gate(before, runtime, marker, lock_timeout=60)
    helper.join()
    assert decided["marker_written"] and time.monotonic() - start < 60


def test_a_false_clients_is_no_clients_as_in_the_reference(
    runtime: Path, tmp_path: Path
) -> None:
    """``dict(marker.get("clients") or {})``: null, false, 0, "" and []
    are no clients, so the marker is required, never corrupt; ``ack``
    acknowledges as with ``{}``."""
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(runtime)
    for clients in ["null", "false", "0", '""', "[]"]:
        marker.write_text('{"required": true, "clients": %s}' % clients)
        got = ask(runtime, marker, fp, cache=False, client="codex")
        assert (got["restart_required"], got["reason"]) == (True, "marker_required")
        assert got["marker_corrupt"] is False
        done = fpcheck.ack(
            marker, "codex", runtime_root=runtime, process_fingerprint=fp
        )
        assert done["action"] == "removed" and not marker.exists()

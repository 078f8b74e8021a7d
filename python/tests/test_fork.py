"""A fork while another thread is inside the warm status."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import fpcheck


def test_a_fork_while_another_thread_rescans_does_not_hang_the_child(
    tmp_path: Path,
) -> None:
    """The child inherits the parent's locks as they were: a thread in the
    middle of a rescan holds its runtime's. The child must not wait for it."""
    root = tmp_path / "rt"
    root.mkdir()
    for i in range(1500):
        (root / f"m{i}.py").write_text(f"x = {i}\n" * 40)
    marker = tmp_path / "marker.json"
    fp = fpcheck.fingerprint(root)
    stop = threading.Event()

    def rescans() -> None:
        while not stop.is_set():
            with open(root / "m0.py", "a") as f:  # every call rescans
                f.write("#\n")
            fpcheck.status(root, marker, process_fingerprint=fp, cache=True)

    thread = threading.Thread(target=rescans, daemon=True)
    thread.start()
    hung = 0
    try:
        time.sleep(0.3)
        for _ in range(4):
            time.sleep(0.05)
            pid = os.fork()
            if pid == 0:
                signal.alarm(20)
                for _ in range(2):
                    fpcheck.status(root, marker, process_fingerprint=fp, cache=True)
                os._exit(0)
            _, code = os.waitpid(pid, 0)
            hung += os.WIFSIGNALED(code)
    finally:
        stop.set()
        thread.join()
    assert hung == 0

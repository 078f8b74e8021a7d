#!/usr/bin/env python3
"""The plain Python gate's `status` (docs/spec.md section 7): hash the
installed runtime, read its version and the marker, decide.

    python3 gate_status.py RUNTIME MARKER PROCESS_FP PROCESS_VERSION
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyhash import fingerprint  # noqa: E402

root, marker_path, process_fp, process_version = sys.argv[1:5]
installed_fp = fingerprint(root)
try:
    with open(os.path.join(root, "version.json")) as f:
        installed_version = json.load(f).get("version", "")
except (OSError, ValueError):
    installed_version = ""
restart, reason, corrupt = False, "", False
try:
    with open(marker_path) as f:
        marker = json.load(f)
    if not isinstance(marker, dict):
        corrupt = True
    elif marker.get("required", True):
        restart, reason = True, "marker_required"
except FileNotFoundError:
    marker = None
except (OSError, ValueError):
    corrupt = True
usable = installed_fp != "" and process_fp not in ("", "unknown")
process_version = process_version or installed_version
if corrupt:
    restart, reason = True, "marker_corrupt"
elif usable and installed_fp != process_fp:
    restart, reason = True, reason or "fingerprint_mismatch"
elif not usable and installed_version and process_version and installed_version != process_version:
    restart, reason = True, reason or "version_mismatch"
print(json.dumps({"restart_required": restart, "reason": reason, "installed_fingerprint": installed_fp}))

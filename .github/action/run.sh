#!/usr/bin/env bash
# Runs one step of the fpcheck action (install, check, comment, verdict, or
# package for the release workflow) with the runner's Python 3: `python3`,
# or `python` on Windows, where `python3` may be the Microsoft Store stub.
# Everything else lives in fpcheck_action.py, next to this file.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=python3
if [ "${RUNNER_OS:-}" = "Windows" ] || ! command -v python3 >/dev/null 2>&1; then
  py=python
fi
exec "$py" "$here/fpcheck_action.py" "$@"

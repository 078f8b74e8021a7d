#!/bin/sh
# (a) The plain way with a checkout: `git archive` of the runtime root at a
# revision, unpacked into a temporary directory, hashed by Python.
#   archive.sh REPO REV ROOT
set -e
repo=$1 rev=$2 root=$3
here=$(dirname "$0")
tmp=$(mktemp -d "${FPCHECK_BENCH_DIR:-/tmp/fpcheck-bench}/archive.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
git -C "$repo" archive --format=tar "$rev" "$root" | tar -x -C "$tmp"
python3 "$here/pyhash.py" "$tmp/$root"

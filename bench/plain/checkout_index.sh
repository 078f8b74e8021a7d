#!/bin/sh
# What the witness asks of git, done by hand: each of the given revisions'
# runtime root read into a temporary index and written out by
# `git checkout-index` into a temporary directory (no filters configured).
#   checkout_index.sh REPO ROOT REV...
set -e
repo=$1 root=$2
shift 2
tmp=$(mktemp -d "${FPCHECK_BENCH_DIR:-/tmp/fpcheck-bench}/checkout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/wt"
n=0
for rev in "$@"; do
    n=$((n + 1))
    export GIT_INDEX_FILE="$tmp/index-$n"
    git --git-dir="$repo" --work-tree="$tmp/wt" read-tree "$rev"
    git --git-dir="$repo" --work-tree="$tmp/wt" ls-files -z -- "$root" |
        git --git-dir="$repo" --work-tree="$tmp/wt" checkout-index -z --stdin --prefix="$tmp/out-$n/"
done
echo ok

#!/bin/sh
# The whole history the plain way: (b) once per release tag.
#   loop_catfile.sh REPO ROOT
repo=$1 root=$2
here=$(dirname "$0")
for t in $(git -C "$repo" tag --list 'v*' --sort=v:refname); do
  printf '%s ' "$t"
  python3 "$here/catfile.py" "$repo" "$t" "$root"
done

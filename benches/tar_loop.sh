#!/usr/bin/env bash
# Baseline (b): GNU tar | gzip -n -6 plus sha256sum, one recipe at a time, in a shell loop.
#   tar_loop.sh RECIPES_DIR OUT_DIR
# Archives are named hooks-<folder>.tar.gz (the version is not read: that would cost an
# extra process per recipe); the top folder is the recipe folder's name. No index is written.
set -euo pipefail
src=$1
mkdir -p "$2"
out=$(cd "$2" && pwd)
cd "$src"
for d in */; do
  id=${d%/}
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$id" \
    | gzip -n -6 >"$out/hooks-$id.tar.gz"
  sha256sum "$out/hooks-$id.tar.gz" >>"$out/SHA256SUMS"
done

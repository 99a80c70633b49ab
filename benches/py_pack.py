#!/usr/bin/env python3
"""Baseline (a): a standard-library packer doing what the reference `hooks_pack.py` does.

    py_pack.py --recipes-dir DIR --out-dir OUT [--updated-at TS]

One process, sequential. For each recipe folder (sorted): read and minimally check
recipe.json, write `hooks-<id>-<version>.tar.gz` with tarfile (mode "w:gz",
compresslevel=6) adding the folder's entries in sorted order under `<id>-<version>/`
(uid/gid 0, empty owner names, mtime 0, mode 0644/0755), then hashlib.sha256 of the
archive; finally `hooks-index.json` (hooks.catalog.v1) and `SHA256SUMS`.

No links / node_modules refusal beyond a simple check, no schema validation of hooks: it
does less work than `hookpack pack`, which is the conservative direction for a baseline.
"""

import argparse
import hashlib
import json
import os
import sys
import tarfile


def add_sorted(tar: tarfile.TarFile, path: str, arcname: str) -> None:
    def clean(ti: tarfile.TarInfo) -> tarfile.TarInfo:
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mtime = 0
        ti.mode = 0o755 if (ti.isdir() or ti.mode & 0o111) else 0o644
        return ti

    tar.add(path, arcname=arcname, recursive=False, filter=clean)
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            if name == "node_modules":
                raise SystemExit(f"refused: {os.path.join(path, name)}")
            child = os.path.join(path, name)
            if os.path.islink(child):
                raise SystemExit(f"refused symlink: {child}")
            add_sorted(tar, child, arcname + "/" + name)


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--recipes-dir", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--updated-at", default="2026-11-29T00:00:00Z")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    recipes, sums = [], []
    for rid in sorted(os.listdir(a.recipes_dir)):
        d = os.path.join(a.recipes_dir, rid)
        mf = os.path.join(d, "recipe.json")
        if not os.path.isfile(mf):
            continue
        with open(mf, encoding="utf-8") as f:
            m = json.load(f)
        if m.get("schema") != "hooks.recipe.v1" or m.get("id") != rid:
            raise SystemExit(f"{mf}: bad schema or id")
        version = m["version"]
        name = f"hooks-{rid}-{version}.tar.gz"
        out = os.path.join(a.out_dir, name)
        with tarfile.open(out, mode="w:gz", compresslevel=6, format=tarfile.GNU_FORMAT) as tar:
            add_sorted(tar, d, f"{rid}-{version}")
        digest = sha256_file(out)
        sums.append(f"{digest}  {name}\n")
        recipes.append({
            "id": rid, "name": m.get("name", rid), "summary": m["summary"], "latest": version,
            "min_cli": m["min_cli"],
            "versions": [{"version": version, "url": name, "sha256": digest, "min_cli": m["min_cli"]}],
        })
    index = json.dumps({"schema": "hooks.catalog.v1", "updated_at": a.updated_at, "recipes": recipes},
                       indent=2) + "\n"
    with open(os.path.join(a.out_dir, "hooks-index.json"), "w", encoding="utf-8") as f:
        f.write(index)
    sums.append(f"{hashlib.sha256(index.encode()).hexdigest()}  hooks-index.json\n")
    with open(os.path.join(a.out_dir, "SHA256SUMS"), "w", encoding="utf-8") as f:
        f.writelines(sorted(sums, key=lambda s: s[66:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

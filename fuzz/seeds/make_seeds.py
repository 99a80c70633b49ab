#!/usr/bin/env python3
"""Writes the committed seed corpora under fuzz/seeds/ (run from anywhere; stdlib only,
plus the `zstd` command for the raw .tar.zst seed when it is installed).

archive_scan inputs are one mode byte then a body (see fuzz_targets/archive_scan.rs):
mode & 3 == 0 raw archive bytes, 1 a tar stream to gzip, 2 a tar stream to zstd;
mode & 4 expects the top folder demo-0.1.0.
"""
import io
import json
import os
import shutil
import subprocess
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- validate_documents: the repo's own manifests and index, a hooks.json, edge cases.
for rid in sorted(os.listdir(os.path.join(ROOT, "recipes"))):
    p = os.path.join(ROOT, "recipes", rid, "recipe.json")
    if os.path.isfile(p):
        write("validate_documents", f"recipe-{rid}.json", open(p, "rb").read())
write("validate_documents", "hooks-index.json",
      open(os.path.join(ROOT, "catalog", "hooks-index.json"), "rb").read())
hooks = {
    "description": "mine",
    "hooks": {
        "PreToolUse": [
            {"matcher": "exec|write_file", "hooks": [
                {"type": "command", "command": "node \"${FINCLAW_PROFILE_ROOT}/hooks/tool-gate/scripts/main.js\"",
                 "timeout": 10, "failurePolicy": "deny", "id": "gate-mutating", "recipe": "tool-gate",
                 "statusMessage": "checking"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "guard", "x-custom": True}]},
        ],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "log", "async": True, "id": "log-1"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "node stop.js", "timeout": 30}]}],
        "PreCompact": [],
    },
}
write("validate_documents", "hooks.json", json.dumps(hooks, indent=2).encode())
for i, doc in enumerate([
    b'{"a": [1, -2, 3.5e-3, 18446744073709551615, -9223372036854775808, 1e308], "b": "\\u00e9\\ud83d\\ude00\\n"}',
    b'{"a": 1, "a": 2}',
    b'[[[[[[[[[[]]]]]]]]]]',
    b'{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": ""}]}]}}',
    b'\xef\xbb\xbf{}',
    b'{"x": "\xff"}',
]):
    write("validate_documents", f"edge-{i}.json", doc)

# --- archive_scan
def tar_bytes(entries, fmt=tarfile.USTAR_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for e in entries:
            name, kind = e[0], e[1]
            ti = tarfile.TarInfo(name)
            ti.mtime = 0
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                t.addfile(ti)
            elif kind == "file":
                data = e[2]
                ti.size = len(data)
                ti.mode = e[3] if len(e) > 3 else 0o644
                t.addfile(ti, io.BytesIO(data))
            elif kind == "symlink":
                ti.type = tarfile.SYMTYPE
                ti.linkname = e[2]
                t.addfile(ti)
            elif kind == "hardlink":
                ti.type = tarfile.LNKTYPE
                ti.linkname = e[2]
                t.addfile(ti)
            elif kind == "fifo":
                ti.type = tarfile.FIFOTYPE
                t.addfile(ti)
    # Drop tarfile's padding to a 10 KiB record: the end-of-archive blocks are enough.
    data = buf.getvalue().rstrip(b"\0")
    data += b"\0" * (-len(data) % 512)
    return data + b"\0" * 1024


manifest = json.dumps({
    "schema": "hooks.recipe.v1", "id": "demo", "version": "0.1.0", "min_cli": "0.13.0",
    "summary": "demo", "hooks": {"Stop": [{"hooks": [
        {"id": "x", "type": "command", "command": "node scripts/main.js"}]}]},
}).encode()
demo = [
    ("demo-0.1.0/", "dir"),
    ("demo-0.1.0/recipe.json", "file", manifest),
    ("demo-0.1.0/scripts/", "dir"),
    ("demo-0.1.0/scripts/main.js", "file", b"console.log('{}')\n", 0o755),
]
GZ, ZS, TOP = 1, 2, 4
write("archive_scan", "demo-gz", bytes([GZ | TOP]) + tar_bytes(demo))
write("archive_scan", "demo-zst", bytes([ZS | TOP]) + tar_bytes(demo))
write("archive_scan", "demo-any-top", bytes([GZ]) + tar_bytes(demo))
write("archive_scan", "demo-pax-longname", bytes([GZ | TOP]) + tar_bytes(
    demo + [("demo-0.1.0/" + "d" * 90 + "/" + "f" * 80 + ".js", "file", b"x")], tarfile.PAX_FORMAT))
write("archive_scan", "demo-gnu-longname", bytes([GZ | TOP]) + tar_bytes(
    demo + [("demo-0.1.0/" + "g" * 120 + ".js", "file", b"y")], tarfile.GNU_FORMAT))
write("archive_scan", "demo-no-dirs", bytes([GZ | TOP]) + tar_bytes(
    [("demo-0.1.0/recipe.json", "file", manifest), ("demo-0.1.0/a/b/c.txt", "file", b"c")]))
for name, extra in [
    ("symlink", ("demo-0.1.0/link", "symlink", "../../etc/passwd")),
    ("hardlink", ("demo-0.1.0/hard", "hardlink", "demo-0.1.0/recipe.json")),
    ("fifo", ("demo-0.1.0/pipe", "fifo")),
    ("dotdot", ("demo-0.1.0/../escape.txt", "file", b"x")),
    ("absolute", ("/tmp/escape.txt", "file", b"x")),
    ("case", ("demo-0.1.0/Recipe.json", "file", b"x")),
]:
    write("archive_scan", f"hostile-{name}", bytes([GZ | TOP]) + tar_bytes(demo + [extra]))
# Real archives from `hookpack pack` (the repo's catalog), as they are.
for f in ["hooks-turn-router-0.1.0.tar.gz", "hooks-turn-review-0.1.0.tar.gz"]:
    write("archive_scan", f"raw-{f}", bytes([0]) + open(os.path.join(ROOT, "catalog", f), "rb").read())
if shutil.which("zstd"):
    z = subprocess.run(["zstd", "-q", "-c", "-19"], input=tar_bytes(demo), capture_output=True,
                       check=True).stdout
    write("archive_scan", "raw-demo.tar.zst", bytes([TOP]) + z)

# --- merge_unmerge: arbitrary bytes decode to documents; a few fixed byte patterns.
for i, b in enumerate([bytes(range(256)), bytes([0xff] * 64), bytes([1, 7, 3, 0, 2] * 40)]):
    write("merge_unmerge", f"bytes-{i}", b)

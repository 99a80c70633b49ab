#!/usr/bin/env bash
# Install-side benchmark (issue 4 targets):
#  1. install of one recipe from a loopback HTTP index: wall time (median) and peak RSS;
#  2. verify + extract throughput of a 100 MB archive against `sha256sum` then `tar -xzf`.
# Usage: bash benches/install.sh   (about a minute; builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

need() { command -v "$1" >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need hyperfine hyperfine
[ -x /usr/bin/time ] || need time time
need python3 python3

cargo build --release --locked --quiet
hp=$root/target/release/hookpack
work=$(mktemp -d /tmp/hookpack-bench-install.XXXXXX)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# 1. A loopback HTTP server for the built-in catalog's files.
cp -r catalog "$work/catalog"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/catalog" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/hooks-index.json" >/dev/null 2>&1 && break; sleep 0.1; done
index="http://127.0.0.1:$port/hooks-index.json"

echo "## install tool-gate from $index (fresh profile each run)"
hyperfine --warmup 3 --runs 30 --export-json "$work/install.json" \
  --prepare "rm -rf $work/prof" \
  "$hp install tool-gate --profile $work/prof --index $index -q" | sed -n '1,4p'
median=$(python3 -c "import json;print('%.1f'%(json.load(open('$work/install.json'))['results'][0]['median']*1000))")
rm -rf "$work/prof"
rss=$( { /usr/bin/time -v "$hp" install tool-gate --profile "$work/prof" --index "$index" -q >/dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
echo "install: median ${median} ms wall, peak RSS $((rss / 1024)) MB (targets: < 30 ms, < 16 MB)"

# 2. A 100 MB recipe: half text, half pseudo-random bytes (fixed seed).
mkdir -p "$work/big/src/big/scripts"
python3 - "$work/big/src/big" <<'PY'
import json, os, random, sys
d = sys.argv[1]
rng = random.Random(42)
words = "const let function return await import export hook payload tool exec deny allow".split()
with open(os.path.join(d, "text.js"), "w") as f:
    n = 0
    while n < 50 * 1024 * 1024:
        line = " ".join(rng.choice(words) for _ in range(12)) + ";\n"
        f.write(line); n += len(line)
with open(os.path.join(d, "random.bin"), "wb") as f:
    f.write(rng.randbytes(50 * 1024 * 1024))
open(os.path.join(d, "scripts", "main.js"), "w").write("process.exit(0);\n")
open(os.path.join(d, "README.md"), "w").write("# big\n")
json.dump({"schema": "hooks.recipe.v1", "id": "big", "version": "0.1.0", "min_cli": "0.13.0", "summary": "100 MB",
           "hooks": {"Stop": [{"hooks": [{"id": "big", "type": "command", "command": "node scripts/main.js"}]}]}},
          open(os.path.join(d, "recipe.json"), "w"))
PY
"$hp" pack --recipes-dir "$work/big/src" --out-dir "$work/big/cat" -q >/dev/null
archive=$work/big/cat/hooks-big-0.1.0.tar.gz
sha=$(sha256sum "$archive" | cut -d' ' -f1)
bytes=$(du -sb "$work/big/src/big" | cut -f1)
echo
echo "## verify + extract a $(du -h "$archive" | cut -f1) archive ($((bytes / 1048576)) MiB unpacked)"
hyperfine --warmup 1 --runs 5 --export-json "$work/extract.json" \
  --prepare "rm -rf $work/x $work/p && mkdir -p $work/x" \
  "sha256sum $archive >/dev/null && tar -xzf $archive -C $work/x" \
  "$hp install --archive $archive --sha256 $sha --profile $work/p -q" | sed -n '1,12p'
python3 - "$work/extract.json" "$bytes" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]; mib = int(sys.argv[2]) / 1048576
for x in r:
    print(f"{x['command'].split()[0].rsplit('/',1)[-1]:>10}: median {x['median']:.2f} s, {mib / x['median']:.0f} MiB/s unpacked")
print(f"hookpack / (sha256sum + tar) throughput: {r[0]['median'] / r[1]['median']:.2f}x (target >= 1)")
PY
rm -rf "$work/p"
rss=$( { /usr/bin/time -v "$hp" install --archive "$archive" --sha256 "$sha" --profile "$work/p" -q >/dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
echo "install --archive of the 100 MB recipe: peak RSS $((rss / 1024)) MB"

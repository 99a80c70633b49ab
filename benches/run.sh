#!/usr/bin/env bash
# hookpack benchmark: pack vs a Python tarfile packer and a tar | gzip loop (500-recipe
# catalog), pack vs gzip on one 100 MB recipe (throughput, peak RSS), assemble vs tsc.
#
#   bash benches/run.sh [--output FILE] [--keep]
#
#   --output FILE   also write the Markdown report to FILE (e.g. benches/RESULTS.md)
#   --keep          keep the temp folder (generated inputs, outputs, raw JSON) at the end
#
# Environment (defaults in brackets): RUNS [5] minimum timed runs per row (the median is
# reported), CATALOG_COUNT [500], TS_COUNT [200], BIG_TEXT_MIB [50], BIG_BINARY_MIB [50],
# SEED [20261129], TSC_VERSION [5.9.3], BENCH_TSC_DIR [/tmp/bench-tsc] (npm install
# target, kept between runs as a cache; outside the repo), BENCH_TMP [/tmp],
# BENCH_TIMER [hyperfine if installed; set to "python" to force benches/timing.py].
#
# Needs: cargo, python3 (>= 3.9, standard library only), GNU tar (>= 1.28, --sort), gzip,
# sha256sum, node + npm (for section 3; TypeScript is installed by this script with npm).
# Uses hyperfine when it is on PATH, else benches/timing.py (same method: warm-up run,
# PREPARE before each run, median of >= RUNS runs). Peak RSS is read from GNU time
# (`/usr/bin/time -v`); when it is missing and we are root with apt-get, this script
# installs the Debian package `time` (apt-get install -y time).
#
# Writes nothing in the repo except target/ (the build) and, with --output, FILE. Takes
# about 6-8 minutes on an idle 2-core machine.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
output=""
keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --output) output=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
case $output in ""|/*) ;; *) output="$PWD/$output" ;; esac

RUNS=${RUNS:-5}
CATALOG_COUNT=${CATALOG_COUNT:-500}
TS_COUNT=${TS_COUNT:-200}
BIG_TEXT_MIB=${BIG_TEXT_MIB:-50}
BIG_BINARY_MIB=${BIG_BINARY_MIB:-50}
SEED=${SEED:-20261129}
TSC_VERSION=${TSC_VERSION:-5.9.3}
BENCH_TSC_DIR=${BENCH_TSC_DIR:-/tmp/bench-tsc}
UPDATED_AT=2026-11-29T00:00:00Z

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found on PATH${2:+ ($2)}"; }

# ---------------------------------------------------------------- tools
need cargo "install Rust"
need python3
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' || die "python3 >= 3.9 needed (random.randbytes)"
need tar; need gzip; need sha256sum
tar --version | head -1 | grep -q 'GNU tar' || die "GNU tar needed (--sort=name)"
tar --sort=name -cf /dev/null -T /dev/null 2>/dev/null || die "tar does not support --sort=name (GNU tar >= 1.28 needed)"
have_node=1
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || have_node=0
[ "$have_node" = 1 ] || log "node/npm not found: the tsc rows of section 3 are skipped"
GNU_TIME=/usr/bin/time
if ! { [ -x "$GNU_TIME" ] && "$GNU_TIME" -v true >/dev/null 2>&1; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "GNU time missing: installing the Debian package 'time' (apt-get install -y time)"
    apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y time >/dev/null 2>&1; } || true
  fi
  if ! { [ -x "$GNU_TIME" ] && "$GNU_TIME" -v true >/dev/null 2>&1; }; then
    log "GNU time (/usr/bin/time -v) unavailable: peak RSS is not measured"
    GNU_TIME=""
  fi
fi
use_hyperfine=0
if [ "${BENCH_TIMER:-}" != python ] && command -v hyperfine >/dev/null 2>&1; then
  use_hyperfine=1
  timer="hyperfine $(hyperfine --version | awk '{print $2}')"
else
  timer="benches/timing.py (hyperfine not installed)"
fi

# ---------------------------------------------------------------- temp folder
W=$(mktemp -d "${BENCH_TMP:-/tmp}/hookpack-bench.XXXXXX")
cleanup() {
  if [ "$keep" = 1 ]; then log "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
R=$W/results
mkdir -p "$R" "$W/trash"
: >"$R/rows.tsv"; : >"$R/rss.tsv"; : >"$R/notes.txt"
note() { printf '%s\n' "$*" >>"$R/notes.txt"; }

# ---------------------------------------------------------------- build
log "cargo build --release --locked"
(cd "$repo" && cargo build --release --locked --quiet) || die "cargo build failed"
[ -x "$repo/target/release/hookpack" ] || die "target/release/hookpack missing after the build"
# Run a private copy: another build in the same target/ must not swap the binary mid-run.
HP=$W/hookpack
cp "$repo/target/release/hookpack" "$HP"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
case $load_start in
  0.[0-4]*) ;;
  *) log "warning: load average is $load_start; other work on this machine makes the figures noisy" ;;
esac

# bench ID SECTION LABEL INPUT_BYTES OUT_PATH PREPARE COMMAND
bench() {
  local id=$1 section=$2 label=$3 nbytes=$4 outp=$5 prepare=$6 cmd=$7
  local json=$R/$id.json
  log "$label"
  if [ "$use_hyperfine" = 1 ]; then
    hyperfine --style none --shell "bash -o pipefail" --warmup 1 --min-runs "$RUNS" --max-runs 50 \
      --prepare "$prepare" --export-json "$json" "$cmd" >/dev/null \
      || die "benchmark failed: $cmd"
  else
    python3 "$here/timing.py" --warmup 1 --min-runs "$RUNS" --max-runs 50 --prepare "$prepare" \
      --export-json "$json" "$cmd" || die "benchmark failed: $cmd"
  fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("    median %.3f s over %d runs" % (r["median"], len(r["times"])), file=sys.stderr)' "$json"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$section" "$label" "$cmd" "$nbytes" "$outp" "$json" >>"$R/rows.tsv"
}

# rss ID PREPARE ARGV... : one extra untimed run under GNU time; output discarded.
rss() {
  local id=$1 prepare=$2; shift 2
  [ -n "$GNU_TIME" ] || return 0
  bash -c "$prepare"
  "$GNU_TIME" -v -o "$R/$id.time" "$@" >/dev/null 2>"$R/$id.stderr" \
    || { cat "$R/$id.stderr" >&2; die "failed under GNU time: $*"; }
  awk -F': ' -v id="$id" '/Maximum resident set size/ {print id "\t" $2}' "$R/$id.time" >>"$R/rss.tsv"
}

# fresh PATH: the PREPARE command that gives a run a fresh PATH. It moves the last run's
# output aside instead of deleting it: on ext4 without a journal (this VM's root file system)
# creating thousands of files right after deleting thousands gets slower run after run
# (the inode allocator skips inodes freed in the last 30 s, kernel `recently_deleted`), which
# would tax whichever tool creates the most files. Everything is deleted at the end.
# It then runs `sync`, so no run pays for writing back what an earlier run (of any tool) left
# dirty: hookpack fsyncs its archives, the baselines do not.
fresh() { printf 'if [ -e %s ]; then mv %s "$(mktemp -u -p %s)"; fi; sync' "$1" "$1" "$W/trash"; }

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

TARARGS="--sort=name --owner=0 --group=0 --numeric-owner --mtime=@0"

# ================================================================ 1. 500-recipe catalog
log "generating $CATALOG_COUNT recipes (seed $SEED)"
cat_info=$(python3 "$here/gen.py" catalog "$W/catalog" --count "$CATALOG_COUNT" --seed "$SEED")
cat_bytes=$(field "$cat_info" bytes)
cat_files=$(field "$cat_info" files)
"$HP" -q validate "$W/catalog" >/dev/null || die "generated catalog does not validate"

bench cat-py 1 "(a) Python tarfile packer (gzip 6, sequential)" "$cat_bytes" "$W/out-py" \
  "$(fresh $W/out-py)" "python3 $here/py_pack.py --recipes-dir $W/catalog --out-dir $W/out-py --updated-at $UPDATED_AT"
bench cat-tar 1 "(b) tar | gzip -n -6 + sha256sum, shell loop" "$cat_bytes" "$W/out-tar" \
  "$(fresh $W/out-tar)" "bash $here/tar_loop.sh $W/catalog $W/out-tar"
bench cat-hp 1 "(c) hookpack pack (default --jobs = $(nproc))" "$cat_bytes" "$W/out-hp" \
  "$(fresh $W/out-hp)" "$HP pack --recipes-dir $W/catalog --out-dir $W/out-hp --updated-at $UPDATED_AT"
bench cat-hp1 1 "(c') hookpack pack --jobs 1" "$cat_bytes" "$W/out-hp1" \
  "$(fresh $W/out-hp1)" "$HP pack --recipes-dir $W/catalog --out-dir $W/out-hp1 --updated-at $UPDATED_AT --jobs 1"
tar $TARARGS -C "$W/catalog" -cf "$W/catalog.tar" .
bench cat-floor 1 "(reference) gzip -6 of the whole catalog as one tar stream (GNU gzip's deflate speed, 1 core)" "$cat_bytes" "$W/out-floor.tar.gz" \
  "$(fresh $W/out-floor.tar.gz)" "gzip -6 -c $W/catalog.tar > $W/out-floor.tar.gz"
bench cat-zstd 1 "(reference) hookpack pack --compression zstd" "$cat_bytes" "$W/out-zstd" \
  "$(fresh $W/out-zstd)" "$HP pack --recipes-dir $W/catalog --out-dir $W/out-zstd --updated-at $UPDATED_AT --compression zstd"
rss cat-py "$(fresh $W/out-py)" python3 "$here/py_pack.py" --recipes-dir "$W/catalog" --out-dir "$W/out-py"
rss cat-hp "$(fresh $W/out-hp)" "$HP" pack --recipes-dir "$W/catalog" --out-dir "$W/out-hp" --updated-at "$UPDATED_AT"
rss cat-hp1 "$(fresh $W/out-hp1)" "$HP" pack --recipes-dir "$W/catalog" --out-dir "$W/out-hp1" --updated-at "$UPDATED_AT" --jobs 1
rss cat-zstd "$(fresh $W/out-zstd)" "$HP" pack --recipes-dir "$W/catalog" --out-dir "$W/out-zstd" --updated-at "$UPDATED_AT" --compression zstd

# Sanity: every tool wrote one archive per recipe; hookpack is reproducible across --jobs.
for d in out-py out-tar out-hp out-hp1; do
  n=$(find "$W/$d" -name '*.tar.gz' | wc -l)
  [ "$n" = "$CATALOG_COUNT" ] || die "$d holds $n archives, expected $CATALOG_COUNT"
done
gzip -t "$W"/out-hp/*.tar.gz || die "hookpack wrote a corrupt gzip stream"
if cmp -s "$W/out-hp/SHA256SUMS" "$W/out-hp1/SHA256SUMS"; then
  note "Section 1 check: all four packers wrote $CATALOG_COUNT archives; hookpack's SHA256SUMS is byte-identical with --jobs 1 and --jobs $(nproc) (reproducible)."
else
  note "Section 1 check: hookpack's SHA256SUMS DIFFERS between --jobs 1 and --jobs $(nproc)."
fi
note "Section 1 input: $CATALOG_COUNT recipes, $cat_files files, $cat_bytes bytes (gen.py catalog, seed $SEED). (b) does less work than (a) and (c): no manifest read, no index; (a) reads recipe.json and writes hooks-index.json + SHA256SUMS; (c) also fully validates every recipe and fsyncs its outputs."

# ================================================================ 2. one 100 MB recipe
log "generating one recipe of $BIG_TEXT_MIB MiB text + $BIG_BINARY_MIB MiB PRNG bytes"
big_info=$(python3 "$here/gen.py" big "$W/big" --text-mib "$BIG_TEXT_MIB" --binary-mib "$BIG_BINARY_MIB" --seed "$SEED")
big_bytes=$(field "$big_info" bytes)
"$HP" -q validate "$W/big/big-recipe" >/dev/null || die "generated big recipe does not validate"
tar $TARARGS -C "$W/big" -cf "$W/big.tar" big-recipe
mkdir -p "$W/out-big"

bench big-targz 2 "tar | gzip -n -6" "$big_bytes" "$W/out-big/targz.tar.gz" \
  "$(fresh $W/out-big/targz.tar.gz)" "tar $TARARGS -C $W/big -cf - big-recipe | gzip -n -6 > $W/out-big/targz.tar.gz"
bench big-gzip 2 "gzip -6 of the same tar stream (from a file)" "$big_bytes" "$W/out-big/gzip.tar.gz" \
  "$(fresh $W/out-big/gzip.tar.gz)" "gzip -6 -c $W/big.tar > $W/out-big/gzip.tar.gz"
if command -v pigz >/dev/null 2>&1; then
  bench big-pigz 2 "(reference) pigz -6 of the same tar stream" "$big_bytes" "$W/out-big/pigz.tar.gz" \
    "$(fresh $W/out-big/pigz.tar.gz)" "pigz -6 -c $W/big.tar > $W/out-big/pigz.tar.gz"
fi
bench big-hp 2 "hookpack pack" "$big_bytes" "$W/out-big/hp" \
  "$(fresh $W/out-big/hp)" "$HP pack --recipes-dir $W/big --out-dir $W/out-big/hp --updated-at $UPDATED_AT"
bench big-zstd 2 "(reference) hookpack pack --compression zstd" "$big_bytes" "$W/out-big/zstd" \
  "$(fresh $W/out-big/zstd)" "$HP pack --recipes-dir $W/big --out-dir $W/out-big/zstd --updated-at $UPDATED_AT --compression zstd"
rss big-gzip "true" bash -c "gzip -6 -c $W/big.tar > $W/out-big/gzip.tar.gz"
rss big-hp "$(fresh $W/out-big/hp)" "$HP" pack --recipes-dir "$W/big" --out-dir "$W/out-big/hp" --updated-at "$UPDATED_AT"
rss big-zstd "$(fresh $W/out-big/zstd)" "$HP" pack --recipes-dir "$W/big" --out-dir "$W/out-big/zstd" --updated-at "$UPDATED_AT" --compression zstd
note "Section 2 input: one recipe, $(field "$big_info" files) files, $big_bytes bytes = $(field "$big_info" text_bytes) bytes of generated JS/JSON text + $(field "$big_info" binary_bytes) bytes from Python's seeded Mersenne Twister (random.Random($SEED).randbytes, not os.urandom), so every tool in every run reads the same bytes; the tar stream is $(stat -c %s "$W/big.tar") bytes. Throughput = input bytes / median wall time. Peak RSS from one extra run under /usr/bin/time -v (gzip's figure is for the gzip process)."

# ================================================================ 3. assemble vs tsc
log "generating $TS_COUNT TypeScript recipe sources"
ts_info=$(python3 "$here/gen.py" ts "$W/ts-gen" --count "$TS_COUNT" --seed "$SEED")
mkdir -p "$W/ts-real"
cp -R "$repo/recipes/." "$W/ts-real/"
TSC=""
if [ "$have_node" = 1 ]; then
  if ! "$BENCH_TSC_DIR/node_modules/.bin/tsc" --version 2>/dev/null | grep -qx "Version $TSC_VERSION"; then
    log "npm install typescript@$TSC_VERSION into $BENCH_TSC_DIR"
    mkdir -p "$BENCH_TSC_DIR"
    npm install --prefix "$BENCH_TSC_DIR" --no-save --no-audit --no-fund --loglevel=error \
      "typescript@$TSC_VERSION" >/dev/null 2>&1 || log "npm install typescript failed: tsc rows skipped"
  fi
  if "$BENCH_TSC_DIR/node_modules/.bin/tsc" --version >/dev/null 2>&1; then
    TSC=$BENCH_TSC_DIR/node_modules/.bin/tsc
  fi
fi
# The brief's transpile flags, plus --strict --lib es2022 from recipes/tsconfig.json (without
# --strict the real recipes do not type-check: discriminated unions need strictNullChecks).
TSFLAGS="--module nodenext --target es2022 --rewriteRelativeImportExtensions --allowImportingTsExtensions --skipLibCheck --noEmit false --strict --lib es2022"
for set in real gen; do
  src=$W/ts-$set
  if [ "$set" = real ]; then what="5 real recipes (recipes/)"; else what="$TS_COUNT generated recipes"; fi
  bench "ts-$set-hp" 3 "$what: hookpack assemble" "" "$W/asm-$set" \
    "$(fresh $W/asm-$set)" "$HP assemble --recipes-dir $src --out-dir $W/asm-$set"
  if [ -n "$TSC" ]; then
    bench "ts-$set-tsc" 3 "$what: tsc (type check + emit)" "" "$W/tsc-$set" \
      "$(fresh $W/tsc-$set)" "cd $src && $TSC $TSFLAGS --outDir $W/tsc-$set lib/*.ts */src/*.ts"
    bench "ts-$set-tscnc" 3 "$what: tsc --noCheck (transpile only)" "" "$W/tscnc-$set" \
      "$(fresh $W/tscnc-$set)" "cd $src && $TSC $TSFLAGS --noCheck --outDir $W/tscnc-$set lib/*.ts */src/*.ts"
  fi
done
rss ts-gen-hp "$(fresh $W/asm-gen)" "$HP" assemble --recipes-dir "$W/ts-gen" --out-dir "$W/asm-gen"
if [ -n "$TSC" ]; then
  rss ts-gen-tsc "$(fresh $W/tsc-gen)" bash -c "cd $W/ts-gen && $TSC $TSFLAGS --outDir $W/tsc-gen lib/*.ts */src/*.ts"
fi
ts_ts_files=$(find "$W/ts-gen" -name '*.ts' ! -name '*.d.ts' | wc -l)
ts_ts_bytes=$(find "$W/ts-gen" -name '*.ts' ! -name '*.d.ts' -printf '%s\n' | awk '{s+=$1} END {print s}')
note "Section 3 input: the $TS_COUNT generated recipes hold $ts_ts_files .ts files, $ts_ts_bytes bytes of TypeScript (gen.py ts, seed $SEED), with a shared lib/; tsc compiles lib/ once, hookpack assemble compiles each recipe's imported helpers into each recipe (as its output layout requires) and also copies README/recipe.json and validates. Output bytes = .js bytes written. tsc runs on Node $(node --version 2>/dev/null || echo n/a)."

# ================================================================ report
LOAD="$load_start / $(cut -d' ' -f1-3 /proc/loadavg)" RESULTS_DIR=$R W="$W" HP="$HP" TSC="$TSC" TSC_DIR="$BENCH_TSC_DIR" TIMER="$timer" REPO="$repo" \
TS_COUNT="$TS_COUNT" CAT_COUNT="$CATALOG_COUNT" BIG_MIB="$((BIG_TEXT_MIB + BIG_BINARY_MIB))" \
python3 - <<'EOF'
import json, os, platform, subprocess, datetime
def sh(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "n/a"
e = os.environ
cpu = "unknown"
with open("/proc/cpuinfo") as f:
    for line in f:
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip(); break
mem = "?"
with open("/proc/meminfo") as f:
    for line in f:
        if line.startswith("MemTotal"):
            mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"; break
dirty = sh("git", "-C", e["REPO"], "status", "--porcelain", "--", "src", "Cargo.toml", "Cargo.lock")
tools = ", ".join(x for x in [
    "Python " + platform.python_version(),
    sh("tar", "--version").splitlines()[0],
    sh("gzip", "--version").splitlines()[0],
    ("Node " + sh("node", "--version")) if e["TSC"] else "",
] if x)
with open(os.path.join(e["RESULTS_DIR"], "notes.txt")) as f:
    notes = [l.rstrip("\n") for l in f if l.strip()]
meta = {
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "nproc": sh("nproc"), "cpu": cpu, "mem": mem,
    "os": platform.platform(terse=True),
    "commit": sh("git", "-C", e["REPO"], "rev-parse", "--short", "HEAD"),
    "dirty": " + uncommitted changes in src/ or Cargo.*" if dirty not in ("", "n/a") else "",
    "rustc": sh("rustc", "--version"),
    "timer": e["TIMER"], "tools": tools, "load": e["LOAD"],
    "tsc_version": (sh(e["TSC"], "--version").replace("Version ", "") if e["TSC"] else "n/a"),
    "tsc_dir": e["TSC_DIR"],
    "ts_count": e["TS_COUNT"],
    "sec1": f"{e['CAT_COUNT']}-recipe catalog",
    "sec2": f"One {e['BIG_MIB']} MiB recipe",
    "sec3": "assemble vs tsc",
    "substitutions": [[e["HP"], "hookpack"]] + ([[e["TSC"], "tsc"]] if e["TSC"] else []) + [[e["W"], "$W"], [os.path.join(e["REPO"], "benches"), "benches"]],
    "notes": notes,
}
with open(os.path.join(e["RESULTS_DIR"], "meta.json"), "w") as f:
    json.dump(meta, f, indent=2)
EOF
python3 "$here/report.py" "$R" >"$R/report.md"
cat "$R/report.md"
if [ -n "$output" ]; then
  cp "$R/report.md" "$output"
  log "wrote $output"
fi

#!/usr/bin/env bash
# Bounded coverage-guided fuzzing for CI, on the stable toolchain.
#
#   bash fuzz/run-ci.sh                 # 30 s per target
#   FUZZ_SECONDS=300 bash fuzz/run-ci.sh
#
# Installs cargo-fuzz (pinned) when it is missing, checks fuzz/Cargo.lock is current, builds
# every target with `--sanitizer none` (the address sanitizer needs a nightly -Z flag), replays
# fuzz/regressions/<target>/*, then fuzzes each target for FUZZ_SECONDS starting from
# fuzz/seeds/<target>/ (new inputs go to fuzz/corpus/<target>/, which git ignores). Exits
# non-zero when any target crashes, naming the input libFuzzer saved under fuzz/artifacts/.
#
# HOOKPACK_FUZZ_ALLOW=name,... (passed through) skips the named known findings; see README.md.
set -euo pipefail
cd "$(dirname "$0")"

CARGO_FUZZ_VERSION=0.13.2
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
TARGETS=(validate_documents merge_unmerge archive_scan)
BIN=target/x86_64-unknown-linux-gnu/release

step() { printf '\n== fuzz [%ds]: %s\n' "$SECONDS" "$*"; }

step "cargo-fuzz $CARGO_FUZZ_VERSION"
if [ "$(cargo fuzz --version 2>/dev/null || true)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
cargo fuzz --version

step "fuzz/Cargo.lock is current"
# cargo fuzz build has no --locked; this fails instead of rewriting a stale lock file.
cargo metadata --locked --format-version 1 --manifest-path Cargo.toml >/dev/null

step "build (stable, --sanitizer none, debug assertions on)"
cargo fuzz build --sanitizer none

failed=()
step "replay fuzz/regressions"
for t in "${TARGETS[@]}"; do
    shopt -s nullglob
    inputs=(regressions/"$t"/*)
    shopt -u nullglob
    [ "${#inputs[@]}" -eq 0 ] && continue
    if ! "$BIN/$t" -artifact_prefix="target/replay-$t-" "${inputs[@]}" >"target/replay-$t.log" 2>&1; then
        grep -E -A6 "panicked at|ERROR: libFuzzer" "target/replay-$t.log" || tail -n 20 "target/replay-$t.log"
        failed+=("$t (regressions)")
    else
        echo "$t: ${#inputs[@]} regression input(s) pass"
    fi
done

for t in "${TARGETS[@]}"; do
    step "fuzz $t for ${FUZZ_SECONDS}s"
    mkdir -p "corpus/$t" "artifacts/$t"
    args=(-max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1)
    [ -f "dicts/$t.dict" ] && args+=(-dict="dicts/$t.dict")
    # The binary built above, run directly (what `cargo fuzz run` does, without a rebuild).
    if ! "$BIN/$t" -artifact_prefix="artifacts/$t/" "${args[@]}" "corpus/$t" "seeds/$t" \
        >"target/fuzz-$t.log" 2>&1; then
        grep -E -A8 "panicked at|ERROR: libFuzzer|Test unit written" "target/fuzz-$t.log" \
            || tail -n 30 "target/fuzz-$t.log"
        failed+=("$t")
    fi
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs|cov: " "target/fuzz-$t.log" | tail -n 3
done

if [ "${#failed[@]}" -ne 0 ]; then
    printf '\nfuzz: FAILED: %s\n' "${failed[*]}"
    exit 1
fi
printf '\nfuzz: %d targets, %ss each, no crash (%ds in all)\n' "${#TARGETS[@]}" "$FUZZ_SECONDS" "$SECONDS"

#!/usr/bin/env python3
"""Fallback for hyperfine (Python 3 standard library only).

    timing.py --min-runs N [--warmup W] [--prepare CMD] [--budget S] --export-json FILE CMD

Runs CMD with `bash -o pipefail -c` (stdout and stderr discarded, a non-zero exit is an
error), PREPARE before every run (warm-up runs included, not timed), W warm-up runs, then
at least N timed runs and more while the timed total stays under BUDGET seconds (default 3,
at most 50 runs), like hyperfine's defaults. Writes hyperfine's JSON shape: {"results":
[{"command", "mean", "stddev", "median", "min", "max", "times"}]}.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time


def sh(cmd: str, quiet: bool = True) -> None:
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE if quiet else None)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode(errors="replace") if r.stderr else "")
        raise SystemExit(f"command failed with exit code {r.returncode}: {cmd}")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--min-runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--prepare", default="")
    p.add_argument("--budget", type=float, default=3.0)
    p.add_argument("--max-runs", type=int, default=50)
    p.add_argument("--export-json", required=True)
    p.add_argument("command")
    a = p.parse_args()
    for _ in range(a.warmup):
        if a.prepare:
            sh(a.prepare)
        sh(a.command)
    times = []
    while len(times) < a.min_runs or (sum(times) < a.budget and len(times) < a.max_runs):
        if a.prepare:
            sh(a.prepare)
        t0 = time.perf_counter()
        sh(a.command)
        times.append(time.perf_counter() - t0)
    res = {
        "command": a.command,
        "mean": statistics.fmean(times),
        "stddev": statistics.stdev(times) if len(times) > 1 else 0.0,
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "times": times,
    }
    with open(a.export_json, "w", encoding="utf-8") as f:
        json.dump({"results": [res]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

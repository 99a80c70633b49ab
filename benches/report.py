#!/usr/bin/env python3
"""Turns the results folder written by benches/run.sh into a Markdown report.

    report.py RESULTS_DIR

RESULTS_DIR holds meta.json, rows.tsv (id, section, label, command, input bytes, output
path, json file), the hyperfine-shaped JSON files, and rss.tsv (id, kbytes).
"""

import json
import os
import sys


def fmt_s(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def out_bytes(path: str):
    if not path or not os.path.exists(path):
        return None
    if os.path.isfile(path):
        return os.path.getsize(path)
    n = 0
    for root, _, files in os.walk(path):
        for f in files:
            if f.endswith((".tar.gz", ".tar.zst", ".js")):
                n += os.path.getsize(os.path.join(root, f))
    return n


def main() -> int:
    rdir = sys.argv[1]
    with open(os.path.join(rdir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    rows = []
    with open(os.path.join(rdir, "rows.tsv"), encoding="utf-8") as f:
        for line in f:
            rid, section, label, cmd, nbytes, outp, jfile = line.rstrip("\n").split("\t")
            with open(jfile, encoding="utf-8") as j:
                res = json.load(j)["results"][0]
            rows.append({"id": rid, "section": section, "label": label, "cmd": cmd,
                         "bytes": int(nbytes) if nbytes else None, "out": out_bytes(outp), "res": res})
    rss = {}
    p = os.path.join(rdir, "rss.tsv")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            for line in f:
                k, v = line.split("\t")
                rss[k] = int(v)
    by = {r["id"]: r for r in rows}

    def med(i):
        return by[i]["res"]["median"] if i in by else None

    def subst(cmd: str) -> str:
        for old, new in meta.get("substitutions", []):
            cmd = cmd.replace(old, new)
        return cmd.replace("|", "\\|")

    out = []
    w = out.append
    w(f"Date: {meta['date']}  ")
    w(f"Machine: {meta['nproc']} CPUs (`nproc`), {meta['cpu']}, {meta['mem']} RAM, {meta['os']}  ")
    w(f"hookpack: commit `{meta['commit']}`{meta['dirty']}, `cargo build --release --locked` ({meta['rustc']})  ")
    w(f"Timer: {meta['timer']}; wall clock, warm page cache, fresh OUT before every run (not timed)  ")
    w(f"Load average (1/5/15 min) at start / end: {meta.get('load', 'n/a')}  ")
    w(f"Tools: {meta['tools']}  ")
    w(f"`$W` = the run's temp folder; `hookpack` = a copy of `target/release/hookpack`; `tsc` = TypeScript {meta['tsc_version']} in {meta['tsc_dir']}")
    w("")
    for sec, title in (("1", meta["sec1"]), ("2", meta["sec2"]), ("3", meta["sec3"])):
        srows = [r for r in rows if r["section"] == sec]
        if not srows:
            continue
        w(f"### {sec}. {title}")
        w("")
        w("| Row | Median | Min – max | Runs | Input MB/s | Peak RSS | Output bytes | Command |")
        w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in srows:
            res = r["res"]
            thr = f"{r['bytes'] / 1e6 / res['median']:.1f}" if r["bytes"] else ""
            k = rss.get(r["id"])
            rs = f"{k / 1024:.1f} MiB" if k else ""
            ob = f"{r['out']:,}" if r["out"] is not None else ""
            w(f"| {r['label'].replace('|', chr(92) + '|')} | {fmt_s(res['median'])} | {fmt_s(res['min'])} – {fmt_s(res['max'])} | "
              f"{len(res['times'])} | {thr} | {rs} | {ob} | `{subst(r['cmd'])}` |")
        w("")
    # Targets.
    w("### Targets")
    w("")
    w("| Target | Measured | Met? |")
    w("| --- | ---: | :---: |")

    def ratio(a, b, target, name):
        if med(a) is None or med(b) is None:
            w(f"| {name} ≥ {target}× | n/a | – |")
            return
        x = med(a) / med(b)
        w(f"| {name} ≥ {target}× | {x:.2f}× | {'yes' if x >= target else '**no**'} |")

    ratio("cat-py", "cat-hp", 5, "1a/1c: Python tarfile packer ÷ hookpack pack")
    ratio("cat-tar", "cat-hp", 10, "1b/1c: tar \\| gzip -6 + sha256sum loop ÷ hookpack pack")
    if "cat-hp1" in by:
        for a, n in (("cat-py", "1a"), ("cat-tar", "1b")):
            x = med(a) / med("cat-hp1")
            w(f"| (reference) {n} ÷ hookpack pack --jobs 1 | {x:.2f}× | – |")
        x = med("cat-hp1") / med("cat-hp")
        w(f"| (reference) --jobs 1 ÷ --jobs {meta['nproc']} (parallel speed-up) | {x:.2f}× | – |")
    if "cat-floor" in by:
        n = int(meta["nproc"])
        best = med("cat-floor") / n
        w(f"| (analysis) GNU gzip's deflate: one gzip -6 over all the catalog's bytes takes {fmt_s(med('cat-floor'))}; "
          f"a packer doing nothing but that compression on {n} cores would need ≥ {fmt_s(best)}, so at best "
          f"1a = {med('cat-py') / best:.1f}×, 1b = {med('cat-tar') / best:.1f}× faster; hookpack's deflate "
          f"(zlib-rs level 6, 1 MiB pieces) is faster than GNU gzip's | – | – |")
    if "big-hp" in by and "big-gzip" in by:
        t_hp = by["big-hp"]["bytes"] / med("big-hp") / 1e6
        t_gz = by["big-gzip"]["bytes"] / med("big-gzip") / 1e6
        x = t_hp / t_gz
        w(f"| 2: hookpack pack throughput ÷ gzip -6 throughput ≥ 2× | {t_hp:.1f} / {t_gz:.1f} MB/s = {x:.2f}× | "
          f"{'yes' if x >= 2 else '**no**'} |")
        if "big-targz" in by:
            t_tg = by["big-targz"]["bytes"] / med("big-targz") / 1e6
            w(f"| (reference) hookpack ÷ tar \\| gzip -n -6 throughput | {t_hp / t_tg:.2f}× | – |")
    if "big-hp" in rss:
        k = rss["big-hp"]
        w(f"| 2: hookpack pack peak RSS < 32 MiB | {k / 1024:.1f} MiB ({k:,} KB) | {'yes' if k < 32 * 1024 else '**no**'} |")
    else:
        w("| 2: hookpack pack peak RSS < 32 MiB | n/a (no /usr/bin/time) | – |")
    for base, name in (("ts-real", "3: 5 real recipes"), ("ts-gen", f"3: {meta.get('ts_count', '')} generated recipes")):
        ratio(f"{base}-tsc", f"{base}-hp", 20, f"{name}, tsc ÷ hookpack assemble")
        if med(f"{base}-tscnc") is not None and med(f"{base}-hp") is not None:
            x = med(f"{base}-tscnc") / med(f"{base}-hp")
            w(f"| (reference) {name}, tsc --noCheck ÷ hookpack assemble | {x:.2f}× | {'yes' if x >= 20 else 'no'} |")
    w("")
    for note in meta.get("notes", []):
        w(f"- {note}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

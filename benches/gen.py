#!/usr/bin/env python3
"""Deterministic benchmark inputs for benches/run.sh (Python 3 standard library only).

    gen.py catalog OUT [--count 500] [--seed 20261129]
        OUT/<id>/ assembled recipe folders: recipe.json, README.md, scripts/main.js,
        scripts/package.json, scripts/lib/*.js, data/*.json, ... about 20 files and
        about 60 KB per recipe, mostly JS/JSON-like text; some recipes also carry a small
        binary asset and an executable shell script. Each .js file is an ES module that
        exports its JS-like text as one String.raw template, so that node (and `hookpack
        validate`, which reads an assembled tree's modules) can load it.

    gen.py big OUT [--text-mib 50] [--binary-mib 50] [--seed 20261129]
        OUT/big-recipe/: one assembled recipe holding TEXT MiB of generated JS/JSON text and
        BINARY MiB of pseudo-random bytes from Python's seeded Mersenne Twister
        (random.Random(seed).randbytes), not os.urandom: every run gets the same bytes.

    gen.py ts OUT [--count 200] [--seed 20261129]
        OUT/lib/*.ts (+ a node-shim.d.ts), OUT/<id>/{recipe.json, README.md, src/*.ts},
        OUT/package.json ("type": "module"): TypeScript recipe sources that both
        `hookpack assemble` and `tsc --strict` accept.

Everything depends only on the seed and the arguments: the same command writes the same
bytes on every machine (random.Random's algorithms are stable across Python 3 releases).
"""

import argparse
import json
import os
import random
import sys

WORDS = (
    "tool gate hook event payload matcher handler command timeout policy deny ask allow "
    "prompt session turn review route secret guard audit log record input output path "
    "workspace profile trust hash index catalog recipe version archive entry cache "
    "buffer stream reader writer token rule check score limit window retry budget "
    "user assistant model result summary status message error reason detail field value"
).split()

KEYWORDS = ["const", "let", "return", "if", "else", "for", "while", "await", "new", "typeof"]


class Text:
    """Pseudo-random JS / JSON / Markdown text from one seeded PRNG."""

    def __init__(self, rng: random.Random):
        self.r = rng
        # A recipe-sized vocabulary: real code repeats its own identifiers a lot.
        self.idents = [self._ident() for _ in range(160)]

    def _ident(self) -> str:
        r = self.r
        parts = r.sample(WORDS, r.randint(1, 3))
        head = parts[0]
        return head + "".join(p.capitalize() for p in parts[1:]) + (str(r.randint(0, 99)) if r.random() < 0.2 else "")

    def ident(self) -> str:
        return self.r.choice(self.idents)

    def string(self) -> str:
        r = self.r
        n = r.randint(1, 6)
        return " ".join(r.choice(WORDS) for _ in range(n))

    def number(self) -> str:
        r = self.r
        x = r.random()
        if x < 0.5:
            return str(r.randint(0, 100))
        if x < 0.8:
            return str(r.randint(0, 1 << 20))
        return f"{r.random() * 1000:.3f}"

    def js_line(self, depth: int) -> str:
        r = self.r
        pad = "  " * depth
        k = r.randint(0, 11)
        a, b, c = self.ident(), self.ident(), self.ident()
        if k == 0:
            return f"{pad}const {a} = {b}.{c}({self.number()}, \"{self.string()}\");"
        if k == 1:
            return f"{pad}if ({a} && {a}.{b} !== undefined) {{ {c}.push({a}.{b}); }}"
        if k == 2:
            return f"{pad}// {self.string()} {self.string()}"
        if k == 3:
            return f"{pad}let {a} = [{', '.join(self.number() for _ in range(r.randint(1, 8)))}];"
        if k == 4:
            return f"{pad}return {{ {a}: {b}, {c}: \"{self.string()}\" }};"
        if k == 5:
            return f"{pad}for (const {a} of {b}) {{ {c} += {a}.length * {self.number()}; }}"
        if k == 6:
            return f"{pad}export function {a}({b}, {c}) {{ return {b}.{r.choice(WORDS)}({c}) ?? null; }}"
        if k == 7:
            return f"{pad}const {a} = /{r.choice(WORDS)}(?:{r.choice(WORDS)}|{r.choice(WORDS)})\\s+[a-z0-9_-]{{{r.randint(1, 9)},}}/i;"
        if k == 8:
            return f"{pad}{a}.{b} = `{self.string()} ${{{c}}} {self.string()}`;"
        if k == 9:
            return f"{pad}{r.choice(KEYWORDS)} {a} = await {b}({c}, {{ timeout: {self.number()} }});"
        if k == 10:
            return f"{pad}throw new Error(\"{self.string()}: \" + String({a}));"
        return f"{pad}{a}({b}, \"{self.string()}\", {self.number()});"

    def js(self, size: int) -> str:
        r = self.r
        out, n, depth = [], 0, 0
        while n < size:
            if r.random() < 0.06:
                line = "  " * depth + f"function {self.ident()}({self.ident()}, {self.ident()}) {{"
                depth = min(depth + 1, 4)
            elif depth and r.random() < 0.07:
                depth -= 1
                line = "  " * depth + "}"
            else:
                line = self.js_line(depth)
            out.append(line)
            n += len(line) + 1
        while depth:
            depth -= 1
            out.append("  " * depth + "}")
        return "\n".join(out) + "\n"

    def json_value(self, depth: int):
        r = self.r
        x = r.random()
        if depth > 2 or x < 0.35:
            return r.choice([self.string(), int(self.number().split(".")[0]), r.random() < 0.5, None])
        if x < 0.65:
            return [self.json_value(depth + 1) for _ in range(r.randint(1, 6))]
        return {self.ident(): self.json_value(depth + 1) for _ in range(r.randint(1, 6))}

    def json(self, size: int) -> str:
        items, n = [], 0
        while n < size:
            v = {"id": self.ident(), "match": self.string(), "weight": self.r.randint(0, 100),
                 "data": self.json_value(0)}
            s = json.dumps(v, indent=2)
            items.append(v)
            n += len(s) + 4
        return json.dumps({"rules": items}, indent=2) + "\n"

    def markdown(self, size: int) -> str:
        out, n = [], 0
        while n < size:
            if self.r.random() < 0.15:
                line = f"\n## {self.string().capitalize()}\n"
            else:
                line = " ".join(self.string() for _ in range(self.r.randint(3, 10))).capitalize() + "."
            out.append(line)
            n += len(line) + 1
        return "\n".join(out) + "\n"


def write(path: str, data, mode: int = 0o644) -> int:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    return len(data)


def manifest(rid: str, r: random.Random, t: Text) -> str:
    events = [("PreToolUse", "exec|write_file"), ("PostToolUse", "exec"), ("UserPromptSubmit", None),
              ("Stop", None), ("SessionStart", None)]
    hooks = {}
    for i, (ev, matcher) in enumerate(r.sample(events, r.randint(1, 3))):
        h = {"id": f"h{i}-{ev.lower()}", "type": "command", "command": "node scripts/main.js",
             "timeout": r.randint(5, 60)}
        if ev == "PreToolUse" and r.random() < 0.5:
            h["failurePolicy"] = "deny"
        g = {"hooks": [h]}
        if matcher:
            g["matcher"] = matcher
        hooks[ev] = [g]
    doc = {
        "schema": "hooks.recipe.v1",
        "id": rid,
        "version": f"{r.randint(0, 3)}.{r.randint(0, 20)}.{r.randint(0, 9)}",
        "min_cli": "0.13.0",
        "name": t.string().capitalize(),
        "summary": t.string().capitalize() + ".",
        "hooks": hooks,
    }
    return json.dumps(doc, indent=2) + "\n"


def js_module(text: str) -> str:
    """`text` as an ES module that parses: one String.raw template exporting it, with its
    backquotes and `${` escaped (a tagged template takes any other backslash as it is)."""
    body = text.replace("`", "\\`").replace("${", "\\${")
    return f"export default String.raw`{body}`;\n"


def gen_catalog(out: str, count: int, seed: int) -> None:
    master = random.Random(seed)
    total = files = 0
    for i in range(count):
        r = random.Random(master.getrandbits(64))
        t = Text(r)
        rid = f"bench-{i:04d}-{r.choice(WORDS)}"
        d = os.path.join(out, rid)
        target = int(r.gauss(60_000, 12_000))
        target = max(20_000, min(target, 110_000))
        parts = []  # (relative path, kind, weight)
        parts.append(("scripts/main.js", "js", 6))
        parts.append(("README.md", "md", 2))
        for j in range(r.randint(5, 8)):
            parts.append((f"scripts/lib/{t.ident()}-{j}.js", "js", r.randint(2, 5)))
        for j in range(r.randint(2, 4)):
            parts.append((f"scripts/{t.ident()}-{j}.js", "js", r.randint(1, 4)))
        for j in range(r.randint(3, 5)):
            parts.append((f"data/{t.ident()}-{j}.json", "json", r.randint(1, 4)))
        if r.random() < 0.5:
            parts.append((f"data/nested/{t.ident()}/table.json", "json", 1))
        if r.random() < 0.3:
            parts.append(("assets/icon.bin", "bin", 1))
        if r.random() < 0.3:
            parts.append(("scripts/run.sh", "sh", 1))
        weight = sum(p[2] for p in parts)
        n = 0
        n += write(os.path.join(d, "recipe.json"), manifest(rid, r, t))
        n += write(os.path.join(d, "scripts/package.json"), '{\n  "type": "module"\n}\n')
        nfiles = 2
        for rel, kind, w in parts:
            size = max(200, target * w // weight)
            p = os.path.join(d, rel)
            if kind == "js":
                n += write(p, js_module(t.js(size)))
            elif kind == "json":
                n += write(p, t.json(size))
            elif kind == "md":
                n += write(p, f"# {rid}\n\n" + t.markdown(size))
            elif kind == "bin":
                n += write(p, r.randbytes(r.randint(1024, 4096)))
            else:
                n += write(p, "#!/bin/sh\nexec node \"$(dirname \"$0\")/main.js\" \"$@\"\n", 0o755)
            nfiles += 1
        total += n
        files += nfiles
    print(json.dumps({"recipes": count, "files": files, "bytes": total}))


def gen_big(out: str, text_mib: int, binary_mib: int, seed: int) -> None:
    r = random.Random(seed)
    t = Text(r)
    rid = "big-recipe"
    d = os.path.join(out, rid)
    n = write(os.path.join(d, "recipe.json"), manifest(rid, r, t))
    n += write(os.path.join(d, "README.md"), "# big-recipe\n\n" + t.markdown(4000))
    n += write(os.path.join(d, "scripts/main.js"), t.js(20_000))
    files = 3
    chunk = 1 << 20
    text_bytes = 0
    i = 0
    # Text: 1 MiB files, alternating JS and JSON; each file exactly 1 MiB (truncated or padded
    # with generated text) so the text half is exactly TEXT MiB.
    while text_bytes < text_mib * chunk:
        body = (t.js(chunk) if i % 2 == 0 else t.json(chunk)).encode()[:chunk]
        name = f"data/text/part-{i:03d}.{'js' if i % 2 == 0 else 'json'}"
        text_bytes += write(os.path.join(d, name), body)
        files += 1
        i += 1
    # Binary: 2 MiB files from the seeded PRNG.
    bin_bytes = 0
    i = 0
    while bin_bytes < binary_mib * chunk:
        size = min(2 * chunk, binary_mib * chunk - bin_bytes)
        bin_bytes += write(os.path.join(d, f"data/blobs/blob-{i:03d}.bin"), r.randbytes(size))
        files += 1
        i += 1
    n += text_bytes + bin_bytes
    print(json.dumps({"recipes": 1, "files": files, "bytes": n, "text_bytes": text_bytes,
                      "binary_bytes": bin_bytes}))


# ---------------------------------------------------------------------------------------
# TypeScript sources

TS_LIB = {
    "node-shim.d.ts": """// Ambient declarations for the Node built-ins the generated recipes use (type checker only).
declare module "node:process" {
  interface Proc {
    readonly env: Record<string, string | undefined>;
    readonly stdout: { write(chunk: string): boolean };
    readonly stderr: { write(chunk: string): boolean };
    readonly stdin: { setEncoding(e: "utf8"): void; [Symbol.asyncIterator](): AsyncIterator<string> };
    exitCode: number | undefined;
    cwd(): string;
  }
  const process: Proc;
  export default process;
}
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
}
""",
    "hook.ts": """// Shared plumbing for generated hook handlers.
import process from "node:process";
import { readFileSync } from "node:fs";

export interface HookPayload {
  hook_event_name: string;
  tool_name?: string;
  tool_input?: unknown;
  cwd?: string;
}

export type ReadResult = { ok: true; payload: HookPayload } | { ok: false; error: string };

export type Decision =
  | { kind: "none" }
  | { kind: "deny"; reason: string }
  | { kind: "ask"; reason: string };

export async function readPayload(): Promise<ReadResult> {
  process.stdin.setEncoding("utf8");
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null) return { ok: false, error: "payload is not an object" };
    return { ok: true, payload: value as HookPayload };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

export function emit(decision: Decision): void {
  if (decision.kind === "none") return;
  process.stdout.write(JSON.stringify({ decision: decision.kind, reason: decision.reason }) + "\\n");
}

export function loadJson<T>(path: string, fallback: T): T {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return fallback;
  }
}

export function run(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    process.stderr.write(`hook failed: ${e instanceof Error ? e.message : String(e)}\\n`);
    process.exitCode = 1;
  });
}
""",
    "text.ts": """// String helpers shared by the generated recipes.
export function words(s: string): string[] {
  return s.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 0);
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);
}

export function allStrings(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 8) return out;
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) allStrings(x, out, depth + 1);
  else if (typeof v === "object" && v !== null) for (const x of Object.values(v)) allStrings(x, out, depth + 1);
  return out;
}

export function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}
""",
}


class TsGen:
    def __init__(self, r: random.Random):
        self.r = r
        self.n = 0

    def name(self, prefix: str) -> str:
        self.n += 1
        r = self.r
        return prefix + "".join(w.capitalize() for w in r.sample(WORDS, 2)) + str(self.n)

    def lit(self) -> str:
        return " ".join(self.r.choice(WORDS) for _ in range(self.r.randint(1, 4)))

    def unit(self):
        """One exported declaration group; returns (code, [(fn name, kind)])."""
        r = self.r
        k = r.randint(0, 6)
        if k == 0:
            I, f = self.name("Rule"), self.name("match")
            return (f"""/** {self.lit()}. */
export interface {I} {{
  readonly name: string;
  readonly pattern: RegExp;
  readonly weight: number;
  readonly tags?: readonly string[];
}}

export function {f}(rules: readonly {I}[], text: string): {I}[] {{
  return rules.filter((r) => r.pattern.test(text) && r.weight > {r.randint(0, 50)});
}}

export const {f}Rules: readonly {I}[] = [
""" + "".join(f"  {{ name: \"{self.lit()}\", pattern: /{r.choice(WORDS)}\\s+{r.choice(WORDS)}/i, weight: {r.randint(0, 100)}, tags: [\"{r.choice(WORDS)}\"] }},\n" for _ in range(r.randint(2, 6))) + "];\n", [(f, "match")])
        if k == 1:
            T, f = self.name("Kind"), self.name("score")
            a, b, c = r.sample(WORDS, 3)
            return (f"""export type {T} = "{a}" | "{b}" | "{c}";

export function {f}(kind: {T}, n: number): number {{
  switch (kind) {{
    case "{a}":
      return n * {r.randint(2, 9)};
    case "{b}":
      return n + {r.randint(1, 99)};
    default:
      return n - {r.randint(1, 99)};
  }}
}}
""", [(f, f"score:{a}")])
        if k == 2:
            C = self.name("Counter")
            return (f"""export class {C} {{
  #counts = new Map<string, number>();
  #limit: number;

  constructor(limit = {r.randint(3, 40)}) {{
    this.#limit = limit;
  }}

  add(key: string, by = 1): this {{
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + by);
    return this;
  }}

  top(n: number = this.#limit): Array<[string, number]> {{
    return [...this.#counts.entries()].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).slice(0, n);
  }}

  get size(): number {{
    return this.#counts.size;
  }}
}}
""", [(C, "class")])
        if k == 3:
            f = self.name("groupBy")
            return (f"""export function {f}<T, K extends string>(items: readonly T[], key: (t: T) => K): Partial<Record<K, T[]>> {{
  const out: Partial<Record<K, T[]>> = {{}};
  for (const item of items) {{
    const k = key(item);
    (out[k] ??= []).push(item);
  }}
  return out;
}}
""", [(f, "group")])
        if k == 4:
            c, f = self.name("table"), self.name("lookup")
            keys = r.sample(WORDS, r.randint(3, 7))
            rows = "".join(f"  {w}: {{ limit: {r.randint(1, 1000)}, label: \"{self.lit()}\" }},\n" for w in keys)
            return (f"""const {c} = {{
{rows}}} as const satisfies Record<string, {{ limit: number; label: string }}>;

export type {c.capitalize()}Key = keyof typeof {c};

export function {f}(key: string): {{ limit: number; label: string }} | undefined {{
  return Object.hasOwn({c}, key) ? {c}[key as {c.capitalize()}Key] : undefined;
}}
""", [(f, "lookup")])
        if k == 5:
            f = self.name("settle")
            return (f"""export async function {f}(values: readonly number[], delayMs = {r.randint(0, 5)}): Promise<{{ total: number; max: number | null }}> {{
  let total = 0;
  let max: number | null = null;
  for (const v of values) {{
    const x = await Promise.resolve(v * {r.randint(1, 5)} + delayMs);
    total += x;
    max = max === null ? x : Math.max(max, x);
  }}
  return {{ total, max }};
}}
""", [(f, "async")])
        f = self.name("describe")
        return (f"""export function {f}(input: unknown): string {{
  if (typeof input === "string") return `{self.lit()}: ${{input.slice(0, {r.randint(10, 80)})}}`;
  if (Array.isArray(input)) return `list of ${{input.length}}`;
  if (input && typeof input === "object") {{
    const keys = Object.keys(input).sort();
    return keys.length ? `object with ${{keys.join(", ")}}` : "empty object";
  }}
  return String(input ?? "{r.choice(WORDS)}");
}}
""", [(f, "describe")])

    def call(self, fn: str, kind: str) -> str:
        if kind == "match":
            return f"{fn}({fn}Rules, text).length"
        if kind.startswith("score:"):
            return f"{fn}(\"{kind[6:]}\", text.length)"
        if kind == "class":
            return f"new {fn}().add(text).size"
        if kind == "group":
            return f"Object.keys({fn}(words(text), (w) => w.slice(0, 1))).length"
        if kind == "lookup":
            return f"({fn}(text)?.limit ?? 0)"
        if kind == "async":
            return f"(await {fn}([text.length, 1, 2])).total"
        return f"{fn}(payload.tool_input).length"


def gen_ts(out: str, count: int, seed: int) -> None:
    master = random.Random(seed)
    total = files = 0
    for name, body in TS_LIB.items():
        total += write(os.path.join(out, "lib", name), body)
        files += 1
    total += write(os.path.join(out, "package.json"), '{\n  "private": true,\n  "type": "module"\n}\n')
    for i in range(count):
        r = random.Random(master.getrandbits(64))
        t = Text(r)
        g = TsGen(r)
        rid = f"ts-{i:04d}-{r.choice(WORDS)}"
        d = os.path.join(out, rid)
        total += write(os.path.join(d, "recipe.json"), manifest(rid, r, t))
        total += write(os.path.join(d, "README.md"), f"# {rid}\n\n" + t.markdown(r.randint(500, 2500)))
        files += 2
        modules = []  # (module name, [(fn, kind)])
        for m in range(r.randint(3, 6)):
            mod = f"{r.choice(WORDS)}-{m}"
            units = [g.unit() for _ in range(r.randint(4, 10))]
            code = f"// {rid}/{mod}: {t.string()}.\n"
            if r.random() < 0.5:
                code += 'import { words } from "../../lib/text.ts";\n\nexport const first = (s: string): string => words(s)[0] ?? "";\n'
            code += "\n" + "\n".join(u[0] for u in units)
            total += write(os.path.join(d, "src", mod + ".ts"), code)
            files += 1
            modules.append((mod, [fk for u in units for fk in u[1]]))
        imports = "\n".join(
            f"import {{ {', '.join(fn + ('Rules' if k == 'match' else '') + (', ' + fn if k == 'match' else '') for fn, k in fns)} }} from \"./{mod}.ts\";"
            for mod, fns in modules)
        terms = [g.call(fn, k) for _, fns in modules for fn, k in fns]
        main = f"""// {rid}: {t.string()}.
import {{ emit, readPayload, run }} from "../../lib/hook.ts";
import type {{ Decision, HookPayload }} from "../../lib/hook.ts";
import {{ allStrings, clamp, str, words }} from "../../lib/text.ts";
{imports}

async function decide(payload: HookPayload): Promise<Decision> {{
  const text = allStrings(payload.tool_input).join("\\n") + str(payload.tool_name);
  let score = 0;
{chr(10).join(f"  score += Number({term});" for term in terms)}
  score = clamp(score, 0, {r.randint(100, 10000)});
  if (words(text).includes("{r.choice(WORDS)}") && score > {r.randint(10, 90)}) return {{ kind: "deny", reason: `score ${{score}}` }};
  return score > {r.randint(100, 900)} ? {{ kind: "ask", reason: "{t.string()}" }} : {{ kind: "none" }};
}}

run(async () => {{
  const got = await readPayload();
  if (!got.ok) {{
    emit({{ kind: "deny", reason: got.error }});
    return;
  }}
  emit(await decide(got.payload));
}});
"""
        total += write(os.path.join(d, "src", "main.ts"), main)
        files += 1
    print(json.dumps({"recipes": count, "files": files, "bytes": total}))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("catalog")
    c.add_argument("out")
    c.add_argument("--count", type=int, default=500)
    c.add_argument("--seed", type=int, default=20261129)
    b = sub.add_parser("big")
    b.add_argument("out")
    b.add_argument("--text-mib", type=int, default=50)
    b.add_argument("--binary-mib", type=int, default=50)
    b.add_argument("--seed", type=int, default=20261129)
    s = sub.add_parser("ts")
    s.add_argument("out")
    s.add_argument("--count", type=int, default=200)
    s.add_argument("--seed", type=int, default=20261129)
    a = p.parse_args()
    if a.cmd == "catalog":
        gen_catalog(a.out, a.count, a.seed)
    elif a.cmd == "big":
        gen_big(a.out, a.text_mib, a.binary_mib, a.seed)
    else:
        gen_ts(a.out, a.count, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

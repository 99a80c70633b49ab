// Pull the interesting parts out of a PreToolUse `tool_input`: the shell
// command of exec-like tools, and the file paths a write/edit/patch/delete
// tool will touch. Tool input shapes differ between hosts (FinClaw, Codex,
// Claude Code), so every lookup tries a few common field names.

import { homedir } from "node:os";
import { isAbsolute, resolve, sep } from "node:path";
import process from "node:process";
import { isRecord, str } from "./hook.ts";

const COMMAND_KEYS = ["command", "cmd", "script", "shell", "argv", "args"];
const PATH_KEYS = [
  "path", "file_path", "filePath", "file", "filename", "target", "target_path",
  "destination", "dest", "to", "new_path", "newPath", "paths", "files",
];
const PATCH_KEYS = ["patch", "input", "diff", "content"];

/** The shell command of an exec-like tool ("" when there is none). */
export function commandText(input: unknown): string {
  if (typeof input === "string") return input;
  if (!isRecord(input)) return "";
  for (const key of COMMAND_KEYS) {
    const value = input[key];
    if (typeof value === "string" && value.trim() !== "") return value;
    if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string")) {
      return value.join(" ");
    }
  }
  return "";
}

/** Every string inside `value`, with a dotted location such as `tool_input.content`. */
export function allStrings(value: unknown, where = "tool_input"): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  const walk = (v: unknown, at: string, depth: number): void => {
    if (depth > 12) return; // host payloads are shallow; stop pathological nesting
    if (typeof v === "string") out.push({ where: at, text: v });
    else if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${at}[${i}]`, depth + 1));
    else if (isRecord(v)) for (const [k, item] of Object.entries(v)) walk(item, `${at}.${k}`, depth + 1);
  };
  walk(value, where, 0);
  return out;
}

/** Paths named in a patch: Codex `*** Add/Update/Delete File:` lines, else unified `+++`/`---` headers. */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  // In Codex patches a removed line "-- x" reads "--- x"; only trust *** lines there.
  const codex = /^\*\*\* Begin Patch/m.test(patch);
  const re = codex
    ? /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+?)\s*$/gm
    : /^(?:\+\+\+|---) (.+?)\s*$/gm;
  for (const m of patch.matchAll(re)) {
    let p = (m[1] ?? "").replace(/\t.*$/, ""); // unified headers may carry a timestamp after a tab
    if (p === "" || p === "/dev/null") continue;
    if (!codex && /^[ab]\//.test(p)) p = p.slice(2);
    out.push(p);
  }
  return out;
}

/** True when `text` looks like a patch rather than file content. */
export function looksLikePatch(text: string): boolean {
  return /^\*\*\* Begin Patch/m.test(text) || (/^@@ /m.test(text) && /^(?:\+\+\+|---) /m.test(text));
}

/** File paths a file tool will write, edit, patch or delete. */
export function targetPaths(input: unknown): string[] {
  // Some hosts send a patch tool's input as the patch text itself.
  if (typeof input === "string") return looksLikePatch(input) ? [...new Set(patchPaths(input))] : [];
  if (!isRecord(input)) return [];
  const out: string[] = [];
  for (const key of PATH_KEYS) {
    const value = input[key];
    if (typeof value === "string" && value.trim() !== "") out.push(value);
    else if (Array.isArray(value)) {
      for (const item of value) {
        if (typeof item === "string") out.push(item);
        else if (isRecord(item) && typeof item.path === "string") out.push(item.path);
      }
    }
  }
  for (const key of PATCH_KEYS) {
    const value = input[key];
    if (typeof value === "string" && looksLikePatch(value)) out.push(...patchPaths(value));
  }
  return [...new Set(out)];
}

function unquote(token: string): string {
  return token.replace(/^(["'])(.*)\1$/, "$2");
}

/** Commands whose directory is stripped in [`shellView`]: `/bin/rm` is `rm`. */
const COMMAND_WORDS =
  "rm|rmdir|sudo|doas|pkexec|su|git|chmod|chown|dd|mkfs(?:\\.\\w+)?|mke2fs|wipefs|find|curl|wget|" +
  "sh|bash|zsh|ksh|dash|fish|env|cp|mv|install|ln|sed|truncate|tee|shred|python3?|perl|ruby|node";
const COMMAND_DIR = new RegExp(`(^|[\\s;&|(\`])(?:/[\\w.+-]+)+/(${COMMAND_WORDS})(?=$|[\\s;&|)])`, "gm");

/**
 * A second view of a shell command for rules to match, undoing the usual ways of hiding a
 * command word from a regex: quotes (`"rm" -rf /`, `bash -c "rm -rf /"`), backslashes
 * (`\rm`) and directories (`/bin/rm`). Rules are tested on both the command and this view.
 */
export function shellView(command: string): string {
  return command
    .replace(/\\(?=[A-Za-z])/g, "")
    // Dropped, not spaced: `"$DIR"/*` must stay one word.
    .replace(/["']/g, "")
    .replace(COMMAND_DIR, "$1$2");
}

/**
 * Files a shell command writes: `>`, `>>`, `>|`, `&>` redirects, `tee`, the destination of
 * `cp`/`mv`/`install`/`ln`, the files of `sed -i`, `truncate` and `shred`.
 */
export function redirectTargets(command: string): string[] {
  const out: string[] = [];
  // `2>&1` and `>&2` duplicate descriptors; the negative lookahead skips them.
  for (const m of command.matchAll(/(?:^|[^<>&\d])(?:\d?>>?\|?|&>>?)(?!&)\s*(["']?[^\s;&|<>()]+["']?)/g)) {
    out.push(unquote(m[1] ?? ""));
  }
  for (const m of command.matchAll(/\btee\s+([^;&|<>()\n]*)/g)) {
    for (const t of (m[1] ?? "").trim().split(/\s+/)) if (t && !t.startsWith("-")) out.push(unquote(t));
  }
  for (const segment of shellView(command).split(/[;&|\n()`]+/)) {
    const words = segment.trim().split(/\s+/).filter((w) => w !== "");
    while (words.length > 0 && /^(?:sudo|doas|env|nohup|time|command|exec|[A-Za-z_]\w*=.*)$/.test(words[0] ?? "")) {
      words.shift();
    }
    const [cmd, ...args] = words;
    const operands = args.filter((a) => !a.startsWith("-"));
    if (cmd === "cp" || cmd === "mv" || cmd === "install" || cmd === "ln") {
      const last = operands[operands.length - 1];
      if (operands.length >= 2 && last !== undefined) out.push(last);
    } else if (cmd === "sed" && args.some((a) => /^-[a-zA-Z]*i/.test(a) || a.startsWith("--in-place"))) {
      out.push(...operands.slice(1));
    } else if (cmd === "truncate" || cmd === "shred") {
      // `truncate -s 0 FILE`: the size is an option's value, not a file.
      const sized = args.filter((a, i) => !a.startsWith("-") && !/^-(?:s|-size|n|-iterations)$/.test(args[i - 1] ?? ""));
      out.push(...sized);
    }
  }
  return out;
}

/** Files and folders a shell command deletes: the operands of `rm`, `rmdir` and `unlink`. */
export function deleteTargets(command: string): string[] {
  const out: string[] = [];
  for (const segment of shellView(command).split(/[;&|\n()`]+/)) {
    const words = segment.trim().split(/\s+/).filter((w) => w !== "");
    while (words.length > 0 && /^(?:sudo|doas|env|nohup|time|command|exec|xargs|[A-Za-z_]\w*=.*)$/.test(words[0] ?? "")) {
      words.shift();
    }
    const [cmd, ...args] = words;
    if (cmd === "rm" || cmd === "rmdir" || cmd === "unlink") {
      const operands = args.filter((a) => !a.startsWith("-") || a === "-");
      out.push(...operands.filter((a) => a !== "-"));
    }
  }
  return out;
}

/** The session workspace: payload `cwd`, else the process's working directory. */
export function workspaceOf(cwd: unknown): string {
  const c = str(cwd);
  return c && isAbsolute(c) ? resolve(c) : process.cwd();
}

/** Resolve a user-written path: `~`, `$HOME` and `${HOME}` expand; relative paths use `cwd`. */
export function resolveUserPath(p: string, cwd: string): string {
  let path = unquote(p.trim());
  const home = homedir();
  path = path.replace(/^(?:~|\$HOME|\$\{HOME\})(?=$|[\\/])/, home);
  return resolve(cwd, path);
}

/** True when `child` is `parent` or below it (lexically; symlinks are not followed). */
export function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

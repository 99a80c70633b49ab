// Shared plumbing for hook handlers: read the host's stdin JSON, print one
// decision in the shape the host expects, and load JSON data files.
//
// Host contract (FinClaw hooks-develop, Codex/Claude Code compatible):
//   exit 0 + empty stdout  -> no decision
//   exit 0 + JSON object   -> a decision
//   exit 2 + stderr        -> block (tool / prompt events only)
//   any other exit         -> hook failure
//
// We never call process.exit() after writing: setting exitCode lets Node
// flush stdout/stderr first, even when they are pipes.

import process from "node:process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One entry of the bounded `turn.tools` list the host sends. */
export interface TurnTool {
  name?: string;
  input_summary?: string;
  result_summary?: string;
}

/** The bounded `turn` object (UserPromptSubmit, PreToolUse, PostToolUse, Stop). */
export interface Turn {
  user_text?: string | null;
  assistant_text?: string | null;
  tools?: TurnTool[];
}

/**
 * Hook stdin. Every field is optional because we never trust the host (or a
 * hand-written test) to send a complete payload; read them defensively.
 */
export interface HookPayload {
  session_id?: unknown;
  turn_id?: unknown;
  cwd?: unknown;
  hook_event_name?: unknown;
  model?: unknown;
  permission_mode?: unknown;
  transcript_path?: unknown;
  tool_name?: unknown;
  tool_input?: unknown;
  tool_use_id?: unknown;
  tool_response?: unknown;
  prompt?: unknown;
  reason?: unknown;
  source?: unknown;
  turn?: unknown;
  last_assistant_message?: unknown;
  [field: string]: unknown;
}

export type ReadResult =
  | { ok: true; payload: HookPayload }
  | { ok: false; error: string; raw: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `value` if it is a string, else `fallback`. */
export function str(value: unknown, fallback = ""): string {
  return typeof value === "string" ? value : fallback;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Read all of stdin as UTF-8 (async, so non-blocking pipes work too). */
export async function readStdin(): Promise<string> {
  process.stdin.setEncoding("utf8");
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/** Parse a payload; anything but a JSON object is reported as an error. */
export function parsePayload(raw: string): ReadResult {
  const text = raw.replace(/^\uFEFF/, "");
  if (text.trim() === "") return { ok: false, error: "empty stdin", raw };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Deliberately not JSON.parse's message: it quotes the input, which may
    // hold secrets, and reasons end up on screen and in logs.
    return { ok: false, error: `stdin is not valid JSON (${text.length} chars)`, raw };
  }
  if (!isRecord(value)) return { ok: false, error: "stdin JSON is not an object", raw };
  return { ok: true, payload: value };
}

/** Read stdin fully and parse it. Never throws. */
export async function readPayload(): Promise<ReadResult> {
  let raw: string;
  try {
    raw = await readStdin();
  } catch (err) {
    return { ok: false, error: `cannot read stdin (${errorMessage(err)})`, raw: "" };
  }
  return parsePayload(raw);
}

/** The event name from the payload, else from the runner's FINCLAW_HOOK_EVENT. */
export function eventName(payload: HookPayload | null): string {
  const fromPayload = payload ? str(payload.hook_event_name) : "";
  return fromPayload || str(process.env.FINCLAW_HOOK_EVENT);
}

/** The `turn` object if the host sent one. */
export function turnOf(payload: HookPayload): Turn | null {
  const turn = payload.turn;
  if (!isRecord(turn)) return null;
  const tools = Array.isArray(turn.tools)
    ? turn.tools.filter(isRecord).map(
        (t): TurnTool => ({
          name: str(t.name),
          input_summary: str(t.input_summary),
          result_summary: str(t.result_summary),
        }),
      )
    : [];
  return {
    user_text: typeof turn.user_text === "string" ? turn.user_text : null,
    assistant_text: typeof turn.assistant_text === "string" ? turn.assistant_text : null,
    tools,
  };
}

// ---------------------------------------------------------------------------
// Output

const MAX_REASON = 600;

function clip(text: string, max = MAX_REASON): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Print one JSON decision object on stdout (exit code stays 0). */
export function emit(output: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

/** PreToolUse: deny the tool call. */
export function denyTool(reason: string): void {
  emit({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: clip(reason),
    },
  });
}

/** PreToolUse: ask the user for approval (CLI 0.13.1+; older hosts ignore it). */
export function askTool(reason?: string): void {
  const out: Record<string, unknown> = { hookEventName: "PreToolUse", permissionDecision: "ask" };
  if (reason) out.permissionDecisionReason = clip(reason);
  emit({ hookSpecificOutput: out });
}

/** UserPromptSubmit: switch this turn to another model of the same provider. */
export function routeModel(model: string): void {
  emit({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", updatedModel: model } });
}

/** Stop: replace the assistant's answer with `reason` (must be non-empty). */
export function rejectStop(reason: string): void {
  const text = reason.trim() || "rejected by turn review";
  emit({ hookSpecificOutput: { decision: "reject", reason: clip(text) } });
}

/** Tool / prompt events: block via exit 2 + stderr (Codex-compatible). */
export function block(reason: string): void {
  process.stderr.write(`${clip(reason)}\n`);
  process.exitCode = 2;
}

/** Report a hook failure: message on stderr, exit 1. */
export function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
}

/** A non-fatal note on stderr (exit code untouched). */
export function warn(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * Run `main`; if it throws, hand the error to `onCrash` (which should print a
 * deny for fail-closed gates, or call `fail`).
 */
export function run(main: () => Promise<void>, onCrash: (err: unknown) => void): void {
  main().catch((err: unknown) => {
    try {
      onCrash(err);
    } catch {
      process.exitCode = 1;
    }
  });
}

// ---------------------------------------------------------------------------
// Data files

/** Read and parse a JSON file; errors name the file. */
export function readJson(file: string | URL): { path: string; data: unknown } {
  const path = typeof file === "string" ? file : fileURLToPath(file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read ${path}: ${errorMessage(err)}`);
  }
  try {
    return { path, data: JSON.parse(text.replace(/^\uFEFF/, "")) };
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${errorMessage(err)}`);
  }
}

/** The file named by env var `envVar`, if set and non-blank. */
export function envPath(envVar: string): string | null {
  const value = str(process.env[envVar]).trim();
  return value === "" ? null : value;
}

/**
 * Load a JSON data file: the file named by env var `envVar` when it is set
 * (a relative path resolves against the working directory, i.e. the session
 * workspace), else `builtin`, a URL relative to the script such as
 * `new URL("../routes.json", import.meta.url)` (scripts/main.js sits one
 * folder below the recipe root, where the data files live).
 */
export function loadJsonFile(envVar: string, builtin: URL): { path: string; data: unknown } {
  return readJson(envPath(envVar) ?? builtin);
}

/** Compile a regex from a data file; the error names where it came from. */
export function compileRegex(source: unknown, flags: unknown, where: string): RegExp {
  if (typeof source !== "string" || source === "") {
    throw new Error(`${where}: pattern must be a non-empty string`);
  }
  // "g"/"y" would make .test() stateful across calls; drop them.
  const f = typeof flags === "string" ? flags.replace(/[gy]/g, "") : "";
  try {
    return new RegExp(source, f);
  } catch (err) {
    throw new Error(`${where}: bad regex: ${errorMessage(err)}`);
  }
}

// audit-log: append one JSON line per PostToolUse / SessionEnd event.
//
// Log file, first that is set:
//   $HOOKPACK_AUDIT_LOG
//   $FINCLAW_PROFILE_ROOT/logs/hooks-audit.jsonl
//   $HOME/.finclaw/logs/hooks-audit.jsonl
//
// Both handlers are async (fire-and-forget), so this never prints a decision
// and always exits 0; problems go to stderr only. Tool input and response
// bodies stay out of the log: we keep sizes, an ok flag, and a short preview
// of the input (HOOKPACK_AUDIT_PREVIEW_CHARS, default 256, 0 = none) with
// credentials redacted.

import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { errorMessage, eventName, isRecord, readPayload, run, str, warn } from "../../lib/hook.ts";
import type { HookPayload } from "../../lib/hook.ts";
import { redactSecrets } from "../../lib/secrets.ts";

const DEFAULT_PREVIEW_CHARS = 256;

function logPath(): string {
  const explicit = str(process.env.HOOKPACK_AUDIT_LOG).trim();
  if (explicit) return explicit;
  const profile = str(process.env.FINCLAW_PROFILE_ROOT).trim();
  if (profile) return join(profile, "logs", "hooks-audit.jsonl");
  return join(str(process.env.HOME).trim() || homedir(), ".finclaw", "logs", "hooks-audit.jsonl");
}

function previewChars(): number {
  const raw = str(process.env.HOOKPACK_AUDIT_PREVIEW_CHARS).trim();
  const n = Number(raw);
  return raw !== "" && Number.isInteger(n) && n >= 0 ? n : DEFAULT_PREVIEW_CHARS;
}

/**
 * `value` as JSON text, or null when it cannot be serialised here (nesting deeper than
 * the stack allows): the line is then written without it rather than not at all.
 */
function serialised(value: unknown): string | null {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return null;
  }
}

/** UTF-8 size of a value as the host would have serialised it (null: unknown). */
function byteSize(value: unknown): number | null {
  if (value === undefined) return 0;
  const text = serialised(value);
  return text === null ? null : new TextEncoder().encode(text).length;
}

/** A short, redacted look at `value`, or undefined when previews are off. */
function preview(value: unknown, max: number): string | undefined {
  if (max === 0 || value === undefined) return undefined;
  const text = serialised(value) ?? "[too deeply nested to show]";
  // Redact before cutting, so a key split by the cut is still caught.
  const clean = redactSecrets(text);
  return clean.length <= max ? clean : `${clean.slice(0, max)}…`;
}

/** Best guess at whether the tool succeeded; null when the response doesn't say. */
function toolOk(response: unknown): boolean | null {
  if (!isRecord(response)) return null;
  if (typeof response.ok === "boolean") return response.ok;
  if (typeof response.success === "boolean") return response.success;
  if (typeof response.is_error === "boolean") return !response.is_error;
  if (typeof response.isError === "boolean") return !response.isError;
  for (const key of ["exit_code", "exitCode", "status_code"]) {
    if (typeof response[key] === "number") return response[key] === 0;
  }
  if (response.error !== undefined && response.error !== null && response.error !== false) return false;
  return null;
}

function record(payload: HookPayload, event: string): Record<string, unknown> {
  const base: Record<string, unknown> = {
    ts: new Date().toISOString(),
    event,
    session_id: str(payload.session_id) || null,
    turn_id: str(payload.turn_id) || null,
  };
  if (event === "SessionEnd") {
    return { ...base, reason: str(payload.reason) || null };
  }
  const max = previewChars();
  return {
    ...base,
    tool_name: str(payload.tool_name) || null,
    tool_use_id: str(payload.tool_use_id) || null,
    ok: toolOk(payload.tool_response),
    input_bytes: byteSize(payload.tool_input),
    response_bytes: byteSize(payload.tool_response),
    input_preview: preview(payload.tool_input, max),
  };
}

function append(line: Record<string, unknown>): void {
  const file = logPath();
  try {
    // Command lines and file paths of every session: for this user's eyes only.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // One appendFileSync call per line: O_APPEND keeps concurrent handlers'
    // lines whole on local file systems.
    // U+2028/2029 are valid in JSON but split lines for some readers: escape them.
    const text = JSON.stringify(line).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
    appendFileSync(file, `${text}\n`, { encoding: "utf8", mode: 0o600 });
  } catch (err) {
    warn(`audit-log: cannot write ${file}: ${errorMessage(err)}`);
  }
}

async function main(): Promise<void> {
  const read = await readPayload();
  if (!read.ok) {
    // Still leave a trace: an audit log with silent gaps is worse than a note.
    const event = eventName(null) || "unknown";
    append({ ts: new Date().toISOString(), event, error: `unparseable payload: ${read.error}` });
    warn(`audit-log: ${read.error}`);
    return;
  }
  append(record(read.payload, eventName(read.payload) || "unknown"));
}

run(main, (err) => warn(`audit-log: ${errorMessage(err)}`));

// Loading and checking tool-gate rules (rules.json, or the file named by
// HOOKPACK_TOOL_GATE_RULES). Any problem throws: the gate is fail-closed, so
// main.ts turns a broken rules file into a deny that names the problem.

import { isAbsolute } from "node:path";
import { compileRegex, envPath, isRecord, readJson, str } from "../../lib/hook.ts";

export type Decision = "deny" | "ask";

export interface Rule {
  id: string;
  decision: Decision;
  reason: string;
  /** Regex on the tool name (whole-name match); absent = every gated tool. */
  tools: RegExp | null;
  /** Regex on the shell command of exec-like tools. */
  command: RegExp | null;
  /** Regex on every absolute path the call writes (file tools, shell redirects). */
  path: RegExp | null;
}

export interface OutsideWorkspace {
  decision: Decision | "none";
  allow: string[];
}

export interface RuleSet {
  source: string;
  rules: Rule[];
  outside: OutsideWorkspace;
}

export const RULES_ENV = "HOOKPACK_TOOL_GATE_RULES";

function parseRule(raw: unknown, where: string): Rule {
  if (!isRecord(raw)) throw new Error(`${where}: a rule must be an object`);
  const id = str(raw.id);
  if (!id) throw new Error(`${where}: rule needs an "id"`);
  const at = `${where} (${id})`;
  if (raw.decision !== "deny" && raw.decision !== "ask") {
    throw new Error(`${at}: "decision" must be "deny" or "ask"`);
  }
  const flags = raw.flags;
  const tools = raw.tools === undefined ? null : compileRegex(`^(?:${str(raw.tools)})$`, "", `${at}.tools`);
  const command = raw.command === undefined ? null : compileRegex(raw.command, flags, `${at}.command`);
  const path = raw.path === undefined ? null : compileRegex(raw.path, flags, `${at}.path`);
  return { id, decision: raw.decision, reason: str(raw.reason) || id, tools, command, path };
}

function parseOutside(raw: unknown, where: string): OutsideWorkspace | null {
  if (raw === undefined) return null;
  if (!isRecord(raw)) throw new Error(`${where}: must be an object`);
  const d = raw.decision ?? "ask";
  if (d !== "deny" && d !== "ask" && d !== "none") {
    throw new Error(`${where}.decision must be "deny", "ask" or "none"`);
  }
  const allow = raw.allow ?? [];
  if (!Array.isArray(allow) || !allow.every((a) => typeof a === "string")) {
    throw new Error(`${where}.allow must be a list of paths`);
  }
  return { decision: d, allow };
}

function parseRuleSet(data: unknown, source: string): { rules: Rule[]; outside: OutsideWorkspace | null; inherit: boolean } {
  if (!isRecord(data)) throw new Error(`${source}: top level must be an object`);
  const list = data.rules ?? [];
  if (!Array.isArray(list)) throw new Error(`${source}: "rules" must be a list`);
  return {
    rules: list.map((r, i) => parseRule(r, `${source}: rules[${i}]`)),
    outside: parseOutside(data.outside_workspace, `${source}: outside_workspace`),
    inherit: data.inherit === true,
  };
}

/**
 * The rules in force. An override file replaces the built-in rules, unless it
 * says `"inherit": true`: then its rules are checked alongside the built-in
 * ones (deny still beats ask, whichever file it came from). Its
 * `outside_workspace` replaces the built-in one only when present.
 */
export function loadRules(builtin: URL): RuleSet {
  const base = readJson(builtin);
  const builtinSet = parseRuleSet(base.data, base.path);
  const builtinOutside: OutsideWorkspace = builtinSet.outside ?? { decision: "ask", allow: [] };
  const override = envPath(RULES_ENV);
  if (override === null) return { source: base.path, rules: builtinSet.rules, outside: builtinOutside };
  // Found by review: a relative path was read from each session's workspace, so that a
  // cloned repository could ship a rules file turning the gate off.
  if (!isAbsolute(override)) {
    throw new Error(
      `${RULES_ENV} is \`${override}\`, a relative path, which would be read from each session's ` +
        "workspace, where a repository could ship rules of its own; give an absolute path",
    );
  }
  const loaded = readJson(override);
  const user = parseRuleSet(loaded.data, `${loaded.path} (${RULES_ENV})`);
  return {
    source: loaded.path,
    rules: user.inherit ? [...user.rules, ...builtinSet.rules] : user.rules,
    outside: user.outside ?? builtinOutside,
  };
}

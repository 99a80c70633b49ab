// tool-gate: PreToolUse gate for mutating tools.
//
// deny  - clearly destructive calls (rm -rf /, mkfs, dd to a disk, fork bombs,
//         force-push to main, chmod -R 777 /, curl | sh, …)
// ask   - other risky mutations (sudo, git push, package installs, writes
//         outside the workspace, …)
// none  - everything else (no stdout: the host's normal permission flow runs)
//
// The gate is fail-closed: unreadable stdin or a broken rules file prints a
// deny that says what went wrong (the handler also sets failurePolicy: deny,
// which covers crashes and timeouts).

import { homedir } from "node:os";
import { askTool, denyTool, errorMessage, readPayload, run, str } from "../../lib/hook.ts";
import {
  allStrings,
  commandText,
  deleteTargets,
  isInside,
  redirectTargets,
  resolveUserPath,
  shellView,
  targetPaths,
  workspaceOf,
} from "../../lib/tool-input.ts";
import { loadRules } from "./rules.ts";
import { runView } from "./shell.ts";
import type { Rule, RuleSet } from "./rules.ts";

/** Tools whose input is a shell command rather than file paths. */
const EXEC_TOOLS = /^(?:exec|start_exec_job|bash|shell|local_shell|run_command)$/i;

/** File tools that delete what their paths name. */
const DELETE_TOOLS = /(?:^|_)(?:delete|remove|unlink|rmdir)(?:_|$)|^(?:delete|remove|rm)[A-Z]/i;

/**
 * Build output a project makes again (dependencies, bundles, caches): an `rm -r` of these
 * alone, inside the workspace, is routine and not asked about (`recursiveDeleteOfBuildOutput`).
 */
const BUILD_OUTPUT =
  /^(?:node_modules|dist|build|target|coverage|__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|\.next|\.nuxt|\.turbo|\.parcel-cache|\.svelte-kit|\.cache|\.tox|\.venv|venv)$/;

/**
 * A command that is one plain `rm` and nothing else: options, then names made of letters,
 * digits and `@._+/-` (no quote, `~`, `$`, backtick, glob or brace), on one line, and no
 * operator.
 * Anything more (a second command, `timeout 5 rm …`, `{ rm …; }`, `rm -rf $D/x`) could
 * delete what the names do not say, so only this form is exempt.
 */
const PLAIN_RM = /^[ \t]*rm(?:[ \t]+(?:-[a-zA-Z]+|--recursive|--force))+(?:[ \t]+[\w@.+\/-]+)+[ \t]*$/;

/**
 * Whether the command is one plain `rm` (`PLAIN_RM`) of build output alone, inside the
 * workspace: `raw` (its targets as written; `resolved` against the workspace `cwd`) never
 * through `..`, never with a trailing `/` (through a link named so, rm empties the folder
 * it leads to).
 */
function recursiveDeleteOfBuildOutput(command: string, raw: string[], resolved: string[], cwd: string): boolean {
  if (raw.length === 0 || !PLAIN_RM.test(command)) return false;
  return raw.every((r, i) => {
    const p = resolved[i] ?? "";
    const names = r.split("/");
    return (
      !r.endsWith("/") &&
      !names.includes("..") &&
      BUILD_OUTPUT.test(names[names.length - 1] ?? "") &&
      p !== cwd &&
      isInside(p, cwd)
    );
  });
}

/**
 * Longest command checked rule by rule. Some rules scan from every occurrence of a word to
 * the end of the command, so time grows with the square of the length; past this a call
 * is asked about instead of being checked slowly into the handler's timeout.
 */
const MAX_CHECKED_COMMAND = 16 * 1024;

interface Verdict {
  decision: "deny" | "ask";
  reasons: string[];
}

function evaluate(rules: RuleSet, toolName: string, toolInput: unknown, cwd: string): Verdict | null {
  const isExec = EXEC_TOOLS.test(toolName);
  let command = "";
  let rawPaths: string[];
  let rawDeleted: string[] = [];
  if (isExec) {
    // Unknown exec input shapes: check every string rather than nothing.
    command = commandText(toolInput) || allStrings(toolInput).map((s) => s.text).join("\n");
    rawPaths = redirectTargets(command);
    rawDeleted = deleteTargets(command);
  } else {
    rawPaths = targetPaths(toolInput);
    if (DELETE_TOOLS.test(toolName)) [rawPaths, rawDeleted] = [[], rawPaths];
  }
  if (command.length > MAX_CHECKED_COMMAND) {
    return {
      decision: "ask",
      reasons: [`the command is ${command.length} characters long, too long to check rule by rule`],
    };
  }
  const deleted = rawDeleted.map((p) => resolveUserPath(p, cwd));
  const paths = [...rawPaths.map((p) => resolveUserPath(p, cwd)), ...deleted];
  // Rules are matched against what the command runs (`runView`): the text of a command
  // that only prints, records or searches for it (`git commit -m "… rm -rf / …"`) is left
  // out there. A deny rule that matches only the command as written, or with every quote
  // stripped, is asked about instead: a guard rail that quotes could walk around would be
  // worse than one that asks. A command the reader cannot follow is judged quote-blind.
  const blind = shellView(command);
  const read = command === "" ? { view: "", written: "" } : runView(command, cwd, homedir());
  const ran = read === null ? blind : shellView(read.view); // shellView also reads `/bin/rm` as `rm`
  // Text written to a file (`echo "npm i x" >> setup.sh`) may be run later: an ask rule
  // asks, a deny rule asks too (as for text only named).
  const written = read === null ? "" : shellView(read.written);
  const mentioned: Rule[] = [];
  const buildOutput = recursiveDeleteOfBuildOutput(command, rawDeleted, deleted, cwd);

  const hits: Rule[] = rules.rules.filter((rule) => {
    if (rule.id === "recursive-delete" && buildOutput) return false;
    if (rule.tools && !rule.tools.test(toolName)) return false;
    if (!rule.command && !rule.path) return true; // a tool-only rule
    if (rule.path && paths.some((p) => rule.path?.test(p))) return true;
    if (!rule.command || command === "") return false;
    if (rule.command.test(ran)) return true;
    if (written !== "" && rule.command.test(written)) {
      if (rule.decision === "ask") return true;
      mentioned.push(rule);
      return false;
    }
    // Text the command only prints, records or searches for (`grep -r "sudo " .`): an
    // ask rule stays silent, a deny rule asks (see above).
    if (rule.decision === "deny" && (rule.command.test(command) || rule.command.test(blind))) {
      mentioned.push(rule);
    }
    return false;
  });

  const denies = hits.filter((r) => r.decision === "deny");
  if (denies.length > 0) {
    return { decision: "deny", reasons: denies.map((r) => `${r.reason} (rule ${r.id})`) };
  }

  const reasons = [
    ...mentioned.map((r) => `${r.reason} (rule ${r.id}; only named in text this command may not run, so asking instead of denying)`),
    ...hits.map((r) => `${r.reason} (rule ${r.id})`),
  ];
  let decision: Verdict["decision"] | null = reasons.length > 0 ? "ask" : null;

  // Deleting the workspace itself, or a folder holding it.
  const whole = deleted.filter((p) => isInside(cwd, p));
  if (whole.length > 0) {
    reasons.push(`deletes the whole workspace ${cwd} (${whole.join(", ")})`);
    decision = "ask";
  }

  const { outside } = rules;
  if (outside.decision !== "none") {
    const allowed = outside.allow.map((a) => resolveUserPath(a, cwd));
    const isAway = (p: string): boolean => !isInside(p, cwd) && !allowed.some((a) => isInside(p, a));
    const away = paths.filter((p) => isAway(p) && !deleted.includes(p));
    const awayDeleted = deleted.filter((p) => isAway(p) && !isInside(cwd, p));
    if (away.length > 0) reasons.push(`writes outside the workspace ${cwd}: ${away.join(", ")}`);
    if (awayDeleted.length > 0) reasons.push(`deletes outside the workspace ${cwd}: ${awayDeleted.join(", ")}`);
    if (away.length > 0 || awayDeleted.length > 0) {
      if (outside.decision === "deny") return { decision: "deny", reasons };
      decision = "ask";
    }
  }
  return decision ? { decision, reasons } : null;
}

async function main(): Promise<void> {
  const read = await readPayload();
  if (!read.ok) {
    denyTool(`tool-gate: cannot check this call: ${read.error}`);
    return;
  }
  const { payload } = read;
  const toolName = str(payload.tool_name);
  if (toolName === "") {
    denyTool("tool-gate: cannot check this call: the payload has no tool_name");
    return;
  }

  let rules: RuleSet;
  try {
    rules = loadRules(new URL("../rules.json", import.meta.url));
  } catch (err) {
    denyTool(`tool-gate: rules error, refusing by default: ${errorMessage(err)}`);
    return;
  }

  const verdict = evaluate(rules, toolName, payload.tool_input, workspaceOf(payload.cwd));
  if (!verdict) return; // harmless: no decision
  const text = `tool-gate: ${verdict.reasons.join("; ")}`;
  if (verdict.decision === "deny") denyTool(text);
  else askTool(text);
}

run(main, (err) => denyTool(`tool-gate: internal error, refusing by default: ${errorMessage(err)}`));

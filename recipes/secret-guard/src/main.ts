// secret-guard: PreToolUse gate that keeps credentials out of files and
// command lines.
//
// Denies a write/exec tool call when
//   - any string in tool_input carries a credential (AWS keys, PEM private
//     keys, GitHub / Slack / OpenAI-style / Stripe / Google tokens, long
//     password= / api_key= assignments) - see ../../lib/secrets.ts. Strings
//     are scanned with their context (a shell command, or the file written),
//     so that typed passwords for local services (docker-compose files,
//     docker run, localhost) and test values in test files pass;
//   - a file tool (or a shell redirect) writes a credential file: .env,
//     id_rsa and other SSH private keys, .aws/credentials, .netrc, … (not
//     .env templates, nor `cp .env.example .env`);
//   - a command prints a secret: echo/printf/printenv of $…_API_KEY,
//     $…_TOKEN, $…_SECRET, $…_PASSWORD, or cat/less/cp/base64 of
//     ~/.ssh/id_* or ~/.aws/credentials.
// The reason names the kind of secret and where it is (e.g.
// `tool_input.content`), never the secret itself.
//
// Fail-closed: unreadable stdin prints a deny (and the handler sets
// failurePolicy: deny for crashes and timeouts).

import { denyTool, errorMessage, readPayload, run, str } from "../../lib/hook.ts";
import { findSecrets } from "../../lib/secrets.ts";
import {
  allStrings,
  commandText,
  isInside,
  looksLikePatch,
  redirectTargets,
  resolveUserPath,
  shellView,
  targetPaths,
  workspaceOf,
} from "../../lib/tool-input.ts";

const EXEC_TOOLS = /^(?:exec|start_exec_job|bash|shell|local_shell|run_command)$/i;

/**
 * Fields that hold text being *removed* (edit tools' old text). A call that
 * deletes a hard-coded key is exactly what we want to allow.
 */
const REMOVED_TEXT_KEY = /(?:^|\.)(?:old_string|old_str|oldText|old_text|search|find)$/;

/**
 * A committed .env template: a `.env…` name with an `example`, `sample`, `template`,
 * `tmpl`, `dist` or `defaults` part (`.env.example`, `.env.local.example`,
 * `.env.development.template`, `.env.sample`).
 */
const ENV_TEMPLATE = /(?:^|[\\/])\.env[^\\/]*?[._-](?:example|sample|template|tmpl|dist|defaults)(?:[._-][^\\/]*)?$/i;

/** Credential files, tested against the resolved path (either separator). */
const SECRET_FILES: { pattern: RegExp; what: string; unless?: RegExp }[] = [
  // .env, .env.local, .env.production … but not the committed templates.
  { pattern: /(?:^|[\\/])\.env(?:rc|\.[\w.-]+)?$/, unless: ENV_TEMPLATE, what: "a .env file" },
  { pattern: /(?:^|[\\/])id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?$/, what: "an SSH private key file" },
  { pattern: /(?:^|[\\/])\.ssh[\\/](?!.*\.pub$)(?!known_hosts$|config$)[^\\/]+$/, what: "a file in ~/.ssh" },
  { pattern: /(?:^|[\\/])\.aws[\\/]credentials$/, what: "AWS credentials" },
  { pattern: /(?:^|[\\/])(?:\.netrc|_netrc|\.git-credentials|\.pgpass|\.pypirc)$/, what: "a credentials file" },
];

/**
 * The name of a secret variable: a secret word at the end of the name, or followed by a
 * part that still names the secret (`SECRET_KEY_BASE`) - not by one that describes it
 * (`$TOKENIZER_PATH`, `$PASSWORD_MIN_LEN`).
 */
const SECRET_VAR =
  "[A-Za-z0-9_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY)(?![A-Za-z0-9])" +
  "(?!_(?:PATH|FILE|DIR|MIN|MAX|LEN|LENGTH|URL|NAME|ID|TYPE|HEADER|ENV|VAR|PROMPT|POLICY|EXPIRY|EXPIRES|TTL|COUNT|SIZE|HINT|LIMIT|LIFETIME)(?![A-Za-z0-9]))";

/**
 * Commands that print or copy a secret; `unless` marks the same command handing the secret
 * to a login that reads it from stdin, which is how such tools want it.
 */
const SECRET_COMMANDS: { pattern: RegExp; what: string; unless?: RegExp; accept?: (m: RegExpMatchArray) => boolean }[] = [
  {
    // echo "$OPENAI_API_KEY", printf '%s' "${GH_TOKEN}" - but not echo "set OPENAI_API_KEY first".
    pattern: new RegExp(`\\b(?:echo|printf|print)\\b[^;&|\\n]*\\$\\{?${SECRET_VAR}`, "i"),
    what: "prints a secret environment variable",
    // `echo "$GITHUB_TOKEN" | gh auth login --with-token`, `… | docker login --password-stdin`.
    unless: /^[^;&|\n]*\|\s*[^;&|\n]*\s--(?:with-token|password-stdin)\b[^;&|\n]*$/,
  },
  {
    // `gh auth token` prints the GitHub token; /proc/…/environ holds every variable.
    pattern: /\bgh\s+auth\s+token\b|\/proc\/(?:self|\d+|\$\$|\$\{?PPID\}?)\/environ\b/,
    what: "prints a token or every environment variable",
  },
  {
    pattern: new RegExp(`\\bprintenv\\s+${SECRET_VAR}`, "i"),
    what: "prints a secret environment variable",
  },
  {
    // `env`, `printenv`, `export -p` or `set` alone (or piped on) list every variable.
    pattern: /(?:^|[;&|(`]|\b(?:then|do|else|nohup|time))\s*(?:env|printenv|export(?:\s+-p)?|set|declare\s+-[px])(?=\s*(?:$|[;&|)>]))/m,
    what: "prints every environment variable, secrets included",
  },
  {
    // Private keys (named, or as `id_*` / `.ssh/*` globs, or the whole ~/.ssh folder) and
    // credential files, read by a tool that prints, searches, copies or archives them;
    // `ssh -i ~/.ssh/id_rsa` only uses the key.
    pattern:
      /\b(?:cat|less|more|head|tail|bat|base64|xxd|od|hexdump|strings|cp|scp|rsync|curl|nc|gpg|grep|egrep|rg|sed|awk|tar|zip|7z|dd|tee|openssl)\b[^;&|\n]*(?:\.ssh[\\/](?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?![\w.])|id_\*|\*)|\.ssh[\\/]?(?=$|[\s'";|&)])|\.aws[\\/]credentials\b|\.git-credentials\b|\.netrc\b|\.docker[\\/]config\.json\b|\.kube[\\/]config\b)/m,
    what: "reads a private key or credentials file",
  },
  {
    // `cat .env`, `head -5 .env.production` - not a template (`cat .env.local.example`).
    pattern: /\b(?:cat|less|more|head|tail|bat|base64|xxd|strings)\b([^;&|\n]*)/gm,
    accept: (m) =>
      [...(m[1] ?? "").matchAll(/(?:^|[\s\\/'"])(\.env(?:\.[\w.-]+)?)(?=$|[\s'";|&)])/g)].some(
        (f) => !ENV_TEMPLATE.test(f[1] ?? ""),
      ),
    what: "prints a .env file",
  },
];

/** Only the lines a patch adds or keeps: removed lines may carry the secret being deleted. */
function withoutRemovedLines(patch: string): string {
  return patch
    .split("\n")
    .filter((line) => !/^-(?!-- |--$)/.test(line))
    .join("\n");
}

/**
 * A patch cut into the files it touches: each file's lines with that file's path (from
 * `*** Add File:` / `*** Update File:` or `+++ b/…`), so that each is scanned as the file
 * it goes to. Lines before the first file have no path.
 */
function patchFiles(patch: string): { path: string | undefined; text: string }[] {
  const out: { path: string | undefined; text: string }[] = [{ path: undefined, text: "" }];
  for (const line of patch.split("\n")) {
    const header = /^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$/.exec(line) ?? /^\+\+\+ (?:[ab]\/)?(.+?)(?:\t.*)?\s*$/.exec(line);
    if (header) out.push({ path: header[1], text: "" });
    const last = out[out.length - 1];
    if (last) last.text += `${line}\n`;
  }
  return out.filter((f) => f.text !== "");
}

/** `p` relative to the workspace when it is inside it (test/ and compose files are judged from there). */
function workspacePath(p: string, cwd: string): string {
  const full = resolveUserPath(p, cwd);
  return isInside(full, cwd) && full !== cwd ? full.slice(cwd.length).replace(/^[\\/]+/, "") : full;
}

/**
 * Destinations of `cp`/`mv`/`install` whose sources are all .env templates
 * (`cp .env.example .env`): the usual setup step, which writes no secret.
 */
function templateCopies(command: string): string[] {
  const out: string[] = [];
  for (const segment of shellView(command).split(/[;&|\n()`]+/)) {
    const words = segment.trim().split(/\s+/).filter((w) => w !== "");
    while (words.length > 0 && /^(?:sudo|doas|env|nohup|time|command|exec|[A-Za-z_]\w*=.*)$/.test(words[0] ?? "")) {
      words.shift();
    }
    const [cmd, ...args] = words;
    if (cmd !== "cp" && cmd !== "mv" && cmd !== "install") continue;
    const operands = args.filter((a) => !a.startsWith("-"));
    const dest = operands[operands.length - 1];
    const sources = operands.slice(0, -1);
    if (dest !== undefined && sources.length > 0 && sources.every((s) => ENV_TEMPLATE.test(s))) out.push(dest);
  }
  return out;
}

/** True when `command` is one of the secret-printing commands of `c`. */
function runs(c: (typeof SECRET_COMMANDS)[number], command: string): boolean {
  if (c.unless?.test(command)) return false;
  if (!c.accept) return c.pattern.test(command);
  for (const m of command.matchAll(c.pattern)) if (c.accept(m)) return true;
  return false;
}

function check(toolName: string, toolInput: unknown, cwd: string): string | null {
  const isExec = EXEC_TOOLS.test(toolName);

  // 1. Credentials inside the call itself. A command is scanned as shell; a file tool's
  // text as the file it writes (one path), a patch file by file: test files and
  // docker-compose files let local-development and test values through.
  const written = isExec ? [] : targetPaths(toolInput);
  const onePath = written.length === 1 ? written[0] : undefined;
  for (const { where, text } of allStrings(toolInput)) {
    if (REMOVED_TEXT_KEY.test(where)) continue;
    const files = looksLikePatch(text) ? patchFiles(withoutRemovedLines(text)) : [{ path: onePath, text }];
    for (const file of files) {
      const path = file.path === undefined ? undefined : workspacePath(file.path, cwd);
      const hit = findSecrets(file.text, { shell: isExec, path })[0];
      if (hit) {
        return `secret-guard: ${where} contains a credential (${hit.kind}); keep secrets out of files and commands, use an env var or a secret store`;
      }
    }
  }

  // 2. Files that hold credentials by convention.
  const command = isExec ? commandText(toolInput) : "";
  const targets = isExec ? redirectTargets(command) : targetPaths(toolInput);
  // `cp .env.example .env` copies a template: one such destination is not a write of secrets
  // (a `>> .env` in the same command still is).
  for (const dest of isExec ? templateCopies(command) : []) {
    const at = targets.indexOf(dest);
    if (at >= 0) targets.splice(at, 1);
  }
  for (const p of targets.map((t) => resolveUserPath(t, cwd))) {
    const file = SECRET_FILES.find((f) => f.pattern.test(p) && !f.unless?.test(p));
    if (file) return `secret-guard: this call writes ${file.what} (${p}); edit credential files by hand`;
  }

  // 3. Commands that print or copy secrets.
  if (command !== "") {
    const bad = SECRET_COMMANDS.find((c) => runs(c, command));
    if (bad) return `secret-guard: the command ${bad.what}`;
  }
  return null;
}

async function main(): Promise<void> {
  const read = await readPayload();
  if (!read.ok) {
    denyTool(`secret-guard: cannot check this call: ${read.error}`);
    return;
  }
  const { payload } = read;
  const reason = check(str(payload.tool_name), payload.tool_input, workspaceOf(payload.cwd));
  if (reason !== null) denyTool(reason);
}

run(main, (err) => denyTool(`secret-guard: internal error, refusing by default: ${errorMessage(err)}`));

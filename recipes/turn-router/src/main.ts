// turn-router: UserPromptSubmit handler that picks the model for this turn.
//
// Routes come from routes.json beside scripts/ (or the file named by
// HOOKPACK_TURN_ROUTER_ROUTES). The first route whose conditions all hold
// wins and we print hookSpecificOutput.updatedModel; when nothing matches, or
// the session already uses that model, we print nothing.
//
// Routing is an optimisation, never a gate: bad stdin or a broken routes file
// exits 1 with a message on stderr (a hook failure the host logs), and the
// turn goes ahead on the current model.

import {
  compileRegex,
  errorMessage,
  fail,
  isRecord,
  loadJsonFile,
  readPayload,
  routeModel,
  run,
  str,
  turnOf,
} from "../../lib/hook.ts";

const ROUTES_ENV = "HOOKPACK_TURN_ROUTER_ROUTES";

interface Route {
  id: string;
  model: string;
  prompt: RegExp | null;
  /** Any of these matching the prompt rules the route out. */
  notPrompt: RegExp[];
  whenModel: RegExp | null;
  minChars: number | null;
  maxChars: number | null;
}

function optionalCount(value: unknown, where: string): number | null {
  if (value === undefined) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new Error(`${where} must be a whole number >= 0`);
  }
  return value;
}

/**
 * `not_prompt`: one regex (with the route's `flags`), or a list of them, each a string
 * (the route's `flags`) or `{"regex": "...", "flags": "...", "why": "..."}` with its own
 * flags (`"flags": ""` for a case-sensitive one, such as camelCase identifiers).
 */
function parseNotPrompt(raw: unknown, routeFlags: unknown, at: string): RegExp[] {
  if (raw === undefined) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((entry, j) => {
    const where = Array.isArray(raw) ? `${at}.not_prompt[${j}]` : `${at}.not_prompt`;
    if (isRecord(entry)) {
      for (const key of Object.keys(entry)) {
        if (key !== "regex" && key !== "flags" && key !== "why") {
          throw new Error(`${where} has an unknown field "${key}" (regex, flags, why)`);
        }
      }
      return compileRegex(entry.regex, entry.flags === undefined ? routeFlags : entry.flags, `${where}.regex`);
    }
    return compileRegex(entry, routeFlags, where);
  });
}

/** The fields a route may have. */
const ROUTE_FIELDS = ["id", "model", "prompt", "not_prompt", "flags", "min_chars", "max_chars", "when_model", "why", "description"];

function parseRoutes(data: unknown, source: string): Route[] {
  if (!isRecord(data) || !Array.isArray(data.routes)) {
    throw new Error(`${source}: expected an object with a "routes" list`);
  }
  return data.routes.map((raw, i): Route => {
    const at = `${source}: routes[${i}]`;
    if (!isRecord(raw)) throw new Error(`${at} must be an object`);
    const id = str(raw.id) || `#${i}`;
    // A misspelt condition (`min_char`) would drop it without a word, and route more.
    for (const key of Object.keys(raw)) {
      if (!ROUTE_FIELDS.includes(key)) {
        throw new Error(`${at} (${id}) has an unknown field "${key}" (${ROUTE_FIELDS.join(", ")})`);
      }
    }
    const model = str(raw.model).trim();
    if (!model) throw new Error(`${at} (${id}) needs a "model"`);
    const rx = (key: string): RegExp | null =>
      raw[key] === undefined ? null : compileRegex(raw[key], raw.flags, `${at} (${id}).${key}`);
    return {
      id,
      model,
      prompt: rx("prompt"),
      notPrompt: parseNotPrompt(raw.not_prompt, raw.flags, `${at} (${id})`),
      // Like hook matchers: the whole model id must match.
      whenModel: (() => {
        if (raw.when_model === undefined) return null;
        if (typeof raw.when_model !== "string") {
          throw new Error(`${at} (${id}).when_model must be a string (a regex on the model id)`);
        }
        return compileRegex(`^(?:${raw.when_model})$`, "", `${at} (${id}).when_model`);
      })(),
      minChars: optionalCount(raw.min_chars, `${at} (${id}).min_chars`),
      maxChars: optionalCount(raw.max_chars, `${at} (${id}).max_chars`),
    };
  });
}

function matches(route: Route, prompt: string, currentModel: string): boolean {
  const length = Array.from(prompt.trim()).length; // characters, not UTF-16 units
  if (route.minChars !== null && length < route.minChars) return false;
  if (route.maxChars !== null && length > route.maxChars) return false;
  if (route.whenModel && !route.whenModel.test(currentModel)) return false;
  if (route.prompt && !route.prompt.test(prompt)) return false;
  if (route.notPrompt.some((rx) => rx.test(prompt))) return false;
  return true;
}

async function main(): Promise<void> {
  const read = await readPayload();
  if (!read.ok) {
    fail(`turn-router: ${read.error}`);
    return;
  }
  const { payload } = read;
  const prompt = str(payload.prompt, turnOf(payload)?.user_text ?? "");
  if (prompt.trim() === "") return;

  const loaded = loadJsonFile(ROUTES_ENV, new URL("../routes.json", import.meta.url));
  const routes = parseRoutes(loaded.data, loaded.path);
  const currentModel = str(payload.model);

  const route = routes.find((r) => matches(r, prompt, currentModel));
  if (!route || route.model === currentModel) return;
  routeModel(route.model);
}

run(main, (err) => fail(`turn-router: ${errorMessage(err)}`));

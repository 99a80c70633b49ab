// The checks behind turn-review. Each returns a reason to reject the answer,
// or null. Kept apart from main.ts so they read as a list of rules.

import type { TurnTool } from "../../lib/hook.ts";

/** Answers that are nothing but a placeholder (after trimming). */
const WHOLE_PLACEHOLDER =
  /^[<[]?(?:todo|tbd|tba|fixme|xxx|placeholder|n\/a|null|undefined|\.{2,}|…+|-+|\?+|(?:answer|response) (?:here|goes here)|(?:answer|response):\s*(?:todo|tbd|tba|n\/a|\.{2,}|…+)|object Object|\{\{\s*[\w.]+\s*\}\}|\$\{\s*[\w.]+\s*\})[>\]]?[.!:]?$/i;

/** A short answer that is only a note to write it (`TODO: write the answer`). */
const TODO_NOTE = /^(?:todo|tbd|fixme)\s*[:-]\s*[^\n]{0,80}$/i;

/** Placeholders that give an answer away wherever they appear. */
const EMBEDDED_PLACEHOLDER: { pattern: RegExp; what: string }[] = [
  // The filler itself, not an answer about it ("Lorem ipsum is placeholder text …").
  { pattern: /\blorem ipsum dolor\b/i, what: "lorem ipsum filler" },
  // Only "insert"/"fill in": "<your token>" is a normal thing to tell a user.
  // "[insert your name here]", but not a list such as "[insert, delete]".
  { pattern: /[[<{]\s*(?:insert|fill\s+in)\s+[^\]>}\n,]{1,80}[\]>}]/i, what: "an unfilled template slot like [insert …]" },
  { pattern: /\[\s*(?:TODO|TBD|PLACEHOLDER)\s*[:\]]|<\s*(?:TODO|TBD|PLACEHOLDER)\s*>/, what: "a [TODO] placeholder" },
];

/**
 * Claims that tests pass. Kept specific ("all tests pass", "tests are
 * passing", "✅ tests") so that an answer merely mentioning tests is left alone.
 */
const TESTS_PASS_CLAIM = new RegExp(
  [
    // "tests pass", but not "this test passes a null pointer".
    String.raw`\btests?\s+(?:now\s+|all\s+|still\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)?)\b(?!\s+(?:a|an|the|its|null|nil|it|this|that)\b)`,
    String.raw`\ball\s+(?:the\s+)?tests?\s+(?:are\s+|were\s+)?(?:passing|pass(?:ed)?|green)\b`,
    String.raw`\btests?\b[^.!?\n]{0,40}\bthey\s+(?:all\s+)?(?:pass(?:ed)?|succeed(?:ed)?)\b`,
    String.raw`\btests?:\s*(?:all\s+)?(?:passing|passed|pass|green|ok)\b`,
    String.raw`\b[1-9]\d*\s+(?:tests?\s+)?passed\b`,
    String.raw`\btests?\s+(?:are|is|were)\s+(?:now\s+|all\s+|still\s+)?(?:passing|green)\b`,
    String.raw`\btest\s+suite\s+(?:now\s+)?(?:passes|passed|is\s+(?:passing|green))\b`,
    String.raw`✅\s*(?:all\s+)?tests?\b`,
    String.raw`\btests?\b[^\n]{0,20}✅`,
  ].join("|"),
  "giu",
);

/**
 * A claim preceded by one of these is not an assertion of success
 * ("make sure all tests pass", "not all tests pass", "once the tests pass").
 */
const HEDGE_BEFORE =
  /(?:\b(?:not|n't|never|no)\s+(?:all\s+|the\s+|of\s+the\s+|every\s+)*|\b(?:make\s+sure|ensure|until|unless|if|whether|once|so\s+that|verify\s+that|check\s+that|should|will|would|expect|hopefully)\b[\w\s,]{0,12})$/i;

/**
 * A sentence that reports failures ("3 passed, 1 failed") or quotes test output
 * (`'5 passed' means …`) claims no success.
 */
const REPORTS_FAILURES = /\b[1-9]\d*\s+(?:tests?\s+)?(?:failed|failing|failures?|errors?)\b/i;

/**
 * Commands that run a test suite, anywhere in a command (`docker compose run app pytest`,
 * `pnpm exec vitest`) except after a command that only mentions one (see [`MENTION_ONLY`]).
 */
const TEST_COMMAND = new RegExp(
  [
    String.raw`\bcargo\s+(?:\+\S+\s+)?(?:test|nextest)\b`,
    String.raw`\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|t)\b`,
    String.raw`\b(?:npm|pnpm|yarn)\s+run\s+[\w:-]*test[\w:-]*`,
    String.raw`\bbun\s+test\b|\bdeno\s+test\b|\bnode\s+--test\b`,
    String.raw`\bpytest\b|\bpython3?\s+-m\s+(?:pytest|unittest)\b|\btox\b|\bnox\b`,
    String.raw`\bgo\s+test\b`,
    String.raw`\b(?:jest|vitest|mocha|ava|karma|playwright\s+test|cypress\s+run)\b`,
    String.raw`\bmake\s+(?:[\w-]+\s+)*(?:test|tests|check)(?![\w-])|\bctest\b|\bjust\s+test\b`,
    String.raw`\bmvn\w*\s+(?:[\w:-]+\s+)*(?:test|verify)\b|\bgradlew?\s+(?:[\w:-]+\s+)*test\b`,
    String.raw`\b(?:rspec|phpunit|pest)\b|\brake\s+test\b|\bbundle\s+exec\s+rspec\b`,
    String.raw`\b(?:dotnet|swift|mix|zig\s+build|stack|cabal)\s+test\b|\bflutter\s+test\b`,
    String.raw`\bbats\b`,
  ].join("|"),
  "i",
);

/**
 * Commands that name a test tool without running it: installing, reading, searching,
 * printing (`pip install pytest`, `cat jest.config.js`, `echo cargo test`).
 */
const MENTION_ONLY =
  /^(?:pip3?|pipx|uv\s+(?:pip|add)|poetry\s+add|(?:npm|pnpm|yarn|bun)\s+(?:i|install|add|remove|uninstall)|cargo\s+(?:install|add)|go\s+get|gem|apt(?:-get)?|brew|dnf|yum|apk|cat|less|more|head|tail|bat|grep|egrep|rg|ag|ls|echo|printf|find|which|type|whereis|man|vi|vim|nvim|nano|emacs|code|open|git|touch|mkdir|rm|cp|mv|sed|awk|wc|file|stat)\b/i;

/** Words that run the command after them: `sudo`, `env X=1`, `npx`, `uv run`, `timeout 60`, … */
const RUNNER_PREFIX =
  /^(?:(?:sudo|env|time|nohup|command|exec|npx|pnpx|bunx|xvfb-run)\s+|(?:uv|poetry|pipenv|hatch|pdm|rye)\s+run\s+|timeout\s+\S+\s+|[A-Za-z_]\w*=\S*\s+)/;

/** `sh -c '…'` / `bash -lc "…"`: the command it runs is what counts. */
const SHELL_WRAPPER = /^(?:\S*\/)?(?:ba|z|da|k)?sh\s+(?:-[a-zA-Z]+\s+)*/;

/**
 * The start of each command in a shell line: runner prefixes, shell wrappers and quotes
 * removed, and the folder of the command word dropped (`./gradlew`, `.venv/bin/pytest`).
 */
function commandStarts(line: string): string[] {
  return line
    .replace(/["']/g, " ")
    .split(/&&|\|\||[;&|\n()`]/)
    .map((part) => {
      let c = part.trim();
      for (let m = RUNNER_PREFIX.exec(c) ?? SHELL_WRAPPER.exec(c); m !== null; m = RUNNER_PREFIX.exec(c) ?? SHELL_WRAPPER.exec(c)) {
        c = c.slice(m[0].length).trim();
      }
      return c.replace(/^\S*\//, "");
    });
}

/** Tool names whose input summary is a shell command. */
const EXEC_TOOL = /^(?:exec|start_exec_job|bash|shell|local_shell|run_command)$/i;

/** Signs in a test run's result summary that it failed. */
const TEST_FAILURE =
  /\btest result: FAILED\b|^FAIL\b|--- FAIL:|\b[1-9]\d*\s+(?:failed|failing|failures?|errors?)\b|\bFAILED\b|\bTests?:\s+[1-9]\d*\s+failed/m;

/**
 * Signs that a test command never ran a test: the tool is missing, the project does not
 * build, nothing was collected, or it exited non-zero.
 */
const NO_TESTS_RAN =
  /command not found|: not found\b|No such file or directory|missing script|could not compile|\berror\[E\d+\]|no tests ran|collected 0 items|\bno test files\b|^(?![^\n]*\bpassed\b)[^\n]*\bdeselected\b|\bexit(?:ed)?(?:\s+with)?\s+(?:code|status)?:?\s*[1-9]\d*\b/im;

/** Options with which a test command only prints or builds, running no test. */
const RUNS_NO_TEST = /(?:^|\s)(?:--version|-V|--help|-h|--no-run|--collect-only|--co|--list|--listTests|--list-tests)(?=\s|$)/;

export function checkEmpty(answer: string): string | null {
  // Zero-width and byte-order marks count as nothing.
  if (answer.replace(/[\s\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g, "") === "") return "turn-review: the answer is empty.";
  return null;
}

export function checkPlaceholder(answer: string): string | null {
  const text = answer.trim();
  if (WHOLE_PLACEHOLDER.test(text) || TODO_NOTE.test(text)) {
    return "turn-review: the answer is only a placeholder, not a response.";
  }
  for (const { pattern, what } of EMBEDDED_PLACEHOLDER) {
    if (pattern.test(text)) return `turn-review: the answer contains ${what}.`;
  }
  return null;
}

/** The first un-hedged "tests pass" claim in `answer`, or null. */
export function findTestsPassClaim(answer: string): string | null {
  for (const m of answer.matchAll(TESTS_PASS_CLAIM)) {
    const at = m.index ?? 0;
    const before = answer.slice(Math.max(0, at - 40), at);
    if (HEDGE_BEFORE.test(before)) continue;
    // Quoted output, and a sentence that reports failures, are no claim of success.
    if (/["'`“‘]\s*$/.test(before)) continue;
    const start = Math.max(answer.lastIndexOf(".", at), answer.lastIndexOf("\n", at)) + 1;
    const ends = answer.slice(at).search(/[.!?\n]/);
    const sentence = answer.slice(start, ends < 0 ? answer.length : at + ends);
    if (REPORTS_FAILURES.test(sentence)) continue;
    return m[0].trim();
  }
  return null;
}

/** Exec tools of this turn that ran a test command, oldest first. */
export function testRuns(tools: TurnTool[]): TurnTool[] {
  return tools.filter(
    (t) =>
      EXEC_TOOL.test(t.name ?? "") &&
      commandStarts(t.input_summary ?? "").some(
        (c) => !MENTION_ONLY.test(c) && TEST_COMMAND.test(c) && !RUNS_NO_TEST.test(c),
      ),
  );
}

export function checkTestsClaim(answer: string, tools: TurnTool[]): string | null {
  const claim = findTestsPassClaim(answer);
  if (claim === null) return null;
  const runs = testRuns(tools);
  if (runs.length === 0) {
    return (
      `turn-review: the answer says "${claim}", but no test command (cargo test, npm test, pytest, go test, …) ` +
      "ran in this turn. Run the tests, or don't claim they pass."
    );
  }
  const last = runs[runs.length - 1];
  if (last && (TEST_FAILURE.test(last.result_summary ?? "") || NO_TESTS_RAN.test(last.result_summary ?? ""))) {
    return `turn-review: the answer says "${claim}", but the last test run in this turn reported failures.`;
  }
  return null;
}

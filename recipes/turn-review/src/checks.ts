// The checks behind turn-review. Each returns a reason to reject the answer,
// or null. Kept apart from main.ts so they read as a list of rules.

import type { TurnTool } from "../../lib/hook.ts";

// ---------------------------------------------------------------------------
// Placeholders

/**
 * Answers that are nothing but a placeholder (after trimming): words that only mean "not
 * written yet" and template or serialisation leftovers. Values that can be a real reply to
 * a question (`null`, `undefined`, `N/A`, `?`, `-`, `None`) are not here.
 */
const WHOLE_PLACEHOLDER =
  /^[<[]?(?:todo|tbd|tba|fixme|xxx|placeholder|\.{2,}|…+|(?:answer|response) (?:here|goes here)|(?:answer|response):\s*(?:todo|tbd|tba|\.{2,}|…+)|object Object|\{\{\s*[\w.]+\s*\}\}|\$\{\s*[\w.]+\s*\})[>\]]?[.!:]?$/i;

/** A short answer that is only a note to write it (`TODO: write the answer`). */
const TODO_NOTE = /^(?:todo|tbd|fixme)\s*[:-]\s*[^\n]{0,80}$/i;

/** An unfilled template slot: "[insert your name here]", but not a list such as "[insert, delete]". */
const TEMPLATE_SLOT = /[[<{]\s*(?:insert|fill\s+in)\s+[^\]>}\n,]{1,80}[\]>}]/gi;

/**
 * Words with which an answer tells the user to fill a slot in ("Replace `[insert project
 * name]` with your project's name", "set the `<fill in your region>` slots"): the slot is
 * then an instruction, not an unfinished answer.
 */
const FILL_INSTRUCTION =
  /\b(?:replac(?:e|ing)|fill(?:\s+(?:in|out))?|substitut(?:e|ing)|swap|customi[sz]e|with\s+your|your\s+own|placeholders?|slots?|blanks?|bracket(?:s|ed))\b/i;

/** Anywhere in the answer: an instruction to fill its slots ("Fill in the bracketed parts before sending"). */
const FILL_THE_SLOTS =
  /\b(?:replace|fill\s+(?:in|out)|substitute)\b[^.!?\n]{0,60}\b(?:placeholders?|bracket(?:s|ed)|slots?|blanks?|fields?)\b/i;

/**
 * Placeholders that give an answer away wherever they appear, unless the answer only
 * names them (`mentioned`): filler quoted or spoken of ("I replaced the `lorem ipsum
 * dolor` filler"), a task list's `- [TODO] add retries (tracked in #12)`.
 */
const EMBEDDED_PLACEHOLDER: { pattern: RegExp; what: string; mentioned: (text: string, at: number, end: number) => boolean }[] = [
  // The filler itself, not an answer about it ("Lorem ipsum is placeholder text …").
  {
    pattern: /\blorem ipsum dolor\b/gi,
    what: "lorem ipsum filler",
    mentioned: (text, at, end) => {
      const quoted = /["'`“‘]/.test(text[at - 1] ?? "");
      const s = sentenceAround(text, at, end);
      return quoted || /\b(?:replac|remov|delet|filler|placeholder|dummy|sample)\w*/i.test(text.slice(s.start, s.end));
    },
  },
  {
    pattern: /\[\s*(?:TODO|TBD|PLACEHOLDER)\s*[:\]]|<\s*(?:TODO|TBD|PLACEHOLDER)\s*>/g,
    what: "a [TODO] placeholder",
    // An item of a list that opens with the tag and says what is left to do.
    mentioned: (text, at, end) =>
      /(?:^|\n)[ \t]*(?:[-*+]|\d+[.)])[ \t]+$/.test(text.slice(0, at)) && /^[ \t:]*\S[^\n]{3,}/.test(text.slice(end)),
  },
];

export function checkEmpty(answer: string): string | null {
  // Zero-width and byte-order marks count as nothing.
  if (answer.replace(/[\s\u00AD\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF]/g, "") === "") return "turn-review: the answer is empty.";
  return null;
}

/** The sentence (or line) of `text` around `[at, end)`. */
function sentenceAround(text: string, at: number, end: number): { start: number; end: number } {
  let start = 0;
  for (const m of text.slice(0, at).matchAll(/[.!?]+["')\]]*\s+|\n/g)) start = (m.index ?? 0) + m[0].length;
  const rest = text.slice(end).search(/[.!?](?=\s|$)|\n/);
  return { start, end: rest < 0 ? text.length : end + rest };
}

/** The first template slot that the answer does not tell the user to fill in, or null. */
function unfilledSlot(text: string): string | null {
  if (FILL_THE_SLOTS.test(text)) return null;
  for (const m of text.matchAll(TEMPLATE_SLOT)) {
    const at = m.index ?? 0;
    const s = sentenceAround(text, at, at + m[0].length);
    const sentence = text.slice(s.start, at) + text.slice(at + m[0].length, s.end);
    if (FILL_INSTRUCTION.test(sentence)) continue;
    return m[0];
  }
  return null;
}

export function checkPlaceholder(answer: string): string | null {
  const text = answer.trim();
  if (WHOLE_PLACEHOLDER.test(text) || TODO_NOTE.test(text)) {
    return "turn-review: the answer is only a placeholder, not a response.";
  }
  if (unfilledSlot(text) !== null) return "turn-review: the answer contains an unfilled template slot like [insert …].";
  for (const { pattern, what, mentioned } of EMBEDDED_PLACEHOLDER) {
    for (const m of text.matchAll(pattern)) {
      const at = m.index ?? 0;
      if (!mentioned(text, at, at + m[0].length)) return `turn-review: the answer contains ${what}.`;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// "Tests pass" claims

/**
 * Claims that tests pass. Kept specific ("all tests pass", "tests are
 * passing", "✅ tests") so that an answer merely mentioning tests is left alone.
 */
const TESTS_PASS_CLAIM = new RegExp(
  [
    // "tests pass", but not "this test passes a null pointer".
    String.raw`\btests?\s+(?:now\s+|all\s+|still\s+)?(?:pass(?:es|ed)?|succeed(?:s|ed)?)\b(?!\s+(?:a|an|the|its|null|nil|it|this|that)\b)`,
    // "all tests pass", "all 12 tests passing", "all the unit tests are green".
    String.raw`\ball\s+(?:the\s+)?(?:[1-9]\d*\s+)?(?:[\w-]+\s+)?tests?\s+(?:are\s+|were\s+)?(?:now\s+|still\s+)?(?:passing|pass(?:ed)?|green)\b`,
    // "12 tests passing.", "12 unit tests are green" (but not "2 tests passing the wrong fixture").
    String.raw`\b[1-9]\d*\s+(?:[\w-]+\s+)?tests?\s+(?:are\s+|were\s+)?(?:now\s+|all\s+|still\s+)?(?:green\b|passing(?=\s*(?:[.!,;:()\n✅✔]|$|(?:now|again|locally)\b)))`,
    // "Tests passing." (but not "tests passing invalid input").
    String.raw`\btests?\s+(?:all\s+|now\s+|still\s+)?passing(?=\s*(?:[.!,;:()\n✅✔]|$|(?:now|again|locally)\b))`,
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

/** Where a clause ends: punctuation, and the words that join two clauses. */
const CLAUSE_BREAK = /[,;:()\u2014\u2013]|\s-\s|\b(?:and|but|so|because|since|though|although|while|whereas|then|yet|however)\b/gi;

/**
 * In the clause of a claim, words that make it no assertion that tests passed: negation
 * ("I can't confirm they pass"), inability, requests and instructions ("check they pass",
 * "to confirm all tests pass", "please"; not "I can confirm all tests pass"), and
 * conditions or expectations ("they should pass", "once they pass").
 */
const NOT_ASSERTED =
  /\b(?:not|never|no\s+longer|cannot|unable|without|if|whether|once|until|unless|when(?:ever)?|should|would|will|may|might|could|must|shall|hope(?:fully)?|expect|assum(?:e|ing)|make\s+sure|ensure|please|let\s+me\s+know|need(?:s)?\s+to|ought)\b|n't\b|'ll\b|'d\b|(?:^\s*|\b(?:to|and|then|please)\s+)(?:verify|check|confirm|see)\b/i;

/**
 * Earlier in the sentence: the tests could not be run, or the result not checked ("I
 * couldn't run the tests (no network), so …", "I was unable to confirm …").
 */
const COULD_NOT_RUN =
  /\b(?:can(?:no|')?t|could(?:n't|\s+not)|unable\s+to|not\s+able\s+to|did(?:n't|\s+not)|have(?:n't|\s+not)|has(?:n't|\s+not)|was(?:n't|\s+not)(?:\s+able\s+to)?|no\s+way\s+to|not\s+yet|never|without)\s+(?:\w+\s+){0,2}?(?:(?:run(?:ning)?|ran|execut(?:e|ed|ing))\s+(?:(?:the|any|all|these|those|your|my)\s+)?(?:[\w-]+\s+)?(?:tests?|suite|specs?|them)\b|confirm(?:ed|ing)?|verif(?:y|ied|ying)|check(?:ed|ing)?|validat(?:e|ed|ing))/i;

/** A sentence that asks the user to do something ("Please run the tests …", "Run the tests and check …"). */
const REQUEST =
  /^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:(?:re-?)?run|make\s+sure|ensure|verify|check|confirm|try|remember|be\s+sure|don't\s+forget|let\s+me\s+know|can\s+you|could\s+you|would\s+you|you\s+(?:should|can|may|might|need|will\s+need|'ll\s+need|want))\b|\bplease\b/i;

/**
 * Before a claim: the sentence reports what somewhere else shows ("The CI log you pasted
 * shows …", "CI run #123 finished: …", "your output shows …"); not a mere mention of CI
 * ("Updated the CI config and all tests pass" is a claim).
 */
const OTHER_SOURCE_BEFORE =
  /\byou(?:'ve|\s+have)?\s+(?:pasted|shared|posted|sent|attached|provided|linked|quoted)\b|\byour\s+(?:CI|logs?|output|run|build|screenshot|paste|terminal|machine|branch)\b|\b(?:CI|pipeline|workflow|GitHub\s+Actions|Jenkins|Buildkite|CircleCI)\b[^.!?\n]*?(?:\b(?:shows?|showed|showing|says|said|reports?|reported|finished|completed|logs?|output|results?|job|run)\b|:)/i;

/** Right after a claim: where it holds, if not here ("tests pass on main but …", "passed in CI"). */
const OTHER_SOURCE_AFTER =
  /^\s*(?:only\s+)?(?:on|in|against|with)\s+(?:the\s+)?(?:CI\b|main\b|master\b|develop\b|trunk\b|upstream\b|origin\/\S+|(?:base|default|target|main|master|other)\s+branch\b|your\s+\w+)/i;

/** Later in the sentence: the same tests fail elsewhere ("… but fail on this branch", "… and fails when cold"). */
const FAILS_AFTER = /\b(?:but|and|while|whereas|yet|though)\b[^.!?\n]*\bfail(?:s|ed|ing)?\b/i;

/** Right after a claim about tests: the condition they pass under ("Tests pass only when run serially"). */
const ONLY_UNDER = /^\s*(?:only\s+(?:when|if|with|on|in)|as\s+long\s+as|provided|unless)\b/i;

/** A sentence explaining why or when one test passes ("Your test passes because …", "The new test passes when …"). */
const SINGLE_TEST_EXPLAINED =
  /^\s*(?:[\w-]+\s+){0,3}?(?:because|since|when|whenever|if|only|unless|even|as\s+long\s+as|regardless|for\s+the\s+wrong\s+reason|vacuously|trivially|accidentally|by\s+accident|although|though|but)\b/i;

/** A checklist item not ticked yet: `- [ ] All tests pass`, `☐ tests pass`. */
const UNCHECKED_ITEM = /^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[\s\]|☐)\s/;

/**
 * A sentence that reports failures ("3 passed, 1 failed") or quotes test output
 * (`'5 passed' means …`) claims no success.
 */
const REPORTS_FAILURES = /\b[1-9]\d*\s+(?:tests?\s+)?(?:failed|failing|failures?|errors?)\b/i;

/** Whether the claim `claim` found at `at` in `answer` asserts that tests passed in this turn. */
function isAssertion(answer: string, claim: string, at: number): boolean {
  const end = at + claim.length;
  const before = answer.slice(Math.max(0, at - 40), at);
  if (HEDGE_BEFORE.test(before)) return false;
  // Quoted output is no claim.
  if (/["'`“‘]\s*$/.test(before)) return false;
  const lineStart = answer.lastIndexOf("\n", at - 1) + 1;
  if (UNCHECKED_ITEM.test(answer.slice(lineStart, at))) return false;

  const s = sentenceAround(answer, at, end);
  const sentence = answer.slice(s.start, s.end);
  if (REPORTS_FAILURES.test(sentence)) return false;
  const lead = answer.slice(s.start, end);
  const after = answer.slice(end, s.end);

  // The clause the claim ends in: "so I can't confirm they pass", "check they pass".
  let clauseStart = 0;
  for (const m of lead.matchAll(CLAUSE_BREAK)) clauseStart = (m.index ?? 0) + m[0].length;
  if (NOT_ASSERTED.test(lead.slice(clauseStart))) return false;

  // The sentence up to the claim, from its last "but"/"however" on: "I couldn't run the
  // tests, so …" hedges, "I couldn't run the e2e tests, but the unit tests pass" does not.
  let contrast = 0;
  for (const m of lead.matchAll(/;|\b(?:but|however|though|although|yet)\b/gi)) contrast = (m.index ?? 0) + m[0].length;
  const sinceContrast = lead.slice(contrast);
  if (COULD_NOT_RUN.test(sinceContrast) || REQUEST.test(sinceContrast)) return false;

  if (OTHER_SOURCE_BEFORE.test(lead.slice(0, lead.length - claim.length)) || OTHER_SOURCE_AFTER.test(after)) return false;
  if (FAILS_AFTER.test(after) || ONLY_UNDER.test(after)) return false;
  // One test, with why or when it passes: an explanation, not a report of a run.
  if (/^test\s/i.test(claim) && SINGLE_TEST_EXPLAINED.test(after)) return false;
  return true;
}

/** The first "tests pass" claim in `answer` that asserts a passing run, or null. */
export function findTestsPassClaim(answer: string): string | null {
  for (const m of answer.matchAll(TESTS_PASS_CLAIM)) {
    const claim = m[0].trimEnd();
    if (isAssertion(answer, claim, m.index ?? 0)) return claim.trim();
  }
  return null;
}

// ---------------------------------------------------------------------------
// Test commands

/**
 * Test tools that run tests wherever they appear in a command (`docker compose run app
 * pytest`, `pnpm exec vitest`), except after a command that only mentions one (see
 * [`MENTION_ONLY`]).
 */
const TEST_TOOL = new RegExp(
  [
    String.raw`\bpytest\b|\bpython[\d.]*\s+-m\s+(?:pytest|unittest|nose2)\b|\btox\b|\bnox\b`,
    String.raw`\bnode\s+(?:--[\w-]+(?:=\S+)?\s+)*--test\b`,
    String.raw`\b(?:jest|vitest|mocha|ava|karma|jasmine|playwright\s+test|cypress\s+run|gotestsum|ctest)\b`,
    String.raw`\b(?:rspec|phpunit|pest|bats|prove)\b`,
  ].join("|"),
  "i",
);

/**
 * Commands that name a test tool without running it: installing, reading, searching,
 * printing (`pip install pytest`, `pnpm --filter api add -D vitest`, `cat jest.config.js`,
 * `echo cargo test`).
 */
const MENTION_ONLY =
  /^(?:pip3?|pipx|uv\s+(?:pip|add)|poetry\s+add|composer\s+(?:require|remove)|bundle\s+(?:add|install)|(?:npm|pnpm|yarn|bun)(?:\s+(?:workspace\s+\S+|-\S+(?:\s+(?!(?:i|install|add|remove|uninstall|un|rm)\b)[^\s-]\S*)?))*\s+(?:i|install|add|remove|uninstall|un|rm)|cargo\s+(?:install|add)|go\s+(?:get|install)|gem|apt(?:-get)?|brew|dnf|yum|apk|cat|less|more|head|tail|bat|grep|egrep|rg|ag|ls|echo|printf|find|which|type|whereis|man|vi|vim|nvim|nano|emacs|code|open|git|touch|mkdir|rm|cp|mv|sed|awk|wc|file|stat|chmod|chown)\b/i;

/** Words that run the command after them: `sudo`, `env X=1`, `npx`, `bundle exec`, `timeout 60`, … */
const RUNNER_PREFIX =
  /^(?:(?:sudo|env|time|nohup|command|exec|npx|pnpx|bunx|xvfb-run|cross-env|dotenv)\s+|bundle\s+exec\s+|timeout\s+\S+\s+|[A-Za-z_]\w*=\S*\s+)/;

/** Runners of a project's own scripts: `hatch run test`, `pdm run test:cov`, `poetry run pytest`. */
const SCRIPT_RUNNER = /^(?:uv|poetry|pipenv|hatch|pdm|rye)\s+run\s+/;

/** `sh -c '…'` / `bash -lc "…"` / `bash scripts/test.sh`: the command it runs is what counts. */
const SHELL_WRAPPER = /^(?:\S*\/)?(?:ba|z|da|k)?sh\s+(?:-[a-zA-Z]+\s+)*/;

/** Options with which a test command only prints or builds, running no test. */
const RUNS_NO_TEST = /(?:^|\s)(?:--version|-V|--help|-h|--no-run|--collect-only|--co|--list|--listTests|--list-tests)(?=\s|$)/;

/** Words of a script or task name that name tests: `test`, `tests`, `spec`, `specs`, `e2e`. */
const TEST_WORD = /^(?:tests?|specs?|e2e)$/i;

/** Words that make a test-named task something other than a test run: `build:test`, `lint-tests`, `gen_test_data`. */
const NOT_A_RUN_WORD = /^(?:build|lint|format|fmt|typecheck|compile|clean|gen|generate|prepare|setup|install|fixtures?|data|env)$/i;

/** A script or task name that runs tests: `test`, `tests`, `spec`, `test:unit`, `unit-tests`, `run_tests.sh`, `e2e`. */
function isTestName(name: string | undefined): boolean {
  if (name === undefined) return false;
  const words = name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .split(/[\s:_.\/+-]+/)
    .filter((w) => w !== "");
  return words.some((w) => TEST_WORD.test(w)) && !words.some((w) => NOT_A_RUN_WORD.test(w));
}

/** Options that take the next word as their value, for every tool below. */
const VALUE_OPTIONS = new Set([
  // package managers and monorepo tools
  "--filter", "-F", "-w", "--workspace", "--prefix", "-C", "--dir", "--cwd", "--scope", "--concurrency",
  // cargo
  "-p", "--package", "--manifest-path", "-Z", "--config", "--color", "-j", "--jobs", "--features",
  "--target", "--target-dir", "--profile",
  // make, maven, gradle, xcodebuild, misc
  "-f", "--file", "-pl", "--projects", "-P", "-s", "-T", "-rf", "-x", "--exclude-task", "--project-dir",
  "--tests", "-scheme", "-project", "-workspace", "-destination", "-configuration", "-sdk", "-target",
  "--settings", "-c", "--project",
]);

/** The positional words of `args` (options and their values left out), up to `--`. */
function positionals(args: string[], targets: string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? "";
    if (a === "--") break;
    if (/[<>]/.test(a)) continue;
    if (a.startsWith("-")) {
      const eq = a.indexOf("=");
      const name = eq < 0 ? a : a.slice(0, eq);
      const value = eq < 0 ? undefined : a.slice(eq + 1);
      // `nx run-many -t lint,test`: a target list counts as the tasks to run.
      if (targets.includes(name)) {
        const v = value ?? args[++i] ?? "";
        out.push(...v.split(","));
      } else if (value === undefined && (VALUE_OPTIONS.has(a) || (a === "-j" && /^\d+$/.test(args[i + 1] ?? "")))) {
        i++;
      }
      continue;
    }
    out.push(a);
  }
  return out;
}

/** The first task a tool runs is a test task: `<tool> test`, `<tool> run test:unit`. */
function firstIsTest(args: string[], skip: string[] = ["run", "run-script"]): boolean {
  const p = positionals(args);
  const first = p[0] !== undefined && skip.includes(p[0]) ? p[1] : p[0];
  return isTestName(first);
}

/** Any task a tool runs is a test task: `make lint test`, `./gradlew :api:test`. */
function anyIsTest(args: string[], isTest: (task: string) => boolean = isTestName): boolean {
  return positionals(args).some(isTest);
}

/** How each tool that runs tasks or subcommands shows that it runs tests. */
const TASK_RUNNERS: Record<string, (args: string[]) => boolean> = {};
function runner(names: string[], rule: (args: string[]) => boolean): void {
  for (const n of names) TASK_RUNNERS[n] = rule;
}

// npm test, npm t, pnpm -r test, pnpm --filter api test, npm -w api run test:unit,
// yarn workspace api test, yarn workspaces foreach -A run test, bun test.
runner(["npm", "pnpm", "yarn", "bun"], (args) => {
  const p = positionals(args);
  let i = 0;
  if (p[0] === "workspace") i = 2;
  else if (p[0] === "workspaces" && p[1] === "foreach") i = 2;
  if (p[i] === "run" || p[i] === "run-script") return isTestName(p[i + 1]);
  return p[i] === "t" || isTestName(p[i]);
});
// cargo test, cargo t, cargo +nightly test, cargo nextest run, cargo miri test, cargo llvm-cov.
runner(["cargo"], (args) => {
  const p = positionals(args).filter((w, i) => !(i === 0 && w.startsWith("+")));
  const [first, second] = p;
  if (first === "test" || first === "t" || first === "tarpaulin") return true;
  if (first === "nextest") return second === undefined || second === "run";
  if (first === "llvm-cov") return second === undefined || ["test", "nextest", "run"].includes(second);
  return (first === "miri" || first === "insta") && second === "test";
});
// deno test, deno task test.
runner(["deno"], (args) => firstIsTest(args, ["task"]));
// go test ./...
runner(["go"], (args) => positionals(args)[0] === "test");
// rails test / bin/rails test / rails t.
runner(["rails"], (args) => positionals(args)[0] === "t" || firstIsTest(args));
// Tools whose subcommand says what they do: dotnet test, hatch test, bazel test, php artisan
// test, python manage.py test, composer run test, lerna run test, just test, …
runner(
  [
    "dotnet", "swift", "mix", "stack", "cabal", "flutter", "dart", "gleam", "lein", "crystal",
    "hatch", "bazel", "bazelisk", "buck", "buck2", "pants", "meson", "artisan", "manage.py",
    "django-admin", "setup.py", "composer", "melos", "lerna", "rush", "rushx", "just", "task", "mage",
    "invoke", "inv",
  ],
  (args) => firstIsTest(args),
);
// zig test x.zig, zig build test.
runner(["zig"], (args) => firstIsTest(args, ["build"]));
// make test, make -C api check, ninja test, ant test.
runner(["make", "gmake", "ninja", "ant"], (args) => anyIsTest(args, (t) => t === "check" || isTestName(t)));
// mvn test / verify / surefire:test, ./mvnw -pl api test.
runner(["mvn", "mvnw"], (args) => anyIsTest(args, (t) => t === "verify" || isTestName(t)));
// ./gradlew test, :api:test, check, connectedAndroidTest, testDebugUnitTest (not `-x test`).
runner(["gradle", "gradlew"], (args) =>
  anyIsTest(args, (t) => /^(?:check|tests?|[a-z]\w*Test)$/.test(t.split(":").pop() ?? "")),
);
// sbt test, sbt clean test, sbt "testOnly *Foo", sbt +test, sbt it:test.
runner(["sbt"], (args) => anyIsTest(args, (t) => /^\+?(?:[\w-]+[:/])*(?:test|testOnly|testQuick)$/.test(t)));
// rake test, rake spec, rake test:units.
runner(["rake", "mill"], (args) => anyIsTest(args));
// turbo test, turbo run lint test.
runner(["turbo"], (args) => anyIsTest(args.filter((a) => a !== "run")));
// nx test api, nx run api:test, nx affected:test, nx run-many -t lint,test.
runner(["nx"], (args) => {
  const p = positionals(args, ["-t", "--target", "--targets"]);
  const [first, second] = p;
  if (first === "run") return isTestName(second?.split(":")[1]);
  if (first === "run-many" || first === "affected") return p.slice(1).some((t) => isTestName(t));
  if (first?.includes(":")) return isTestName(first.split(":").slice(1).join(":"));
  return isTestName(first);
});
// xcodebuild -scheme App test.
runner(["xcodebuild"], (args) => positionals(args).some((t) => t === "test" || t === "test-without-building"));

/** Tools named by an everyday word (`task`, `just`, `stack`), which count only as the command word. */
const WORD_TOOLS = new Set(["task", "just", "inv", "invoke", "mage", "rush", "stack", "ant", "mix", "mill", "swift", "crystal"]);

/** Interpreters that run a script named after them: `python manage.py test`, `php artisan test`, `node scripts/test.js`. */
const INTERPRETER = /^(?:python[\d.]*|py|php|ruby|node|perl|pwsh|powershell|tsx|ts-node)$/;

/** Script files run by name: `./scripts/test.sh`, `bin/test`, `run_tests.py`. */
const SCRIPT_FILE = /\/|\.(?:sh|bash|zsh|py|rb|js|mjs|cjs|ts|pl|ps1|cmd|bat)$/;

function baseName(path: string): string {
  return path.replace(/^.*\//, "");
}

/** `words[at]` is a tool, interpreter or script that runs tests with the words after it. */
function runsTestsAt(words: string[], at: number): boolean {
  const word = words[at] ?? "";
  const base = baseName(word);
  const args = words.slice(at + 1);
  const rule = TASK_RUNNERS[base];
  if (rule !== undefined) return (at === 0 || !WORD_TOOLS.has(base)) && rule(args);
  if (INTERPRETER.test(base)) {
    const p = positionals(args.filter((a) => a !== "-m"));
    if (args.includes("-c") || args.includes("-e") || p[0] === undefined) return false;
    const script = baseName(p[0]);
    if (base.startsWith("py") && args.includes("-m")) return script === "django" && p[1] === "test";
    const scriptRule = TASK_RUNNERS[script];
    if (scriptRule !== undefined) return scriptRule(args.slice(args.indexOf(p[0]) + 1));
    return SCRIPT_FILE.test(p[0]) && isTestName(script);
  }
  // A script the line runs by its path (only as the command word: `chmod +x scripts/test.sh` runs nothing).
  return at === 0 && SCRIPT_FILE.test(word) && isTestName(base);
}

/** Whether one command (runner prefixes already removed) runs tests. */
function runsTests(command: string, viaScriptRunner: boolean): boolean {
  if (command === "" || MENTION_ONLY.test(command.replace(/^\S*\//, "")) || RUNS_NO_TEST.test(command)) return false;
  if (TEST_TOOL.test(command)) return true;
  const words = command.split(/\s+/);
  // `hatch run test`, `pdm run test:cov`: a project script named for tests.
  if (viaScriptRunner && isTestName(words[0])) return true;
  return words.some((_, i) => runsTestsAt(words, i));
}

/** Each command of a shell line, runner prefixes and shell wrappers removed. */
function commands(line: string): { command: string; viaScriptRunner: boolean }[] {
  return line
    .replace(/["']/g, " ")
    .split(/&&|\|\||[;&|\n()`]/)
    .map((part) => {
      let c = part.trim();
      let viaScriptRunner = false;
      for (;;) {
        const m = RUNNER_PREFIX.exec(c) ?? SCRIPT_RUNNER.exec(c) ?? SHELL_WRAPPER.exec(c);
        if (m === null) break;
        if (SCRIPT_RUNNER.test(m[0])) viaScriptRunner = true;
        c = c.slice(m[0].length).trim();
      }
      return { command: c, viaScriptRunner };
    });
}

/** Tool names whose input summary is a shell command. */
const EXEC_TOOL = /^(?:exec|start_exec_job|bash|shell|local_shell|run_command)$/i;

/** Exec tools of this turn that ran a test command, oldest first. */
export function testRuns(tools: TurnTool[]): TurnTool[] {
  return tools.filter(
    (t) =>
      EXEC_TOOL.test(t.name ?? "") &&
      commands(t.input_summary ?? "").some(({ command, viaScriptRunner }) => runsTests(command, viaScriptRunner)),
  );
}

// ---------------------------------------------------------------------------
// The result of a test run

/** An exit status the summary states on a line of its own (`Exit code: 1`, `[exit status 2]`). */
const EXIT_LINE =
  /^\s*\[?(?:process\s+|command\s+)?exit(?:ed)?(?:\s+with)?(?:\s+(?:code|status))?\s*[:=]?\s*(-?\d+)\]?\.?\s*$/im;

/**
 * Lines of one passing test case or of logged output, whose text (a test named "returns
 * exit code 2", a logged "ENOENT: no such file or directory") says nothing about the run.
 */
const CASE_OR_LOG_LINE =
  /^\s*(?:[✓✔√]|PASS\b|ok\s+\d+\b|\[(?:PASS|OK)\]|console\.(?:log|info|warn|error|debug)\b)|(?:\s|\.\.\.)(?:ok|PASSED|PASS)(?:\s+\[\s*\d+%\])?\s*(?:\(\d[\d.]*\s*m?s\))?\s*$/;

/** A run's summary that reports failing tests. */
const FAILURE_SUMMARY =
  /\btest result: FAILED\b|^FAIL\b|--- FAIL:|^not ok\b|^#\s*fail\s+[1-9]|\b[1-9]\d*\s+(?:tests?\s+)?(?:failed|failing|fails)\b|\bFAILED\b|\bBUILD FAILURE\b|\b(?:Failures|Errors):\s*[1-9]|\bTests?:\s+[1-9]\d*\s+failed|^error: could not compile|^error\[E\d+\]/m;

/**
 * A count of errors or failures on a summary line (pytest's "1 passed, 2 errors in 0.3s",
 * minitest's "42 runs, 80 assertions, 1 failures, 0 errors", rspec's "3 examples, 1 failure").
 */
const ERRORS_SUMMARY = /^(?=.*\b(?:passed|failed|failures?|tests?|runs?|examples?|assertions?)\b|.*\bin\s+[\d.]+\s*m?s\b|\s*=+).*\b[1-9]\d*\s+(?:errors?|failures?)\b/im;

/** A run's summary that reports tests that ran and passed. */
const PASS_SUMMARY =
  /\btest result: ok\b|\b[1-9]\d*\s+(?:tests?\s+)?(?:passed|passing)\b|\b[1-9]\d*\s+tests?\s+pass(?:ed)?\b|^Ran\s+[1-9]\d*\s+tests?\b[\s\S]*^OK\b|\b[1-9]\d*\s+(?:runs|tests),\s+\d+\s+assertions,\s+0\s+failures|\b[1-9]\d*\s+examples?,\s+0\s+failures|^ok\s+\S+\s+(?:\(cached\)|[\d.]+s)|^PASS$|^#\s*pass\s+[1-9]|\bAll tests passed\b|\bTests run:\s*[1-9]\d*,\s*Failures:\s*0,\s*Errors:\s*0|\bPassed!|\bTasks:\s+(\d+)\s+successful,\s+\1\s+total|\bBUILD SUCCESSFUL\b/m;

/**
 * Without a summary, signs that a test command never ran a test: the tool is missing, the
 * project does not build, nothing was collected, or it exited non-zero.
 */
const NO_TESTS_RAN =
  /command not found|: not found\b|No such file or directory|missing script|could not compile|\berror\[E\d+\]|no tests ran|collected 0 items|\bno test files\b|^(?![^\n]*\bpassed\b)[^\n]*\bdeselected\b|\bexit(?:ed)?(?:\s+with)?\s+(?:code|status)?:?\s*[1-9]\d*\b/im;

/**
 * Whether a test run's result summary shows that it failed or ran no test. An exit status
 * the summary states decides; then the run's own summary ("Tests: 42 passed", "2 failed");
 * only without either do error-looking words ("command not found", "exit code 1") count.
 */
export function runFailed(summary: string): boolean {
  const exit = EXIT_LINE.exec(summary);
  if (exit !== null && Number(exit[1]) !== 0) return true;
  const text = summary
    .split("\n")
    .filter((line) => !CASE_OR_LOG_LINE.test(line))
    .join("\n");
  if (FAILURE_SUMMARY.test(text) || ERRORS_SUMMARY.test(text)) return true;
  if (exit !== null || PASS_SUMMARY.test(text)) return false;
  return NO_TESTS_RAN.test(text);
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
  if (last && runFailed(last.result_summary ?? "")) {
    return `turn-review: the answer says "${claim}", but the last test run in this turn reported failures.`;
  }
  return null;
}

// turn-review: Stop handler that rejects answers that should not reach the user.
//
// Rejects (hookSpecificOutput.decision = "reject", CLI 0.13.1+) when the final
// answer is
//   - empty or whitespace,
//   - a placeholder ("TODO", "...", lorem ipsum, "[insert …]"),
//   - a claim that tests pass while no test command ran in this turn (or the
//     last test run reported failures).
// Otherwise prints nothing. The host shows the reason instead of the answer.
//
// The answer is `last_assistant_message` when the host sends it (Claude
// Code / Codex shape), else `turn.assistant_text`. When neither is a string
// (null or missing) there is nothing to review and we stay silent: a reject
// must rest on what the answer says, not on a field the host left out.

import { errorMessage, fail, readPayload, rejectStop, run, turnOf } from "../../lib/hook.ts";
import { checkEmpty, checkPlaceholder, checkTestsClaim } from "./checks.ts";

async function main(): Promise<void> {
  const read = await readPayload();
  if (!read.ok) {
    fail(`turn-review: ${read.error}`);
    return;
  }
  const { payload } = read;
  const turn = turnOf(payload);
  const answer =
    typeof payload.last_assistant_message === "string"
      ? payload.last_assistant_message
      : turn?.assistant_text ?? null;
  if (answer === null) return;

  const reason =
    checkEmpty(answer) ?? checkPlaceholder(answer) ?? checkTestsClaim(answer, turn?.tools ?? []);
  if (reason !== null) rejectStop(reason);
}

run(main, (err) => fail(`turn-review: ${errorMessage(err)}`));

/**
 * Deterministic checkpoint validation (DESIGN.md "Summarize, validate,
 * commit"): the same checks for every summarizer — extractive, language
 * model, hook or imported — so a summary is judged by what it keeps, not by
 * who wrote it.
 *
 * Checks, each reported by name in the {@link ValidationReport}:
 *
 * - `required-sections`: goal, progress and next steps are non-empty
 *   (structured content), or the text has Goal / Progress / Next Steps
 *   headings (text-only checkpoints, e.g. imported Pi summaries);
 * - `not-error-text`: the summary is not an error or refusal message;
 * - `latest-user-ask`: the latest user message of the covered range is
 *   represented (at least {@link MIN_ASK_WORD_OVERLAP} of its content words
 *   occur in the summary);
 * - `not-degenerate`: not empty, one line repeated, a stub or a tool call
 *   (`DegenerateSummary`, shared case C17);
 * - `identifier-retention`: at least `minIdentifierRetention` of the covered
 *   range's *critical* identifiers (`CriticalIdentifiers`: those in the
 *   user's words that are still live — said in the recent turns or acted on
 *   by a later call —, modified artifacts, unresolved errors — judged from
 *   the transcript, not from what the summarizer listed) are kept; the ratio
 *   is `identifierRetention`;
 * - `asks-from-user`: every pending ask shares at least
 *   {@link MIN_ASK_WORD_OVERLAP} of its words with something the user said
 *   (covered range, kept tail or previous checkpoint), so `/compact` instructions or a
 *   summarizer's own plan never become an ask (shared case C18);
 * - `no-replayed-side-effects`: no pending ask, in-progress item or next step
 *   asks again for a side effect the covered range shows as done
 *   (`ReplayedSideEffects`, shared case C16);
 * - `no-invented-files`: every file in `filesRead` / `filesModified` occurs in
 *   the covered range (with its sub-agents' calls), the kept tail or the previous checkpoint;
 * - `no-invented-actions`: every path, hash or command named in
 *   `progress.done` occurs in the covered range (with its sub-agents' calls),
 *   the kept tail or the previous checkpoint;
 * - `smaller-than-replaced`: the checkpoint has fewer tokens than the
 *   messages (and previous checkpoint) it replaces;
 * - `next-request-fits`: the request assembled with it fits the budget.
 *
 * @since 0.1.0
 */
import type { ValidationReport } from "./Checkpoint.ts"
import * as MessageParts from "./MessageParts.ts"
import * as UserSpeech from "./UserSpeech.ts"
import type { ValidationInput } from "./ValidationChecks.ts"
import * as Checks from "./ValidationChecks.ts"

export {
  checkpointText,
  contentText,
  DEFAULT_MIN_IDENTIFIER_RETENTION,
  looksLikeErrorText,
  MIN_ASK_WORD_OVERLAP,
  type ValidationInput
} from "./ValidationChecks.ts"

/**
 * Plain text of a message (`MessageParts.plainText`): text parts, tool-call
 * names and every string of their arguments, tool-result outputs.
 *
 * @category getters
 */
export const messageText = MessageParts.plainText

/**
 * The text of a user-role message (text parts only); see
 * `UserSpeech.spokenText` for the user's own words.
 *
 * @category getters
 */
export const userText = UserSpeech.userText

/**
 * The latest message of a range in the user's own words and whether it is
 * unresolved (`UserSpeech.latestUserAsk`).
 *
 * @category analysis
 */
export const latestUserAsk = UserSpeech.latestUserAsk

/**
 * Content words of a text used to recognise it in a summary
 * (`UserSpeech.contentWords`).
 *
 * @category analysis
 */
export const contentWords = UserSpeech.contentWords

/**
 * Share (0..1) of `ask`'s content words found in `summary`
 * (`UserSpeech.askOverlap`).
 *
 * @category analysis
 */
export const askOverlap = UserSpeech.askOverlap

/**
 * Runs every check. Never fails: a failing check is reported, with what is
 * missing in `missing` (prefixed `identifier:`, `section:`, `ask:`, `file:`,
 * `action:`, `foreign-ask:`, `degenerate:`, `replayed:`).
 *
 * @category validation
 */
export const validate = (input: ValidationInput): ValidationReport => {
  const { outcomes, identifierRetention } = Checks.run(input)
  const checks = outcomes.map((item) => item.check)
  return {
    ok: checks.every((item) => item.ok),
    checks,
    identifierRetention,
    missing: outcomes.flatMap((item) => item.missing)
  }
}

/**
 * Names of the failed checks of a report.
 *
 * @category getters
 */
export const failedChecks = (report: ValidationReport): Array<string> =>
  report.checks.filter((item) => !item.ok).map((item) => item.name)

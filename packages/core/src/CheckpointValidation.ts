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
 *   user's words, modified artifacts, unresolved errors — judged from the
 *   transcript, not from what the summarizer listed) are kept; the ratio is
 *   `identifierRetention`;
 * - `asks-from-user`: every pending ask shares at least
 *   {@link MIN_ASK_WORD_OVERLAP} of its words with something the user said
 *   (covered range, kept tail or previous checkpoint), so `/compact` instructions or a
 *   summarizer's own plan never become an ask (shared case C18);
 * - `no-replayed-side-effects`: no pending ask, in-progress item or next step
 *   asks again for a side effect the covered range shows as done
 *   (`ReplayedSideEffects`, shared case C16);
 * - `no-invented-files`: every file in `filesRead` / `filesModified` occurs in
 *   the covered range, the kept tail or the previous checkpoint;
 * - `no-invented-actions`: every path, hash or command named in
 *   `progress.done` occurs in the covered range, the kept tail or the previous checkpoint;
 * - `smaller-than-replaced`: the checkpoint has fewer tokens than the
 *   messages (and previous checkpoint) it replaces;
 * - `next-request-fits`: the request assembled with it fits the budget.
 *
 * @since 0.1.0
 */
import type { Checkpoint, CheckpointContent, ValidationReport } from "./Checkpoint.ts"
import * as CriticalIdentifiers from "./CriticalIdentifiers.ts"
import * as DegenerateSummary from "./DegenerateSummary.ts"
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import * as JsonSafety from "./JsonSafety.ts"
import type { ContentPart, Message } from "./Message.ts"
import * as ReplayedSideEffects from "./ReplayedSideEffects.ts"
import * as SubstringIndex from "./SubstringIndex.ts"
import * as UserSpeech from "./UserSpeech.ts"

/**
 * Default minimum share of salient identifiers a summary keeps. Chosen so an
 * LLM summary that lists the identifiers section may paraphrase a few long
 * error lines, while one that drops the identifiers section fails.
 *
 * @category constants
 */
export const DEFAULT_MIN_IDENTIFIER_RETENTION = 0.8

/**
 * Share of the latest user ask's content words (≥ 4 letters, first 40) that
 * must occur in the summary for the ask to count as represented.
 *
 * @category constants
 */
export const MIN_ASK_WORD_OVERLAP = 0.5

/**
 * What to validate a checkpoint against. Token counts are in tokens of the
 * target model's tokenizer.
 *
 * @category models
 */
export interface ValidationInput {
  readonly checkpoint: Checkpoint
  /** The newly covered messages (including a split turn's prefix). */
  readonly covered: ReadonlyArray<Message>
  /** The checkpoint this one replaces, if any. */
  readonly previous?: Checkpoint | undefined
  /** The messages kept verbatim after the checkpoint: what they show is in the transcript, not invented. */
  readonly kept?: ReadonlyArray<Message> | undefined
  /** Tokens of the checkpoint as rendered into the request. */
  readonly checkpointTokens: number
  /** Tokens of what it replaces: the covered messages plus the previous checkpoint. */
  readonly replacedTokens: number
  /** Tokens of the next request assembled with this checkpoint, and the input budget. */
  readonly requestTokens?: number | undefined
  readonly budgetTokens?: number | undefined
  readonly minIdentifierRetention?: number | undefined
}

/**
 * All the text of a checkpoint: every section of `content` (one line per
 * item) and `text`.
 *
 * @category getters
 */
export const checkpointText = (checkpoint: Pick<Checkpoint, "content" | "text">): string => {
  const lines: Array<string> = []
  const content = checkpoint.content
  if (content) lines.push(contentText(content))
  if (checkpoint.text) lines.push(checkpoint.text)
  return lines.join("\n")
}

/**
 * The sections of structured content as plain lines.
 *
 * @category getters
 */
export const contentText = (content: CheckpointContent): string =>
  [
    content.goal,
    ...content.constraints,
    ...content.progress.done,
    ...content.progress.inProgress,
    ...content.progress.blocked,
    ...content.decisions.map((decision) => `${decision.decision} — ${decision.rationale}`),
    ...content.nextSteps,
    ...content.criticalContext,
    ...content.pendingUserAsks,
    ...IdentifierExtraction.flatten(content.identifiers).map((item) => item.value),
    ...content.filesRead,
    ...content.filesModified,
    ...(content.failedApproaches ?? []),
    ...(content.artifacts ?? []).map((artifact) => artifact.value)
  ].join("\n")

/**
 * Plain text of a message: text parts, tool-call names and every string of
 * their arguments (unescaped, so commands match verbatim),
 * tool-result outputs. Reasoning is left out.
 *
 * @category getters
 */
export const messageText = (message: Message): string => {
  if (typeof message.content === "string") return message.content
  const out: Array<string> = []
  for (const part of message.content as ReadonlyArray<ContentPart>) {
    if (part.type === "text") out.push(part.text)
    else if (part.type === "tool-call") {
      out.push(part.toolName)
      for (const leaf of JsonSafety.stringLeaves(part.input)) out.push(leaf)
    } else if (part.type === "tool-result") {
      const output = part.output
      out.push(
        output.type === "text" || output.type === "error-text"
          ? output.value
          : output.type === "content"
            ? output.value.map((item) => (item.type === "text" ? item.text : "")).join("\n")
            : JSON.stringify(output)
      )
    }
  }
  return out.join("\n")
}

/**
 * The text of a user-role message (text parts only); see
 * `UserSpeech.spokenText` for the user's own words.
 *
 * @category getters
 */
export const userText = UserSpeech.userText

/**
 * The latest message of a range in the user's own words
 * (`UserSpeech.spokenText`: shell output, slash commands, pasted logs and
 * observations are skipped — shared case C21) and whether it is unresolved:
 * no assistant text answer (a message with text and no tool call) follows it
 * inside the range.
 *
 * @category analysis
 */
export const latestUserAsk = (
  messages: ReadonlyArray<Message>
): { readonly index: number; readonly text: string; readonly unresolved: boolean } | undefined => {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!
    const text = UserSpeech.spokenText(message).trim()
    if (message.role !== "user" || text.length === 0) continue
    const answered = messages.slice(index + 1).some((later) => {
      if (later.role !== "assistant") return false
      if (typeof later.content === "string") return later.content.trim().length > 0
      return (
        later.content.some((part) => part.type === "text" && part.text.trim().length > 0) &&
        !later.content.some((part) => part.type === "tool-call")
      )
    })
    return { index, text, unresolved: !answered }
  }
  return undefined
}

/**
 * Content words of a text used to recognise it in a summary: lower-cased
 * words of at least 4 letters, first 40 distinct.
 *
 * @category analysis
 */
export const contentWords = (text: string): Array<string> => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]{4,}/gu) ?? []
  return [...new Set(words)].slice(0, 40)
}

/**
 * Share (0..1) of `ask`'s content words found in `summary`; 1 when the ask
 * has none.
 *
 * @category analysis
 */
export const askOverlap = (ask: string, summary: string): number => {
  const words = contentWords(ask)
  if (words.length === 0) return 1
  const haystack = summary.toLowerCase()
  return words.filter((word) => haystack.includes(word)).length / words.length
}

const ERROR_TEXT_RE =
  /^\s*(?:error\b|\[?error\]?:|exception\b|failed to\b|request failed|i(?:'m| am) sorry|sorry,|i cannot\b|i can't\b|as an ai\b|unable to (?:summar|generate|comply)|rate limit|internal server error|overloaded)/i

/**
 * Whether a text reads as an error or refusal rather than a summary.
 *
 * @category guards
 */
export const looksLikeErrorText = (text: string): boolean => ERROR_TEXT_RE.test(text.trim())

const hasHeading = (text: string, names: ReadonlyArray<string>): boolean =>
  names.some((name) => new RegExp(`^#{1,6}\\s*(?:\\d+\\.\\s*)?${name}`, "im").test(text))

const check = (name: string, ok: boolean, detail: string) => ({ name, ok, detail })

/** A trailing parenthesised note ("(in progress; …)", "(e12)") is the summarizer's, not the quoted words. */
const withoutNote = (text: string): string => text.replace(/\s*\([^()]*\)\s*$/, "")

/** Share of a quoted text's words the user said for it to count as the user's own words, not the summarizer's. */
const QUOTE_OVERLAP = 0.9

/**
 * Runs every check. Never fails: a failing check is reported, with what is
 * missing in `missing` (prefixed `identifier:`, `section:`, `ask:`, `file:`,
 * `action:`, `foreign-ask:`, `degenerate:`, `replayed:`).
 *
 * @category validation
 */
export const validate = (input: ValidationInput): ValidationReport => {
  const { checkpoint } = input
  const summary = checkpointText(checkpoint)
  const content = checkpoint.content
  const checks: Array<ValidationReport["checks"][number]> = []
  const missing: Array<string> = []

  // required-sections
  const missingSections: Array<string> = []
  if (content) {
    if (content.goal.trim().length === 0) missingSections.push("goal")
    const progress = content.progress
    if (progress.done.length + progress.inProgress.length + progress.blocked.length === 0)
      missingSections.push("progress")
    if (content.nextSteps.length === 0) missingSections.push("nextSteps")
  } else {
    const text = checkpoint.text ?? ""
    if (text.trim().length === 0) missingSections.push("text")
    else {
      if (!hasHeading(text, ["goal", "objective", "task"])) missingSections.push("goal")
      if (!hasHeading(text, ["progress", "completed", "done", "status"])) missingSections.push("progress")
      if (!hasHeading(text, ["next steps", "next", "todo", "remaining"])) missingSections.push("nextSteps")
    }
  }
  missing.push(...missingSections.map((section) => `section:${section}`))
  checks.push(
    check(
      "required-sections",
      missingSections.length === 0,
      missingSections.length === 0 ? "goal, progress and next steps present" : `empty: ${missingSections.join(", ")}`
    )
  )

  // not-error-text: a goal quoting the user's own words ("I cannot get the old log back …") is not a refusal
  const said = [
    ...[...input.covered, ...(input.kept ?? [])].map(UserSpeech.spokenText),
    input.previous ? checkpointText(input.previous) : ""
  ].join("\n")
  const head = content ? content.goal : (checkpoint.text ?? "")
  const errorText =
    summary.trim().length === 0 ||
    (looksLikeErrorText(head) && !(content && askOverlap(withoutNote(head).slice(0, 600), said) >= QUOTE_OVERLAP))
  checks.push(check("not-error-text", !errorText, errorText ? "summary is empty or reads as an error" : "ok"))

  // not-degenerate
  const degenerate = DegenerateSummary.of(checkpoint)
  if (degenerate) missing.push(`degenerate:${degenerate}`)
  checks.push(check("not-degenerate", degenerate === undefined, degenerate ?? "ok"))

  // latest-user-ask
  const ask = latestUserAsk(input.covered)
  if (ask === undefined) checks.push(check("latest-user-ask", true, "no user message in the covered range"))
  else {
    const overlap = askOverlap(ask.text.slice(0, 600), summary)
    const ok = overlap >= MIN_ASK_WORD_OVERLAP
    if (!ok) missing.push(`ask:${ask.text.slice(0, 200)}`)
    checks.push(
      check(
        "latest-user-ask",
        ok,
        `${ask.unresolved ? "unresolved" : "answered"} latest ask, ${Math.round(overlap * 100)}% of its words kept`
      )
    )
  }

  // identifier-retention (critical identifiers only)
  const wanted = CriticalIdentifiers.of(input.covered)
  const total = IdentifierExtraction.size(wanted)
  const lost = CriticalIdentifiers.missingFrom(wanted, summary)
  const lostCount = IdentifierExtraction.size(lost)
  const identifierRetention = total === 0 ? 1 : (total - lostCount) / total
  const minRetention = input.minIdentifierRetention ?? DEFAULT_MIN_IDENTIFIER_RETENTION
  for (const item of IdentifierExtraction.flatten(lost)) missing.push(`identifier:${item.value}`)
  checks.push(
    check(
      "identifier-retention",
      identifierRetention >= minRetention,
      `${total - lostCount}/${total} critical identifiers kept (${(identifierRetention * 100).toFixed(1)}%, minimum ${Math.round(minRetention * 100)}%)`
    )
  )

  // asks-from-user
  if (content && content.pendingUserAsks.length > 0) {
    const foreign = content.pendingUserAsks.filter(
      (item) => askOverlap(withoutNote(item).slice(0, 600), said) < MIN_ASK_WORD_OVERLAP
    )
    missing.push(...foreign.map((item) => `foreign-ask:${item.slice(0, 200)}`))
    checks.push(
      check(
        "asks-from-user",
        foreign.length === 0,
        foreign.length === 0
          ? "every pending ask is the user's"
          : `not asked by the user: ${foreign.map((item) => item.slice(0, 80)).join("; ")}`
      )
    )
  }

  // no-replayed-side-effects (C16)
  const replayed = content ? ReplayedSideEffects.of(content, input.covered) : []
  missing.push(...replayed.map((item) => `replayed:${item.slice(0, 200)}`))
  const replayDetail = `listed as still to do, but done in the transcript: ${replayed.map((item) => item.slice(0, 80)).join("; ")}`
  checks.push(check("no-replayed-side-effects", replayed.length === 0, replayed.length === 0 ? "ok" : replayDetail))

  // no-invented-files / no-invented-actions
  const source = [
    ...[...input.covered, ...(input.kept ?? [])].map(messageText),
    input.previous ? checkpointText(input.previous) : ""
  ].join("\n")
  const inventedFiles = content
    ? SubstringIndex.absentFrom([...new Set([...content.filesRead, ...content.filesModified])], source)
    : []
  missing.push(...inventedFiles.map((file) => `file:${file}`))
  checks.push(
    check(
      "no-invented-files",
      inventedFiles.length === 0,
      inventedFiles.length === 0
        ? "every listed file occurs in the transcript"
        : `not in transcript: ${inventedFiles.join(", ")}`
    )
  )
  const doneIds = content
    ? IdentifierExtraction.fromText(content.progress.done.join("\n"), { maxErrors: 0 })
    : undefined
  const inventedActions = doneIds
    ? SubstringIndex.absentFrom([...doneIds.paths, ...doneIds.hashes, ...doneIds.commands], source)
    : []
  missing.push(...inventedActions.map((value) => `action:${value}`))
  checks.push(
    check(
      "no-invented-actions",
      inventedActions.length === 0,
      inventedActions.length === 0
        ? "every path, hash and command in progress.done occurs in the transcript"
        : `not in transcript: ${inventedActions.join(", ")}`
    )
  )

  // smaller-than-replaced
  const smaller = input.checkpointTokens < input.replacedTokens
  checks.push(
    check("smaller-than-replaced", smaller, `${input.checkpointTokens} tokens replace ${input.replacedTokens} tokens`)
  )

  // next-request-fits
  if (input.requestTokens !== undefined && input.budgetTokens !== undefined) {
    checks.push(
      check(
        "next-request-fits",
        input.requestTokens <= input.budgetTokens,
        `next request ${input.requestTokens} of ${input.budgetTokens} tokens`
      )
    )
  }

  return { ok: checks.every((item) => item.ok), checks, identifierRetention, missing }
}

/**
 * Names of the failed checks of a report.
 *
 * @category getters
 */
export const failedChecks = (report: ValidationReport): Array<string> =>
  report.checks.filter((item) => !item.ok).map((item) => item.name)

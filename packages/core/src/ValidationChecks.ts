/**
 * The checks of `CheckpointValidation`, one function each, over the facts
 * they share (the summary's text, the transcript's texts). See
 * `CheckpointValidation` for what each check asks; this module is its
 * implementation, re-exported there.
 *
 * @since 0.2.0
 */
import type { Checkpoint, CheckpointContent, ValidationReport } from "./Checkpoint.ts"
import * as CriticalIdentifiers from "./CriticalIdentifiers.ts"
import * as DegenerateSummary from "./DegenerateSummary.ts"
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import type { Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as ReplayedSideEffects from "./ReplayedSideEffects.ts"
import * as SubstringIndex from "./SubstringIndex.ts"
import * as UserSpeech from "./UserSpeech.ts"

const { askOverlap, latestUserAsk } = UserSpeech
const messageText = MessageParts.plainText

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
  /**
   * The covered range's sub-agent messages (`SubAgentWork`: the calls and results of the sub-agents its calls
   * started, kept beside the main conversation): real calls, so what they name is not invented — never the
   * user's words nor an ask.
   */
  readonly subAgentMessages?: ReadonlyArray<Message> | undefined
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

type Check = ValidationReport["checks"][number]

/**
 * One check's verdict and what it found missing (see
 * `CheckpointValidation.validate` for the prefixes).
 *
 * @category models
 */
export interface Outcome {
  readonly check: Check
  readonly missing: ReadonlyArray<string>
}

/**
 * What several checks read: the summary's text, its structured content, and the transcript's texts. */
export interface Facts {
  readonly input: ValidationInput
  readonly checkpoint: Checkpoint
  readonly summary: string
  readonly content: CheckpointContent | undefined
  /** The user's own words in the covered range and kept tail, and the previous checkpoint. */
  readonly said: string
  /**
   * All the text of the covered range (its sub-agents' messages too) and kept tail, and the previous
   * checkpoint, joined by newlines — as pieces read in order (each iteration
   * renders them again): joined, it was one more copy of the whole
   * transcript's text per validation (≈ 100 MiB on a 100 MB session, issue
   * #13 req 6).
   */
  readonly source: Iterable<string>
}

const outcome = (name: string, ok: boolean, detail: string, missing: ReadonlyArray<string> = []): Outcome => ({
  check: check(name, ok, detail),
  missing
})

const sectionsMissing = (checkpoint: Checkpoint): Array<string> => {
  const content = checkpoint.content
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
  return missingSections
}

const requiredSections = ({ checkpoint }: Facts): Outcome => {
  const sections = sectionsMissing(checkpoint)
  return outcome(
    "required-sections",
    sections.length === 0,
    sections.length === 0 ? "goal, progress and next steps present" : `empty: ${sections.join(", ")}`,
    sections.map((section) => `section:${section}`)
  )
}

/** A goal quoting the user's own words ("I cannot get the old log back …") is not a refusal. */
const notErrorText = ({ checkpoint, content, said, summary }: Facts): Outcome => {
  const head = content ? content.goal : (checkpoint.text ?? "")
  const errorText =
    summary.trim().length === 0 ||
    (looksLikeErrorText(head) && !(content && askOverlap(withoutNote(head).slice(0, 600), said) >= QUOTE_OVERLAP))
  return outcome("not-error-text", !errorText, errorText ? "summary is empty or reads as an error" : "ok")
}

const notDegenerate = ({ checkpoint }: Facts): Outcome => {
  const degenerate = DegenerateSummary.of(checkpoint)
  return outcome(
    "not-degenerate",
    degenerate === undefined,
    degenerate ?? "ok",
    degenerate ? [`degenerate:${degenerate}`] : []
  )
}

const latestAskKept = ({ input, summary }: Facts): Outcome => {
  const ask = latestUserAsk(input.covered)
  if (ask === undefined) return outcome("latest-user-ask", true, "no user message in the covered range")
  // The pinned latest message follows the checkpoint verbatim: the summary need not repeat it (issue #11 req 3).
  if (carriedByKept(ask.text, input.kept))
    return outcome(
      "latest-user-ask",
      true,
      `${ask.unresolved ? "unresolved" : "answered"} latest ask kept verbatim after the checkpoint`
    )
  const overlap = askOverlap(ask.text.slice(0, 600), summary)
  const ok = overlap >= MIN_ASK_WORD_OVERLAP
  return outcome(
    "latest-user-ask",
    ok,
    `${ask.unresolved ? "unresolved" : "answered"} latest ask, ${Math.round(overlap * 100)}% of its words kept`,
    ok ? [] : [`ask:${ask.text.slice(0, 200)}`]
  )
}

/** Whether a user message kept verbatim after the checkpoint says `text` (the pinned latest ask). */
const carriedByKept = (text: string, kept: ReadonlyArray<Message> | undefined): boolean => {
  const wanted = text.trim()
  return wanted.length > 0 && (kept ?? []).some((message) => UserSpeech.spokenText(message).trim() === wanted)
}

/**
 * Critical identifiers only; also gives the retention ratio the report
 * carries. An identifier the kept messages carry verbatim is kept: the
 * request holds it, and the summary need not repeat it (issue #11 req 3).
 */
const identifierRetention = ({ input, summary }: Facts): Outcome & { readonly ratio: number } => {
  const wanted = CriticalIdentifiers.of(input.covered)
  const total = IdentifierExtraction.size(wanted)
  const keptText = (input.kept ?? []).map(UserSpeech.spokenText).join("\n")
  const lost = CriticalIdentifiers.missingFrom(wanted, keptText ? `${summary}\n${keptText}` : summary)
  const lostCount = IdentifierExtraction.size(lost)
  const ratio = total === 0 ? 1 : (total - lostCount) / total
  const minRetention = input.minIdentifierRetention ?? DEFAULT_MIN_IDENTIFIER_RETENTION
  return {
    ...outcome(
      "identifier-retention",
      ratio >= minRetention,
      `${total - lostCount}/${total} critical identifiers kept (${(ratio * 100).toFixed(1)}%, minimum ${Math.round(minRetention * 100)}%)`,
      IdentifierExtraction.flatten(lost).map((item) => `identifier:${item.value}`)
    ),
    ratio
  }
}

/** Reported only when the checkpoint lists pending asks. */
const asksFromUser = ({ content, said }: Facts): Outcome | undefined => {
  if (!content || content.pendingUserAsks.length === 0) return undefined
  const foreign = content.pendingUserAsks.filter(
    (item) => askOverlap(withoutNote(item).slice(0, 600), said) < MIN_ASK_WORD_OVERLAP
  )
  return outcome(
    "asks-from-user",
    foreign.length === 0,
    foreign.length === 0
      ? "every pending ask is the user's"
      : `not asked by the user: ${foreign.map((item) => item.slice(0, 80)).join("; ")}`,
    foreign.map((item) => `foreign-ask:${item.slice(0, 200)}`)
  )
}

/** C16. */
const noReplayedSideEffects = ({ content, input }: Facts): Outcome => {
  const replayed = content ? ReplayedSideEffects.of(content, input.covered) : []
  const detail = `listed as still to do, but done in the transcript: ${replayed.map((item) => item.slice(0, 80)).join("; ")}`
  return outcome(
    "no-replayed-side-effects",
    replayed.length === 0,
    replayed.length === 0 ? "ok" : detail,
    replayed.map((item) => `replayed:${item.slice(0, 200)}`)
  )
}

const noInventedFiles = ({ content, source }: Facts): Outcome => {
  const invented = content
    ? SubstringIndex.absentFrom([...new Set([...content.filesRead, ...content.filesModified])], source)
    : []
  return outcome(
    "no-invented-files",
    invented.length === 0,
    invented.length === 0 ? "every listed file occurs in the transcript" : `not in transcript: ${invented.join(", ")}`,
    invented.map((file) => `file:${file}`)
  )
}

const noInventedActions = ({ content, source }: Facts): Outcome => {
  const doneIds = content
    ? IdentifierExtraction.fromText(content.progress.done.join("\n"), { maxErrors: 0 })
    : undefined
  const invented = doneIds
    ? SubstringIndex.absentFrom([...doneIds.paths, ...doneIds.hashes, ...doneIds.commands], source)
    : []
  return outcome(
    "no-invented-actions",
    invented.length === 0,
    invented.length === 0
      ? "every path, hash and command in progress.done occurs in the transcript"
      : `not in transcript: ${invented.join(", ")}`,
    invented.map((value) => `action:${value}`)
  )
}

const smallerThanReplaced = ({ input }: Facts): Outcome =>
  outcome(
    "smaller-than-replaced",
    input.checkpointTokens < input.replacedTokens,
    `${input.checkpointTokens} tokens replace ${input.replacedTokens} tokens`
  )

/** Reported only when the request's tokens and the budget are given. */
const nextRequestFits = ({ input }: Facts): Outcome | undefined =>
  input.requestTokens !== undefined && input.budgetTokens !== undefined
    ? outcome(
        "next-request-fits",
        input.requestTokens <= input.budgetTokens,
        `next request ${input.requestTokens} of ${input.budgetTokens} tokens`
      )
    : undefined

/**
 * The facts every check reads, computed once per validation.
 *
 * @category constructors
 */
export const facts = (input: ValidationInput): Facts => {
  const transcript = [...input.covered, ...(input.kept ?? [])]
  const previous = input.previous ? checkpointText(input.previous) : ""
  return {
    input,
    checkpoint: input.checkpoint,
    summary: checkpointText(input.checkpoint),
    content: input.checkpoint.content,
    said: [...transcript.map(UserSpeech.spokenText), previous].join("\n"),
    source: {
      *[Symbol.iterator]() {
        for (const message of [...transcript, ...(input.subAgentMessages ?? [])]) {
          yield messageText(message)
          yield "\n"
        }
        yield previous
      }
    }
  }
}

/**
 * Every check, in report order, with the identifier retention ratio. A
 * check that does not apply (no pending asks; no request tokens or budget)
 * is left out.
 *
 * @category validation
 */
export const run = (
  input: ValidationInput
): { readonly outcomes: ReadonlyArray<Outcome>; readonly identifierRetention: number } => {
  const known = facts(input)
  const identifiers = identifierRetention(known)
  const outcomes = [
    requiredSections(known),
    notErrorText(known),
    notDegenerate(known),
    latestAskKept(known),
    identifiers,
    asksFromUser(known),
    noReplayedSideEffects(known),
    noInventedFiles(known),
    noInventedActions(known),
    smallerThanReplaced(known),
    nextRequestFits(known)
  ].filter((item): item is Outcome => item !== undefined)
  return { outcomes, identifierRetention: identifiers.ratio }
}

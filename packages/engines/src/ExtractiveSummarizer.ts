/**
 * The offline default summarizer: deterministic, no model call. It fills the
 * handoff (DESIGN.md "Checkpoints are handoffs") from the transcript's
 * structure and is held to the same validator as a language-model summary.
 * The concepts live in `checkpoint/`: who is speaking (`UserSpeech` in
 * core), what the tools did (`ToolActions`), the artifact ledger (`Ledger`),
 * the extraction (`Extract`), iterative updates (`Update`), the budget fill
 * (`Fit`) and imported Markdown (`Markdown`).
 *
 * @since 0.1.0
 */
import { type Checkpoint, IdentifierExtraction, UserSpeech } from "@context-engine/core"
import { Effect, Layer } from "effect"
import { extract } from "./checkpoint/Extract.ts"
import { DEFAULT_CHECKPOINT_TOKENS, fitToBudget } from "./checkpoint/Fit.ts"
import * as KeyIdentifiers from "./checkpoint/KeyIdentifiers.ts"
import { contentFromMarkdown, previousContent } from "./checkpoint/Markdown.ts"
import { keptPointer } from "./checkpoint/Text.ts"
import { mergeContent } from "./checkpoint/Update.ts"
import { type SummarizeRequest, type Summarizer, SummarizerService } from "./Summarizer.ts"

export { contentFromMarkdown, DEFAULT_CHECKPOINT_TOKENS, extract, fitToBudget, previousContent }

/**
 * Version of the extraction rules, recorded in `summarizer.promptVersion`.
 *
 * @category constants
 */
export const PROMPT_VERSION = "extractive-v2"

const applyRepair = (
  content: Checkpoint.CheckpointContent,
  request: SummarizeRequest
): Checkpoint.CheckpointContent => {
  if (!request.repair) return content
  // Restore only what a failed check asked for: identifiers lost within the allowed share are not a failure,
  // and adding them back would only make a checkpoint that failed `next-request-fits` larger.
  const failed = new Set(request.repair.failedChecks)
  const identifiers = new Set(
    failed.has("identifier-retention")
      ? request.repair.missing.filter((m) => m.startsWith("identifier:")).map((m) => m.slice(11))
      : []
  )
  const asks = failed.has("latest-user-ask")
    ? request.repair.missing.filter((m) => m.startsWith("ask:")).map((m) => m.slice(4))
    : []
  if (identifiers.size === 0 && asks.length === 0) return content
  const source = IdentifierExtraction.fromMessages(
    [...request.covered, ...(request.turnPrefix ?? [])].map((item) => item.message)
  )
  const restored = IdentifierExtraction.empty() as { -readonly [K in IdentifierExtraction.Category]: Array<string> }
  for (const { category, value } of IdentifierExtraction.flatten(source))
    if (identifiers.has(value)) restored[category].push(value)
  return {
    ...content,
    identifiers: IdentifierExtraction.merge(content.identifiers, restored),
    pendingUserAsks: [...content.pendingUserAsks, ...asks]
  }
}

/**
 * A range without a task-setting request keeps the previous goal; with no
 * previous goal either, the latest thing the user said (or, with no user
 * words at all, a plain continuation) stands in, so the section is never empty.
 */
const withGoal = (content: Checkpoint.CheckpointContent, request: SummarizeRequest): Checkpoint.CheckpointContent => {
  if (content.goal.trim().length > 0) return content
  const items = [...request.covered, ...(request.turnPrefix ?? [])]
  const said = [...items].reverse().find((item) => UserSpeech.isSpeech(item.message))
  const kept = said !== undefined && (request.kept ?? []).some((item) => item.entryId === said.entryId)
  const goal = kept
    ? `The latest user message this checkpoint covers (${keptPointer(said.entryId, UserSpeech.spokenText(said.message))}) — no task-setting request in this range.`
    : said
      ? `${UserSpeech.spokenText(said.message).replace(/\s+/g, " ").trim().slice(0, 400)} (${said.entryId}; the latest user message this checkpoint covers — no task-setting request in this range)`
      : "Continue the work recorded below (no user request in the summarized range)."
  return { ...content, goal }
}

/**
 * Options of the extractive summarizer.
 *
 * @category models
 */
export interface Options {
  /** Largest checkpoint in tokens, below the request's own cap; default {@link DEFAULT_CHECKPOINT_TOKENS}. */
  readonly maxCheckpointTokens?: number | undefined
}

/**
 * Summarizes a request: extracts the covered range and the turn prefix,
 * merges onto the previous checkpoint's content (newer wins), fits the
 * budget by priority (the smaller of `request.maxTokens` and
 * `maxCheckpointTokens`) and applies a repair request (restores the named
 * identifiers and asks).
 *
 * @category constructors
 */
export const summarizeSync = (request: SummarizeRequest, options: Options = {}): Checkpoint.CheckpointContent => {
  const fresh = extract(
    request.covered,
    request.turnPrefix ?? [],
    new Set((request.kept ?? []).map((item) => item.entryId))
  )
  const before = previousContent(request.previous)
  const combined = withGoal(before ? mergeContent(before, fresh) : fresh, request)
  // The code identifiers the kept messages still show are not repeated (issue #11 requirement 3).
  const merged: Checkpoint.CheckpointContent = {
    ...combined,
    keyIdentifiers: KeyIdentifiers.notShownIn(
      combined.keyIdentifiers ?? [],
      (request.kept ?? []).map((item) => item.message)
    )
  }
  // The budget covers the whole checkpoint message: the header, the meta line and tokenizer differences take
  // up to a tenth of it, so the sections get the rest.
  const maxTokens = Math.min(
    request.maxTokens,
    Math.floor((options.maxCheckpointTokens ?? DEFAULT_CHECKPOINT_TOKENS) * 0.9)
  )
  return applyRepair(fitToBudget(merged, maxTokens, request.countTokens), request)
}

/**
 * The extractive summarizer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ExtractiveSummarizer } from "@context-engine/engines"
 *
 * const { content } = await Effect.runPromise(
 *   ExtractiveSummarizer.make().summarize({
 *     covered: [{ entryId: "e1", message: { role: "user", content: "Fix src/parser.ts" } }],
 *     maxTokens: 2_000,
 *     countTokens: (text) => Math.ceil(text.length / 4)
 *   })
 * )
 * content.pendingUserAsks // ["Fix src/parser.ts"]
 * ```
 *
 * @category constructors
 */
export const make = (options: Options = {}): Summarizer => ({
  name: "extractive",
  summarize: (request) =>
    Effect.sync(() => ({
      content: summarizeSync(request, options),
      summarizer: { kind: "extractive", promptVersion: PROMPT_VERSION }
    }))
})

/**
 * Provides the extractive summarizer as the {@link SummarizerService}.
 *
 * @category layers
 */
export const layer: Layer.Layer<SummarizerService> = Layer.succeed(SummarizerService, make())

/**
 * A {@link Summarizer.Summarizer} backed by any AI SDK `LanguageModel`:
 * structured output against the checkpoint schema. The prompt is a handoff
 * to another model (`HandoffPrompt`: the same handoff schema the offline
 * summarizer fills, newer wins, finished work dropped, the transcript
 * wrapped and treated as data, user-role data labelled as what it is,
 * `/compact` instructions in their own block, a repair naming what the
 * validator found missing). The model is given the previous checkpoint and
 * only the newly covered range serialized as labelled text (Pi's
 * `serializeConversation`; thinking omitted; tool results truncated to
 * {@link TOOL_RESULT_MAX_CHARS}).
 *
 * - **Staged (chunked) summarization**: when the serialized range exceeds
 *   {@link STAGE_SHARE_OF_WINDOW} of the summarizer's own context window, it
 *   is split at message boundaries and summarized chunk by chunk, each stage
 *   updating the previous stage's result.
 * - **Split turn**: the turn prefix goes with the last stage in its own
 *   `<turn-prefix>` block (its ask becomes the pending ask).
 * - **The model's answer is returned as it is**: nothing is appended to it.
 *   The engine re-attaches the cumulative artifact ledger (computed data;
 *   `SummaryLadder`), and the validator judges the answer by the same rules
 *   as the offline summary.
 * - Every failure (network, timeout, abort, unparsable output, a missing
 *   API key) is a typed {@link Errors.SummarizerFailed}; the call never
 *   hangs past `timeoutMs`.
 *
 * @since 0.1.0
 */
import { Checkpoint, DegenerateSummary, Errors, type Message } from "@context-engine/core"
import type { Summarizer } from "@context-engine/engines"
import { generateText, jsonSchema, type LanguageModel, NoObjectGeneratedError, Output } from "ai"
import { Effect, Schema } from "effect"
import * as HandoffPrompt from "./HandoffPrompt.ts"

/**
 * Prompt version recorded in `summarizer.promptVersion`.
 *
 * @category constants
 */
export const PROMPT_VERSION = "lm-handoff-v2"

/**
 * Longest tool result in the serialized range, in characters (see
 * `HandoffPrompt.TOOL_RESULT_MAX_CHARS`).
 *
 * @category constants
 */
export const TOOL_RESULT_MAX_CHARS = HandoffPrompt.TOOL_RESULT_MAX_CHARS

/**
 * Share of the summarizer's context window one stage may fill with the
 * serialized range (the rest is prompt, previous checkpoint and output) —
 * own choice.
 *
 * @category constants
 */
export const STAGE_SHARE_OF_WINDOW = 0.5

/**
 * Default request timeout in milliseconds.
 *
 * @category constants
 */
export const DEFAULT_TIMEOUT_MS = 120_000

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  readonly model: LanguageModel
  /** Name in reports; default the model id. */
  readonly name?: string
  /** The summarizer model's context window in tokens (for staging). Default 128,000. */
  readonly contextWindowTokens?: number
  /** Tool results longer than this many characters are truncated. Default {@link TOOL_RESULT_MAX_CHARS}. */
  readonly toolResultMaxChars?: number
  /** Per-request timeout in milliseconds. Default {@link DEFAULT_TIMEOUT_MS}. */
  readonly timeoutMs?: number
}

const strings = { type: "array", items: { type: "string" } } as const

/**
 * JSON Schema of the checkpoint content the model must produce.
 *
 * @category schemas
 */
export const contentJsonSchema = {
  type: "object",
  additionalProperties: false,
  required: [
    "goal",
    "constraints",
    "progress",
    "decisions",
    "nextSteps",
    "criticalContext",
    "pendingUserAsks",
    "identifiers",
    "filesRead",
    "filesModified",
    "failedApproaches"
  ],
  properties: {
    goal: { type: "string" },
    constraints: strings,
    progress: {
      type: "object",
      additionalProperties: false,
      required: ["done", "inProgress", "blocked"],
      properties: { done: strings, inProgress: strings, blocked: strings }
    },
    decisions: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["decision", "rationale"],
        properties: { decision: { type: "string" }, rationale: { type: "string" } }
      }
    },
    nextSteps: strings,
    criticalContext: strings,
    pendingUserAsks: strings,
    identifiers: {
      type: "object",
      additionalProperties: false,
      required: ["paths", "ids", "hashes", "urls", "ports", "commands", "errors"],
      properties: {
        paths: strings,
        ids: strings,
        hashes: strings,
        urls: strings,
        ports: strings,
        commands: strings,
        errors: strings
      }
    },
    filesRead: strings,
    filesModified: strings,
    failedApproaches: strings
  }
} as const

const decodeContent = Schema.decodeUnknownSync(Checkpoint.CheckpointContent)

/**
 * Serializes messages as labelled text (see `HandoffPrompt.serialize`).
 *
 * @category serialization
 */
export const serialize = HandoffPrompt.serialize

/**
 * Splits items into stages whose serialized text fits `maxTokens` each
 * (a single message larger than that is its own stage).
 *
 * @category serialization
 */
export const stages = <A extends { readonly message: Message.Message }>(
  items: ReadonlyArray<A>,
  maxTokens: number,
  countTokens: (text: string) => number,
  toolResultMaxChars: number = TOOL_RESULT_MAX_CHARS
): Array<Array<A>> => {
  const out: Array<Array<A>> = []
  let current: Array<A> = []
  let tokens = 0
  for (const item of items) {
    const size = countTokens(serialize([item.message], toolResultMaxChars))
    if (current.length > 0 && tokens + size > maxTokens) {
      out.push(current)
      current = []
      tokens = 0
    }
    current.push(item)
    tokens += size
  }
  if (current.length > 0) out.push(current)
  return out
}

const degenerateError = (reason: DegenerateSummary.Reason, cause: unknown): Error =>
  new Error(`the model's answer is not a summary (${reason}): ${DEGENERATE_WORDS[reason]}`, { cause })

/**
 * Rethrows a failed structured answer with why it is not a summary (shared
 * case C17): empty or whitespace only, one line repeated, a stub; other
 * errors unchanged.
 */
const notASummary = (error: unknown): never => {
  if (NoObjectGeneratedError.isInstance(error)) {
    const degenerate = error.finishReason === "tool-calls" ? "tool-call" : DegenerateSummary.ofText(error.text ?? "")
    if (degenerate !== undefined) throw degenerateError(degenerate, error)
  }
  throw error
}

/** The structured output of an answer; an answer that is a tool call instead of a summary says so (C17). */
const outputOf = (result: {
  readonly output: unknown
  readonly text: string
  readonly toolCalls: ReadonlyArray<unknown>
}): unknown => {
  try {
    return result.output
  } catch (error) {
    if (result.toolCalls.length > 0) throw degenerateError("tool-call", error)
    return notASummary(error)
  }
}

const DEGENERATE_WORDS: Record<DegenerateSummary.Reason, string> = {
  empty: "empty or whitespace only",
  repetitive: "one line repeated",
  stub: "a placeholder text",
  "tool-call": "a tool call instead of a summary"
}

const errorMessage = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error)

/**
 * The prompts of one summarize request, in call order: one per stage of the
 * covered range (each updating the previous stage's answer, which replaces
 * `{{previous}}`), the split turn's prefix with the last stage.
 *
 * @category constructors
 */
export const prompts = (
  request: Summarizer.SummarizeRequest,
  options: { readonly stageTokens: number; readonly toolResultMaxChars?: number | undefined }
): Array<(previous: string) => string> => {
  const maxChars = options.toolResultMaxChars ?? TOOL_RESULT_MAX_CHARS
  const chunks = stages(request.covered, options.stageTokens, request.countTokens, maxChars)
  const prefix = request.turnPrefix ?? []
  const all = chunks.length > 0 ? chunks : [[]]
  const repair = request.repair
    ? HandoffPrompt.repairText(
        { failedChecks: request.repair.failedChecks, details: request.repair.details, missing: request.repair.missing },
        request.repair.attempt
      )
    : undefined
  // The pinned latest user message lies in the covered range but is kept verbatim after the checkpoint.
  const keptIds = new Set((request.kept ?? []).map((item) => item.entryId))
  const keptOf = (items: ReadonlyArray<Summarizer.CoveredItem>) =>
    new Set(items.filter((item) => keptIds.has(item.entryId)).map((item) => item.message))
  return all.map((chunk, index) => (previous: string) => {
    const last = index === all.length - 1
    const kept = keptOf(last ? [...chunk, ...prefix] : chunk)
    return HandoffPrompt.prompt({
      transcript: serialize(
        chunk.map((item) => item.message),
        maxChars,
        kept
      ),
      previous,
      turnPrefix:
        last && prefix.length > 0
          ? serialize(
              prefix.map((item) => item.message),
              maxChars,
              kept
            )
          : undefined,
      hasKept: kept.size > 0,
      instructions: request.instructions,
      repair,
      maxTokens: request.maxTokens
    })
  })
}

/**
 * Creates the summarizer.
 *
 * @example
 * ```ts
 * import { anthropic } from "@ai-sdk/anthropic"
 * import { TieredSummaryEngine } from "@context-engine/engines"
 * import { LanguageModelSummarizer } from "@context-engine/provider-adapters"
 *
 * const engine = TieredSummaryEngine.makeAsync({
 *   summarizer: LanguageModelSummarizer.make({ model: anthropic("claude-haiku-4-5"), contextWindowTokens: 200_000 })
 * })
 * ```
 *
 * @category constructors
 */
export const make = (options: Options): Summarizer.Summarizer => {
  const modelId = typeof options.model === "string" ? options.model : options.model.modelId
  const name = options.name ?? modelId
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const windowTokens = options.contextWindowTokens ?? 128_000

  const call = async (prompt: string, maxOutputTokens: number, signal: AbortSignal | undefined) => {
    const timeout = AbortSignal.timeout(timeoutMs)
    // AI SDK 7: structured output is `generateText` with `output: Output.object(...)` (`generateObject` is deprecated).
    const result = await generateText({
      model: options.model,
      output: Output.object({ schema: jsonSchema<Checkpoint.CheckpointContent>(contentJsonSchema as never) }),
      instructions: HandoffPrompt.SYSTEM_PROMPT,
      prompt,
      maxOutputTokens,
      maxRetries: 1,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout
    }).catch(notASummary)
    return {
      content: decodeContent(outputOf(result)),
      inputTokens: result.usage.inputTokens ?? 0,
      outputTokens: result.usage.outputTokens ?? 0
    }
  }

  return {
    name,
    summarize: (request) =>
      Effect.tryPromise({
        try: async () => {
          let previous = HandoffPrompt.previousText(request.previous)
          let content: Checkpoint.CheckpointContent | undefined
          let inputTokens = 0
          let outputTokens = 0
          const stageTokens = Math.max(1_000, Math.floor(windowTokens * STAGE_SHARE_OF_WINDOW))
          for (const prompt of prompts(request, { stageTokens, toolResultMaxChars: options.toolResultMaxChars })) {
            const answer = await call(prompt(previous), request.maxTokens, request.signal)
            content = answer.content
            previous = HandoffPrompt.sectionsText(answer.content)
            inputTokens += answer.inputTokens
            outputTokens += answer.outputTokens
          }
          if (content === undefined) throw new Error("nothing to summarize")
          return {
            content,
            summarizer: { kind: "language-model" as const, model: modelId, promptVersion: PROMPT_VERSION },
            usage: { inputTokens, outputTokens }
          }
        },
        catch: (error) => new Errors.SummarizerFailed({ summarizer: name, reason: errorMessage(error), cause: error })
      })
  }
}

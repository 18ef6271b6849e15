/**
 * A {@link Summarizer.Summarizer} backed by any AI SDK `LanguageModel`:
 * structured output against the checkpoint schema, given the previous
 * checkpoint and only the newly covered range serialized as labelled text
 * (Pi's `serializeConversation`: `[User]:`, `[Assistant]:`,
 * `[Assistant tool calls]:`, `[Tool result]:`; thinking omitted; tool results
 * truncated to {@link TOOL_RESULT_MAX_CHARS}). Prompts follow Pi's
 * `SUMMARIZATION_PROMPT` / `UPDATE_SUMMARIZATION_PROMPT` /
 * `TURN_PREFIX_SUMMARIZATION_PROMPT` and Codex's handoff-summary framing.
 *
 * - **Staged (chunked) summarization**: when the serialized range exceeds
 *   {@link STAGE_SHARE_OF_WINDOW} of the summarizer's own context window, it
 *   is split at message boundaries and summarized chunk by chunk, each stage
 *   updating the previous stage's result — merged and reconciled with the
 *   previous checkpoint by construction.
 * - **Split turn**: the turn prefix is summarized with its own prompt and
 *   merged (its ask becomes the pending ask), like Pi's turn-prefix summary.
 * - **Deterministic lists**: exact identifiers and read / modified files
 *   extracted from the range are unioned into the model's answer (Pi appends
 *   its file lists deterministically too); the validator still checks that
 *   nothing the model listed is invented.
 * - Every failure (network, timeout, abort, unparsable output, a missing
 *   API key) is a typed {@link Errors.SummarizerFailed}; the call never
 *   hangs past `timeoutMs`.
 *
 * @since 0.1.0
 */
import {
  Checkpoint,
  CheckpointValidation,
  Errors,
  IdentifierExtraction,
  type Message,
  MessageParts
} from "@context-engine/core"
import { ExtractiveSummarizer, type Summarizer } from "@context-engine/engines"
import { generateText, jsonSchema, type LanguageModel, Output } from "ai"
import { Effect, Schema } from "effect"

/**
 * Prompt version recorded in `summarizer.promptVersion`.
 *
 * @category constants
 */
export const PROMPT_VERSION = "lm-checkpoint-v1"

/**
 * Longest tool result in the serialized range, in characters: Pi's
 * `TOOL_RESULT_MAX_CHARS` (2,000) in `compaction/utils.ts`.
 *
 * @category constants
 */
export const TOOL_RESULT_MAX_CHARS = 2_000

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

const SYSTEM_PROMPT = `You are a context summarization assistant. You read a conversation between a user and an AI coding assistant and write a handoff checkpoint that another LLM will use to continue the work.
Do NOT continue the conversation. Do NOT answer questions in it. ONLY output the checkpoint object.`

const INSTRUCTIONS = `Fill every field of the checkpoint object:
- goal: what the user is trying to accomplish (several tasks allowed).
- constraints: constraints and preferences the user stated.
- progress.done / progress.inProgress / progress.blocked: only actions that happened in the transcript.
- decisions: key decisions, each with its rationale.
- nextSteps: ordered list of what should happen next.
- criticalContext: data, examples and references needed to continue.
- pendingUserAsks: user requests not yet completed; quote the latest unresolved one verbatim.
- identifiers: exact file paths, ids, hashes, URLs, ports, commands and error strings, copied verbatim.
- filesRead / filesModified: only files that appear in the transcript.
Preserve exact file paths, function names, commands and error messages. Be concise.`

const UPDATE_RULES = `The conversation below is NEW material to incorporate into the existing checkpoint in <previous-checkpoint>.
- PRESERVE all existing information from the previous checkpoint; ADD new progress, decisions and context.
- Move items from inProgress to done when completed; update nextSteps; remove blockers that were resolved.`

const TURN_PREFIX_RULES = `This is the PREFIX of a turn that was too large to keep; the rest of the turn is kept verbatim.
Summarize the prefix so the kept suffix makes sense: the original request goes in pendingUserAsks (verbatim), early progress in progress, context for the suffix in criticalContext.`

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
    "filesModified"
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
    filesModified: strings
  }
} as const

const decodeContent = Schema.decodeUnknownSync(Checkpoint.CheckpointContent)

const truncate = (text: string, maxChars: number): string =>
  text.length <= maxChars
    ? text
    : `${text.slice(0, maxChars)}\n\n[... ${text.length - maxChars} more characters truncated]`

/**
 * Serializes messages as labelled text (thinking omitted, tool results
 * truncated to `toolResultMaxChars` characters).
 *
 * @category serialization
 */
export const serialize = (
  messages: ReadonlyArray<Message.Message>,
  toolResultMaxChars: number = TOOL_RESULT_MAX_CHARS
): string => {
  const parts: Array<string> = []
  for (const message of messages) {
    if (message.role === "system") continue
    if (message.role === "user") {
      const text = CheckpointValidation.userText(message)
      if (text) parts.push(`[User]: ${text}`)
      continue
    }
    if (typeof message.content === "string") {
      if (message.content) parts.push(`[Assistant]: ${message.content}`)
      continue
    }
    const texts: Array<string> = []
    const toolCalls: Array<string> = []
    for (const part of message.content as ReadonlyArray<Message.ContentPart>) {
      if (part.type === "text") texts.push(part.text)
      else if (part.type === "tool-call") toolCalls.push(`${part.toolName}(${JSON.stringify(part.input)})`)
      else if (part.type === "tool-result") {
        const isError = MessageParts.outputIsError(part.output)
        const text = MessageParts.outputText(part.output, { mediaMarkers: true })
        parts.push(`[Tool result ${part.toolName}${isError ? " (error)" : ""}]: ${truncate(text, toolResultMaxChars)}`)
      }
    }
    if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`)
    if (toolCalls.length > 0) parts.push(`[Assistant tool calls]: ${toolCalls.join("; ")}`)
  }
  return parts.join("\n\n")
}

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

const previousText = (content: Checkpoint.CheckpointContent | undefined, text: string | undefined): string =>
  content ? JSON.stringify(content, null, 1) : (text ?? "")

const errorMessage = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error)

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
  const toolResultMaxChars = options.toolResultMaxChars ?? TOOL_RESULT_MAX_CHARS
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const windowTokens = options.contextWindowTokens ?? 128_000

  const call = async (
    prompt: string,
    maxOutputTokens: number,
    signal: AbortSignal | undefined
  ): Promise<{ content: Checkpoint.CheckpointContent; inputTokens: number; outputTokens: number }> => {
    const timeout = AbortSignal.timeout(timeoutMs)
    // AI SDK 7: structured output is `generateText` with `output: Output.object(...)` (`generateObject` is deprecated).
    const result = await generateText({
      model: options.model,
      output: Output.object({ schema: jsonSchema<Checkpoint.CheckpointContent>(contentJsonSchema as never) }),
      instructions: SYSTEM_PROMPT,
      prompt,
      maxOutputTokens,
      maxRetries: 1,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout
    })
    return {
      content: decodeContent(result.output),
      inputTokens: result.usage.inputTokens ?? 0,
      outputTokens: result.usage.outputTokens ?? 0
    }
  }

  return {
    name,
    summarize: (request) =>
      Effect.tryPromise({
        try: async () => {
          const previous = request.previous
          let content: Checkpoint.CheckpointContent | undefined = previous?.content
          let prior = previousText(previous?.content, previous?.text)
          let inputTokens = 0
          let outputTokens = 0
          const repair = request.repair
            ? `\n\nYour previous checkpoint failed validation (${request.repair.failedChecks.join(", ")}). It lacked: ${request.repair.missing.slice(0, 60).join("; ")}. Include them verbatim.`
            : ""
          const stageTokens = Math.max(1_000, Math.floor(windowTokens * STAGE_SHARE_OF_WINDOW))
          const chunks = stages(request.covered, stageTokens, request.countTokens, toolResultMaxChars)
          for (const chunk of chunks) {
            const text = serialize(
              chunk.map((item) => item.message),
              toolResultMaxChars
            )
            const prompt = `<conversation>\n${text}\n</conversation>\n\n${prior ? `<previous-checkpoint>\n${prior}\n</previous-checkpoint>\n\n${UPDATE_RULES}\n\n` : ""}${INSTRUCTIONS}${repair}`
            const answer = await call(prompt, request.maxTokens, request.signal)
            content = answer.content
            prior = JSON.stringify(content, null, 1)
            inputTokens += answer.inputTokens
            outputTokens += answer.outputTokens
          }
          const prefix = request.turnPrefix ?? []
          if (prefix.length > 0) {
            const text = serialize(
              prefix.map((item) => item.message),
              toolResultMaxChars
            )
            const answer = await call(
              `<conversation>\n${text}\n</conversation>\n\n${TURN_PREFIX_RULES}\n\n${INSTRUCTIONS}${repair}`,
              Math.max(256, Math.floor(request.maxTokens / 2)),
              request.signal
            )
            content = content ? mergePrefix(content, answer.content) : answer.content
            inputTokens += answer.inputTokens
            outputTokens += answer.outputTokens
          }
          if (content === undefined) throw new Error("nothing to summarize")
          // Deterministic lists: identifiers and files extracted from the range.
          const extracted = ExtractiveSummarizer.extract(request.covered, prefix)
          const merged: Checkpoint.CheckpointContent = {
            ...content,
            identifiers: IdentifierExtraction.merge(content.identifiers, extracted.identifiers),
            filesRead: [...new Set([...content.filesRead, ...extracted.filesRead])],
            filesModified: [...new Set([...content.filesModified, ...extracted.filesModified])]
          }
          return {
            content: merged,
            summarizer: { kind: "language-model" as const, model: modelId, promptVersion: PROMPT_VERSION },
            usage: { inputTokens, outputTokens }
          }
        },
        catch: (error) => new Errors.SummarizerFailed({ summarizer: name, reason: errorMessage(error), cause: error })
      })
  }
}

const mergePrefix = (
  history: Checkpoint.CheckpointContent,
  prefix: Checkpoint.CheckpointContent
): Checkpoint.CheckpointContent => ({
  ...history,
  progress: {
    done: [...history.progress.done, ...prefix.progress.done],
    inProgress: [...history.progress.inProgress, ...prefix.progress.inProgress],
    blocked: [...history.progress.blocked, ...prefix.progress.blocked]
  },
  criticalContext: [
    ...history.criticalContext,
    ...prefix.criticalContext.map((item) => `Turn context (split turn): ${item}`)
  ],
  pendingUserAsks: [...prefix.pendingUserAsks],
  identifiers: IdentifierExtraction.merge(history.identifiers, prefix.identifiers),
  filesRead: [...new Set([...history.filesRead, ...prefix.filesRead])],
  filesModified: [...new Set([...history.filesModified, ...prefix.filesModified])]
})

/**
 * A memory extractor backed by any AI SDK language model (the
 * model-backed option of issue #15 req 1; the offline default is
 * `MemoryExtractor.make` in `@context-engine/engines`). It sends the covered
 * range, serialized like the checkpoint summarizer does
 * (`LanguageModelSummarizer.serialize`), plus the memory records in force,
 * and asks for new durable facts as structured output. Each fact must name
 * the entry ids it came from; ids that are not in the covered range are
 * dropped (no invented provenance), and supersession of restated records
 * goes through the shared `MemoryExtractor.reconcile`, plus the ids the
 * model names in `supersedes` when they are records in force.
 *
 * A failure (network, timeout, unparsable output) fails the extraction;
 * the flush then writes nothing and the checkpoint still commits.
 *
 * @since 0.1.0
 */
import { MemoryExtractor } from "@context-engine/engines"
import { generateText, jsonSchema, type LanguageModel, Output } from "ai"
import { Effect } from "effect"
import * as LanguageModelSummarizer from "./LanguageModelSummarizer.ts"

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  readonly model: LanguageModel
  /** Most output tokens (default 1,000: a few dozen one-line facts). */
  readonly maxOutputTokens?: number
  /** Timeout of one call, in milliseconds (default `LanguageModelSummarizer.DEFAULT_TIMEOUT_MS`). */
  readonly timeoutMs?: number
}

const SYSTEM_PROMPT = `You extract durable memory from a coding-agent conversation: facts that must outlive the current task.
Keep only: user preferences (how the user wants things done), project conventions, standing decisions (with their reason), environment facts (versions, hosts, ports, paths that stay valid).
Never keep: task progress, tool output details, anything the user did not state or confirm, facts already in the memory in force.
Each fact is one short sentence in the user's words where possible, with the [entry ids] it came from.`

const factsSchema = {
  type: "object",
  properties: {
    facts: {
      type: "array",
      items: {
        type: "object",
        properties: {
          text: { type: "string" },
          scope: { type: "string", enum: ["preference", "convention", "decision", "environment"] },
          sourceEntryIds: { type: "array", items: { type: "string" } },
          supersedes: { type: "array", items: { type: "string" } }
        },
        required: ["text", "scope", "sourceEntryIds"],
        additionalProperties: false
      }
    }
  },
  required: ["facts"],
  additionalProperties: false
} as const

interface Facts {
  readonly facts: ReadonlyArray<{
    readonly text: string
    readonly scope: string
    readonly sourceEntryIds: ReadonlyArray<string>
    readonly supersedes?: ReadonlyArray<string>
  }>
}

/**
 * Creates the extractor.
 *
 * @category constructors
 */
export const make = (options: Options): MemoryExtractor.MemoryExtractor => ({
  name: typeof options.model === "string" ? options.model : options.model.modelId,
  extract: (request) =>
    Effect.tryPromise(async () => {
      const covered = new Set(request.covered.map((item) => item.entryId))
      const inForce = new Set(request.existing.map((entry) => entry.id))
      const conversation = request.covered
        .map(
          (item) =>
            `[entry ${item.entryId}]\n${LanguageModelSummarizer.serialize([item.message], LanguageModelSummarizer.TOOL_RESULT_MAX_CHARS)}`
        )
        .join("\n\n")
      const memory = request.existing.map(
        (entry) => `- [${entry.id}] (${entry.memory.scope ?? "fact"}) ${entry.memory.text}`
      )
      const timeout = AbortSignal.timeout(options.timeoutMs ?? LanguageModelSummarizer.DEFAULT_TIMEOUT_MS)
      const result = await generateText({
        model: options.model,
        output: Output.object({ schema: jsonSchema<Facts>(factsSchema as never) }),
        instructions: SYSTEM_PROMPT,
        prompt: `<memory-in-force>\n${memory.join("\n") || "(none)"}\n</memory-in-force>\n\n<conversation>\n${conversation}\n</conversation>\n\nList the new durable facts. Name in supersedes the ids of memory in force that a fact replaces.`,
        maxOutputTokens: options.maxOutputTokens ?? 1_000,
        maxRetries: 1,
        abortSignal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout
      })
      const candidates = (result.output as Facts).facts.flatMap(
        (fact): ReadonlyArray<MemoryExtractor.MemoryCandidate> => {
          const sources = fact.sourceEntryIds.filter((id) => covered.has(id))
          if (fact.text.trim().length === 0 || sources.length === 0) return []
          const supersedes = (fact.supersedes ?? []).filter((id) => inForce.has(id))
          return [
            {
              text: fact.text.trim(),
              scope: fact.scope,
              sourceEntryIds: sources,
              ...(supersedes.length > 0 ? { supersedes } : {})
            }
          ]
        }
      )
      return MemoryExtractor.reconcile(candidates, request.existing)
    })
})

/**
 * The 128K replay of the pi session (issue #13 req 4), shared by
 * `bench/replay.bench.ts` (which prints it beside pi's own rule) and
 * `PiReplay.test.ts` (which asserts the targets). Replays
 * `../shared/transcripts/pi/before-compaction.jsonl` through the tiered
 * engine: before every model call the engine decides, compacts when asked,
 * and the compaction's entries are appended, as the middleware does. A model
 * call is where the transcript holds a reply (an assistant message): the
 * request is the history before it (484 calls). No request goes out between
 * the results of one parallel tool batch, where a user message follows with
 * no reply between, or after pi's `!cmd` output (`bashExecution`, added to
 * the context without a model call).
 *
 * A prompt-cache rewrite is counted from the requests themselves: providers
 * cache by prefix (Anthropic and OpenAI prompt caching), so a request that
 * does not start with the previous request's messages rewrites the cache
 * from the first message that differs; one that extends it reads the cache.
 */
import { isDeepStrictEqual } from "node:util"
import { type Entry, Measurer, type Message, PolicyRegistry, Tokenizers } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

/** The replay's policy: a 128K window as `replay --context-window 128000` builds it, counted with o200k. */
export type Policy = ReturnType<typeof PolicyRegistry.derive>

/** What the replay saw: counts, the tokens, one line per compaction or rewrite. */
export interface PiReplay {
  readonly file: string
  readonly messages: ReadonlyArray<Entry.MessageEntry>
  readonly policy: Policy
  readonly engine: ReturnType<typeof TieredSummaryEngine.makeAsync>
  readonly calls: number
  readonly events: number
  readonly withoutCheckpoint: number
  readonly rewrites: number
  readonly rewritesOutsideEvents: number
  readonly writtenTokens: number
  readonly failures: number
  readonly peakTokens: number
  readonly peakBudgetTokens: number
  /** The last request sent, in input tokens. */
  readonly lastSentTokens: number
  /** Each compaction's request after it, in input tokens. */
  readonly landings: ReadonlyArray<number>
  readonly lines: ReadonlyArray<string>
}

const k = (tokens: number): string => `${(tokens / 1000).toFixed(1)}K`

/** Index of the first message of `previous` that `next` does not repeat; `previous.length` when it extends it. */
const firstDifference = (previous: ReadonlyArray<Message.Message>, next: ReadonlyArray<Message.Message>): number => {
  for (let index = 0; index < previous.length; index++) {
    const message = next[index]
    if (message === undefined) return index
    if (message !== previous[index] && !isDeepStrictEqual(message, previous[index])) return index
  }
  return previous.length
}

/** The replay's 128K policy: the reserves derived from the 128K window, not kept from claude-opus-4-5's 200K one. */
export const policy128k = (): Policy => {
  const opus = PolicyRegistry.lookupSync("claude-opus-4-5")
  return PolicyRegistry.derive("replay-128k", {
    contextWindowTokens: 128_000,
    maxOutputTokens: opus.maxOutputTokens,
    reasoning: opus.reasoning,
    promptCacheTtlMs: opus.promptCacheTtlMs,
    nativeCompaction: opus.nativeCompaction,
    tokenizer: "o200k_base"
  })
}

/** Replays the pi session in a 128K window (see the module doc). */
export const replay = async (): Promise<PiReplay> => {
  const file = transcript("pi/before-compaction.jsonl")
  const imported = await Import.importFilePromise(file)
  // pi's own compaction entries are left out: the replay decides for itself.
  const messages = imported.transcript.entries.filter((entry): entry is Entry.MessageEntry => entry.kind === "message")
  const policy = policy128k()
  const engine = TieredSummaryEngine.makeAsync()
  // Tokens a rewrite writes to the cache: the request's messages from the first one that differs (local count).
  const measurer = Measurer.make(Tokenizers.forPolicy(policy))
  const counts = { calls: 0, events: 0, withoutCheckpoint: 0, rewrites: 0, rewritesOutsideEvents: 0, failures: 0 }
  let writtenTokens = 0
  let peakTokens = 0
  let peakBudgetTokens = 0
  let lastSentTokens = 0
  const entries: Array<Entry.Entry> = []
  let parentId: string | null = null
  let previous: ReadonlyArray<Message.Message> = []
  const lines: Array<string> = []
  const landings: Array<number> = []
  for (const [index, entry] of messages.entries()) {
    entries.push({ ...entry, parentId })
    parentId = entry.id
    if (messages[index + 1]?.message.role !== "assistant" || entry.message.role === "assistant") continue
    counts.calls++
    const input = { entries: [...entries], policy }
    let line: string | undefined
    if ((await engine.shouldCompact(input)).compact) {
      counts.events++
      try {
        const result = await engine.compact(input)
        for (const appended of result.entriesToAppend) {
          entries.push({ ...appended, parentId })
          parentId = appended.id
        }
        if (!result.checkpoint) counts.withoutCheckpoint++
        landings.push(result.after.inputTokens)
        const applied = result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
        line = `  call ${counts.calls}: ${k(result.before.inputTokens)} → ${k(result.after.inputTokens)} (${result.checkpoint ? "checkpoint" : "cheap tiers"}: ${applied.join(", ")})`
      } catch (error) {
        counts.failures++
        line = `  call ${counts.calls}: compaction failed (${(error as { _tag?: string })._tag ?? String(error)})`
      }
    }
    const assembled = await engine.assembleContext({ entries: [...entries], policy })
    const differs = firstDifference(previous, assembled.messages)
    if (differs < previous.length) {
      counts.rewrites++
      if (line === undefined) counts.rewritesOutsideEvents++
      let written = 0
      for (const message of assembled.messages.slice(differs)) written += measurer.messageTokens(message)
      writtenTokens += written
      line = `${line ?? `  call ${counts.calls}: no compaction`}; cache rewritten from message ${differs} of ${previous.length} (${k(written)} written)`
    }
    if (line !== undefined) lines.push(line)
    previous = assembled.messages
    lastSentTokens = assembled.measurement.inputTokens
    if (lastSentTokens > peakTokens) {
      peakTokens = lastSentTokens
      peakBudgetTokens = assembled.measurement.budgetTokens
    }
  }
  return {
    file,
    messages,
    policy,
    engine,
    ...counts,
    writtenTokens,
    peakTokens,
    peakBudgetTokens,
    lastSentTokens,
    landings,
    lines
  }
}

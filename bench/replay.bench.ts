/**
 * Cheap tiers first? (issue #13, item 4.) Replays the pi session
 * (`../shared/transcripts/pi/before-compaction.jsonl`) through the tiered
 * engine in a 128K window: before every model call the engine decides,
 * compacts when asked, and the compaction's entries are appended, as the
 * middleware does. A model call is where the transcript holds a reply (an
 * assistant message): the request is the history before it (484 calls). No
 * request goes out between the results of one parallel tool batch (15 in
 * the file), where a user message follows with no reply between (4: it goes
 * out with the next one), or after pi's `!cmd` output (`bashExecution`,
 * added to the context without a model call: the first two are followed by
 * a user message, the last one ends the session unanswered).
 *
 * Prints the compaction events, how many were resolved without writing a
 * checkpoint (target ≥ 60 %), the prompt-cache rewrites (target: no more
 * than pi's 4, the issue's figure; pi's own rule is run on the same
 * requests beside ours, {@link piReplay}) and the peak request against the
 * budget (target: under it). A rewrite is counted from the requests themselves:
 * providers cache by prefix (Anthropic and OpenAI prompt caching), so a
 * request that does not start with the previous request's messages rewrites
 * the cache from the first message that differs; one that extends it reads
 * the cache. Counts only; never asserts. `node bench/run.ts replay`.
 */
import { isDeepStrictEqual } from "node:util"
import type * as Entry from "../packages/core/src/Entry.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import type * as Message from "../packages/core/src/Message.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { Import } from "../packages/transcripts/src/index.ts"
import * as Peers from "./peers.ts"

const k = (tokens: number): string => `${(tokens / 1000).toFixed(1)}K`

type Policy = ReturnType<typeof PolicyRegistry.derive>

/**
 * pi's compaction rule on the same requests, measured by us on the same definition: pi's `shouldCompact`
 * (request > window − reserveTokens), then pi's `findCutPoint` on pi's own entries of the file (its own
 * compactions left out) from the previous cut, keeping `keepRecentTokens`; the request becomes a summary
 * plus the kept messages. The summary cannot be written here (an LLM call): it is given the mean size of
 * pi's two real summaries in the file. Every compaction puts a new summary first: one rewrite each.
 */
const piReplay = async (
  file: string,
  messages: ReadonlyArray<Entry.MessageEntry>,
  policy: Policy
): Promise<
  | {
      readonly compactions: number
      readonly landings: Array<number>
      readonly summaryTokens: number
      readonly triggerTokens: number
    }
  | string
> => {
  const pi = await Peers.piCompaction()
  if ("unavailable" in pi) return pi.unavailable
  const all = pi.run.entries(file)
  const real = all.flatMap((item) =>
    item.entry.type === "compaction" ? [(item.entry as unknown as { summary: string }).summary] : []
  )
  const count = Tokenizers.forPolicy(policy).count
  const summaryTokens = Math.round(real.reduce((sum, text) => sum + count(text), 0) / Math.max(1, real.length))
  const entries = all.filter((item) => item.entry.type !== "compaction")
  const indexOf = new Map(entries.map((item, index) => [`pi:${item.line}`, index]))
  // A stand-in summary of that size (one o200k token per "x ").
  const summary = {
    ...messages[0]!,
    id: "pi-summary",
    message: { role: "user" as const, content: "x ".repeat(summaryTokens) }
  }
  const measuring = TieredSummaryEngine.makeAsync()
  const settings = pi.run.settings
  let firstKept = -1
  const landings: Array<number> = []
  const request = async (upTo: number) => {
    const kept = messages.slice(0, upTo + 1).filter((entry) => (indexOf.get(entry.id) ?? -1) >= firstKept)
    const chain = firstKept < 0 ? kept : [summary, ...kept]
    const linked = chain.map((entry, index) => ({ ...entry, parentId: index === 0 ? null : chain[index - 1]!.id }))
    return (await measuring.measure({ entries: linked, policy })).inputTokens
  }
  for (const [index, entry] of messages.entries()) {
    if (messages[index + 1]?.message.role !== "assistant" || entry.message.role === "assistant") continue
    if (!pi.run.shouldCompact(await request(index), policy.contextWindowTokens, settings)) continue
    const end = (indexOf.get(entry.id) ?? entries.length - 1) + 1
    const cut = pi.run.findCutPoint(
      entries.map((item) => item.entry),
      Math.max(0, firstKept),
      end,
      settings.keepRecentTokens
    )
    firstKept = cut.firstKeptEntryIndex
    landings.push(await request(index))
  }
  return {
    compactions: landings.length,
    landings,
    summaryTokens,
    triggerTokens: policy.contextWindowTokens - settings.reserveTokens
  }
}

/** Index of the first message of `previous` that `next` does not repeat; `previous.length` when it extends it. */
const firstDifference = (previous: ReadonlyArray<Message.Message>, next: ReadonlyArray<Message.Message>): number => {
  for (let index = 0; index < previous.length; index++) {
    const message = next[index]
    if (message === undefined) return index
    if (message !== previous[index] && !isDeepStrictEqual(message, previous[index])) return index
  }
  return previous.length
}

export default async function (): Promise<void> {
  const file = transcript("pi/before-compaction.jsonl")
  const imported = await Import.importFilePromise(file)
  // pi's own compaction entries are left out: the replay decides for itself.
  const messages = imported.transcript.entries.filter((entry): entry is Entry.MessageEntry => entry.kind === "message")
  // A 128K window as `replay --context-window 128000` builds it: the reserves (tool loop, safety margin,
  // keep-recent) derived from the 128K window, not kept from the model's 200K one; counted with o200k.
  const opus = PolicyRegistry.lookupSync("claude-opus-4-5")
  const policy = PolicyRegistry.derive("replay-128k", {
    contextWindowTokens: 128_000,
    maxOutputTokens: opus.maxOutputTokens,
    reasoning: opus.reasoning,
    promptCacheTtlMs: opus.promptCacheTtlMs,
    nativeCompaction: opus.nativeCompaction,
    tokenizer: "o200k_base"
  })
  const engine = TieredSummaryEngine.makeAsync()
  // Tokens a rewrite writes to the cache: the request's messages from the first one that differs (local count).
  const measurer = Measurer.make(Tokenizers.forPolicy(policy))
  let writtenTokens = 0
  const entries: Array<Entry.Entry> = []
  let parentId: string | null = null
  let events = 0
  let withoutCheckpoint = 0
  let rewrites = 0
  let rewritesOutsideEvents = 0
  let failures = 0
  let peak = 0
  let peakBudget = 0
  let calls = 0
  let previous: ReadonlyArray<Message.Message> = []
  let previousTokens = 0
  const lines: Array<string> = []
  const landings: Array<number> = []
  for (const [index, entry] of messages.entries()) {
    entries.push({ ...entry, parentId })
    parentId = entry.id
    if (messages[index + 1]?.message.role !== "assistant" || entry.message.role === "assistant") continue
    calls++
    const input = { entries: [...entries], policy }
    const decision = await engine.shouldCompact(input)
    let line: string | undefined
    if (decision.compact) {
      events++
      try {
        const result = await engine.compact(input)
        for (const appended of result.entriesToAppend) {
          entries.push({ ...appended, parentId })
          parentId = appended.id
        }
        if (!result.checkpoint) withoutCheckpoint++
        landings.push(result.after.inputTokens)
        const applied = result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
        line = `  call ${calls}: ${k(result.before.inputTokens)} → ${k(result.after.inputTokens)} (${result.checkpoint ? "checkpoint" : "cheap tiers"}: ${applied.join(", ")})`
      } catch (error) {
        failures++
        line = `  call ${calls}: compaction failed (${(error as { _tag?: string })._tag ?? String(error)})`
      }
    }
    const assembled = await engine.assembleContext({ entries: [...entries], policy })
    const differs = firstDifference(previous, assembled.messages)
    if (differs < previous.length) {
      rewrites++
      if (line === undefined) rewritesOutsideEvents++
      let written = 0
      for (const message of assembled.messages.slice(differs)) written += measurer.messageTokens(message)
      writtenTokens += written
      line = `${line ?? `  call ${calls}: no compaction`}; cache rewritten from message ${differs} of ${previous.length} (${k(written)} written)`
    }
    if (line !== undefined) lines.push(line)
    previous = assembled.messages
    previousTokens = assembled.measurement.inputTokens
    if (assembled.measurement.inputTokens > peak) {
      peak = assembled.measurement.inputTokens
      peakBudget = assembled.measurement.budgetTokens
    }
  }
  console.log(`pi/before-compaction.jsonl replayed in a 128K window: ${calls} model calls`)
  for (const line of lines) console.log(line)
  // What a rewrite count costs: after the first event, every later token must fit in the headroom the events
  // leave (budget − landing), so R rewrites need landings averaging ≤ budget − (last request − first trigger) / R,
  // the last request uncompacted (the history before the last reply).
  const lastCall = messages.findLastIndex((entry) => entry.message.role === "assistant")
  const history = messages.slice(0, lastCall)
  const lastRequestTokens = (
    await engine.measure({
      entries: history.map((entry, index) => ({ ...entry, parentId: index === 0 ? null : history[index - 1]!.id })),
      policy
    })
  ).inputTokens
  const averageLanding = (rewriteCount: number) => peakBudget - (lastRequestTokens - peakBudget) / rewriteCount
  console.log(
    `  last request uncompacted ${k(lastRequestTokens)}, sent ${k(previousTokens)}; landings must average ≤ ${k(averageLanding(4))} for 4 rewrites, ≤ ${k(averageLanding(5))} for 5 (ours: ${k(landings.reduce((sum, tokens) => sum + tokens, 0) / Math.max(1, landings.length))})`
  )
  const pi = await piReplay(file, messages, policy)
  console.log(
    typeof pi === "string"
      ? `  pi's rule: unavailable (${pi})`
      : `  pi's rule on the same requests (trigger > ${k(pi.triggerTokens)}, keepRecentTokens by pi's findCutPoint, a summary of ${k(pi.summaryTokens)} like pi's real ones): ${pi.compactions} compactions = ${pi.compactions} rewrites (${k(pi.landings.reduce((sum, tokens) => sum + tokens, 0))} written: each rewrites its whole landing), landings ${pi.landings.map(k).join(" / ")}`
  )
  console.table([
    {
      "compaction events": events,
      "resolved without a checkpoint": `${withoutCheckpoint} (${events === 0 ? 0 : Math.round((withoutCheckpoint / events) * 100)} %, target ≥ 60 %)`,
      "prompt-cache rewrites": `${rewrites} (pi: ${typeof pi === "string" ? 4 : pi.compactions}; ${rewritesOutsideEvents} outside compactions; ${k(writtenTokens)} written)`,
      failures,
      "peak request": `${k(peak)} of ${k(peakBudget)} budget (${peak <= peakBudget ? "under" : "OVER"})`
    }
  ])
}

/**
 * Cheap tiers first? (issue #13, item 4.) Replays the pi session
 * (`../shared/transcripts/pi/before-compaction.jsonl`) through the tiered
 * engine in a 128K window (`packages/engines/test/piReplay.ts`, which
 * `PiReplay.test.ts` asserts the targets on): before every model call the
 * engine decides, compacts when asked, and the compaction's entries are
 * appended, as the middleware does; 484 model calls (no request between the
 * results of one parallel tool batch (15 in the file), where a user message
 * follows with no reply between (4), or after pi's `!cmd` output).
 *
 * Prints the compaction events, how many were resolved without writing a
 * checkpoint (target ≥ 60 %), the prompt-cache rewrites (target: no more
 * than pi's 4, the figure; pi's own rule is run on the same
 * requests beside ours, {@link piReplay}) and the peak request against the
 * budget (target: under it). A rewrite is counted from the requests themselves:
 * providers cache by prefix (Anthropic and OpenAI prompt caching), so a
 * request that does not start with the previous request's messages rewrites
 * the cache from the first message that differs; one that extends it reads
 * the cache. Prints counts; `node bench/run.ts replay`.
 */
import type * as Entry from "../packages/core/src/Entry.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { type Policy, replay } from "../packages/engines/test/piReplay.ts"
import * as Peers from "./peers.ts"

const k = (tokens: number): string => `${(tokens / 1000).toFixed(1)}K`

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

export default async function (): Promise<void> {
  const run = await replay()
  const { engine, messages, policy } = run
  console.log(`pi/before-compaction.jsonl replayed in a 128K window: ${run.calls} model calls`)
  for (const line of run.lines) console.log(line)
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
  const budget = run.peakBudgetTokens
  const averageLanding = (rewriteCount: number) => budget - (lastRequestTokens - budget) / rewriteCount
  const landings = run.landings
  console.log(
    `  last request uncompacted ${k(lastRequestTokens)}, sent ${k(run.lastSentTokens)}; landings must average ≤ ${k(averageLanding(4))} for 4 rewrites, ≤ ${k(averageLanding(5))} for 5 (ours: ${k(landings.reduce((sum, tokens) => sum + tokens, 0) / Math.max(1, landings.length))})`
  )
  const pi = await piReplay(run.file, messages, policy)
  console.log(
    typeof pi === "string"
      ? `  pi's rule: unavailable (${pi})`
      : `  pi's rule on the same requests (trigger > ${k(pi.triggerTokens)}, keepRecentTokens by pi's findCutPoint, a summary of ${k(pi.summaryTokens)} like pi's real ones): ${pi.compactions} compactions = ${pi.compactions} rewrites (${k(pi.landings.reduce((sum, tokens) => sum + tokens, 0))} written: each rewrites its whole landing), landings ${pi.landings.map(k).join(" / ")}`
  )
  const { events, withoutCheckpoint } = run
  console.table([
    {
      "compaction events": events,
      "resolved without a checkpoint": `${withoutCheckpoint} (${events === 0 ? 0 : Math.round((withoutCheckpoint / events) * 100)} %, target ≥ 60 %)`,
      "prompt-cache rewrites": `${run.rewrites} (pi: ${typeof pi === "string" ? 4 : pi.compactions}; ${run.rewritesOutsideEvents} outside compactions; ${k(run.writtenTokens)} written)`,
      failures: run.failures,
      "peak request": `${k(run.peakTokens)} of ${k(budget)} budget (${run.peakTokens <= budget ? "under" : "OVER"})`
    }
  ])
}

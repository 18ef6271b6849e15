/**
 * Cheap tiers first? (issue #13, item 4.) Replays the pi session
 * (`../shared/transcripts/pi/before-compaction.jsonl`) through the tiered
 * engine in a 128K window: before every model call (the history ends with a
 * user or tool message) the engine decides, compacts when asked, and the
 * compaction's entries are appended, as the middleware does. Prints the
 * compaction events, how many were resolved without writing a checkpoint
 * (target ≥ 60 %), the prompt-cache rewrites (every compaction that changes
 * the sent prefix; pi rewrote 4 times), and the peak request against the
 * budget (target: under it). Counts only; never asserts. Each event's line
 * says where it landed against the low-water mark.
 * `node bench/run.ts replay`.
 */
import type * as Entry from "../packages/core/src/Entry.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { Import } from "../packages/transcripts/src/index.ts"

const k = (tokens: number): string => `${(tokens / 1000).toFixed(1)}K`

export default async function (): Promise<void> {
  const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
  // pi's own compaction entries are left out: the replay decides for itself.
  const messages = imported.transcript.entries.filter((entry) => entry.kind === "message")
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
  const entries: Array<Entry.Entry> = []
  let parentId: string | null = null
  let events = 0
  let withoutCheckpoint = 0
  let rewrites = 0
  let failures = 0
  let peak = 0
  let peakBudget = 0
  let steps = 0
  const lines: Array<string> = []
  const landings: Array<number> = []
  for (const entry of messages) {
    entries.push({ ...entry, parentId })
    parentId = entry.id
    if (entry.kind !== "message" || entry.message.role === "assistant" || entry.message.role === "system") continue
    steps++
    const input = { entries: [...entries], policy }
    const decision = await engine.shouldCompact(input)
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
        if (result.entriesToAppend.length > 0) rewrites++
        const applied = result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
        lines.push(
          `  step ${steps}: ${k(result.before.inputTokens)} → ${k(result.after.inputTokens)} (${result.checkpoint ? "checkpoint" : "cheap tiers"}: ${applied.join(", ")})`
        )
      } catch (error) {
        failures++
        lines.push(`  step ${steps}: compaction failed (${(error as { _tag?: string })._tag ?? String(error)})`)
      }
    }
    const assembled = await engine.assembleContext({ entries: [...entries], policy })
    if (assembled.measurement.inputTokens > peak) {
      peak = assembled.measurement.inputTokens
      peakBudget = assembled.measurement.budgetTokens
    }
  }
  console.log(`pi/before-compaction.jsonl replayed in a 128K window: ${steps} model calls`)
  for (const line of lines) console.log(line)
  // What a rewrite count costs: after the first event, every later token must fit in the headroom the events
  // leave (budget − landing), so R rewrites need landings averaging ≤ budget − (session − first trigger) / R.
  const sessionTokens = (
    await engine.measure({
      entries: messages.map((entry, index) => ({ ...entry, parentId: index === 0 ? null : messages[index - 1]!.id })),
      policy
    })
  ).inputTokens
  const averageLanding = (rewriteCount: number) => peakBudget - (sessionTokens - peakBudget) / rewriteCount
  console.log(
    `  uncompacted session ${k(sessionTokens)}; landings must average ≤ ${k(averageLanding(4))} for 4 rewrites, ≤ ${k(averageLanding(5))} for 5 (ours: ${k(landings.reduce((sum, tokens) => sum + tokens, 0) / Math.max(1, landings.length))})`
  )
  console.table([
    {
      "compaction events": events,
      "resolved without a checkpoint": `${withoutCheckpoint} (${events === 0 ? 0 : Math.round((withoutCheckpoint / events) * 100)} %, target ≥ 60 %)`,
      "prompt-cache rewrites": `${rewrites} (pi: 4)`,
      failures,
      "peak request": `${k(peak)} of ${k(peakBudget)} budget (${peak <= peakBudget ? "under" : "OVER"})`
    }
  ])
}

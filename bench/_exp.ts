import type * as Entry from "../packages/core/src/Entry.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { Import } from "../packages/transcripts/src/index.ts"
const k = (t: number) => `${(t / 1000).toFixed(1)}K`
const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
const messages = imported.transcript.entries.filter((e) => e.kind === "message")
const base = PolicyRegistry.lookupSync("claude-opus-4-5")
const variant = process.argv[2] ?? "old"
const policy = variant === "old" ? { ...base, model: "replay-128k", contextWindowTokens: 128_000, tokenizer: "o200k_base" as const }
 : PolicyRegistry.derive("replay-128k", { ...base, contextWindowTokens: 128_000, tokenizer: "o200k_base", reserveTokens: undefined, toolLoopReserveTokens: undefined, safetyMarginTokens: undefined, keepRecentTokens: undefined } as any)
const opts = JSON.parse(process.argv[3] ?? "{}")
const engine = TieredSummaryEngine.makeAsync(opts)
const entries: Array<Entry.Entry> = []
let parentId: string | null = null
let steps = 0, events = 0, cheap = 0, peak = 0, budget = 0
for (const entry of messages) {
  entries.push({ ...entry, parentId }); parentId = entry.id
  if (entry.kind !== "message" || entry.message.role === "assistant" || entry.message.role === "system") continue
  steps++
  const input = { entries: [...entries], policy }
  const d = await engine.shouldCompact(input)
  if (d.compact) {
    events++
    const r = await engine.compact(input)
    for (const a of r.entriesToAppend) { entries.push({ ...a, parentId }); parentId = a.id }
    if (!r.checkpoint) cheap++
    console.log(`step ${steps}: ${k(r.before.inputTokens)} → ${k(r.after.inputTokens)} ${r.checkpoint ? "CKPT" : "cheap"} ${r.stages.filter(s=>s.status==="applied").map(s=>`${s.stage}:${k(s.tokensAfter)}`).join(" ")}`)
  }
  const a = await engine.assembleContext({ entries: [...entries], policy })
  if (a.measurement.inputTokens > peak) { peak = a.measurement.inputTokens; budget = a.measurement.budgetTokens }
}
console.log({ variant, opts, events, cheap, peak, budget, inputBudget: policy.contextWindowTokens - policy.reserveTokens - policy.toolLoopReserveTokens - policy.safetyMarginTokens })

import type * as Entry from "../packages/core/src/Entry.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { Import } from "../packages/transcripts/src/index.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import * as Budget from "../packages/core/src/Budget.ts"
import { Pipeline, Tiers } from "../packages/strategies/src/index.ts"
const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
const messages = imported.transcript.entries.filter((e) => e.kind === "message") as any[]
const base = PolicyRegistry.lookupSync("claude-opus-4-5")
const policy = PolicyRegistry.derive("replay-128k", { ...base, contextWindowTokens: 128_000, tokenizer: "o200k_base", reserveTokens: undefined, toolLoopReserveTokens: undefined, safetyMarginTokens: undefined, keepRecentTokens: undefined } as any)
const m = Measurer.make(Tokenizers.get("o200k_base"))
for (const upto of [200, 400, 600, 800, 990]) {
  const items = messages.slice(0, upto).map((e) => ({ entryId: e.id, message: e.message, source: "transcript", editedBy: [] }))
  const view = { items, tools: [] } as any
  const budget = Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 })
  const r = Pipeline.run({ view, strategies: Tiers.deterministic(policy, budget, { toolTrim: { minReclaimTokens: 0 } }), targetTokens: 0, budget, measurer: m, policy })
  const bc = r.after.byCategory
  console.log(upto, "before", r.before.inputTokens, "after", r.after.inputTokens, { user: bc.userText, asst: bc.assistantText, calls: bc.toolCalls, results: bc.toolResults })
}

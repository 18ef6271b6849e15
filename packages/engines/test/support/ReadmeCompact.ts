import { Entry, PolicyRegistry } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"

// A session's transcript: 40 long messages, each entry naming the one it follows.
const entries = Entry.chain(
  null,
  "2026-01-01T00:00:00.000Z",
  Array.from({ length: 40 }, (_, i) => ({
    id: `m${i}`,
    body: {
      kind: "message" as const,
      message: {
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        content: `Step ${i}: ${"checked src/db_pool.ts. ".repeat(150)}`
      }
    }
  }))
)
// A 16K window so this short session is over budget (a catalog model: PolicyRegistry.lookupSync("gpt-4o")).
const policy = PolicyRegistry.resolveSync({ model: "my-model", contextWindowTokens: 16_000, maxOutputTokens: 2_000 })

const engine = TieredSummaryEngine.makeAsync() // the offline extractive summarizer: no model call, no API key
const input = { entries, policy }
if ((await engine.shouldCompact(input)).compact) {
  const result = await engine.compact(input)
  console.log(result.before.inputTokens, "→", result.after.inputTokens, "tokens, fits:", result.fits)
  console.log(
    result.stages.map((stage) => `${stage.stage}: ${stage.status}`),
    result.checkpoint?.generation
  )
  // result.view is what to send next; result.entriesToAppend records the compaction in the transcript store
}

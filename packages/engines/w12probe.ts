import { Entry, PolicyRegistry, Estimator, Measurer } from "@context-engine/core"
import { Effect, Exit } from "effect"
import * as Tiered from "./src/TieredSummaryEngine.ts"
import * as Sliding from "./src/SlidingWindowEngine.ts"
const N = Number(process.argv[2] ?? 200000)
const big = Number(process.argv[3] ?? 0)
const messages: any[] = [{ role: "system", content: "sys" }]
for (let i = 0; i < N; i++) {
  if (i % 3 === 0) messages.push({ role: "user", content: [{ type: "text", text: `ask ${i}` }] })
  else if (i % 3 === 1) messages.push({ role: "assistant", content: [{ type: "tool-call", toolCallId: `c${i}`, toolName: "bash", input: { command: `ls ${i}` } }] })
  else messages.push({ role: "tool", content: [{ type: "tool-result", toolCallId: `c${i-1}`, toolName: "bash", output: { type: "text", value: `out ${i}` } }] })
}
if (big) messages.push({ role: "user", content: [{ type: "text", text: "Z".repeat(big * 1024 * 1024) }] })
else messages.push({ role: "user", content: [{ type: "text", text: "final ask" }] })
const entries = messages.map((message, index) => ({ id: `e${index}`, parentId: index === 0 ? null : `e${index - 1}`, timestamp: new Date(Date.UTC(2026,0,1,0,0,0,index)).toISOString(), schemaVersion: Entry.CURRENT_SCHEMA_VERSION, kind: "message", message }))
const policy = PolicyRegistry.fromCasePolicySync({ contextWindow: 200000, maxOutputTokens: 8000 }, "probe")
for (const [name, engine] of [["tiered", Tiered.make({ measurerFor: () => Measurer.make(Estimator.make("generic")) })], ["sliding", Sliding.make({ measurer: () => Measurer.make(Estimator.make("generic")) })]] as const) {
  for (const op of (process.argv[4] ?? "measure,compact,assembleContext").split(",") as any) {
    const t = Date.now()
    const exit = Effect.runSyncExit((engine as any)[op]({ entries, policy, tools: [] }, ...(op === "compact" ? [{ reason: "threshold" }] : [])))
    console.log(name, op, Exit.isSuccess(exit) ? "ok" : String(exit.cause).slice(0, 400), Date.now() - t, "ms"); if (Exit.isFailure(exit)) { const r:any = exit.cause.reasons[0]; console.log(r.defect?.stack?.slice(0,1500) ?? r.error) }
  }
}

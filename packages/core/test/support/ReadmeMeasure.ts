import { Budget, ContextView, Measurer, PolicyRegistry } from "@context-engine/core"

const policy = PolicyRegistry.lookupSync("gpt-4o") // context window, reserve tokens, keep-recent tokens, tokenizer
const measurer = Measurer.forPolicy(policy)
const view = ContextView.fromMessages([
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Why does `pnpm test` fail with ECONNREFUSED?" }
])
const measurement = measurer.measure(view, { budget: Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 }) })
console.log(measurement.inputTokens, measurement.headroomTokens, measurement.byCategory) // tokens per category

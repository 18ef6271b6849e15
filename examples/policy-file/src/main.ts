/**
 * `pnpm --filter @context-engine/example-policy-file start`
 *
 * Loads `context-engine.config.json` (policy file + summarizer model), shows
 * the policies the middleware resolves for the two configured models, and
 * runs a long conversation against each: every compaction writes a
 * checkpoint with the configured summarizer model.
 */
import { fileURLToPath } from "node:url"
import * as Conversation from "./Conversation.ts"
import * as Setup from "./Setup.ts"

const configPath = fileURLToPath(new URL("../context-engine.config.json", import.meta.url))
const setup = await Setup.load(configPath, (event) => {
  if (event.type === "compaction") {
    console.log(
      `  ↳ compaction: request ${event.tokensBefore} → ${event.tokensAfter} tokens${event.checkpointId ? `, checkpoint ${event.checkpointId}` : ""}`
    )
  }
})
console.log(
  `summarizer: ${setup.offline ? "offline stand-in for " : ""}${String((setup.summarizerModel as { modelId?: string }).modelId ?? setup.summarizerModel)}`
)

for (const model of [
  { provider: "anthropic.messages", modelId: "claude-sonnet-4-5" },
  { provider: "local.chat", modelId: "local-qwen-coder" }
]) {
  const policy = await setup.middleware.controller.policyFor(model)
  console.log(
    `\n${model.modelId}: window ${policy.contextWindowTokens}, reserve ${policy.reserveTokens}, keep-recent ${policy.keepRecentTokens}, tokenizer ${policy.tokenizer}`
  )
  await Conversation.run({ ...model, turns: 30, middleware: setup.middleware, log: (line) => console.log(line) })
  const session = await setup.middleware.controller.session(model)
  const checkpoints = session.entries().flatMap((entry) => (entry.kind === "checkpoint" ? [entry.checkpoint] : []))
  for (const checkpoint of checkpoints) {
    console.log(
      `  checkpoint ${checkpoint.id} (generation ${checkpoint.generation}) by ${checkpoint.summarizer.kind}:${checkpoint.summarizer.model ?? "?"}, request ${checkpoint.tokensBefore} → ${checkpoint.tokensAfter} tokens`
    )
  }
}
console.log(`\nsummarizer model calls: ${setup.summarizerCalls()}`)

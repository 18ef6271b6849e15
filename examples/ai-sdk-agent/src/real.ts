/**
 * `pnpm --filter @context-engine/example-ai-sdk-agent real`
 *
 * The same middleware against a real provider: a `ToolLoopAgent` that reads
 * this repository's source with two tools, under a deliberately small 16K
 * policy window so compaction shows up. Uses Anthropic when
 * `ANTHROPIC_API_KEY` is set, OpenAI when `OPENAI_API_KEY` is set; otherwise
 * it says so and exits 0.
 */
import { readdir, readFile } from "node:fs/promises"
import { join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { anthropic } from "@ai-sdk/anthropic"
import { openai } from "@ai-sdk/openai"
import { TieredSummaryEngine } from "@context-engine/engines"
import { contextEngineMiddleware, ProviderProfile } from "@context-engine/provider-adapters"
import { jsonSchema, stepCountIs, ToolLoopAgent, tool, wrapLanguageModel } from "ai"

const base =
  process.env.ANTHROPIC_API_KEY !== undefined
    ? anthropic("claude-haiku-4-5")
    : process.env.OPENAI_API_KEY !== undefined
      ? openai("gpt-4o-mini")
      : undefined
if (base === undefined) {
  console.log("No ANTHROPIC_API_KEY or OPENAI_API_KEY set: skipping the real-provider variant.")
  process.exit(0)
}

const root = resolve(fileURLToPath(new URL("../../..", import.meta.url)))
const inside = (path: string): string => {
  const full = resolve(root, path)
  if (relative(root, full).startsWith("..")) throw new Error(`${path} is outside the repository`)
  return full
}

const profile = ProviderProfile.forProvider(base.provider)
const middleware = contextEngineMiddleware({
  engine: TieredSummaryEngine.make(),
  policy: {
    contextWindowTokens: 16_000,
    maxOutputTokens: 2_000,
    reserveTokens: 2_000,
    keepRecentTokens: 4_000,
    tokenizer: profile.tokenizer(base.modelId)
  },
  onEvent: (event) => {
    if (event.type === "request") console.log(`request: ${event.inputTokens} tokens, ${event.messagesSent} messages`)
    if (event.type === "compaction")
      console.log(`  compaction: request ${event.tokensBefore} → ${event.tokensAfter} tokens`)
    if (event.type === "usage") console.log(`  provider usage: ${event.inputTokens} in / ${event.outputTokens} out`)
    if (event.type === "overflow") console.log(`  overflow recovered; window now ${event.learnedWindowTokens}`)
  }
})

const agent = new ToolLoopAgent({
  model: wrapLanguageModel({ model: base, middleware }),
  instructions: "You explore a TypeScript repository with the tools and answer briefly.",
  tools: {
    list: tool({
      description: "List a directory of the repository",
      inputSchema: jsonSchema<{ path: string }>({
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"]
      }),
      execute: async ({ path }) => (await readdir(inside(path))).join("\n")
    }),
    read: tool({
      description: "Read a file of the repository",
      inputSchema: jsonSchema<{ path: string }>({
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"]
      }),
      execute: async ({ path }) => readFile(inside(path), "utf8")
    })
  },
  stopWhen: stepCountIs(30)
})

const result = await agent.generate({
  prompt: `Read every file in ${join("packages", "provider-adapters", "src")} (not the importers) and explain in five bullets how a request flows through the middleware.`
})
console.log(`\n${result.text}`)

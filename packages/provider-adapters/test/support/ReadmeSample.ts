import { anthropic } from "@ai-sdk/anthropic"
import { TieredSummaryEngine } from "@context-engine/engines"
import { contextEngineMiddleware } from "@context-engine/provider-adapters"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"

// Every request is measured (system, tool schemas, messages) and compacted
// when it would not fit claude-sonnet-4-5's window; nothing is lost.
const model = wrapLanguageModel({
  model: anthropic("claude-sonnet-4-5"),
  middleware: contextEngineMiddleware({ engine: TieredSummaryEngine.make() })
})

// AI SDK 7 takes the system prompt as `instructions`, not as a message.
export const ask = async (instructions: string, messages: Array<ModelMessage>): Promise<string> =>
  (await generateText({ model, instructions, messages })).text

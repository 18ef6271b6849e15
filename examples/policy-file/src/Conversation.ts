/**
 * Drives a long review conversation through a wrapped mock model and
 * reports what each request looked like.
 */
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { ContextView, Measurer, Tokenizers } from "@context-engine/core"
import type { ContextEngineMiddleware } from "@context-engine/provider-adapters"
import { PromptConversion } from "@context-engine/provider-adapters"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"

const measurer = Measurer.make(Tokenizers.get("o200k_base"))

export interface Request {
  readonly turn: number
  readonly messages: number
  /** o200k count of the prompt the model received. */
  readonly tokens: number
}

const paragraph = (turn: number): string =>
  `Module src/module${turn}.ts: ${"The reviewer walks through each exported function, its error handling, and the tests that cover it. ".repeat(50)}`

/** `turns` user/assistant exchanges with long answers, sent one turn at a time like a chat app. */
export const run = async (options: {
  readonly provider: string
  readonly modelId: string
  readonly turns: number
  readonly middleware: ContextEngineMiddleware.ContextEngineMiddleware
  readonly log?: (line: string) => void
}): Promise<ReadonlyArray<Request>> => {
  const requests: Array<Request> = []
  let turn = 0
  const model = new MockLanguageModelV4({
    provider: options.provider,
    modelId: options.modelId,
    doGenerate: async (params: LanguageModelV4CallOptions) => {
      const messages = PromptConversion.fromPrompt(params.prompt)
      const tokens = measurer.measure(ContextView.fromMessages(messages)).inputTokens
      requests.push({ turn, messages: messages.length, tokens })
      options.log?.(
        `${options.modelId} turn ${String(turn).padStart(2)}: ${messages.length} messages, ${tokens} tokens`
      )
      return {
        content: [{ type: "text", text: paragraph(turn) }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 300, text: 300, reasoning: 0 }
        },
        warnings: []
      }
    }
  })
  const wrapped = wrapLanguageModel({ model, middleware: options.middleware })
  const history: Array<ModelMessage> = []
  for (turn = 0; turn < options.turns; turn++) {
    history.push({ role: "user", content: `Review src/module${turn}.ts and record a decision.` })
    const result = await generateText({
      model: wrapped,
      instructions: "You review TypeScript modules.",
      messages: history
    })
    // Every step's messages (`response.messages` holds only the last step's; deprecated in AI SDK 7).
    history.push(...result.responseMessages)
  }
  return requests
}

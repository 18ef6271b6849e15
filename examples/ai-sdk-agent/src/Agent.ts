/**
 * A `ToolLoopAgent` driving a long, tool-heavy task through
 * `contextEngineMiddleware`, against a scripted `MockLanguageModelV4` that
 * replays a real transcript's tool calls. The mock is honest about the
 * window: it counts every prompt it receives (o200k) and rejects one that does
 * not fit with Anthropic's "prompt is too long" error, so a run that never
 * sees a rejection never exceeded the window.
 */
import { APICallError, type LanguageModelV4CallOptions } from "@ai-sdk/provider"
import {
  type ContextEngine,
  ContextView,
  Measurer,
  type ModelPolicy,
  Tokenizers,
  ToolPairing
} from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { type ContextController, contextEngineMiddleware, PromptConversion } from "@context-engine/provider-adapters"
import { jsonSchema, stepCountIs, type Tool, ToolLoopAgent, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import type { ReplayStep } from "./Replay.ts"

/** One model call as the mock saw it. */
export interface StepReport {
  readonly step: number
  /** Input tokens of the prompt the model received (o200k count of messages + tool schemas). */
  readonly promptTokens: number
  readonly messages: number
  readonly pairingIntact: boolean
  readonly rejected: boolean
}

export interface RunReport {
  readonly steps: ReadonlyArray<StepReport>
  readonly compactions: ReadonlyArray<Extract<ContextController.ContextEvent, { type: "compaction" }>>
  readonly windowTokens: number
  readonly maxOutputTokens: number
  readonly finalText: string
}

export interface RunOptions {
  readonly script: ReadonlyArray<ReplayStep>
  /** Model calls (agent steps); the script repeats when it is shorter. */
  readonly steps: number
  readonly windowTokens?: number
  readonly maxOutputTokens?: number
  readonly engine?: ContextEngine.ContextEngine
  readonly log?: (line: string) => void
}

const measurer = Measurer.make(Tokenizers.get("o200k_base"))

const system =
  "You are a coding agent working in the pi-mono repository. Use the tools to read, search and edit files, and run commands."

/** The policy of the replayed model: a 32K window. */
export const policyFor = (windowTokens: number, maxOutputTokens: number): Partial<ModelPolicy.ModelPolicy> => ({
  model: "replay-32k",
  contextWindowTokens: windowTokens,
  maxOutputTokens,
  reserveTokens: maxOutputTokens,
  keepRecentTokens: Math.floor(windowTokens / 4),
  toolLoopReserveTokens: Math.floor(windowTokens / 16),
  safetyMarginTokens: Math.floor(windowTokens / 32),
  tokenizer: "o200k_base"
})

export const run = async (options: RunOptions): Promise<RunReport> => {
  const windowTokens = options.windowTokens ?? 32_000
  const maxOutputTokens = options.maxOutputTokens ?? 4_000
  const log = options.log ?? (() => {})
  const script = options.script
  const at = (step: number): ReplayStep => script[step % script.length]!
  const steps: Array<StepReport> = []
  const compactions: Array<Extract<ContextController.ContextEvent, { type: "compaction" }>> = []

  const inspect = (params: LanguageModelV4CallOptions, rejected: boolean, step: number): StepReport => {
    const messages = PromptConversion.fromPrompt(params.prompt)
    const tools = (params.tools ?? []).flatMap((definition) =>
      definition.type === "function" ? [{ name: definition.name, inputSchema: definition.inputSchema as never }] : []
    )
    const promptTokens = measurer.measure(ContextView.fromMessages(messages, tools)).inputTokens
    const pairingIntact = ToolPairing.analyze(ContextView.fromMessages(messages).items).problems.length === 0
    return { step, promptTokens, messages: messages.length, pairingIntact, rejected }
  }

  let accepted = 0
  let lastRequest: Extract<ContextController.ContextEvent, { type: "request" }> | undefined
  const model = new MockLanguageModelV4({
    provider: "replay.chat",
    modelId: "replay-32k",
    doGenerate: async (params) => {
      const step = accepted
      const probe = inspect(params, false, step)
      if (probe.promptTokens + maxOutputTokens > windowTokens) {
        steps.push({ ...probe, rejected: true })
        const message = `prompt is too long: ${probe.promptTokens + maxOutputTokens} tokens > ${windowTokens} maximum`
        throw new APICallError({
          message,
          url: "replay://model",
          requestBodyValues: {},
          statusCode: 400,
          isRetryable: false
        })
      }
      steps.push(probe)
      log(
        `step ${String(step).padStart(3)}  prompt ${String(probe.promptTokens).padStart(6)} tokens + ${maxOutputTokens} output / ${windowTokens} window  (${probe.messages} messages sent, ${lastRequest?.messagesInTranscript ?? "?"} in transcript)`
      )
      accepted++
      const usage = {
        inputTokens: { total: probe.promptTokens, noCache: probe.promptTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 40, text: 40, reasoning: 0 }
      }
      if (step === options.steps - 1) {
        return {
          content: [{ type: "text", text: `Replayed ${step} tool calls.` }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: []
        }
      }
      const call = at(step)
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `replay_${step}`,
            toolName: call.toolName,
            input: JSON.stringify(call.input ?? {})
          }
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: []
      }
    }
  })

  const toolNames = [...new Set(script.map((step) => step.toolName))]
  const tools: Record<string, Tool> = Object.fromEntries(
    toolNames.map((name) => [
      name,
      tool({
        description: `Replayed ${name} tool`,
        inputSchema: jsonSchema<Record<string, unknown>>({ type: "object", additionalProperties: true }),
        execute: async (_input: Record<string, unknown>, { toolCallId }: { toolCallId: string }) =>
          at(Number(toolCallId.replace("replay_", ""))).output
      })
    ])
  )

  const middleware = contextEngineMiddleware({
    engine: options.engine ?? TieredSummaryEngine.make(),
    policy: policyFor(windowTokens, maxOutputTokens),
    onEvent: (event) => {
      if (event.type === "request") lastRequest = event
      if (event.type === "compaction") {
        compactions.push(event)
        const stages = event.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
        log(
          `  ↳ compaction (${event.reasons.join(", ")}): request ${event.tokensBefore} → ${event.tokensAfter} tokens${stages.length > 0 ? ` via ${stages.join(", ")}` : ""}${event.checkpointId ? `, checkpoint ${event.checkpointId}` : ""}`
        )
      }
      if (event.type === "compaction-failed") log(`  ↳ compaction failed: ${event.error.message}`)
      if (event.type === "overflow") log(`  ↳ provider overflow; learned window ${event.learnedWindowTokens}`)
    }
  })

  const agent = new ToolLoopAgent({
    model: wrapLanguageModel({ model, middleware }),
    instructions: system,
    tools,
    stopWhen: stepCountIs(options.steps),
    maxOutputTokens
  })
  const result = await agent.generate({
    prompt: "Refactor the coding agent as in the recorded session: read the code, make the edits and run the checks."
  })
  return { steps, compactions, windowTokens, maxOutputTokens, finalText: result.text }
}

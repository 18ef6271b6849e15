/**
 * One run of the example: the four tasks through `generateText` with a
 * scripted `MockLanguageModelV4` wrapped by `contextEngineMiddleware`, under
 * a 24K window.
 *
 * - `tools`: the tiered engine wrapped with `Nudges` (guideline and notes)
 *   plus `contextTools(...)`: the model rewinds each finished task and
 *   answers the detail question with search + restore;
 * - `tiered`: the tiered-summary engine alone; the model re-reads a file
 *   whose detail compaction removed.
 *
 * Every request's measured input tokens are recorded per task and step.
 */
import type { Entry, ModelPolicy } from "@context-engine/core"
import { Nudges, TieredSummaryEngine } from "@context-engine/engines"
import { contextEngineMiddleware, contextTools } from "@context-engine/provider-adapters"
import { generateText, jsonSchema, type ModelMessage, stepCountIs, type ToolSet, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import * as Brain from "./Brain.ts"
import * as Workspace from "./Workspace.ts"

/** One request sent to the model. */
export interface Step {
  readonly task: number
  readonly inputTokens: number
  readonly action: string
}

/** What a run produced. */
export interface Report {
  readonly mode: Brain.Mode
  readonly steps: ReadonlyArray<Step>
  readonly answers: ReadonlyArray<string>
  readonly totalInputTokens: number
  readonly compactions: number
  /** Every transcript entry (the originals are all here). */
  readonly transcript: ReadonlyArray<Entry.Entry>
}

const MODEL = { provider: "mock.chat", modelId: "mock-24k" }

/** The model's policy: a 24K window, exact o200k counts. */
export const policy: Partial<ModelPolicy.ModelPolicy> = {
  model: MODEL.modelId,
  contextWindowTokens: 24_000,
  maxOutputTokens: 1_000,
  reserveTokens: 1_000,
  keepRecentTokens: 6_000,
  tokenizer: "o200k_base"
}

const SYSTEM = "You are a coding agent. Read files with read_file and answer briefly."

const readFile = tool({
  description: "Read a file of the workspace.",
  inputSchema: jsonSchema<{ path: string }>({
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
    additionalProperties: false
  }),
  execute: async ({ path }) => Workspace.files.get(path) ?? `no such file: ${path}`
})

/** Runs the four tasks in one mode. */
export const run = async (mode: Brain.Mode, log: (line: string) => void = () => {}): Promise<Report> => {
  const steps: Array<Step> = []
  let task = 0
  let pendingTokens = 0
  let compactions = 0
  const middleware = contextEngineMiddleware({
    engine: mode === "tools" ? Nudges.wrap(TieredSummaryEngine.make()) : TieredSummaryEngine.make(),
    policy,
    onEvent: (event) => {
      if (event.type === "request") pendingTokens = event.inputTokens
      if (event.type === "compaction") {
        compactions++
        log(
          `    ↳ compaction: request ${event.tokensBefore} → ${event.tokensAfter} tokens${event.checkpointId ? ` (${event.checkpointId})` : ""}`
        )
      }
    }
  })
  const model = new MockLanguageModelV4({
    ...MODEL,
    doGenerate: async ({ prompt }) => {
      const decision = Brain.decide(prompt, mode)
      const action =
        decision.type === "call"
          ? `${decision.toolName} ${JSON.stringify(decision.input).slice(0, 60)}`
          : `answer: ${decision.text}`
      steps.push({ task, inputTokens: pendingTokens, action })
      log(`  task ${task + 1} step: ${String(pendingTokens).padStart(6)} input tokens → ${action}`)
      const usage = {
        inputTokens: { total: pendingTokens, noCache: pendingTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 30, text: 30, reasoning: 0 }
      }
      return decision.type === "call"
        ? {
            content: [
              {
                type: "tool-call",
                toolCallId: `call_${steps.length}`,
                toolName: decision.toolName,
                input: JSON.stringify(decision.input)
              }
            ],
            finishReason: { unified: "tool-calls", raw: undefined },
            usage,
            warnings: []
          }
        : {
            content: [{ type: "text", text: decision.text }],
            finishReason: { unified: "stop", raw: undefined },
            usage,
            warnings: []
          }
    }
  })
  const session = () => middleware.controller.session(MODEL)
  const tools: ToolSet = { read_file: readFile, ...(mode === "tools" ? contextTools({ session }) : {}) }
  const wrapped = wrapLanguageModel({ model, middleware })
  const messages: Array<ModelMessage> = []
  const answers: Array<string> = []
  for (const [index, text] of Workspace.tasks.entries()) {
    task = index
    log(`task ${index + 1}: ${text}`)
    messages.push({ role: "user", content: text })
    const result = await generateText({ model: wrapped, system: SYSTEM, messages, tools, stopWhen: stepCountIs(8) })
    messages.push(...result.responseMessages)
    answers.push(result.text)
  }
  return {
    mode,
    steps,
    answers,
    totalInputTokens: steps.reduce((total, step) => total + step.inputTokens, 0),
    compactions,
    transcript: (await session()).transcript()
  }
}

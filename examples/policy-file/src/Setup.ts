/**
 * Loads `context-engine.config.json`: the policy file (core `PolicyFile`
 * format: per-model windows and reserves over the built-in catalog) and the
 * summarizer model that writes checkpoints for every model. Builds the
 * middleware from them.
 *
 * Without an API key for the summarizer's provider, a scripted
 * `MockLanguageModelV4` stands in for it under the configured model id, so
 * the example runs offline.
 */
import { readFile } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import type { PolicyRegistry } from "@context-engine/core"
import { PolicyFile } from "@context-engine/core/node"
import { TieredSummaryEngine } from "@context-engine/engines"
import {
  type ContextController,
  type ContextEngineMiddleware,
  contextEngineMiddleware,
  LanguageModelSummarizer,
  ModelSpec
} from "@context-engine/provider-adapters"
import type { LanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"

export interface Config {
  readonly policyFile: string
  readonly summarizer: { readonly model: string; readonly contextWindowTokens?: number }
}

export interface Setup {
  readonly registry: PolicyRegistry.PolicyRegistry
  readonly summarizerModel: LanguageModel
  /** Whether the summarizer is the offline stand-in. */
  readonly offline: boolean
  /** Prompts the summarizer model received. */
  readonly summarizerCalls: () => number
  readonly middleware: ContextEngineMiddleware.ContextEngineMiddleware
}

/** A stand-in summarizer model: answers every request with a checkpoint naming what it saw. */
const offlineSummarizer = (modelId: string): MockLanguageModelV4 =>
  new MockLanguageModelV4({
    provider: "offline-summarizer",
    modelId,
    doGenerate: async ({ prompt }) => {
      const text = JSON.stringify(prompt)
      const paths = [...new Set(text.match(/src\/[\w/.-]+\.ts/g) ?? [])]
      const asks = [...text.matchAll(/\[user\] ([^\\"]+)/g)].map((match) => match[1]!)
      const content = {
        goal: "Review the listed modules and record a decision for each",
        constraints: ["Keep public APIs stable"],
        progress: { done: paths.map((path) => `Reviewed ${path}`), inProgress: [], blocked: [] },
        decisions: [{ decision: "Summaries are written by the configured summarizer model", rationale: "policy file" }],
        nextSteps: ["Continue with the next module"],
        criticalContext: [],
        pendingUserAsks: asks.slice(-1),
        identifiers: { paths, ids: [], hashes: [], urls: [], ports: [], commands: [], errors: [] },
        filesRead: paths,
        filesModified: []
      }
      return {
        content: [{ type: "text", text: JSON.stringify(content) }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: 1000, noCache: 1000, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 200, text: 200, reasoning: 0 }
        },
        warnings: []
      }
    }
  })

export const load = async (
  configPath: string,
  onEvent?: (event: ContextController.ContextEvent) => void
): Promise<Setup> => {
  const config = JSON.parse(await readFile(configPath, "utf8")) as Config
  const registry = await PolicyFile.loadPolicyFilePromise(resolve(dirname(configPath), config.policyFile))
  const resolved = await Effect.runPromise(Effect.result(ModelSpec.resolve(config.summarizer.model)))
  const modelId = config.summarizer.model.split(":").at(-1) ?? config.summarizer.model
  const mock = resolved._tag === "Success" ? undefined : offlineSummarizer(modelId)
  const summarizerModel = resolved._tag === "Success" ? resolved.success : (mock as LanguageModel)
  const summarizer = LanguageModelSummarizer.make({
    model: summarizerModel,
    name: config.summarizer.model,
    ...(config.summarizer.contextWindowTokens !== undefined
      ? { contextWindowTokens: config.summarizer.contextWindowTokens }
      : {})
  })
  const middleware = contextEngineMiddleware({
    engine: TieredSummaryEngine.make({ summarizer }),
    policy: registry,
    sessionId: (model) => model.modelId,
    ...(onEvent ? { onEvent } : {})
  })
  return {
    registry,
    summarizerModel,
    offline: mock !== undefined,
    summarizerCalls: () => mock?.doGenerateCalls.length ?? 0,
    middleware
  }
}

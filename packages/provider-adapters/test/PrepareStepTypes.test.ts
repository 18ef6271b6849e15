/**
 * Type-level behaviour of `contextEnginePrepareStep` (checked by `tsc` over the tests, part of `pnpm test`):
 * the AI SDK does not hand `tools` to `prepareStep`, so the helper counts tool schemas only when it is given
 * them. A call with tools whose helper was made without them is a type error — its schemas would go uncounted.
 */
import { SlidingWindowEngine } from "@context-engine/engines"
import { generateText, jsonSchema, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expectTypeOf, it } from "vitest"
import { contextEnginePrepareStep } from "../src/PrepareStep.ts"

describe("contextEnginePrepareStep types", () => {
  const engine = SlidingWindowEngine.makeAsync()
  const model = new MockLanguageModelV4()
  const tools = {
    read: tool({
      inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } } }),
      execute: async () => ""
    })
  }

  it("fits a call without tools, and a call with the tools it was given", () => {
    const bare = contextEnginePrepareStep({ engine })
    const withTools = contextEnginePrepareStep({ engine, tools })
    const calls = [
      () => generateText({ model, prompt: "hi", prepareStep: bare }),
      () => generateText({ model, prompt: "hi", tools, prepareStep: withTools })
    ]
    expectTypeOf(calls).items.toBeFunction()
  })

  it("rejects a call with tools when the helper was made without them (their schemas would go uncounted)", () => {
    const bare = contextEnginePrepareStep({ engine })
    // @ts-expect-error -- pass the same `tools` to contextEnginePrepareStep
    const call = () => generateText({ model, prompt: "hi", tools, prepareStep: bare })
    expectTypeOf(call).toBeFunction()
  })
})

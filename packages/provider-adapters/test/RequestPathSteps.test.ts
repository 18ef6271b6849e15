/**
 * The request path step after step: a session's controller, which extends
 * its previous step's snapshot, view, normalized view and alignment
 * (`ArrayLineage`, `PromptAlignment.align`), sends at every step what a
 * fresh controller sends for the same messages from scratch.
 */
import { ArrayLineage, type Message } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"
import * as PromptAlignment from "../src/PromptAlignment.ts"
import { byNamedMessage } from "./support/EntryIds.ts"

const model = { provider: "openai.chat", modelId: "gpt-4o" }
const options = { policy: { contextWindowTokens: 10_000_000 }, offload: { thresholdTokens: 300 } } as const
const big = Array.from({ length: 400 }, (_, line) => `line ${line}`).join("\n")

/** One message the application appends; tool calls and results use ids from a small pool (some never answered). */
const message: fc.Arbitrary<Message.Message> = fc.oneof(
  fc.constantFrom("go on", "fix the test", "").map((text): Message.Message => ({ role: "user", content: text })),
  fc.constantFrom("done", "looking").map((text): Message.Message => ({ role: "assistant", content: text })),
  fc.constant<Message.Message>({ role: "assistant", content: [{ type: "reasoning", text: "thinking" }] }),
  fc.nat(5).map(
    (call): Message.Message => ({
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: `c${call}`, toolName: "read", input: { call } }]
    })
  ),
  fc.record({ call: fc.nat(5), large: fc.boolean() }).map(
    ({ call, large }): Message.Message => ({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${call}`,
          toolName: "read",
          output: { type: "text", value: large ? big : `result ${call}` }
        }
      ]
    })
  )
)

const steps = fc.array(
  fc.record({
    added: fc.array(message, { minLength: 1, maxLength: 5 }),
    // The application rewrote an earlier message (the session branches).
    rewrite: fc.option(fc.nat(), { nil: undefined })
  }),
  { minLength: 1, maxLength: 8 }
)

describe("request path, step after step", () => {
  it("sends at every step what a fresh controller sends for the same messages (appends, branches, offloads, repairs)", async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const controller = ContextController.make({ engine: TieredSummaryEngine.makeAsync(), ...options })
        const history: Array<Message.Message> = [{ role: "user", content: "start" }]
        let previous: ContextController.Prepared | undefined
        let branched = false
        for (const { added, rewrite } of plan) {
          let appendedOnly = true
          if (rewrite !== undefined && history.length > 1) {
            history[rewrite % history.length] = { role: "user", content: `rewritten ${history.length}` }
            appendedOnly = false
            branched = true
          }
          history.push(...added)
          // The application sends new objects with the same values every step (as the AI SDK does).
          const sent = structuredClone(history)
          const outcome = (promise: Promise<ContextController.Prepared>) =>
            promise.then(
              (value) => ({ value }),
              (error: { readonly _tag?: string }) => ({ error: error._tag ?? String(error) })
            )
          const mineOutcome = await outcome(controller.prepare(model, sent, []))
          // Until the application rewrites its history, a fresh controller's session holds the same messages (its
          // offload edits come after them, so entry ids differ): it sends the same request, from scratch. (After a
          // branch the session's entries differ by design: an offload recorded after a later message is not carried
          // onto the new branch.)
          if (!branched) {
            const freshSent = structuredClone(history)
            const freshOutcome = await outcome(
              ContextController.make({ engine: TieredSummaryEngine.makeAsync(), ...options }).prepare(
                model,
                freshSent,
                []
              )
            )
            // An empty latest user message is refused (InvalidInput) either way.
            if ("error" in freshOutcome || "error" in mineOutcome) expect(mineOutcome).toEqual(freshOutcome)
            else {
              const [prepared, fresh] = [mineOutcome.value, freshOutcome.value]
              expect(byNamedMessage(prepared.messages, prepared.session)).toEqual(
                byNamedMessage(fresh.messages, fresh.session)
              )
              expect(prepared.rewritten).toBe(fresh.rewritten)
              expect(prepared.assembled.measurement).toEqual(fresh.assembled.measurement)
              // The application's own objects at the same positions.
              const mine = new Set<unknown>(sent)
              const theirs = new Set<unknown>(freshSent)
              expect(prepared.messages.map((one) => mine.has(one))).toEqual(
                fresh.messages.map((one) => theirs.has(one))
              )
            }
          }
          if ("error" in mineOutcome) {
            previous = undefined
            continue
          }
          const prepared = mineOutcome.value
          // At every step (branched or not): the same view and measurement as a fresh engine derives from these
          // entries, and the same request as aligned from scratch.
          const cold = await TieredSummaryEngine.makeAsync().assembleContext(prepared.input)
          expect(prepared.assembled.view).toEqual(cold.view)
          expect(prepared.assembled.measurement).toEqual(cold.measurement)
          const request = PromptAlignment.align(
            prepared.assembled.view.items,
            sent,
            prepared.session.messages(),
            undefined
          )
          expect(prepared.messages).toHaveLength(request.request.length)
          prepared.messages.forEach((one, index) => {
            expect(one).toBe(request.request[index])
          })
          expect(prepared.input.entries).toEqual(prepared.session.entries())
          if (previous !== undefined && appendedOnly)
            expect(ArrayLineage.isExtensionOf(prepared.input.entries, previous.input.entries)).toBe(true)
          previous = prepared
        }
      }),
      { numRuns: 40 }
    )
  }, 60_000)
})

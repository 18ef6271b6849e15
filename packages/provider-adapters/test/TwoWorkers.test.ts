/**
 * Two workers on one session: each process holds its own middleware over the
 * same store (`PostgresTranscriptStore` is built for it), and requests of the
 * conversation alternate between them. A worker's session is then behind
 * the store; its next write is refused (an id stored with other content, an
 * installed checkpoint generation). The request must still go out: the
 * controller reads the session again and prepares once more.
 */
import { type Entry, InMemoryTranscriptStore } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { smallPolicy, windowedModel } from "./support/MockProvider.ts"

const WINDOW_TOKENS = 4_000

describe("two workers on one session", () => {
  it("alternating requests all get answers and the store holds every turn once, with checkpoints in generation order", async () => {
    const store = InMemoryTranscriptStore.open()
    const provider = windowedModel({
      windowTokens: WINDOW_TOKENS,
      maxOutputTokens: 1_000,
      replies: () => ({ text: "noted" })
    })
    const worker = () =>
      wrapLanguageModel({
        model: provider.model,
        middleware: contextEngineMiddleware({
          engine: TieredSummaryEngine.make(),
          store,
          sessionId: "s",
          policy: smallPolicy(WINDOW_TOKENS)
        })
      })
    const workers = [worker(), worker()]
    const history: Array<ModelMessage> = []
    const turns = 30
    for (let index = 0; index < turns; index++) {
      history.push({
        role: "user",
        content: `Turn ${index}: review module m${index}. ${"The handler keeps its state in a map keyed by request id. ".repeat(15)}`
      })
      const result = await generateText({
        model: workers[index % 2]!,
        instructions: "You review code.",
        messages: history
      })
      history.push(...result.responseMessages)
    }
    const view = await store.activeView("s")
    const users = view.branch.filter(
      (entry): entry is Entry.MessageEntry => entry.kind === "message" && entry.message.role === "user"
    )
    expect(users.length).toBe(turns)
    const checkpoints = (await store.load("s")).entries.filter((entry) => entry.kind === "checkpoint")
    expect(checkpoints.length).toBeGreaterThan(1)
    expect(checkpoints.map((entry) => (entry.kind === "checkpoint" ? entry.checkpoint.generation : 0))).toEqual(
      checkpoints.map((_, index) => index + 1)
    )
  })
})

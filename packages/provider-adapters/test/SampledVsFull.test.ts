/**
 * `historyCheck: "sampled"` against `"full"` through the AI SDK middleware,
 * on sessions long enough to be sampled (more than 1 + RECENT + ROTATED
 * messages): a generated run of appends, in-place edits anywhere (large tool
 * results the view offloads included), a system prompt that changes every
 * step, removals and insertions. The request sent must be the same at every
 * step, its transcript entry ids compared by the message they name
 * (`support/EntryIds.ts`): until the sampled check reaches an older in-place
 * edit its session has not branched there, so an offload marker after the
 * edit names the entry of the branch before it, where "full" names the entry
 * it recorded anew for the same message. Once the sampled check has caught
 * up, the session reopened from the store holds the same active path.
 */
import { InMemoryTranscriptStore, type Message } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { wrapLanguageModel } from "ai"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import * as MessageMatch from "../src/MessageMatch.ts"
import * as Session from "../src/Session.ts"
import { byNamedMessage } from "./support/EntryIds.ts"
import { rewrapped, smallPolicy, windowedModel } from "./support/MockProvider.ts"

const { RECENT_MESSAGES, ROTATED_MESSAGES } = MessageMatch
const big = (tag: string) => Array.from({ length: 300 }, (_, line) => `${tag} line ${line}`).join("\n")

/** `count` messages: a system prompt, then user / assistant(tool call) / tool(result) turns; every 40th result large. */
const history = (count: number): Array<Message.Message> =>
  Array.from({ length: count }, (_, index): Message.Message => {
    if (index === 0) return { role: "system", content: "You are a coding agent." }
    if (index % 3 === 1) return { role: "user", content: [{ type: "text", text: `task ${index}` }] }
    if (index % 3 === 2)
      return {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: `call-${index}`, toolName: "read", input: { path: `f${index}` } }]
      }
    return {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call-${index - 1}`,
          toolName: "read",
          output: { type: "text", value: index % 40 === 0 ? big(`r${index}`) : `v${index}` }
        }
      ]
    }
  })

/** `messages` with the message at `position` rewritten in place (same role and shape, other text). */
const editedAt = (messages: ReadonlyArray<Message.Message>, position: number, tag: string): Array<Message.Message> => {
  const next = rewrapped(messages)
  const message = next[position]!
  if (typeof message.content === "string")
    next[position] = { ...message, content: `${message.content} ${tag}` } as Message.Message
  else
    next[position] = {
      ...message,
      content: message.content.map((part) =>
        part.type === "text"
          ? { ...part, text: `${part.text} ${tag}` }
          : part.type === "tool-result" && part.output.type === "text"
            ? { ...part, output: { ...part.output, value: `${part.output.value} ${tag}` } }
            : part
      )
    } as Message.Message
  return next
}

type Op =
  | { readonly kind: "append"; readonly large: boolean }
  | { readonly kind: "edit" | "remove" | "insert"; readonly where: number }
  | { readonly kind: "editLarge"; readonly where: number }
  | { readonly kind: "system" }
  | { readonly kind: "same" }

const where = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("append" as const), large: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("edit" as const), where }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("editLarge" as const), where }) },
  fc.record({ kind: fc.constant("remove" as const), where }),
  fc.record({ kind: fc.constant("insert" as const), where }),
  fc.constant({ kind: "system" as const }),
  fc.constant({ kind: "same" as const })
)

const WINDOW_TOKENS = 10_000_000

const runner = (historyCheck: MessageMatch.HistoryCheck, records: InMemoryTranscriptStore.Records = new Map()) => {
  const store = InMemoryTranscriptStore.open(records)
  const { model, calls } = windowedModel({ windowTokens: WINDOW_TOKENS, replies: () => ({ text: "ok" }) })
  const middleware = contextEngineMiddleware({
    engine: TieredSummaryEngine.makeAsync(),
    policy: smallPolicy(WINDOW_TOKENS),
    offload: { thresholdTokens: 300 },
    store,
    sessionId: "s",
    historyCheck
  })
  const wrapped = wrapLanguageModel({ model, middleware })
  return {
    store,
    records,
    /** The prompt the model received, the entry ids it names replaced by the messages they name (`byNamedMessage`). */
    send: async (prompt: ReadonlyArray<Message.Message>) => {
      await wrapped.doGenerate({ prompt: rewrapped(prompt) as never })
      const session = await middleware.controller.session({ provider: model.provider, modelId: model.modelId })
      return byNamedMessage(calls.at(-1)!.params.prompt, session)
    }
  }
}

/** A copy of `records` (a process that opens the same stored session anew). */
const copied = (records: InMemoryTranscriptStore.Records): InMemoryTranscriptStore.Records =>
  new Map([...records].map(([id, { texts, updatedAt }]) => [id, { texts: [...texts], updatedAt }]))

const activePath = async (store: Session.SessionStore) => (await Session.make("s", store, undefined, "full")).messages()

describe('historyCheck "sampled" against "full" through the middleware', () => {
  it("sends the same request at every step, and holds the same active path once the sampled check caught up", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1 + RECENT_MESSAGES + ROTATED_MESSAGES + 1, max: 360 }),
        fc.array(op, { minLength: 1, maxLength: 10 }),
        async (size, ops) => {
          const sampled = runner("sampled")
          const full = runner("full")
          let prompt = history(size)
          let added = 0
          // Whether the application rewrote its first message (see the note at the end).
          let rootRewritten = false
          const extra = (): Message.Message => ({ role: "user", content: [{ type: "text", text: `new ${added++}` }] })
          // A tool call and its result; a large result is offloaded on arrival.
          const toolTurn = (large: boolean): Array<Message.Message> => {
            const id = `late-${added++}`
            return [
              { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: {} }] },
              {
                role: "tool",
                content: [
                  {
                    type: "tool-result",
                    toolCallId: id,
                    toolName: "read",
                    output: { type: "text", value: large ? big(id) : id }
                  }
                ]
              }
            ]
          }
          expect(await sampled.send(prompt)).toEqual(await full.send(prompt))
          // Large results arriving later (offloaded on arrival), then enough messages to make them older.
          prompt = [
            ...prompt,
            ...toolTurn(true),
            ...toolTurn(true),
            ...Array.from({ length: RECENT_MESSAGES + 1 }, extra)
          ]
          expect(await sampled.send(prompt)).toEqual(await full.send(prompt))
          /** Positions of the large tool results. */
          const large = () =>
            prompt.flatMap((message, at) =>
              message.role === "tool" &&
              message.content.some((part) => part.type === "tool-result" && JSON.stringify(part.output).length > 2_000)
                ? [at]
                : []
            )
          for (const next of ops) {
            const at =
              next.kind === "edit" || next.kind === "remove" || next.kind === "insert"
                ? Math.floor(next.where * prompt.length)
                : 0
            if ((next.kind === "edit" && at === 0) || next.kind === "system") rootRewritten = true
            if (next.kind === "append") prompt = [...prompt, ...toolTurn(next.large), extra()]
            else if (next.kind === "edit") prompt = editedAt(prompt, at, `e${added++}`)
            else if (next.kind === "editLarge") {
              const positions = large()
              prompt = editedAt(prompt, positions[Math.floor(next.where * positions.length)]!, `e${added++}`)
            } else if (next.kind === "remove" && at > 0) prompt = prompt.toSpliced(at, 1)
            else if (next.kind === "insert" && at > 0) prompt = prompt.toSpliced(at, 0, extra())
            else if (next.kind === "system") prompt = editedAt(prompt, 0, `s${added++}`)
            const sent = await sampled.send(prompt)
            expect(sent).toEqual(await full.send(prompt))
            // Cold: a new middleware over a copy of the store sends the same (its session holds the prompt already;
            // after a rewritten first message a reopened session does not — see below).
            if (!rootRewritten) expect(await runner("full", copied(full.records)).send(prompt)).toEqual(sent)
          }
          // The sampled check catches up within ⌈older / ROTATED⌉ unchanged steps.
          const older = prompt.length - 1 - RECENT_MESSAGES
          for (let step = 0; step < Math.ceil(older / ROTATED_MESSAGES); step++)
            expect(await sampled.send(prompt)).toEqual(await full.send(prompt))
          // A session reopened from its store holds the same active path — unless the first message was rewritten:
          // the new root is written with parentId null, which ActiveView.branch reads as continuing the entry before
          // it (the old branch), so the reopened path is old branch + new branch in either mode (known, see notes).
          if (!rootRewritten) {
            const [fromSampled, fromFull] = [await activePath(sampled.store), await activePath(full.store)]
            expect(fromSampled).toEqual(fromFull)
            expect(fromFull).toEqual(prompt)
          }
        }
      ),
      {
        numRuns: 7,
        // Found at 25× runs (seed 2007475704): the edit at message 64 of 387 falls outside that step's rotation.
        examples: [
          [
            347,
            [
              { kind: "append", large: false },
              { kind: "edit", where: 0.165374677002584 }
            ]
          ]
        ]
      }
    )
  }, 60_000)
})

describe('historyCheck "sampled": an older in-place edit of a message the view does not keep verbatim', () => {
  it("an offloaded tool result edited in place goes out as the full check sends it", async () => {
    const sampled = runner("sampled")
    const full = runner("full")
    let prompt = history(400)
    expect(await sampled.send(prompt)).toEqual(await full.send(prompt))
    // A large result arrives in a step of its own (offloaded on arrival), then 40 more messages: it is older.
    prompt = [
      ...prompt,
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "late", toolName: "read", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "late", toolName: "read", output: { type: "text", value: big("late") } }
        ]
      }
    ]
    const offloaded = await sampled.send(prompt)
    expect(offloaded).toEqual(await full.send(prompt))
    expect(JSON.stringify(offloaded[401]).length).toBeLessThan(big("late").length)
    prompt = [
      ...prompt,
      ...Array.from({ length: 40 }, (_, index): Message.Message => ({ role: "user", content: `u${index}` }))
    ]
    expect(await sampled.send(prompt)).toEqual(await full.send(prompt))
    const edited = editedAt(prompt, 401, "edited")
    expect(await sampled.send(edited)).toEqual(await full.send(edited))
  })
})

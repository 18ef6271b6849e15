/**
 * Every transcript in ../shared/transcripts: imported with the counts stated
 * in SOURCES.md (or counted independently here with a regex / JSON.parse,
 * never with the importer), the pairing problems the source really has, and
 * a round trip import → export → import that preserves the messages.
 */
import { readFileSync } from "node:fs"
import { Decode, Entry, Message, MessageParts, ToolPairing } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import {
  AnthropicMessagesExport,
  ExportInput,
  Import,
  ImportResult,
  ModelMessagesExport,
  OpenAIChatExport
} from "@context-engine/transcripts"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"

const read = (name: string) => readFileSync(transcript(name), "utf8")
const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0
// biome-ignore lint/suspicious/noExplicitAny: raw source records, parsed independently of the importer
type Raw = Record<string, any>
const jsonl = (name: string): Array<Raw> =>
  read(name)
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Raw)

const load = async (name: string) => {
  const result = await Import.importFilePromise(transcript(name))
  const messages = result.transcript.entries.filter(Entry.isMessageEntry)
  const pairing = ToolPairing.analyze(messages.map((entry) => ({ entryId: entry.id, message: entry.message })))
  const roles = (role: Message.Message["role"]) => messages.filter((entry) => entry.message.role === role).length
  const problems = (kind: ToolPairing.Problem["kind"]) => pairing.problems.filter((problem) => problem.kind === kind)
  return { result, messages, pairing, roles, problems }
}

type Loaded = Awaited<ReturnType<typeof load>>

const textOf = (entry: Entry.MessageEntry) => MessageParts.textOf(entry.message.content)

// ---------------------------------------------------------------------------
// Round trip: what each target format can carry, compared before and after
// ---------------------------------------------------------------------------

const outputAtom = (output: Message.ToolResultOutput, withError: boolean) => [
  MessageParts.outputText(output),
  withError && (output.type === "error-text" || output.type === "error-json")
]

/** Messages as the Anthropic format carries them (block order, signatures, error flags). */
const anthropicCanon = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((message) => {
    if (message.role === "system") return ["system", message.content]
    if (typeof message.content === "string") return [message.role, [["text", message.content]]]
    const parts = message.content as ReadonlyArray<Message.ContentPart>
    return [
      message.role,
      parts.map((part) => {
        switch (part.type) {
          case "text":
            return ["text", part.text]
          case "reasoning":
            return ["reasoning", part.text, part.providerOptions?.anthropic?.signature ?? null]
          case "tool-call":
            return ["call", part.toolCallId, part.toolName, JSON.stringify(part.input)]
          case "tool-result":
            return ["result", part.toolCallId, part.toolName, ...outputAtom(part.output, true)]
          case "image":
            return ["image", ExportInput.dataString(part.image)]
          default:
            return [part.type]
        }
      })
    ]
  })

/** Messages as OpenAI Chat carries them: one tool message per result, reasoning and text joined, no signatures, no error flag. */
const openAICanon = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message): Array<ReadonlyArray<unknown>> => {
    if (message.role === "system") return [["system", message.content]]
    if (message.role === "tool")
      return message.content.flatMap((part) =>
        part.type === "tool-result" ? [["tool", part.toolCallId, part.toolName, ...outputAtom(part.output, false)]] : []
      )
    if (message.role === "user")
      return [
        [
          "user",
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) => (part.type === "text" ? part.text : part.type))
        ]
      ]
    const parts =
      typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content
    const joined = (type: "text" | "reasoning") =>
      parts.flatMap((part) => (part.type === type ? [part.text] : [])).join("\n")
    return [
      [
        "assistant",
        joined("reasoning"),
        joined("text"),
        parts.flatMap((part) =>
          part.type === "tool-call" ? [[part.toolCallId, part.toolName, JSON.stringify(part.input)]] : []
        )
      ]
    ]
  })

const roundTrips = (loaded: () => Loaded) => {
  const messages = () => loaded().messages.map((entry) => entry.message)
  it("round-trips through ModelMessage[] JSON unchanged", async () => {
    const json = JSON.parse(JSON.stringify(ModelMessagesExport.toModelMessages(messages())))
    const again = await effectToPromise(Import.importValue(json, { format: "model-messages" }))
    expect(again.issues).toEqual([])
    expect(again.transcript.entries.map((entry) => (entry.kind === "message" ? entry.message : null))).toEqual(
      JSON.parse(JSON.stringify(messages()))
    )
  })
  it("round-trips through Anthropic Messages, keeping blocks, signatures and error flags", async () => {
    const request = JSON.parse(JSON.stringify(AnthropicMessagesExport.toAnthropicMessages(messages())))
    const again = await effectToPromise(Import.importValue(request, { format: "anthropic-messages" }))
    expect(again.issues).toEqual([])
    const back = again.transcript.entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
    expect(anthropicCanon(back)).toEqual(anthropicCanon(messages()))
  })
  it("round-trips through OpenAI Chat, keeping text, reasoning text, calls and results", async () => {
    const chat = JSON.parse(JSON.stringify(OpenAIChatExport.toOpenAIChat(messages())))
    const again = await effectToPromise(Import.importValue(chat, { format: "openai-chat" }))
    expect(again.issues).toEqual([])
    const back = again.transcript.entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
    expect(openAICanon(back)).toEqual(openAICanon(messages()))
  })
}

const effectToPromise = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const expectValidEntries = (loaded: () => Loaded) =>
  it("has unique ids, parents that exist, and decodable entries", () => {
    const entries = loaded().result.transcript.entries
    const ids = new Set(entries.map((entry) => entry.id))
    expect(ids.size).toBe(entries.length)
    for (const entry of entries) if (entry.parentId !== null) expect(ids.has(entry.parentId)).toBe(true)
    const decode = Decode.decodeUnknownSync(Entry.Entry, "entry")
    for (const entry of entries) decode(JSON.parse(JSON.stringify(entry)))
  })

// ---------------------------------------------------------------------------

describe.each([
  // SOURCES.md: 990 messages (55 user, 484 assistant, 448 toolResult, 3 bashExecution), 454 toolCall blocks
  { name: "pi/before-compaction.jsonl", messages: 990, user: 55 + 3, assistant: 484, tool: 448, calls: 454 },
  // SOURCES.md: 914 messages (88 user, 453 assistant, 373 toolResult), 391 toolCall blocks
  { name: "pi/large-session.jsonl", messages: 914, user: 88, assistant: 453, tool: 373, calls: 391 }
])("$name", ({ name, messages, user, assistant, tool, calls }) => {
  let loaded: Loaded
  it("imports the SOURCES.md message and tool-call counts", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("pi")
    expect(loaded.messages).toHaveLength(messages)
    expect([loaded.roles("user"), loaded.roles("assistant"), loaded.roles("tool")]).toEqual([user, assistant, tool])
    expect(loaded.pairing.toolCalls).toBe(calls)
  })
  it("reports exactly the calls the source left unanswered, naming the assistant entry that made each", () => {
    const raw = jsonl(name)
    const answered = new Set(raw.filter((r) => r.message?.role === "toolResult").map((r) => r.message.toolCallId))
    const unanswered = raw.flatMap((r) =>
      r.message?.role === "assistant"
        ? r.message.content.filter((b: Raw) => b.type === "toolCall" && !answered.has(b.id)).map((b: Raw) => b.id)
        : []
    )
    const missing = loaded.problems("call-without-result")
    expect(missing.map((problem) => problem.toolCallId).sort()).toEqual([...unanswered].sort())
    for (const problem of missing) {
      const entry = loaded.messages.find((candidate) => candidate.id === (problem as { entryId: string }).entryId)!
      expect(ExportInput.messagesOf([entry.message]).flatMap((message) => [...Message.toolCallIds(message)])).toContain(
        problem.toolCallId
      )
    }
    expect(loaded.problems("orphan-result")).toEqual([])
    expect(loaded.problems("duplicate-call-id")).toEqual([])
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("claude-code/fe5e1c67-….jsonl", () => {
  const name = "claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
  const raw = jsonl(name)
  // SOURCES.md: 1 summary, 175 user, 262 assistant records; 167 tool_use and 167 tool_result blocks
  const conversation = raw.filter((r) => r.type === "user" || r.type === "assistant")
  const main = conversation.filter((r) => r.isSidechain !== true)
  const side = conversation.filter((r) => r.isSidechain === true)
  const blocksOf = (records: Array<Raw>, type: string) =>
    records
      .flatMap((r) => (Array.isArray(r.message.content) ? r.message.content : []))
      .filter((b: Raw) => b.type === type)
  const isResultRecord = (r: Raw) =>
    r.type === "user" &&
    Array.isArray(r.message.content) &&
    r.message.content.some((b: Raw) => b.type === "tool_result")
  let loaded: Loaded
  let sidechainEvents: Array<Entry.EventEntry>
  it("imports the main thread as messages (one per API message) and the 405 sidechain records as events", async () => {
    loaded = await load(name)
    sidechainEvents = loaded.result.transcript.entries.filter(
      (entry): entry is Entry.EventEntry => entry.kind === "event" && entry.event.name === "claude-code.sidechain"
    )
    expect(loaded.result.format).toBe("claude-code")
    expect(loaded.result.transcript.sessionId).toBe(raw.find((r) => typeof r.sessionId === "string")!.sessionId)
    expect(conversation).toHaveLength(175 + 262)
    expect(side).toHaveLength(405)
    expect(sidechainEvents).toHaveLength(side.length)
    // one assistant message per run of main-thread records sharing message.id
    const apiMessages = main.filter(
      (r, i) =>
        r.type === "assistant" && !(main[i - 1]?.type === "assistant" && main[i - 1]!.message.id === r.message.id)
    )
    expect(loaded.roles("assistant")).toBe(apiMessages.length)
    // one tool message per run of main-thread tool_result records
    const resultRuns = main.filter((r, i) => isResultRecord(r) && !(i > 0 && isResultRecord(main[i - 1]!)))
    expect(loaded.roles("tool")).toBe(resultRuns.length)
    expect(loaded.roles("user")).toBe(main.filter((r) => r.type === "user" && !isResultRecord(r)).length)
    expect(loaded.roles("system")).toBe(0)
  })
  it("every tool result sits right after the assistant message that made the call", () => {
    const violations: Array<string> = []
    let open = new Set<string>()
    for (const entry of loaded.messages) {
      const message = entry.message
      if (message.role === "tool") {
        for (const part of message.content)
          if (part.type === "tool-result" && !open.delete(part.toolCallId))
            violations.push(`${part.toolCallId} in ${entry.id} does not follow its call`)
        continue
      }
      for (const id of open) violations.push(`${id} unanswered before ${entry.id}`)
      open = new Set(
        message.role === "assistant" && typeof message.content !== "string"
          ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
          : []
      )
    }
    for (const id of open) violations.push(`${id} unanswered at the end`)
    expect(violations).toEqual([])
    // core ToolPairing checks adjacency too (result-not-adjacent)
    expect(loaded.problems("result-not-adjacent")).toEqual([])
    expect(loaded.pairing.problems).toEqual([])
  })
  it("splits the 167 tool_use / 167 tool_result blocks between the main thread (messages) and the sidechains (events)", () => {
    const mainCalls = blocksOf(main, "tool_use")
    const sideCalls = blocksOf(side, "tool_use")
    expect(mainCalls.length + sideCalls.length).toBe(167)
    expect(blocksOf(main, "tool_result").length + blocksOf(side, "tool_result").length).toBe(167)
    expect(loaded.pairing.toolCalls).toBe(mainCalls.length)
    expect(loaded.pairing.toolResults).toBe(blocksOf(main, "tool_result").length)
    const kept = sidechainEvents.map((event) => ({ message: (event.event.data as Raw).message }))
    expect(blocksOf(kept, "tool_use")).toHaveLength(sideCalls.length)
    expect(blocksOf(kept, "tool_result")).toHaveLength(blocksOf(side, "tool_result").length)
    const results = loaded.messages.flatMap((entry) =>
      entry.message.role === "tool" ? entry.message.content.filter((part) => part.type === "tool-result") : []
    )
    expect(results.every((part) => part.type === "tool-result" && part.toolName.length > 0)).toBe(true)
    // each of the 5 Task calls started one sidechain, matched by its prompt
    const tasks = mainCalls.filter((b: Raw) => b.name === "Task").map((b: Raw) => b.id)
    expect(new Set(sidechainEvents.map((event) => (event.event.data as Raw).taskToolCallId))).toEqual(new Set(tasks))
  })
  it("loses no record: every uuid is an entry id or merged into one, sidechain messages verbatim, the summary record", () => {
    const entries = loaded.result.transcript.entries
    const byId = new Map(entries.map((entry) => [entry.id, entry]))
    const mergedInto = new Map(
      entries.flatMap((entry) => ((entry.meta?.mergedUuids ?? []) as Array<string>).map((uuid) => [uuid, entry.id]))
    )
    for (const record of conversation) {
      const entry = byId.get(record.uuid) ?? byId.get(mergedInto.get(record.uuid)!)
      expect(entry).toBeDefined()
      if (record.isSidechain) {
        expect(entry!.kind === "event" && (entry!.event.data as Raw).message).toEqual(record.message)
        if (record.parentUuid !== null) expect(entry!.parentId).toBe(record.parentUuid)
      } else {
        expect(entry!.kind).toBe("message")
        const parent = record.parentUuid === null ? undefined : (mergedInto.get(record.parentUuid) ?? record.parentUuid)
        if (parent !== undefined && byId.get(record.uuid) !== undefined) expect(entry!.parentId).toBe(parent)
      }
    }
    expect(mergedInto.size + loaded.messages.length + sidechainEvents.length).toBe(conversation.length)
    const position = new Map(entries.map((entry, index) => [entry.id, index]))
    for (const entry of entries)
      if (entry.parentId !== null) expect(position.get(entry.parentId)!).toBeLessThan(position.get(entry.id)!)
    const summaries = entries.filter((entry) => entry.kind === "event" && entry.event.name === "claude-code.summary")
    expect(summaries).toHaveLength(raw.filter((r) => r.type === "summary").length)
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("swe-agent/marshmallow-1867 (function calling)", () => {
  const name = "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj"
  let loaded: Loaded
  it("imports 28 messages (1 system, 1 user, 13 assistant, 13 tool) and 13 tool calls", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("swe-agent")
    expect(loaded.messages).toHaveLength(28)
    expect([loaded.roles("system"), loaded.roles("user"), loaded.roles("assistant"), loaded.roles("tool")]).toEqual([
      1, 1, 13, 13
    ])
    expect(loaded.pairing.toolCalls).toBe(13)
  })
  it("reports the tool-call ids the replayed demonstration reuses, and nothing else", () => {
    const raw = JSON.parse(read(name)) as Raw
    const ids: Array<string> = raw.history.flatMap((m: Raw) => (m.tool_calls ?? []).map((c: Raw) => c.id))
    const reused = [...new Set(ids.filter((id, index) => ids.indexOf(id) !== index))].sort()
    expect(
      loaded
        .problems("duplicate-call-id")
        .map((problem) => problem.toolCallId)
        .sort()
    ).toEqual(reused)
    expect(loaded.problems("orphan-result")).toEqual([])
    expect(loaded.problems("call-without-result")).toEqual([])
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("swe-agent/pydicom-1458 (text actions)", () => {
  const name = "swe-agent/pydicom__pydicom-1458.traj"
  let loaded: Loaded
  it("imports 26 messages (1 system, 13 user, 12 assistant); the 12 actions stay text, kept in meta.action", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("swe-agent")
    expect([loaded.roles("system"), loaded.roles("user"), loaded.roles("assistant")]).toEqual([1, 13, 12])
    // SOURCES.md: "12 actions (in text)": the model wrote commands in prose, so no tool-call parts are invented
    expect(loaded.pairing.toolCalls).toBe(0)
    expect(loaded.messages.filter((entry) => typeof entry.meta?.action === "string")).toHaveLength(12)
    expect(loaded.pairing.problems).toEqual([])
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("aider/aider-dev-chat-history.md", () => {
  const name = "aider/aider-dev-chat-history.md"
  const text = read(name)
  let loaded: Loaded
  it("splits the 1,133 sessions and imports one user message per run of #### lines (1,776)", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("aider")
    const starts = count(text, /^# aider chat started at /gm)
    expect(starts).toBe(1133)
    // the file begins with aider output from a session whose start line was cut off: one more (preamble) session
    expect(loaded.result.sessions).toHaveLength(starts + 1)
    const runs = count(text, /(^####.*\n)+/gm)
    expect(runs).toBe(1776)
    expect(loaded.roles("user")).toBe(runs)
  })
  it("keeps the 707 SEARCH/REPLACE blocks in assistant text; no structured tool calls exist", () => {
    const assistantText = loaded.messages
      .filter((entry) => entry.message.role === "assistant")
      .map(textOf)
      .join("\n")
    expect(count(assistantText, /^<<<<<<< SEARCH/gm)).toBe(707)
    expect(count(assistantText, /^>>>>>>> REPLACE/gm)).toBe(count(text, /^>>>>>>> REPLACE/gm))
    expect(loaded.pairing.toolCalls).toBe(0)
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("claude-code-console/bookminder-day-020.md (best-effort text importer)", () => {
  const name = "claude-code-console/bookminder-day-020.md"
  const text = read(name)
  let loaded: Loaded
  it("imports 667 prompts and 5 compaction summaries, ~3,612 ⏺ blocks and ~1,785 tool calls, each call paired with its ⎿ result", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("claude-code-console")
    // 717 lines open with `> `; 45 of them are markdown quotes inside code fences of the model's text (a gemini
    // report it pasted verbatim, pasted again later), not prompts; 5 are Claude Code's own compaction summaries
    // ("This session is being continued …"), checkpoints.
    expect(count(text, /^> /gm)).toBe(717)
    expect(
      count(text, /^> This session is being continued from a previous conversation that ran out of context/gm)
    ).toBe(5)
    expect(loaded.roles("user")).toBe(667)
    expect(loaded.result.transcript.entries.filter((entry) => entry.kind === "checkpoint")).toHaveLength(5)
    const toolCalls = count(text, /^⏺ [A-Za-z_][\w.:-]*\(/gm)
    expect(toolCalls).toBe(1785)
    expect(loaded.pairing.toolCalls).toBe(toolCalls)
    expect(loaded.roles("assistant")).toBe(count(text, /^⏺ /gm))
    expect(loaded.pairing.problems).toEqual([])
  })
  it("starts a session at each Welcome banner at column 0 (SOURCES' ~10 also counts 5 banners quoted inside tool output)", () => {
    expect(count(text, /Welcome to Claude Code/g)).toBe(10)
    expect(loaded.result.sessions).toHaveLength(count(text, /^│ ✻ Welcome to Claude Code/gm))
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("gemini-cli-console/bookminder-day-016.md (best-effort text importer)", () => {
  const name = "gemini-cli-console/bookminder-day-016.md"
  const text = read(name)
  let loaded: Loaded
  it("imports the 71 prompt boxes, 186 ✦ blocks and the tool boxes' calls with their results", async () => {
    loaded = await load(name)
    expect(loaded.result.format).toBe("gemini-cli-console")
    expect(loaded.roles("user")).toBe(count(text, /^│ {2}> /gm))
    expect(loaded.roles("user")).toBe(71)
    const textBlocks = count(text, /^✦ /gm)
    expect(textBlocks).toBe(186)
    // SOURCES.md says ~194 tool boxes; a tool line is `│ <status>  Name`, status ✔ (done) or - (cancelled)
    const toolCalls = count(text, /^ ?│ [✔✖?⊷o-] {1,2}[A-Z][A-Za-z]+/gm)
    expect(Math.abs(toolCalls - 194)).toBeLessThanOrEqual(2)
    expect(loaded.pairing.toolCalls).toBe(toolCalls)
    expect(loaded.roles("assistant")).toBe(textBlocks + toolCalls)
    expect(loaded.pairing.problems).toEqual([])
  })
  expectValidEntries(() => loaded)
  roundTrips(() => loaded)
})

describe("every transcript", () => {
  it("is covered by a test above and imports without skipped lines", async () => {
    const sources = read("SOURCES.md")
    const names = [...sources.matchAll(/^### (\S+)$/gm)].map((match) => match[1]!)
    expect(names).toHaveLength(8)
    for (const name of names) {
      const result = await Import.importFilePromise(transcript(name))
      expect(ImportResult.formats).toContain(result.format)
      expect(result.issues.filter((issue) => issue.action === "skipped")).toEqual([])
    }
  })
})

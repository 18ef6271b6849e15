/**
 * The memory flush runs once per compaction cycle, before the checkpoint, on
 * the covered originals — one test per failure kind of OpenClaw's flush
 * (issue #15): skipped on the overflow path (openclaw#114081), run on the
 * stub summary (#128016), every other cycle or never (#47143, #12590,
 * #99958), a flush–compaction loop (#66058).
 */
import { Entry, Errors, Memory, type Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as MemoryExtractor from "../src/MemoryExtractor.ts"
import * as OverflowRecovery from "../src/OverflowRecovery.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { messageEntry } from "./support.ts"

// keep-recent 2,000: the covered user messages kept verbatim (Codex's rule, within keep-recent) are the newest
// dozen; the flush reads the older ones (it skips kept ones: see "a message kept verbatim …" below)
const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000, keepRecentTokens: 2_000 }, "test")

const entry = messageEntry

const BACKGROUND = "The loader reads its exports when the app starts, and the report lists them by name. ".repeat(8)

/** A session whose user states standing rules in some turns, with large tool results in every turn. */
const turns = (from: number, count: number, startParent: string | null): Array<Entry.Entry> => {
  const entries: Array<Entry.Entry> = []
  let parent = startParent
  const push = (message: Message.Message) => {
    const id = `t${from}-${entries.length}`
    entries.push(entry(id, parent, message))
    parent = id
  }
  for (let turn = from; turn < from + count; turn++) {
    const rule = turn % 3 === 0 ? ` I prefer tabs for indentation in module${turn}.` : ""
    // ~150 tokens of the user's own words a turn: the newest fill the kept-user budget, the older ones reach the flush
    push({ role: "user", content: `Task ${turn}: inspect src/module${turn}.ts.${rule} ${BACKGROUND}` })
    push({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: `c${turn}`, toolName: "read", input: { path: `src/module${turn}.ts` } }
      ]
    })
    push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${turn}`,
          toolName: "read",
          output: { type: "text", value: `// module ${turn}\n${`export const value${turn} = ${turn}\n`.repeat(300)}` }
        }
      ]
    })
    push({ role: "assistant", content: `Module ${turn} exports value${turn}. ${"It is used at startup. ".repeat(60)}` })
  }
  return entries
}

const session = (count: number): Array<Entry.Entry> => [
  entry("sys", null, { role: "system", content: "You are a coding agent." }),
  ...turns(0, count, "sys")
]

const flushEvents = (entries: ReadonlyArray<Entry.Entry>) =>
  entries.filter((item) => item.kind === "event" && item.event.name === Memory.MEMORY_FLUSH_EVENT)

/** Records what the extractor was given. */
const spying = () => {
  const calls: Array<MemoryExtractor.ExtractRequest> = []
  const inner = MemoryExtractor.make()
  const extractor: MemoryExtractor.MemoryExtractor = {
    name: "spy",
    extract: (request) => {
      calls.push(request)
      return inner.extract(request)
    }
  }
  return { calls, extractor }
}

describe("memory flush", () => {
  it("writes memory with provenance before the checkpoint, and the view renders and measures it", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const entries = session(24)
    const result = await engine.compact({ entries, policy })
    expect(result.checkpoint).toBeDefined()
    const kinds = result.entriesToAppend.map((item) => item.kind)
    const memories = result.entriesToAppend.filter((item): item is Entry.MemoryEntry => item.kind === "memory")
    expect(memories.length).toBeGreaterThan(0)
    expect(kinds.lastIndexOf("memory")).toBeLessThan(kinds.indexOf("checkpoint"))
    expect(flushEvents(result.entriesToAppend)).toHaveLength(1)
    const covered = new Set(entries.map((item) => item.id))
    for (const memory of memories) {
      expect(memory.memory.text).toMatch(/I prefer tabs/)
      for (const source of memory.memory.sourceEntryIds) expect(covered.has(source)).toBe(true)
      const source = entries.find((item) => item.id === memory.memory.sourceEntryIds[0])
      expect(source?.kind === "message" && JSON.stringify(source.message)).toContain(memory.memory.text)
    }
    // Parent links stay a chain: each appended entry follows the previous one.
    let previousId = entries.at(-1)!.id
    for (const item of result.entriesToAppend) {
      expect(item.parentId).toBe(previousId)
      previousId = item.id
    }
    const after = [...entries, ...result.entriesToAppend]
    const assembled = await engine.assembleContext({ entries: after, policy })
    expect(assembled.view.items.filter((item) => item.source === "memory").length).toBeGreaterThan(0)
    expect(assembled.measurement.byCategory.memory).toBeGreaterThan(0)
  })

  it("openclaw#114081: the overflow path flushes too", async () => {
    const engine = TieredSummaryEngine.make()
    const entries = session(24)
    const overflow = new Errors.ContextOverflow({
      provider: "test",
      providerMessage: "prompt is too long",
      limitTokens: 24_000
    })
    const recovery = await Effect.runPromise(
      OverflowRecovery.recover(
        engine,
        { entries, policy },
        overflow,
        { measuredInputTokens: 30_000 },
        { eventId: "overflow-1", timestamp: new Date(0).toISOString() }
      )
    )
    expect(recovery.compaction?.checkpoint).toBeDefined()
    expect(flushEvents(recovery.entriesToAppend)).toHaveLength(1)
    expect(recovery.entriesToAppend.some((item) => item.kind === "memory")).toBe(true)
  })

  it("openclaw#128016: the extractor reads the covered originals, never a (stub) summary", async () => {
    const spy = spying()
    const engine = TieredSummaryEngine.makeAsync({
      memory: { extractor: spy.extractor },
      // A hook supplies a stub summary; the flush must not read it.
      hooks: {
        beforeCompact: [
          () => ({
            summary: {
              goal: "STUB",
              constraints: [],
              progress: { done: [], inProgress: [], blocked: [] },
              decisions: [],
              nextSteps: [],
              criticalContext: [],
              pendingUserAsks: [],
              identifiers: { paths: [], ids: [], hashes: [], urls: [], ports: [], commands: [], errors: [] },
              filesRead: [],
              filesModified: []
            }
          })
        ]
      }
    })
    const entries = session(24)
    await engine.compact({ entries, policy })
    expect(spy.calls).toHaveLength(1)
    const byId = new Map(entries.map((item) => [item.id, item]))
    for (const item of spy.calls[0]!.covered) {
      const original = byId.get(item.entryId)
      expect(original?.kind).toBe("message")
      expect(item.message).toEqual((original as Entry.MessageEntry).message)
      expect(JSON.stringify(item.message)).not.toContain("STUB")
    }
  })

  it("openclaw#47143/#12590/#99958: each cycle flushes exactly once, every cycle", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    let entries = session(20)
    const generations: Array<number> = []
    for (let cycle = 0; cycle < 3; cycle++) {
      const result = await engine.compact({ entries, policy })
      expect(result.checkpoint).toBeDefined()
      generations.push(result.checkpoint!.generation)
      entries = [...entries, ...result.entriesToAppend]
      entries = [...entries, ...turns(100 * (cycle + 1), 12, entries.at(-1)!.id)]
    }
    const cycles = flushEvents(entries).map((item) =>
      item.kind === "event" ? (item.event.data as { cycle: number }).cycle : 0
    )
    expect(cycles).toEqual(generations)
    expect(generations).toEqual([1, 2, 3])
  })

  it("exactly once across a restart between the flush and the checkpoint install", async () => {
    const first = await TieredSummaryEngine.makeAsync().compact({ entries: session(24), policy })
    // The process died after appending the flush but before installing the checkpoint.
    const persisted = [...session(24), ...first.entriesToAppend.filter((item) => item.kind !== "checkpoint")]
    const spy = spying()
    const restarted = await TieredSummaryEngine.makeAsync({ memory: { extractor: spy.extractor } }).compact({
      entries: persisted,
      policy
    })
    expect(restarted.checkpoint?.generation).toBe(1)
    expect(spy.calls).toHaveLength(0)
    expect(flushEvents(restarted.entriesToAppend)).toHaveLength(0)
    expect(restarted.entriesToAppend.some((item) => item.kind === "memory")).toBe(false)
  })

  it("openclaw#66058: no flush–compaction loop — memory stays in its budget and the next step needs no compaction", async () => {
    const engine = TieredSummaryEngine.makeAsync({ memory: { budgetTokens: 60 } })
    const entries = session(36)
    const result = await engine.compact({ entries, policy })
    const after = [...entries, ...result.entriesToAppend]
    const decision = await engine.shouldCompact({ entries: after, policy })
    expect(decision.compact).toBe(false)
    const assembled = await engine.assembleContext({ entries: after, policy })
    const memoryItems = assembled.view.items.filter((item) => item.source === "memory")
    const written = result.entriesToAppend.filter((item) => item.kind === "memory").length
    expect(written).toBeGreaterThan(memoryItems.length)
    expect(memoryItems.length).toBeGreaterThan(0)
    // The memory category is bounded by the budget (plus per-message framing of each rendered record).
    expect(assembled.measurement.byCategory.memory).toBeLessThanOrEqual(60 + 12 * memoryItems.length)
  })

  it("a message kept verbatim beside the checkpoint is not read (it would be sent twice); the checkpoint that stops keeping it flushes it", async () => {
    // s6 trial: marshmallow's 4 memory records were sentences of swe:1, which the request also kept word for word
    const spy = spying()
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: spy.extractor } })
    let entries = session(24)
    const first = await engine.compact({ entries, policy })
    const kept = new Set(first.checkpoint!.keptUserEntryIds ?? [])
    const byId = new Map(entries.map((item) => [item.id, item]))
    const keptRules = [...kept].filter((id) => JSON.stringify(byId.get(id)).includes("I prefer tabs"))
    expect(keptRules.length).toBeGreaterThan(0)
    expect(spy.calls[0]!.covered.some((item) => kept.has(item.entryId))).toBe(false)
    const records = first.entriesToAppend.filter((item): item is Entry.MemoryEntry => item.kind === "memory")
    expect(records.length).toBeGreaterThan(0)
    for (const record of records)
      for (const source of record.memory.sourceEntryIds) expect(kept.has(source)).toBe(false)
    // Later turns push the kept ones out of the kept-user budget: the next checkpoint covers them again and flushes them.
    entries = [...entries, ...first.entriesToAppend]
    entries = [...entries, ...turns(100, 24, entries.at(-1)!.id)]
    const second = await engine.compact({ entries, policy })
    const keptNow = new Set(second.checkpoint!.keptUserEntryIds ?? [])
    const released = keptRules.filter((id) => !keptNow.has(id))
    expect(released.length).toBeGreaterThan(0)
    const sources = second.entriesToAppend.flatMap((item) => (item.kind === "memory" ? item.memory.sourceEntryIds : []))
    for (const id of released) expect(sources).toContain(id)
  })

  it("reads the user's words only: an observation or a pasted log in a user-role message is data", async () => {
    const candidates = await Effect.runPromise(
      MemoryExtractor.make().extract({
        covered: [
          {
            entryId: "o1",
            message: { role: "user", content: "[File: /repo/setup.cfg (12 lines total)]\n1:# always use tabs" }
          },
          { entryId: "u1", message: { role: "user", content: "Always run the linter before you commit." } }
        ],
        existing: []
      })
    )
    expect(candidates.map((candidate) => candidate.sourceEntryIds)).toEqual([["u1"]])
  })

  it("a sentence a console hard-wrapped at the terminal's width is one record, not the fragment before the wrap", async () => {
    const candidates = await Effect.runPromise(
      MemoryExtractor.make().extract({
        covered: [
          {
            entryId: "u1",
            message: {
              role: "user",
              content:
                "Read the tail of the log so that you have full context. From now on I want the tests to\nrun before every commit of the fixtures."
            }
          }
        ],
        existing: []
      })
    )
    expect(candidates.map((candidate) => candidate.text)).toEqual([
      "From now on I want the tests to run before every commit of the fixtures."
    ])
  })

  const recordsOf = async (...texts: Array<string>) =>
    (
      await Effect.runPromise(
        MemoryExtractor.make().extract({
          covered: texts.map((content, index) => ({ entryId: `u${index}`, message: { role: "user", content } })),
          existing: []
        })
      )
    ).map((candidate) => [candidate.scope, candidate.text])

  it("'I want you to <do something>' is a task for now, not a standing preference", async () => {
    expect(
      await recordsOf(
        "Read the tail of the log so that you have full context. Then I want you to\nsummarize the current status of our efforts and a brief plan of next steps.",
        "I want you to run the migration on the staging database now."
      )
    ).toEqual([])
  })

  it("a preference about how things should be in general is still a record, also when asked of the agent", async () => {
    expect(
      await recordsOf(
        "I want tests to run before every commit.",
        "I prefer tabs.",
        "I want you to run the linter before every commit.",
        "I want you to always explain a failing test before changing it."
      )
    ).toEqual([
      ["preference", "I want tests to run before every commit."],
      ["preference", "I prefer tabs."],
      ["preference", "I want you to run the linter before every commit."],
      ["preference", "I want you to always explain a failing test before changing it."]
    ])
  })

  // New-user trial (aider at 32K, the Claude Code console log): pasted docs, questions, tasks, descriptions and
  // fragments of a sentence said whole had become `Memory (preference): …` system lines.
  it("a pasted document, a question, a task for now or a description is not a record", async () => {
    expect(
      await recordsOf(
        "# Question: how do the chat modes work?\n\n<doc>\nAider has 3 different chat modes:\n- `ask` - Aider will answer questions about your code, but never edit it.\nEnvironment variable: `AIDER_CHAT_HISTORY_FILE`\n</doc>",
        "can we use prompt toolkits filesystem autocompleter for completions_read",
        "diff_commits seems to always be returning colorized diffs, even when pretty=false?!",
        '- "how about we run tests and commit our refactoring step if all\'s GREEN?"',
        "i want to add a web ui as well.",
        "I want to get to 100% coverage.",
        "Edit files in your editor while chatting with aider, and it will always use the latest version.",
        "you're right that this is always true, but hardcoding 6 here is also wrong.",
        "But let's think about what the `never-opened-user` test scenario checks.",
        "Here is the config:\n```\n# always use tabs\nindent = tab\n```\n> we never deploy on fridays"
      )
    ).toEqual([])
  })

  it("rules said to the agent are records: an absolute where a clause starts or after its subject, a dislike", async () => {
    expect(
      await recordsOf(
        "I hate when you just drop 100 lines of code without first explaining what we are about to do.",
        "You should NEVER load the day logs in full -- they are extremely large.",
        "So please always show them to me",
        "invalid themes must NEVER crash the settings screen"
      )
    ).toEqual([
      ["preference", "I hate when you just drop 100 lines of code without first explaining what we are about to do."],
      ["preference", "You should NEVER load the day logs in full -- they are extremely large."],
      ["preference", "So please always show them to me"],
      ["preference", "invalid themes must NEVER crash the settings screen"]
    ])
  })

  it("a part of a sentence said whole in another message is that sentence, one record with both sources", async () => {
    const candidates = await Effect.runPromise(
      MemoryExtractor.make().extract({
        covered: [
          { entryId: "u1", message: { role: "user", content: "please always run the linter before you commit" } },
          {
            entryId: "u2",
            message: {
              role: "user",
              content: "Again: please always run the linter before you commit, it catches tabs."
            }
          },
          { entryId: "u3", message: { role: "user", content: "please always run the linter before you commit" } }
        ],
        existing: []
      })
    )
    expect(candidates).toEqual([
      {
        text: "Again: please always run the linter before you commit, it catches tabs.",
        scope: "preference",
        sourceEntryIds: ["u2", "u1", "u3"]
      }
    ])
  })

  it("a failing extractor writes nothing and the checkpoint still commits", async () => {
    const engine = TieredSummaryEngine.makeAsync({
      memory: { extractor: { name: "broken", extract: () => Effect.fail(new Error("model down")) } }
    })
    const result = await engine.compact({ entries: session(24), policy })
    expect(result.checkpoint).toBeDefined()
    expect(result.entriesToAppend.some((item) => item.kind === "memory" || item.kind === "event")).toBe(false)
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.note).toContain("extractor-failed")
  })
})

describe("Memory.select and supersession", () => {
  const memory = (id: string, text: string, extra: Partial<Entry.MemoryEntry["memory"]> = {}): Entry.MemoryEntry => ({
    id,
    parentId: null,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "memory",
    memory: { text, sourceEntryIds: ["m1"], ...extra }
  })

  it("drops records named in supersedes or replaced by the same key, keeps the transcript order", () => {
    const entries = [
      memory("a", "Use tabs for indentation.", { key: "indent" }),
      memory("b", "The API runs on port 8443."),
      memory("c", "Use spaces for indentation.", { key: "indent" }),
      memory("d", "The API runs on port 9443.", { supersedes: ["b"] })
    ]
    expect(Memory.active(entries).map((item) => item.id)).toEqual(["c", "d"])
  })

  it("keeps the newest records that fit the budget", () => {
    const entries = [memory("old", "x".repeat(400)), memory("mid", "y".repeat(40)), memory("new", "z".repeat(40))]
    expect(Memory.select(entries, { budgetTokens: 25 }).map((item) => item.id)).toEqual(["mid", "new"])
  })

  it("the extractive extractor supersedes a restated rule of the same scope", async () => {
    const existing = [memory("old", "I prefer tabs for indentation in module0.", { scope: "preference" })]
    const candidates = await Effect.runPromise(
      MemoryExtractor.make().extract({
        covered: [
          { entryId: "u9", message: { role: "user", content: "Actually I prefer spaces for indentation in module0." } }
        ],
        existing
      })
    )
    expect(candidates).toEqual([
      {
        text: "Actually I prefer spaces for indentation in module0.",
        scope: "preference",
        sourceEntryIds: ["u9"],
        supersedes: ["old"]
      }
    ])
  })

  it("reads the user's words only: tool output is data", async () => {
    const candidates = await Effect.runPromise(
      MemoryExtractor.make().extract({
        covered: [
          {
            entryId: "r1",
            message: {
              role: "tool",
              content: [
                {
                  type: "tool-result",
                  toolCallId: "c",
                  toolName: "cat",
                  output: { type: "text", value: "Always use tabs." }
                }
              ]
            }
          },
          { entryId: "a1", message: { role: "assistant", content: "I prefer to always lint first." } }
        ],
        existing: []
      })
    )
    expect(candidates).toEqual([])
  })
})

describe("ids a compaction generates", () => {
  it("an input that already holds them gets fresh ones (the first free ~n suffix), and the result appends cleanly", async () => {
    // QA session 4 (F12): a compaction's entriesToAppend written into the agent's own session file came back as
    // unknown events with the same ids; the next compaction generated memory:1:pi:967:0 again, and every later
    // input failed with InvalidInput "Duplicate entry id".
    // the default keep-recent (a longer tail, tool results to trim) and 48 turns: every kind of generated id appears
    const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "test")
    const entries = session(48)
    const clean = await TieredSummaryEngine.makeAsync().compact({ entries, policy })
    const wouldBe = clean.entriesToAppend.map((item) => item.id)
    for (const kind of [/^memory:/, /^memory-flush:/, /^checkpoint:/, /\/edit\/\d+$/])
      expect(
        wouldBe.some((id) => kind.test(id)),
        String(kind)
      ).toBe(true)
    // The same ids held by records off the active path (roots of their own), as an importer keeps unknown records.
    const squatters = wouldBe.map((id) =>
      Entry.make(
        { id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z" },
        { kind: "event", event: { name: "unknown-record" } }
      )
    )
    const hostile = [...squatters, ...entries]
    const engine = TieredSummaryEngine.makeAsync()
    const result = await engine.compact({ entries: hostile, policy })
    const ids = result.entriesToAppend.map((item) => item.id)
    expect(ids).toEqual(wouldBe.map((id) => `${id}~2`))
    expect(result.checkpoint?.id).toBe(ids.find((id) => id.startsWith("checkpoint:")))
    const next = await engine.assembleContext({ entries: [...hostile, ...result.entriesToAppend], policy })
    expect(next.view.items.filter((item) => item.source === "checkpoint").map((item) => item.entryId)).toEqual([
      result.checkpoint?.id
    ])
    expect(next.view.items.filter((item) => item.source === "memory").length).toBeGreaterThan(0)
  })
})

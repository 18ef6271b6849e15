/**
 * Files a sub-agent wrote are the session's work: Claude Code runs a `Task`
 * call's sub-agent inline and writes its records into the session file as a
 * side chain (`isSidechain: true`), kept as events beside the main
 * conversation. The handoff lists what the sub-agent's calls changed —
 * created and edited files, not its reads nor its failed writes — as work of
 * the Task call's message, and validation counts those calls as real. A small
 * built Claude Code session, then the real one of the new-user trial
 * (../shared/transcripts), whose five sub-agents wrote the whole app.
 */
import { readFileSync } from "node:fs"
import { CheckpointValidation, type Entry, SubAgentWork } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as Build from "../src/checkpoint/Build.ts"
import * as Extract from "../src/checkpoint/Extract.ts"
import * as Prepare from "../src/checkpoint/Prepare.ts"
import type { CoveredItem } from "../src/Summarizer.ts"
import { buildInput, extractiveSummary, prepareInput, request, withKeepRecent } from "./checkpoint/fixture.ts"

let previous: string | null = null
/** One Claude Code record, by default the child of the record before it. */
const record = (uuid: string, fields: Record<string, unknown>, parentUuid: string | null = previous) => {
  previous = uuid
  return JSON.stringify({ sessionId: "s1", timestamp: "2025-09-03T00:00:00.000Z", uuid, parentUuid, ...fields })
}
const say = (uuid: string, role: "user" | "assistant", content: unknown, isSidechain = false) =>
  record(uuid, { type: role, isSidechain, message: { role, content } })
const use = (id: string, name: string, input: unknown) => [{ type: "tool_use", id, name, input }]
const answer = (id: string, content: string, isError = false) => [
  { type: "tool_result", tool_use_id: id, content, ...(isError ? { is_error: true } : {}) }
]

// The prompt names no file: only the sub-agent's own calls do.
const prompt = "Write the parser module and export it from the package."
const session = (): string => {
  previous = null
  const main = [
    say("u0", "user", "Build the parser; run the work in parallel."),
    say("a1", "assistant", use("task1", "Task", { description: "Write parser", prompt }))
  ]
  const taskCall = previous
  const side = [
    record("s0", { type: "user", isSidechain: true, message: { role: "user", content: prompt } }, null),
    say(
      "s1",
      "assistant",
      use("w1", "Write", { file_path: "src/parser.ts", content: "export const parse = tokens\n" }),
      true
    ),
    say("s2", "user", answer("w1", "File created successfully at: src/parser.ts"), true),
    say("s3", "assistant", use("r1", "Read", { file_path: "src/notes.md" }), true),
    say("s4", "user", answer("r1", "     1\u2192notes"), true),
    say(
      "s5",
      "assistant",
      use("e1", "Edit", {
        file_path: "src/index.ts",
        old_string: "// exports",
        new_string: "export * from './parser'"
      }),
      true
    ),
    say("s6", "user", answer("e1", "The file src/index.ts has been updated."), true),
    say("s7", "assistant", use("w2", "Write", { file_path: "src/lexer.ts", content: "export const lex = 1\n" }), true),
    say("s8", "user", answer("w2", "<tool_use_error>File has not been read yet.</tool_use_error>", true), true),
    say("s9", "assistant", [{ type: "text", text: "The parser is written and exported." }], true)
  ]
  previous = taskCall
  const after = [
    say("u10", "user", answer("task1", "The parser is written and exported.")),
    say("a11", "assistant", [{ type: "text", text: "The sub-agent wrote the parser." }]),
    say("u12", "user", "Now add tests for the parser."),
    say("a13", "assistant", [{ type: "text", text: "I'll add tests next." }])
  ]
  return [...main, ...side, ...after].join("\n")
}

/** The built session compacted: the Task call and its result covered, the last exchange kept. */
const compacted = () => {
  const entries = Import.importTextSync(session()).transcript.entries
  const req = withKeepRecent(request([], 8_000, entries), 1)
  const preparation = Prepare.prepare(prepareInput(req))
  if (preparation._tag !== "Ready") throw new Error(preparation.note)
  return { req, preparation }
}

describe("a sub-agent's files in the handoff", () => {
  it("the files it created and edited are Done work of the Task call, by a sub-agent, and in the ledger; its failed write and its read are not", () => {
    const { preparation } = compacted()
    const content = Extract.extract([...preparation.covered, ...preparation.turnPrefix])
    expect(content.progress.done).toEqual(
      expect.arrayContaining([
        "created `src/parser.ts` (by a sub-agent) — adds `export const parse = tokens`",
        "edited `src/index.ts` (by a sub-agent) — adds `export * from './parser'`"
      ])
    )
    expect(content.filesModified).toEqual(["src/parser.ts", "src/index.ts"])
    expect(content.artifacts?.find((artifact) => artifact.value === "src/parser.ts")).toMatchObject({
      status: "created",
      entryIds: ["a1"]
    })
    // A failed write changed nothing; a read is the sub-agent's way to its result, not worth the space.
    const text = CheckpointValidation.contentText(content)
    expect(text).not.toContain("src/lexer.ts")
    expect(text).not.toContain("src/notes.md")
    expect(content.failedApproaches).toEqual([])
  })

  it("validation counts the sub-agent's calls as real calls — the main conversation never names the files — and still refuses a file no call wrote", () => {
    const { req, preparation } = compacted()
    const built = Build.build(buildInput(req, preparation), extractiveSummary(req, preparation))
    const content = built.checkpoint.content!
    expect(content.progress.done.join("\n")).toContain("created `src/parser.ts` (by a sub-agent)")
    const invented = (report: { readonly checks: ReadonlyArray<{ readonly name: string; readonly ok: boolean }> }) =>
      report.checks.filter((check) => check.name.startsWith("no-invented") && !check.ok).map((check) => check.name)
    expect(invented(built.report)).toEqual([])
    const input = {
      covered: preparation.covered.map((item) => item.message),
      checkpointTokens: 1,
      replacedTokens: 2
    }
    // Without the sub-agent's messages, its files read as invented.
    const blind = CheckpointValidation.validate({ ...input, checkpoint: built.checkpoint })
    expect(blind.missing).toEqual(expect.arrayContaining(["action:src/parser.ts", "file:src/parser.ts"]))
    const ghost = {
      ...content,
      progress: { ...content.progress, done: [...content.progress.done, "created `src/ghost.ts` (by a sub-agent)"] }
    }
    const report = CheckpointValidation.validate({
      ...input,
      checkpoint: { ...built.checkpoint, content: ghost },
      subAgentMessages: preparation.covered.flatMap((item) => item.subAgentMessages ?? [])
    })
    expect(report.missing.filter((item) => item.startsWith("action:") || item.startsWith("file:"))).toEqual([
      "action:src/ghost.ts"
    ])
  })
})

/** The sub-agents' file writes that worked, read off the JSONL records themselves (`Write`, `Edit`, `MultiEdit`). */
const writtenBySubAgents = (text: string): Set<string> => {
  const paths = new Map<string, string>()
  const failed = new Set<string>()
  for (const line of text.split("\n")) {
    const record = JSON.parse(line) as { isSidechain?: boolean; message?: { content?: unknown } }
    if (record.isSidechain !== true || !Array.isArray(record.message?.content)) continue
    type Block = { type: string; id: string; name: string; input: { file_path: string } } & {
      tool_use_id: string
      is_error?: boolean
    }
    for (const block of record.message.content as Array<Block>) {
      if (block.type === "tool_use" && ["Write", "Edit", "MultiEdit"].includes(block.name))
        paths.set(block.id, block.input.file_path)
      if (block.type === "tool_result" && block.is_error === true) failed.add(block.tool_use_id)
    }
  }
  return new Set([...paths].flatMap(([id, path]) => (failed.has(id) ? [] : [path])))
}

describe("the real Claude Code session whose sub-agents wrote the app (new-user trial)", () => {
  const file = transcript("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")

  it("every file the five sub-agents wrote is in the handoff's ledger and Done, and validation accepts it", async () => {
    const entries = (await Import.importFilePromise(file)).transcript.entries
    const subAgents = SubAgentWork.byMessage(entries)
    const covered: Array<CoveredItem> = entries
      .filter((entry): entry is Entry.MessageEntry => entry.kind === "message")
      .slice(0, -4)
      .map((entry) => ({ entryId: entry.id, message: entry.message, subAgentMessages: subAgents.get(entry.id) }))
    const written = writtenBySubAgents(readFileSync(file, "utf8").trim())
    expect(written.size).toBeGreaterThanOrEqual(20)
    const content = Extract.extract(covered)
    expect(new Set(content.filesModified)).toEqual(written)
    const done = content.progress.done.join("\n")
    expect(done).toContain("created `/path/to/Demo/todo-app/src/hooks/useSimpleTodos.ts` (by a sub-agent)")
    expect(done).toContain("created `/path/to/Demo/components/TodoItem.tsx` (by a sub-agent)")
    expect(done).toContain("edited `/path/to/Demo/todo-app/src/app/page.tsx` (2 edits) (by a sub-agent)")
    const report = CheckpointValidation.validate({
      checkpoint: {
        id: "cp",
        generation: 1,
        coveredRange: { fromEntryId: null, toEntryId: covered.at(-1)!.entryId },
        firstKeptEntryId: null,
        tokensBefore: 0,
        tokensAfter: 0,
        summarizer: { kind: "extractive", promptVersion: "" },
        content,
        createdAt: ""
      },
      covered: covered.map((item) => item.message),
      subAgentMessages: covered.flatMap((item) => item.subAgentMessages ?? []),
      checkpointTokens: 1,
      replacedTokens: 2
    })
    expect(report.checks.filter((item) => item.name.startsWith("no-invented")).every((item) => item.ok)).toBe(true)
  })
})

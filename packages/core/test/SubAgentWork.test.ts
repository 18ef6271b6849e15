/**
 * A sub-agent's run, kept as events beside the main conversation, belongs to
 * the message whose call started it — whatever harness wrote the events, as
 * long as they carry the call's id and the run as core messages — and its
 * file changes are that message's actions.
 */
import { describe, expect, it } from "vitest"
import type { Entry, EventEntry } from "../src/Entry.ts"
import type { Message } from "../src/Message.ts"
import * as SubAgentWork from "../src/SubAgentWork.ts"
import * as ToolActions from "../src/ToolActions.ts"

const header = (id: string) => ({ id, parentId: null, timestamp: new Date(0).toISOString(), schemaVersion: 1 as const })
const message = (id: string, body: Message): Entry => ({ ...header(id), kind: "message", message: body })
const event = (id: string, name: string, data: unknown): Entry => ({
  ...header(id),
  kind: "event",
  // what an importer writes: JSON
  event: { name, data: JSON.parse(JSON.stringify(data)) as EventEntry["event"]["data"] & {} }
})
const call = (toolCallId: string, toolName: string, input: Record<string, string>): Message => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId, toolName, input }]
})
const result = (toolCallId: string, toolName: string, value: string, error = false): Message => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId, toolName, output: { type: error ? "error-text" : "text", value } }]
})

const delegate: Message = {
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: "task1", toolName: "spawn_agent", input: { task: "write the parser" } }]
}
const run = [
  { role: "user", content: "write the parser" } satisfies Message,
  call("w1", "write_file", { path: "src/parser.ts", content: "export const parse = 1" }),
  result("w1", "write_file", "wrote src/parser.ts"),
  call("w2", "write_file", { path: "src/lexer.ts", content: "export const lex = 1" }),
  result("w2", "write_file", "permission denied", true),
  call("r1", "read_file", { path: "src/notes.md" }),
  result("r1", "read_file", "notes")
]
const branch: ReadonlyArray<Entry> = [
  message("m0", { role: "user", content: "build it" }),
  message("m1", delegate),
  // any harness's event name: the fields are the contract
  ...run.map((body, index) =>
    event(`s${index}`, "other-harness.subagent", { taskToolCallId: "task1", messages: [body] })
  ),
  event("x", "other-harness.subagent", { taskToolCallId: "unknown-call", messages: [run[1]!] }),
  event("y", "other-harness.note", { text: "not a sub-agent" }),
  message("m2", result("task1", "spawn_agent", "done"))
]

describe("SubAgentWork", () => {
  it("attaches a run's calls and results to the message whose call started it; its prompt and unmatched runs to none", () => {
    const byMessage = SubAgentWork.byMessage(branch)
    expect([...byMessage.keys()]).toEqual(["m1"])
    expect(byMessage.get("m1")).toEqual(run.slice(1))
  })

  it("ToolActions lists the files the run changed as the starting message's actions — not its failed write nor its read", () => {
    const items = [
      { entryId: "m1", message: delegate, subAgentMessages: SubAgentWork.byMessage(branch).get("m1") },
      { entryId: "m2", message: result("task1", "spawn_agent", "done") }
    ]
    const actions = ToolActions.actionsOf(items).map((action) => [
      action.entryId,
      action.kind,
      action.path,
      action.source
    ])
    expect(actions).toEqual([
      ["m1", "other", undefined, undefined],
      ["m1", "create", "src/parser.ts", "sub-agent"]
    ])
  })
})

import { describe, expect, it } from "vitest"
import * as ToolCalls from "../src/ToolCalls.ts"

const call = (toolName: string, input: unknown): ToolCalls.ToolCall => ({ messageIndex: 0, toolName, input })

describe("ToolCalls classification (replay's damage measures)", () => {
  it("finds the file a read names, in every agent's shape", () => {
    expect(ToolCalls.readTarget(call("read", { path: "src/a.ts" }))).toBe("src/a.ts")
    expect(ToolCalls.readTarget(call("Read", { file_path: "/p/a.ts" }))).toBe("/p/a.ts")
    expect(ToolCalls.readTarget(call("str_replace_editor", { command: "view", path: "a.py" }))).toBe("a.py")
    expect(ToolCalls.readTarget(call("str_replace_editor", { command: "create", path: "a.py" }))).toBeUndefined()
    // console transcripts carry only a summary
    expect(ToolCalls.readTarget(call("ReadFile", { summary: ".claude/commands/hi.md" }))).toBe(".claude/commands/hi.md")
    // a shell call that prints one file reads it
    expect(ToolCalls.readTarget(call("bash", { command: "cat src/index.ts" }))).toBe("src/index.ts")
    expect(ToolCalls.readTarget(call("bash", { command: "cd /repo && head -n 40 README.md" }))).toBe("README.md")
    expect(ToolCalls.readTarget(call("bash", { command: "cat a.ts | grep x" }))).toBeUndefined()
  })

  it("counts writes, edits and effectful shell commands as side effects, not looks, test runs or builds", () => {
    for (const [name, input] of [
      ["write", { path: "a.ts", content: "x" }],
      ["Update", { summary: "bookminder/apple_books/library.py" }],
      ["insert", { text: "x" }],
      ["bash", { command: "git commit -am wip" }],
      ["Shell", { summary: "rm -rf build (Cleaning.)" }],
      ["bash", { command: "cd /repo && npm install left-pad" }],
      ["bash", { command: "npm run build && cp -r dist ../site" }],
      ["bash", { command: "ls && rm -rf build" }]
    ] as const)
      expect(ToolCalls.isSideEffect(call(name, input)), name).toBe(true)
    for (const [name, input] of [
      ["bash", { command: "ls -F" }],
      ["bash", { command: "cd /repo && git status" }],
      ["Shell", { summary: "pytest --spec (Run all tests with spec output.)" }],
      ["bash", { command: "npm run check 2>&1 | tail -5" }],
      ["bash", { command: "cd packages/coding-agent && npm run build 2>&1 | tail -5" }],
      ["bash", { command: "cat src/a.ts" }],
      ["bash", { command: "git add src/a.ts" }],
      ["read", { path: "a.ts" }],
      ["Grep", { summary: "/Users/x" }]
    ] as const)
      expect(ToolCalls.isSideEffect(call(name, input)), `${name} ${JSON.stringify(input)}`).toBe(false)
  })

  it("a compaction's damage: the same file read again and the same write repeated, within the window only", () => {
    const assistant = (toolName: string, input: unknown) => ({
      role: "assistant" as const,
      content: [{ type: "tool-call" as const, toolCallId: `${toolName}${JSON.stringify(input)}`, toolName, input }]
    })
    const user = { role: "user" as const, content: "go" }
    // messages 0..5; steps are the assistant messages at 1, 3, 5
    const messages = [
      user,
      assistant("read", { path: "a.ts" }),
      user,
      assistant("write", { path: "b.ts", content: "x" }),
      user,
      assistant("bash", { command: "cat a.ts" })
    ]
    const result = ToolCalls.damage(messages, [1, 3, 5], [{ step: 1, coveredUntilIndex: 2 }], 2)
    // step 2 (message 5) re-reads a.ts, which the compaction covered; the write at step 1 was not covered
    expect(result.rereads).toEqual([{ step: 2, compactionStep: 1, toolName: "bash", target: "a.ts" }])
    expect(result.repeatedSideEffects).toEqual([])
    expect(result.compactionsFollowedByReread).toBe(1)
  })

  it("repeats: the same write again counts; an edit known only by its file name (console summary) does not", () => {
    const assistant = (toolName: string, input: unknown) => ({
      role: "assistant" as const,
      content: [{ type: "tool-call" as const, toolCallId: `${toolName}${JSON.stringify(input)}`, toolName, input }]
    })
    const user = { role: "user" as const, content: "go" }
    const write = { path: "b.ts", content: "x" }
    const messages = [
      user,
      assistant("write", write),
      assistant("Update", { summary: "src/a.py" }),
      assistant("Shell", { summary: "git push (Publish.)" }),
      user,
      assistant("write", write),
      assistant("Update", { summary: "src/a.py" }),
      assistant("Shell", { summary: "git push (Publish.)" })
    ]
    const result = ToolCalls.damage(messages, [1, 2, 3, 5, 6, 7], [{ step: 3, coveredUntilIndex: 4 }], 10)
    expect(result.repeatedSideEffects.map((repeat) => repeat.toolName)).toEqual(["write", "Shell"])
  })
})

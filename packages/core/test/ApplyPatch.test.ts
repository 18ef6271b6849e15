/**
 * Codex's `apply_patch` envelope read off a tool call's input: every way
 * Codex sends one (freeform string, function `{ input }`, shell argument
 * array, heredoc in `bash -lc`), and each file's operation, path and change.
 */
import { describe, expect, it } from "vitest"
import * as ApplyPatch from "../src/ApplyPatch.ts"
import * as ToolActions from "../src/ToolActions.ts"

const PATCH = [
  "*** Begin Patch",
  "*** Add File: docs/retry.md",
  "+# Retry policy",
  "+",
  "+Set `delayMs` per call.",
  "*** Update File: src/retry.ts",
  "*** Move to: src/backoff.ts",
  "@@ export const retry",
  " import { sleep } from './sleep'",
  "-export const retry = (attempts: number) => {",
  "+export const retry = (attempts: number, delayMs = 100) => {",
  "*** Update File: src/client.ts",
  "@@",
  "-import { retry } from './retry'",
  "-",
  "*** End of File",
  "*** Delete File: src/old-retry.ts",
  "*** End Patch"
].join("\n")

describe("ApplyPatch.patchOf", () => {
  it("finds the envelope in each form Codex sends it", () => {
    expect(ApplyPatch.patchOf(PATCH)).toBe(PATCH)
    expect(ApplyPatch.patchOf({ input: PATCH })).toBe(PATCH)
    expect(ApplyPatch.patchOf({ command: ["apply_patch", PATCH] })).toBe(PATCH)
    expect(ApplyPatch.patchOf({ command: ["bash", "-lc", `apply_patch <<'EOF'\n${PATCH}\nEOF\n`] })).toBe(
      `${PATCH}\nEOF\n`
    )
  })

  it("is undefined for an input without one", () => {
    expect(ApplyPatch.patchOf({ command: "git diff" })).toBeUndefined()
    expect(ApplyPatch.patchOf({ path: "a.ts", content: "*** not a patch" })).toBeUndefined()
    expect(ApplyPatch.patchOf(42)).toBeUndefined()
  })
})

describe("ApplyPatch.files", () => {
  it("one entry per file, in order, with what each hunk brought", () => {
    expect(ApplyPatch.files(PATCH)).toEqual([
      {
        op: "add",
        path: "docs/retry.md",
        header: "*** Add File: docs/retry.md",
        change: { verb: "adds", line: "# Retry policy" }
      },
      {
        op: "update",
        path: "src/retry.ts",
        header: "*** Update File: src/retry.ts",
        movedTo: "src/backoff.ts",
        change: { verb: "adds", line: "export const retry = (attempts: number, delayMs = 100) => {" }
      },
      {
        op: "update",
        path: "src/client.ts",
        header: "*** Update File: src/client.ts",
        change: { verb: "removes", line: "import { retry } from './retry'" }
      },
      { op: "delete", path: "src/old-retry.ts", header: "*** Delete File: src/old-retry.ts", change: undefined }
    ])
  })
})

describe("ToolActions: a call carrying a patch", () => {
  const actionsOf = (toolName: string, input: unknown, result: string, isError = false) =>
    ToolActions.actionsOf([
      {
        entryId: "a1",
        message: { role: "assistant", content: [{ type: "tool-call", toolCallId: "p1", toolName, input }] }
      },
      {
        entryId: "t1",
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "p1",
              toolName,
              output: isError ? { type: "error-text", value: result } : { type: "text", value: result }
            }
          ]
        }
      }
    ])

  it("is one action per file: created, edited at the path it moved to, deleted as its header line", () => {
    for (const [toolName, input] of [
      ["apply_patch", PATCH],
      ["apply_patch", { input: PATCH }],
      ["shell", { command: ["apply_patch", PATCH] }]
    ] as const) {
      const actions = actionsOf(toolName, input, "Success. Updated the following files:\nA docs/retry.md")
      expect(actions.map((action) => [action.kind, action.path ?? action.command, action.change?.line])).toEqual([
        ["create", "docs/retry.md", "# Retry policy"],
        ["edit", "src/backoff.ts", "export const retry = (attempts: number, delayMs = 100) => {"],
        ["edit", "src/client.ts", "import { retry } from './retry'"],
        ["command", "*** Delete File: src/old-retry.ts", undefined]
      ])
      expect(new Set(actions.map((action) => action.outcome._tag))).toEqual(new Set(["ok"]))
    }
  })

  it("a patch that failed fails every file's action", () => {
    const actions = actionsOf("apply_patch", PATCH, "error: Failed to find expected lines in src/retry.ts", true)
    expect(actions).toHaveLength(4)
    expect(actions.every((action) => action.outcome._tag === "failed")).toBe(true)
  })
})

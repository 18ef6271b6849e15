/**
 * What the offline checkpoint must not hand over as a fact of the work
 * (s7 new-user trial): a failure the agent meant to cause, an input
 * delimiter read as a code name, a runtime's notice read as the error, a
 * path in the OS's temporary folders. Small built conversations, each fault
 * as a kind; each has a guard that the real thing of the same shape stays.
 */
import { IdentifierExtraction, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Extract from "../src/checkpoint/Extract.ts"
import * as KeyIdentifiers from "../src/checkpoint/KeyIdentifiers.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

const traceback = '  File "repro.py", line 3, in <module>\nValueError: scale must be positive'

/** A run of `python repro.py` that fails, then the agent's next words about it and a change. */
const afterFailure = (words: string) =>
  withIds([
    user("The loader rejects a zero scale. Fix it."),
    calls({ id: "c1", name: "bash", input: { command: "python repro.py" } }),
    results({ id: "c1", name: "bash", text: traceback, error: true }),
    assistant(words),
    calls({ id: "c2", name: "edit", input: { path: "src/loader.py", oldText: "a", newText: "b" } }),
    results({ id: "c2", name: "edit", text: "ok" })
  ])

describe("a failure the agent meant to cause is a finding, not a failed approach", () => {
  it("a run the agent says reproduced the bug is done, with its error", () => {
    for (const words of [
      "The script has successfully reproduced the bug. Now let me fix the loader.",
      "This confirms the issue described: the check rejects zero.",
      "The new test fails as expected, so the check is really missing."
    ]) {
      const content = Extract.extract(afterFailure(words))
      expect(content.failedApproaches).toEqual([])
      expect(content.progress.done.join("\n")).toContain("python repro.py` → the expected failure: ValueError")
    }
  })

  it("a failure the agent did not expect, or says it could not reproduce, stays a failed approach", () => {
    for (const words of [
      "The script crashed before reaching the loader; the import path is wrong.",
      "I could not reproduce the issue with this script, the traceback is about something else."
    ]) {
      const content = Extract.extract(afterFailure(words))
      expect((content.failedApproaches ?? []).join("\n")).toContain("python repro.py` failed: ValueError")
      expect(content.progress.done.join("\n")).not.toContain("expected failure")
    }
  })
})

describe("an input delimiter is syntax, not an identifier", () => {
  const edit = (body: string) => `Let's fix it.\n\n\`\`\`\nedit 3:4\n${body}\nend_of_edit\n\`\`\``
  const footer = "(Open file: /repo/a.py)\n(Current directory: /repo)\nbash-$"

  it("a text action's terminator line and a heredoc's delimiter are not ranked; the names in the input are", () => {
    const ranked = KeyIdentifiers.rank(
      withIds([
        user("Make the loader accept a zero scale."),
        assistant(edit("    min_scale = 0")),
        user(`File updated.\n${footer}`),
        assistant(edit("    if scale < min_scale:")),
        user(`File updated.\n${footer}`),
        calls({ id: "c1", name: "bash", input: { command: "cat > notes.txt <<'END_NOTES'\nmin_scale\nEND_NOTES" } }),
        results({ id: "c1", name: "bash", text: "" }),
        calls({ id: "c2", name: "bash", input: { command: "cat >> notes.txt <<END_NOTES\nmin_scale\nEND_NOTES" } }),
        results({ id: "c2", name: "bash", text: "" })
      ])
    )
    expect(ranked).toContain("min_scale")
    expect(ranked).not.toContain("end_of_edit")
    expect(ranked).not.toContain("END_NOTES")
  })
})

describe("a runtime's notice is not the error", () => {
  const output = [
    "Debugger attached.",
    "",
    "> @acme/ui@1.2.0 test",
    "> node --test test/*.test.ts",
    "",
    "(node:38954) Warning: Using the inspector with --test forces running at a concurrency of 1.",
    "(Use `node --trace-warnings ...` to show where the warning was created)",
    "Waiting for the debugger to disconnect...",
    "Command aborted"
  ].join("\n")

  it("a failed command's error line skips the debugger notices, npm's banner and Node's warnings", () => {
    const actions = ToolActions.actionsOf(
      withIds([
        calls({ id: "c1", name: "bash", input: { command: "npm test" } }),
        results({ id: "c1", name: "bash", text: output, error: true })
      ])
    )
    expect(actions[0]!.outcome).toEqual({ _tag: "failed", error: "Command aborted" })
  })

  it("an error output that is only its message keeps it", () => {
    const actions = ToolActions.actionsOf(
      withIds([
        calls({ id: "c1", name: "bash", input: { command: "npm test" } }),
        results({ id: "c1", name: "bash", text: "Could not find the script `test`", error: true })
      ])
    )
    expect(actions[0]!.outcome).toEqual({ _tag: "failed", error: "Could not find the script `test`" })
  })
})

describe("a path in the OS's temporary folders is no identifier to hand over", () => {
  const pasted =
    "the header is cut off, see '/var/folders/49/l417xq/T/TemporaryItems/NSIRD_screencaptureui_elwdQN/Screenshot.png' and fix src/header.ts; the log is in /tmp/build.log"

  it("a pasted screenshot's preview path is not listed; the project's files and /tmp scratch files are", () => {
    const paths = IdentifierExtraction.fromText(pasted).paths
    expect(paths.some((path) => path.includes("/var/folders/"))).toBe(false)
    expect(paths).toEqual(expect.arrayContaining(["src/header.ts", "/tmp/build.log"]))
    const content = Extract.extract(withIds([user(pasted), assistant("Looking at the header now.")]))
    expect(content.identifiers.paths.join("\n")).not.toContain("/var/folders/")
    expect(content.identifiers.paths).toContain("src/header.ts")
  })

  it("a read of the screenshot is not a file the work read", () => {
    const path = "/private/var/folders/49/l417xq/T/TemporaryItems/NSIRD_screencaptureui_x/Screenshot.png"
    const content = Extract.extract(
      withIds([
        user("the header is cut off, see the screenshot"),
        calls(
          { id: "c1", name: "read", input: { path } },
          { id: "c2", name: "read", input: { path: "src/header.ts" } }
        ),
        results({ id: "c1", name: "read", text: "[image]" }, { id: "c2", name: "read", text: "export {}" })
      ])
    )
    expect(content.filesRead).toEqual(["src/header.ts"])
  })
})

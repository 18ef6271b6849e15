/**
 * `EditChange`: the line an edit brought, read off each edit format — the
 * rule (`between`) and the readers of tool inputs, text-action edit blocks
 * and harness-applied edit blocks on the cases the engine tests do not
 * reach.
 */
import { describe, expect, it } from "vitest"
import * as EditChange from "../src/EditChange.ts"
import type { Message } from "../src/Message.ts"

const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] })

describe("between", () => {
  it("a change of spacing or indentation only is no change", () => {
    expect(EditChange.between("    if x:\n        run()", "if x:\n    run(  )".replace("(  )", "()"))).toBeUndefined()
    expect(EditChange.between("a = 1", "a  =  1")).toBeUndefined()
  })

  it("a line without a word (a bracket, a quote fence) is never the change", () => {
    expect(EditChange.between("x = [1]", 'x = [\n    1,\n]\n"""\nDocs here')).toEqual({
      verb: "adds",
      line: "Docs here"
    })
  })

  it("the line keeps its own spacing inside, so it still occurs verbatim where it was written", () => {
    expect(EditChange.between("", "\tcall(a,  b)  # two spaces")).toEqual({
      verb: "adds",
      line: "call(a,  b)  # two spaces"
    })
  })

  it("a very long line is kept to MAX_LINE_CHARS", () => {
    expect(EditChange.between("", "x".repeat(1_000))?.line).toHaveLength(EditChange.MAX_LINE_CHARS)
  })
})

describe("ofToolInput", () => {
  it("an input without new text (a read, a shell command) has no change", () => {
    expect(EditChange.ofToolInput({ path: "a.ts" })).toBeUndefined()
    expect(EditChange.ofToolInput({ command: "npm test" })).toBeUndefined()
    expect(EditChange.ofToolInput("a.ts")).toBeUndefined()
  })

  it("str_replace_editor's create writes file_text; its insert adds new_str", () => {
    expect(EditChange.ofToolInput({ command: "create", path: "/r/a.py", file_text: "import os\n" })).toEqual({
      verb: "adds",
      line: "import os"
    })
    expect(EditChange.ofToolInput({ command: "insert", path: "/r/a.py", insert_line: 3, new_str: "x = 1" })).toEqual({
      verb: "adds",
      line: "x = 1"
    })
  })
})

describe("ofTextEdit", () => {
  it("after a rejected edit, lines N–M are the original screen SWE-agent shows last, not the rejected one", () => {
    const report = user(
      [
        "Your proposed edit has introduced new syntax error(s).",
        "This is how your edit would have looked if applied",
        "[File: /r/a.py (3 lines total)]",
        "1:def f(x):",
        "2:    return [x",
        "This is the original code before your edit",
        "[File: /r/a.py (3 lines total)]",
        "1:def f(x):",
        "2:    return x",
        "(Open file: /r/a.py)"
      ].join("\n")
    )
    const items = [user("fix f"), report, { role: "assistant", content: "…" } as Message].map((message) => ({
      message
    }))
    // Against the original `return x`, writing `return x` again changes nothing; against the rejected `return [x` it would.
    expect(EditChange.ofTextEdit("edit 2:2\n    return [x]\nend_of_edit", items, 2)).toEqual({
      verb: "adds",
      line: "return [x]"
    })
    expect(EditChange.ofTextEdit("edit 2:2\n    return x\nend_of_edit", items, 2)).toBeUndefined()
  })

  it("reads the screen among the last 50 messages only: an older one is not looked for (linear in the session)", () => {
    const screen = user(["[File: /r/a.py (2 lines total)]", "1:def f(x):", "2:    return x"].join("\n"))
    const filler = (count: number) => Array.from({ length: count }, (_, at) => user(`ran step ${at}`))
    const itemsWith = (gap: number) => [screen, ...filler(gap)].map((message) => ({ message }))
    const edit = "edit 2:2\n    return x\n    # done\nend_of_edit"
    // Ten messages back the screen shows `return x`: the edit adds only the comment.
    expect(EditChange.ofTextEdit(edit, itemsWith(10), 11)).toEqual({ verb: "adds", line: "# done" })
    // Sixty back it is not read: the new lines stand alone, the first one counts.
    expect(EditChange.ofTextEdit(edit, itemsWith(60), 61)).toEqual({ verb: "adds", line: "return x" })
  })

  it("a command without new lines has no change; without a shown range the new lines stand alone", () => {
    expect(EditChange.ofTextEdit("create a.py", [], 0)).toBeUndefined()
    expect(EditChange.ofTextEdit("edit 5:6\nimport sys\nend_of_edit", [], 0)).toEqual({
      verb: "adds",
      line: "import sys"
    })
  })
})

describe("ofEditBlocks", () => {
  it("aider's older ORIGINAL/UPDATED blocks with the file name inside the fence", () => {
    const reply = [
      "```python",
      "app/main.py",
      "<<<<<<< ORIGINAL",
      "port = 80",
      "=======",
      "port = 8080",
      ">>>>>>> UPDATED",
      "```"
    ]
    expect(EditChange.ofEditBlocks(reply.join("\n"), "app/main.py")).toEqual({ verb: "adds", line: "port = 8080" })
  })

  it("a file named by a suffix of the applied path, with aider's file-name decorations, matches; another file does not", () => {
    const reply = [
      "**src/app/main.py**:",
      "```",
      "<<<<<<< SEARCH",
      "a = 1",
      "=======",
      "a = 2",
      ">>>>>>> REPLACE",
      "```"
    ]
    expect(EditChange.ofEditBlocks(reply.join("\n"), "/home/u/repo/src/app/main.py")).toEqual({
      verb: "adds",
      line: "a = 2"
    })
    expect(EditChange.ofEditBlocks(reply.join("\n"), "app/other.py")).toBeUndefined()
    expect(EditChange.ofEditBlocks(reply.join("\n"), "pp/main.py")).toBeUndefined()
  })
})

describe("ofDisplayedDiff", () => {
  it("Claude Code console's diff: the marker one space after the line number", () => {
    const result = [
      "Updated src/query.py with 1 addition and 1 removal",
      "       117            cursor = conn.cursor()",
      "       120 -              SELECT title, author, state, sample",
      "       120 +              SELECT title, author, state",
      "       121                FROM assets"
    ].join("\n")
    expect(EditChange.ofDisplayedDiff(result)).toEqual({ verb: "adds", line: "SELECT title, author, state" })
  })

  it("Gemini CLI console's diff, where a context line of a markdown list starts with '- ' further right", () => {
    const result = [
      "1      # Notes",
      "2      - first item",
      "3    - old rule",
      "3    + new rule",
      "4      - last item"
    ].join("\n")
    expect(EditChange.ofDisplayedDiff(result)).toEqual({ verb: "adds", line: "new rule" })
  })

  it("a result without marked numbered lines has no change", () => {
    expect(EditChange.ofDisplayedDiff("Wrote 2 lines to a.py\n   1 import os\n   2 x = 1")).toBeUndefined()
    expect(EditChange.ofDisplayedDiff("The file has been updated.")).toBeUndefined()
  })
})

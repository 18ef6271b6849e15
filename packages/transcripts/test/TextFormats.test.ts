import type { Entry, Message } from "@context-engine/core"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

const messages = (entries: ReadonlyArray<Entry.Entry>) =>
  entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
const text = (message: Message.Message) =>
  typeof message.content === "string"
    ? message.content
    : (message.content as ReadonlyArray<Message.ContentPart>)
        .map((part) => (part.type === "text" ? part.text : part.type))
        .join("|")

describe("aider history", () => {
  const history = [
    "# aider chat started at 2024-08-05 19:29:01",
    "",
    "> aider --model sonnet  ",
    "> Main model: claude-3-5-sonnet-20240620 with diff edit format  ",
    "",
    "#### fix the bug  ",
    "#### in foo.py  ",
    "",
    "Here is the fix:",
    "",
    "foo.py",
    "<<<<<<< SEARCH",
    "x = 1",
    "=======",
    "x = 2",
    ">>>>>>> REPLACE",
    "",
    "> Applied edit to foo.py  ",
    "",
    "# aider chat started at 2024-08-05 20:00:00",
    "",
    "#### hi  ",
    ""
  ].join("\n")
  const result = Import.importTextSync(history)

  it("splits sessions, each starting a new parent chain", () => {
    expect(result.format).toBe("aider")
    expect(result.sessions.map((session) => session.sessionId)).toEqual([
      "aider:2024-08-05 19:29:01",
      "aider:2024-08-05 20:00:00"
    ])
    const starts = result.transcript.entries.filter((entry) => entry.parentId === null)
    expect(starts).toHaveLength(2)
    expect(starts.map((entry) => entry.timestamp)).toEqual(["2024-08-05T19:29:01", "2024-08-05T20:00:00"])
  })

  it("joins a run of #### lines into one user message, without the markdown line breaks; assistant text keeps its edit block", () => {
    const [first, reply, second] = messages(result.transcript.entries)
    expect(first).toEqual({ role: "user", content: [{ type: "text", text: "fix the bug\nin foo.py" }] })
    expect(text(reply!)).toBe("Here is the fix:\n\nfoo.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE")
    expect(text(second!)).toBe("hi")
    const assistant = result.transcript.entries.find(
      (entry) => entry.kind === "message" && entry.message.role === "assistant"
    )
    expect(assistant!.meta).toEqual({ model: "claude-3-5-sonnet-20240620" })
  })

  it("keeps aider's own output as events", () => {
    const outputs = result.transcript.entries.flatMap((entry) =>
      entry.kind === "event" && entry.event.name === "aider.output" ? [entry.event.data] : []
    )
    expect(outputs).toEqual([
      { text: "aider --model sonnet\nMain model: claude-3-5-sonnet-20240620 with diff edit format" },
      { text: "Applied edit to foo.py" }
    ])
  })
})

describe("aider history: a multi-line output message", () => {
  it("is prefixed on its first line only: the unprefixed lines right after it are output, not the model's reply", () => {
    const history = [
      "# aider chat started at 2024-08-05 19:29:01",
      "",
      "#### fix the bug  ",
      "",
      "Here is the fix:",
      "",
      "foo.py",
      "<<<<<<< SEARCH",
      "x = 1",
      "=======",
      "x = 2",
      ">>>>>>> REPLACE",
      "",
      "> Tokens: 2k sent, 90 received.",
      "Cost: $0.01 message, $0.02 session.  ",
      "> Applied edit to foo.py  ",
      "",
      "Done; the next run prints 2.",
      ""
    ].join("\n")
    const entries = Import.importTextSync(history).transcript.entries
    expect(messages(entries).map(text)).toEqual([
      "fix the bug",
      "Here is the fix:\n\nfoo.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE",
      "Done; the next run prints 2."
    ])
    const outputs = entries.flatMap((entry) =>
      entry.kind === "event" && entry.event.name === "aider.output" ? [entry.event.data] : []
    )
    expect(outputs).toEqual([
      { text: "Tokens: 2k sent, 90 received.\nCost: $0.01 message, $0.02 session.\nApplied edit to foo.py" }
    ])
  })
})

describe("Claude Code console", () => {
  const log = [
    "claude",
    "╭──────────────────────────╮",
    "│ ✻ Welcome to Claude Code! │",
    "╰──────────────────────────╯",
    "",
    "> list the files",
    "",
    "⏺ I'll look.",
    "",
    '⏺ Bash(git commit -m "first line',
    '      second line")',
    "  ⎿  Waiting…",
    "  ⎿  [main 1234] first line",
    "     1 file changed",
    "",
    "⏺ Read(missing.txt)",
    "  ⎿  Error: ENOENT",
    "",
    "⏺ Write(/tmp/t.py)",
    "",
    "  ⎿  User rejected write to /tmp/t.py",
    "        1 +  print('hi')",
    ""
  ].join("\n")
  const result = Import.importTextSync(log)
  const all = messages(result.transcript.entries)

  it("turns ⏺ Tool(args) into a call and the ⎿ lines into its result, multi-line args included", () => {
    expect(result.format).toBe("claude-code-console")
    expect(all.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "tool"
    ])
    const call = (all[2]!.content as ReadonlyArray<Message.ToolCallPart>)[0]!
    expect(call).toMatchObject({
      toolName: "Bash",
      input: { summary: 'git commit -m "first line\n      second line"' }
    })
    const result1 = (all[3]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!
    expect(result1.toolCallId).toBe(call.toolCallId)
    expect(result1.output).toEqual({ type: "text", value: "[main 1234] first line\n     1 file changed" })
    const result2 = (all[5]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!
    expect(result2.output).toEqual({ type: "error-text", value: "Error: ENOENT" })
    // A declined call: the model got an error, not the file's lines as output.
    const declined = (all[7]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!
    expect(declined.output).toEqual({
      type: "error-text",
      value: "User rejected write to /tmp/t.py\n        1 +  print('hi')"
    })
  })

  it("starts the session at the Welcome banner", () => {
    expect(result.sessions.map((session) => session.sessionId)).toEqual(["claude-code-console:1"])
  })
})

describe("Claude Code console: a quoted report inside a code fence", () => {
  // bookminder day 20: the model pasted gemini's report verbatim in a fence, its markdown quotes at column 0;
  // each `> ` line became a user message, and their sentences were filed as the user's constraints.
  const log = [
    "╭──────────────────────────╮",
    "│ ✻ Welcome to Claude Code! │",
    "╰──────────────────────────╯",
    "",
    "> show me the verbatim response",
    "",
    "⏺ Here it is:",
    "",
    "```",
    "**Quote on the fixture plan:**",
    "> Based on our thorough real-world testing:",
    ">     - Only has auto-created iBooksX container",
    "```",
    "",
    "The fixture existed.",
    "",
    "> so where did it go?",
    "",
    "⏺ Checking git.",
    ""
  ].join("\n")
  const all = messages(Import.importTextSync(log).transcript.entries)

  it("keeps the quoted lines in the model's text; the next `> ` line outside the fence is the user again", () => {
    expect(all.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(text(all[1]!)).toContain(">     - Only has auto-created iBooksX container\n```\n\nThe fixture existed.")
    expect(text(all[2]!)).toBe("so where did it go?")
  })
})

describe("Claude Code console: its own compaction summary", () => {
  // bookminder day 20: the summary Claude Code sends after it compacts ("This session is being continued …") was
  // a user message — `inspect` said "checkpoints 0" and its lines were filed as the user's constraints.
  const log = [
    "╭──────────────────────────╮",
    "│ ✻ Welcome to Claude Code! │",
    "╰──────────────────────────╯",
    "",
    "> fix the fixture",
    "",
    "⏺ Fixed it.",
    "",
    "> This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:",
    "  Analysis:",
    "  The user asked to fix the fixture; it was fixed.",
    "",
    "> now run the specs",
    "",
    "⏺ Running them.",
    ""
  ].join("\n")
  const entries = Import.importTextSync(log).transcript.entries

  it("is a checkpoint (imported, covering what came before), not the user's words", () => {
    const checkpoints = entries.flatMap((entry) => (entry.kind === "checkpoint" ? [entry.checkpoint] : []))
    expect(checkpoints).toHaveLength(1)
    expect(checkpoints[0]!.summarizer.kind).toBe("imported")
    expect(checkpoints[0]!.generation).toBe(1)
    expect(checkpoints[0]!.text).toContain("The user asked to fix the fixture; it was fixed.")
    expect(checkpoints[0]!.coveredRange.toEntryId).toBe(
      entries.find((entry) => entry.kind === "message" && entry.message.role === "assistant")!.id
    )
    const users = messages(entries)
      .filter((message) => message.role === "user")
      .map(text)
    expect(users).toEqual(["fix the fixture", "now run the specs"])
  })
})

describe("Gemini CLI console", () => {
  const log = [
    "╭──────────────────────╮",
    "│  > fix the tests     │",
    "│    then commit       │",
    "╰──────────────────────╯",
    "",
    " ╭──────────────────────────────╮",
    " │ ✔  ReadFile specs/a.py       │",
    " │                              │",
    " │    def test(): pass          │",
    " │ -  Shell git commit          │",
    " ╰──────────────────────────────╯",
    "✦ Done. The tests",
    "  pass now.",
    ""
  ].join("\n")
  const result = Import.importTextSync(log)
  const all = messages(result.transcript.entries)

  it("reads the prompt box, each tool line of a tool box with its output, and ✦ text", () => {
    expect(result.format).toBe("gemini-cli-console")
    expect(all.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
    expect(text(all[0]!)).toBe("fix the tests\nthen commit")
    expect((all[1]!.content as ReadonlyArray<Message.ToolCallPart>)[0]).toMatchObject({
      toolName: "ReadFile",
      input: { summary: "specs/a.py" }
    })
    expect((all[2]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!.output).toEqual({
      type: "text",
      value: "def test(): pass"
    })
    expect(all[4]!.content).toMatchObject([{ type: "tool-result", toolName: "Shell" }])
    expect(text(all[5]!)).toBe("Done. The tests\npass now.")
  })

  it("imports a cancelled call (`-`, Gemini CLI's Canceled status) as an error result, not as a call that ran and printed nothing", () => {
    // Gemini CLI answers the model `[Operation Cancelled] Reason: …` for a call the user declined; the console shows no output
    expect((all[4]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!.output).toEqual({
      type: "error-text",
      value: "[Operation Cancelled]"
    })
    // a finished call (✔) keeps its output as a plain result
    expect((all[2]!.content as ReadonlyArray<Message.ToolResultPart>)[0]!.output).toMatchObject({ type: "text" })
  })
})

describe("Gemini CLI console: the model", () => {
  const modelOf = (log: string) =>
    Import.importTextSync(log).transcript.entries.flatMap((entry) =>
      entry.kind === "event" && entry.event.name === "model.change" ? [entry.event.data] : []
    )
  // As Gemini CLI prints it: the notice after a tool box (day 016's session), the stats box on its own.
  const prompt = [
    "╭──────────────╮",
    "│  > fix it    │",
    "╰──────────────╯",
    " ╭──────────────────────────────╮",
    " │ ✔  Shell pytest              │",
    " │    4 failed, 9 passed        │",
    " ╰──────────────────────────────╯",
    ""
  ]

  it("reads the Model row of a stats box and the fallback notice, in order, as model.change events", () => {
    const log = [
      ...prompt,
      "ℹ ⚡ Slow response times detected. Automatically switching from gemini-2.5-pro to gemini-2.5-flash for faster responses for the remainder of this session.",
      "╭──────────────────────────────────────────╮",
      "│ Session Stats                            │",
      "│ Model                   gemini-2.5-pro   │",
      "╰──────────────────────────────────────────╯",
      ""
    ].join("\n")
    expect(modelOf(log)).toEqual([{ modelId: "gemini-2.5-flash" }, { modelId: "gemini-2.5-pro" }])
  })

  it("a user's or the model's words about a model are not a model change", () => {
    const log = [
      "╭──────────────────────────────────────────────╮",
      "│  > Model   gemini-2.5-pro is what we use      │",
      "╰──────────────────────────────────────────────╯",
      "✦ Automatically switching from a to b is what the CLI does.",
      ""
    ].join("\n")
    expect(modelOf(log)).toEqual([])
  })
})

/**
 * What the offline handoff reads off a transcript (issue #11 requirement 1):
 * tool calls of console transcripts, commands the user ran, the user's words
 * without the model's printed thinking, and the renderer's file grouping.
 */
import {
  Checkpoint,
  CheckpointRenderer,
  type Message,
  RequestShape,
  ToolActions,
  ToolOutcome,
  UserSpeech
} from "@context-engine/core"
import { describe, expect, it } from "vitest"

const user = (text: string): Message.Message => ({ role: "user", content: [{ type: "text", text }] })
const call = (id: string, toolName: string, input: unknown): Message.Message => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName, input }]
})
const result = (id: string, toolName: string, value: string): Message.Message => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName, output: { type: "text", value } }]
})

describe("ToolActions on console transcripts (a one-line summary per call)", () => {
  const actions = ToolActions.actionsOf(
    [
      call("c1", "Bash", { summary: "git commit -m 'fix: add fixture'" }),
      result("c1", "Bash", "[main e65c8b6] fix: add fixture"),
      call("c2", "Update", { summary: "specs/cli_spec.py" }),
      result("c2", "Update", "Updated specs/cli_spec.py with 2 additions"),
      call("c3", "Read", { summary: "docs/apple_books.md" }),
      result("c3", "Read", "Read 40 lines (ctrl+r to expand)"),
      call("c4", "Task", { summary: "Find where the fixture went" })
    ].map((message, index) => ({ entryId: `e${index}`, message }))
  )

  it("a shell tool's summary is its command, a file tool's summary its path", () => {
    expect(actions.map((action) => [action.kind, action.command ?? action.path])).toEqual([
      ["command", "git commit -m 'fix: add fixture'"],
      ["edit", "specs/cli_spec.py"],
      ["read", "docs/apple_books.md"],
      ["other", undefined]
    ])
  })
})

describe("ToolActions: a search's scope is where it looks, unless it names a file", () => {
  // Claude Code console, bookminder day 20: `Grep(/Users/…/BookMinder)` listed the project directory as a file read.
  it("Grep or search over a directory is a look; over a file, a read", () => {
    const actions = ToolActions.actionsOf(
      [
        call("g1", "Grep", { summary: "/Users/dev/BookMinder" }),
        result("g1", "Grep", "Found 3 files"),
        call("g2", "grep", { pattern: "list_books", path: "src/bookminder" }),
        result("g2", "grep", "src/bookminder/cli.py:3: list_books()"),
        call("g3", "Grep", { summary: "docs/apple_books.md" }),
        result("g3", "Grep", "Found 1 match"),
        call("g4", "grep", { pattern: "TODO", path: ".env.local" }),
        result("g4", "grep", "")
      ].map((message, index) => ({ entryId: `e${index}`, message }))
    )
    expect(actions.map((action) => [action.kind, action.path])).toEqual([
      ["look", "/Users/dev/BookMinder"],
      ["look", "src/bookminder"],
      ["read", "docs/apple_books.md"],
      ["read", ".env.local"]
    ])
  })
})

describe("ToolActions on Gemini CLI console transcripts (each write tool's one-line description)", () => {
  it("names the file of a WriteFile ('Writing to <path>') and an Edit ('<path>: <old> => <new>')", () => {
    const actions = ToolActions.actionsOf(
      [
        call("g1", "WriteFile", { summary: "Writing to specs/fixtures/create_fixture.sh" }),
        result("g1", "WriteFile", "Successfully wrote"),
        call("g2", "Edit", {
          summary: "bookminder/library.py:     db_files = list(bklibrary_... =>     db_files = sorted(b..."
        }),
        result("g2", "Edit", "Successfully modified"),
        call("g3", "Edit", { summary: "...specs/apple_books/fixtures/_common.sh: ROOT=$(cd ... => ROOT=$(git ..." }),
        result("g3", "Edit", "Successfully modified"),
        // a description that is not one of these keeps its old reading: no path
        call("g4", "Edit", { summary: "an edit to the settings" }),
        result("g4", "Edit", "ok")
      ].map((message, index) => ({ entryId: `e${index}`, message }))
    )
    expect(actions.map((action) => [action.kind, action.path])).toEqual([
      ["create", "specs/fixtures/create_fixture.sh"],
      ["edit", "bookminder/library.py"],
      ["edit", "...specs/apple_books/fixtures/_common.sh"],
      ["other", undefined]
    ])
  })
})

describe("ToolActions on Gemini CLI's read-only tools (console display names and the names the model calls)", () => {
  const items = (calls: ReadonlyArray<[string, unknown, string]>) =>
    calls
      .flatMap(([toolName, input, output], index) => [
        call(`r${index}`, toolName, input),
        result(`r${index}`, toolName, output)
      ])
      .map((message, index) => ({ entryId: `e${index}`, message }))

  it("a ReadManyFiles, FindFiles, ReadFolder, SearchText, GoogleSearch or WebFetch call is a look, not done work", () => {
    const actions = ToolActions.actionsOf(
      items([
        [
          "ReadManyFiles",
          { summary: "Will attempt to read and concatenate files using patterns: `TODO.md`" },
          "### ReadManyFiles Result"
        ],
        ["FindFiles", { summary: "'**/BKLibrary-*.sqlite' within ../.." }, "Found 2 matching file(s)"],
        ["ReadFolder", { summary: "specs/Data/Documents/iBooks/Books" }, "Listed 3 item(s)."],
        ["SearchText", { summary: "'ZSTATE' within bookminder" }, "Found 4 matches"],
        ["GoogleSearch", { summary: 'Searching the web for: "sqlite ZSTATE"' }, "Search results returned."],
        [
          "WebFetch",
          { summary: "Processing URLs and instructions from prompt: https://example.com" },
          "Content processed"
        ]
      ])
    )
    expect(actions.map((action) => [action.toolName, action.kind, action.path])).toEqual([
      ["ReadManyFiles", "look", undefined],
      ["FindFiles", "look", undefined],
      // a folder is where it looks, not a file it read
      ["ReadFolder", "look", "specs/Data/Documents/iBooks/Books"],
      ["SearchText", "look", undefined],
      ["GoogleSearch", "look", undefined],
      ["WebFetch", "look", undefined]
    ])
    expect(actions.filter(ToolActions.isSideEffect)).toEqual([])
  })

  it("in a Gemini JSON log (the tool names the model calls) too; file content saying 'exit code 1' is no failure", () => {
    const actions = ToolActions.actionsOf(
      items([
        [
          "read_many_files",
          { paths: ["docs/*.md"] },
          "--- docs/ci.md ---\nThe job exited with code 1 when the lock was stale."
        ],
        ["search_file_content", { pattern: "FAILED" }, "specs/cli_spec.py:12: assert 'FAILED' not in out"],
        ["list_directory", { path: "/repo/specs" }, "[DIR] fixtures"],
        ["google_web_search", { query: "gh run list" }, "error: results below"]
      ])
    )
    expect(actions.map((action) => [action.kind, action.outcome._tag])).toEqual([
      ["look", "ok"],
      ["look", "ok"],
      ["look", "ok"],
      ["look", "ok"]
    ])
  })
})

describe("ToolActions on a transcript that reuses tool-call ids", () => {
  it("pairs each call with the result that follows it, as the repaired request does", () => {
    const items = [
      call("t1", "bash", { command: "python reproduce.py" }),
      result("t1", "bash", "344"),
      call("t1", "bash", { command: "ls -F" }),
      result("t1", "bash", "src/\ntests/\nsetup.py"),
      call("t1", "bash", { command: "python -m pytest" }),
      result("t1", "bash", "Traceback (most recent call last):\nAssertionError: expected 345\nFAILED tests/test_a.py")
    ].map((message, index) => ({ entryId: `e${index}`, message }))
    const before = JSON.stringify(items)
    const actions = ToolActions.actionsOf(items)
    const seen = actions.map(({ command, outcome }) => [command, outcome._tag === "ok" ? outcome.text : outcome._tag])
    expect(seen).toEqual([
      ["python reproduce.py", "344"],
      ["ls -F", "src/\ntests/\nsetup.py"],
      ["python -m pytest", "failed"]
    ])
    // the caller's items are not renamed in place
    expect(JSON.stringify(items)).toBe(before)
  })
})

describe("UserSpeech", () => {
  it("names the shell command a user ran themselves (aider /run, Claude Code bash-input, pi shell mode)", () => {
    expect(UserSpeech.shellCommand(user("/run python -m pytest tests/test_main.py"))).toBe(
      "python -m pytest tests/test_main.py"
    )
    expect(UserSpeech.shellCommand(user("<bash-input>git status</bash-input>"))).toBe("git status")
    expect(UserSpeech.shellCommand(user("Ran `find . -name '*.ts'`\n```\n./a.ts\n```"))).toBe("find . -name '*.ts'")
    expect(UserSpeech.shellCommand(user("please run the tests"))).toBeUndefined()
    expect(UserSpeech.shellCommand(user("/add src/a.py"))).toBeUndefined()
  })

  it("the model's thinking a console log prints after the prompt is not the user's words", () => {
    const message = user("show me the prompt first\n\n✻ Thinking…\n\n  The user wants me to always run it first.")
    expect(UserSpeech.spokenText(message)).toBe("show me the prompt first")
  })
})

describe("ToolActions: a call the user declined", () => {
  const call = (toolName: string, path: string): Message.Message => ({
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "w1", toolName, input: { file_path: path } }]
  })
  const result = (text: string): Message.Message => ({
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "w1", toolName: "Write", output: { type: "text", value: text } }]
  })

  it("the console's 'User rejected write to …' is the decline, not a line of the file it would have written", () => {
    // Claude Code's console prints the rejected file below the decline; one of its lines says "BookminderError: ".
    const shown =
      'User rejected write to /tmp/t.py\n   1 +  from app import BookminderError\n   2 +  print(f"BookminderError: {e}")'
    const [action] = ToolActions.actionsOf([
      { entryId: "a", message: call("Write", "/tmp/t.py") },
      { entryId: "b", message: result(shown) }
    ])
    expect(action!.outcome).toEqual({ _tag: "failed", error: "User rejected write to /tmp/t.py" })
    expect(ToolOutcome.isDeclined(action!.outcome)).toBe(true)
  })

  it("Claude Code's model-facing answer and Gemini's cancel are declines; an ordinary error is not", () => {
    const outcome = (text: string) =>
      ToolActions.actionsOf([
        { entryId: "a", message: call("Write", "a.py") },
        { entryId: "b", message: result(text) }
      ])[0]!.outcome
    expect(
      ToolOutcome.isDeclined(outcome("The user doesn't want to proceed with this tool use. The tool use was rejected."))
    ).toBe(true)
    expect(ToolOutcome.isDeclined(outcome("[Operation Cancelled] Reason: User did not allow tool call"))).toBe(true)
    expect(ToolOutcome.isDeclined(outcome("Error: EACCES: permission denied, open 'a.py'"))).toBe(false)
  })
})

describe("ToolOutcome: a write tool's output shows what it wrote", () => {
  const outcomeOf = (toolName: string, text: string) =>
    ToolActions.actionsOf([
      {
        entryId: "a",
        message: {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "w", toolName, input: { path: "s.sh" } }]
        }
      },
      {
        entryId: "b",
        message: {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: "w", toolName, output: { type: "text", value: text } }]
        }
      }
    ])[0]!.outcome

  it('a diff that adds `echo "Error: …"` is a write that worked, not a failure (Gemini CLI, bookminder day 16)', () => {
    const diff =
      ' 18   if [ ! -f "$DB" ]; then\n 19   +     echo "Error: Real Apple Books database not found."\n 20         exit 1'
    expect(outcomeOf("WriteFile", diff)._tag).toBe("ok")
    expect(outcomeOf("Edit", diff)._tag).toBe("ok")
  })

  it("a write tool whose answer opens with an error failed; a command's output is read at its end as before", () => {
    expect(outcomeOf("Edit", "Error: old_string not found in s.sh")).toEqual({
      _tag: "failed",
      error: "Error: old_string not found in s.sh"
    })
    expect(outcomeOf("bash", 'echo "Error: x"\nError: x\nexit code 1')._tag).toBe("failed")
  })
})

describe("UserSpeech: what sets a task, what is data", () => {
  it("a slash command followed only by the console's echo of its output is a slash command", () => {
    expect(UserSpeech.classify("/compact \n  ⎿  Compacted. ctrl+r to see full summary")).toBe("slash-command")
    expect(UserSpeech.classify("/status \n  ⎿  (no content)")).toBe("slash-command")
    expect(UserSpeech.classify("/compact\nand then fix the parser in src/a.ts please")).toBe("speech")
  })

  it("Claude Code's local-command caveat is a command record, tagged or as its console prints it", () => {
    const caveat =
      "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."
    expect(UserSpeech.classify(caveat)).toBe("command-record")
    expect(UserSpeech.classify(`<local-command-caveat>${caveat}</local-command-caveat>`)).toBe("command-record")
    expect(UserSpeech.classify("Caveat: this deletes the cache, so do not run it in production")).toBe("speech")
  })

  it("a pasted terminal session (prompt line, stack trace) has no words of the user", () => {
    const pasted = [
      "~/work/app (main)",
      "➜  app git:(main) npx tsx src/cli.ts -c",
      "node:fs:443",
      "    return binding.readFileUtf8(path, stringToFlags(options.flag));",
      "Error: ENOENT: no such file or directory, open '/work/app/src/package.json'",
      "    at readFileSync (node:fs:443:20)",
      "    at <anonymous> (/work/app/src/utils/config.ts:76:24)",
      "Node.js v23.4.0"
    ].join("\n")
    expect(UserSpeech.classify(pasted)).toBe("pasted-log")
    expect(UserSpeech.spokenText({ role: "user", content: pasted })).toBe("")
  })

  it("a long message that opens with a question and asks for nothing steers; it does not set a task", () => {
    const steering =
      "quick question: why does reset clear the cache? i would assume a caller sets it up once and the store keeps it around for the whole session, no?"
    expect(UserSpeech.isTaskSetting(steering)).toBe(false)
    expect(
      UserSpeech.isTaskSetting("why does reset clear the cache? keep it across resets and add a test for that.")
    ).toBe(true)
    expect(UserSpeech.isTaskSetting("btw, can we keep the old module around for reference while we port?")).toBe(true)
    expect(UserSpeech.isTaskSetting("Move the parser into src/parse.ts and update the imports")).toBe(true)
  })

  it("the user's own words leave out the code, documents and quotes a message pastes (aider's pasted <doc> blocks)", () => {
    const pasted = user(
      [
        "# Question: how do the chat modes work?",
        "",
        "<doc>",
        "- `ask` - Aider will answer questions about your code, but never edit it.",
        "Environment variable: `AIDER_CHAT_HISTORY_FILE`",
        "</doc>",
        "Here is my config:",
        "```toml",
        "# always use tabs",
        "```",
        "> we never deploy on fridays",
        "Keep the defaults."
      ].join("\n")
    )
    const own = UserSpeech.ownWords(pasted)
    expect(own).toContain("how do the chat modes work?")
    expect(own).toContain("Here is my config:")
    expect(own).toContain("Keep the defaults.")
    for (const quoted of ["never edit it", "AIDER_CHAT_HISTORY_FILE", "always use tabs", "fridays"])
      expect(own).not.toContain(quoted)
    // spokenText still holds them (the checkpoint quotes what the user pasted as evidence).
    expect(UserSpeech.spokenText(pasted)).toContain("never edit it")
    // Inside a pasted log, the blocks go before the prose lines are picked.
    const log = user(
      `<doc>\n${Array.from({ length: 8 }, (_, index) => `Aider will never edit file ${index} in ask mode here.`).join("\n")}\n</doc>\n${"at run (/src/a.ts:1:2)\n".repeat(20)}`
    )
    expect(UserSpeech.classify(UserSpeech.userText(log))).toBe("pasted-log")
    expect(UserSpeech.spokenText(log)).toContain("never edit")
    expect(UserSpeech.ownWords(log)).not.toContain("never edit")
  })
})

describe("RequestShape.markExecutedCommands", () => {
  const item = (entryId: string, message: Message.Message) => ({
    entryId,
    message,
    source: "transcript" as const,
    editedBy: []
  })
  const record = "<command-name>/compact</command-name>\n<command-args>Write a handoff</command-args>"

  it("marks recorded commands after the last assistant message, leaves earlier ones and the items alone", () => {
    const items = [
      item("a", { role: "user", content: record }),
      item("b", { role: "assistant", content: "Compacted." }),
      item("c", { role: "user", content: [{ type: "text", text: record }] }),
      item("d", { role: "user", content: "ok, continue" })
    ]
    const snapshot = JSON.stringify(items)
    const marked = RequestShape.markExecutedCommands(items)
    expect(JSON.stringify(items)).toBe(snapshot)
    expect(marked[0]).toBe(items[0])
    expect(marked[3]).toBe(items[3])
    expect(marked[2]!.message.content).toEqual([
      { type: "text", text: RequestShape.EXECUTED_COMMAND_MARK },
      { type: "text", text: record }
    ])
    expect(RequestShape.markExecutedCommands(marked)).toBe(marked)
  })

  it("leaves the latest user message verbatim when every trailing user message is a command (fuzz seed -1854821683)", () => {
    const only = [
      item("s", { role: "system", content: "You are a coding agent working in /work/app." }),
      item("u", { role: "user", content: [{ type: "text", text: "/- u" }] })
    ]
    expect(RequestShape.markExecutedCommands(only)).toBe(only)
    const afterAnswer = [
      item("a", { role: "assistant", content: "Compacted." }),
      item("c", { role: "user", content: record }),
      item("d", { role: "user", content: "/model opus" })
    ]
    const marked = RequestShape.markExecutedCommands(afterAnswer)
    expect(marked[1]!.message.content).toBe(`${RequestShape.EXECUTED_COMMAND_MARK}\n${record}`)
    expect(marked[2]).toBe(afterAnswer[2])
  })

  it("returns the same items when nothing is to be marked", () => {
    const items = [item("a", { role: "user", content: "Fix the parser" })]
    expect(RequestShape.markExecutedCommands(items)).toBe(items)
  })
})

describe("CheckpointRenderer", () => {
  it("lists absolute and relative files together (no common directory) and terminates", () => {
    const text = CheckpointRenderer.renderContent({
      ...Checkpoint.emptyContent(),
      goal: "g",
      artifacts: [
        { kind: "file", value: "/repo/src/a.ts", status: "created", entryIds: ["e1"] },
        { kind: "file", value: "specs/b.py", status: "created", entryIds: ["e2"] }
      ]
    })
    expect(text).toContain("files created: `/repo/src/a.ts`, `specs/b.py`")
  })
})

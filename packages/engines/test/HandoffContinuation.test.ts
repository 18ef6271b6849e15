/**
 * The offline checkpoint as a handoff another model continues from (new-user
 * trial, session 5): the goal keeps what the user typed, Done lists what a
 * text-action agent did, Next Steps name the failure the work stopped at,
 * and Key Decisions are choices, not narration. Small built conversations,
 * then the real transcripts the trial used (../shared/transcripts).
 */
import { type Entry, type Message, ToolActions } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as Decisions from "../src/checkpoint/Decisions.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { CoveredItem } from "../src/Summarizer.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const summarize = (covered: ReadonlyArray<CoveredItem>, kept: ReadonlyArray<CoveredItem> = []) =>
  ExtractiveSummarizer.summarizeSync({ covered, kept, maxTokens: 4_000, countTokens: count })

/** A command template of the length slash commands ship (several KB of process instructions). */
const template = [
  "Split complex work into independent subtasks and run them in parallel.",
  "## Process",
  ...Array.from(
    { length: 40 },
    (_, index) => `${index + 1}. Each subtask must be executable on its own and should report back in under 100 words.`
  )
].join("\n")
const commandRecord = (name: string, args: string) =>
  user(
    `<command-message>${name} is running…</command-message>\n<command-name>/${name}</command-name>\n<command-args>${args}</command-args>`
  )

describe("goal: what the user typed, not the command template it expanded", () => {
  it("a template ending in Claude Code's 'ARGUMENTS:' line quotes the command and its arguments, not the template's opening", () => {
    const content = summarize(
      withIds([
        commandRecord("fanout", "build a kanban board with drag and drop"),
        user(`${template}\n\nARGUMENTS: build a kanban board with drag and drop`),
        assistant("I split the work into four subtasks and started them.")
      ])
    )
    expect(content.goal).toContain('"/fanout build a kanban board with drag and drop"')
    expect(content.goal).toContain("template of")
    // The template's rules are the command's boilerplate, not constraints the user set.
    expect(content.constraints.join("\n")).not.toContain("executable on its own")
  })

  it("a template that placed the arguments itself ($ARGUMENTS) takes them from the command record before it", () => {
    const content = summarize(
      withIds([
        commandRecord("fanout", "port the parser to rust"),
        user(`${template.slice(0, 600)}\n\nThe task: port the parser to rust\n\n${template.slice(600)}`),
        assistant("Started.")
      ])
    )
    expect(content.goal).toContain('"/fanout port the parser to rust"')
  })

  it("a long message is cut in its middle: the ask at its end survives a paste before it", () => {
    const paste = Array.from({ length: 30 }, (_, index) => `config line ${index} value=${index * 7} enabled`).join(" ")
    const content = summarize(
      withIds([
        user(`Here is my current setup, read it all: ${paste}. Please migrate the scheduler to cron syntax.`),
        assistant("Reading it.")
      ])
    )
    expect(content.goal).toContain("Here is my current setup")
    expect(content.goal).toContain("migrate the scheduler to cron syntax")
    expect(content.goal).toContain(" … ")
  })
})

/** A SWE-agent style text-action step: a thought, the command in a closing fence, the output as a user message. */
const act = (thought: string, command: string) => assistant(`${thought}\n\n\`\`\`\n${command}\n\`\`\``)
const footer = (file: string) => `(Open file: ${file})\n(Current directory: /repo)\nbash-$`
const rejected = (file: string, error: string) =>
  user(
    `Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.\n\nERRORS:\n- E999 SyntaxError: ${error}\n\nThis is how your edit would have looked if applied\n-------------------------------------------------\n[File: ${file} (40 lines total)]\n1:def load(x):\n2:    return [x\n-------------------------------------------------\n${footer(file)}`
  )

const textActionSession: ReadonlyArray<Message.Message> = [
  user("Fix the loader: load() crashes on empty input. Reproduce it first, then fix src/loader.py."),
  act("First I'll write a script that reproduces the crash.", "create repro.py"),
  user(`[File: /repo/repro.py (1 lines total)]\n1:\n${footer("/repo/repro.py")}`),
  act("Now the example from the issue.", "edit 1:1\nfrom src.loader import load\nload('')\nend_of_edit"),
  user(
    `[File: /repo/repro.py (2 lines total)]\n1:from src.loader import load\n2:load('')\n${footer("/repo/repro.py")}`
  ),
  act("Run it.", "python repro.py"),
  user(
    `Traceback (most recent call last):\n  File "/repo/repro.py", line 2, in <module>\n    load('')\n  File "/repo/src/loader.py", line 2, in load\n    return x[0]\nIndexError: string index out of range\n${footer("/repo/repro.py")}`
  ),
  act("Open the loader.", "open src/loader.py"),
  user(
    `[File: /repo/src/loader.py (40 lines total)]\n1:def load(x):\n2:    return x[0]\n${footer("/repo/src/loader.py")}`
  ),
  act("Guard the empty case.", "edit 2:2\n    return [x\nend_of_edit"),
  rejected("/repo/src/loader.py", "unmatched '['"),
  act("Missing bracket; again.", "edit 2:2\n    return [x]]\nend_of_edit"),
  rejected("/repo/src/loader.py", "unmatched ']'"),
  assistant("I will rewrite the whole function body before editing again.")
]

describe("done: a text-action agent's commands are its actions", () => {
  it("the commands written in closing fences, with their output as the next user message, are listed as done and failed", () => {
    const content = summarize(withIds(textActionSession, "swe:"))
    // The newest edit's first new line says what the file holds (EditChange.ofTextEdit).
    expect(content.progress.done).toEqual(["created `/repo/repro.py` (2 edits) — adds `from src.loader import load`"])
    expect(content.progress.inProgress).toEqual([])
    expect(content.failedApproaches).toEqual([
      "`python repro.py` failed: IndexError: string index out of range",
      "`edit 2:2` on `/repo/src/loader.py` failed (2 attempts): SyntaxError: unmatched ']'"
    ])
    expect(content.filesModified).toContain("/repo/repro.py")
    expect(content.filesRead).toContain("/repo/src/loader.py")
  })

  it("a delegated task is named by its description and its report's first line that is not a heading", () => {
    const task = (id: string, description: string, report: string) => [
      calls({ id, name: "Task", input: { description, prompt: `${description}, in full.`, subagent_type: "general" } }),
      results({ id, name: "Task", text: `## Summary\n\n${report}\n\n**Files:** src/x.ts` })
    ]
    const content = summarize(
      withIds([
        user("Build the importer and its tests in parallel please."),
        ...task("t1", "Write the importer", "I wrote the importer with streaming reads."),
        ...task("t2", "Write importer tests", "I added twelve tests covering malformed lines.")
      ])
    )
    // Two reports that open with the same heading are two finished tasks, not one said twice.
    expect(content.progress.done).toEqual([
      'Task "Write the importer" → I wrote the importer with streaming reads.',
      'Task "Write importer tests" → I added twelve tests covering malformed lines.'
    ])
  })

  it("a directory a listing or glob tool searched is not a file read", () => {
    const content = summarize(
      withIds([
        user("Find the command files and read the review one."),
        calls({ id: "g1", name: "Glob", input: { pattern: "**/*.md", path: "~/.claude/commands" } }),
        results({ id: "g1", name: "Glob", text: "~/.claude/commands/review.md" }),
        calls({ id: "r1", name: "Read", input: { file_path: "~/.claude/commands/review.md" } }),
        results({ id: "r1", name: "Read", text: "Review the diff." })
      ])
    )
    expect(content.filesRead).toEqual(["~/.claude/commands/review.md"])
  })

  it("a response ending in a code block that the user answers in their own words is not an action", () => {
    const items = withIds([
      user("How do I list the files here?"),
      assistant("Use this:\n\n```\nrm -rf build\n```"),
      user("Thanks, that worked nicely for me today.")
    ])
    expect(ToolActions.actionsOf(items)).toEqual([])
  })
})

describe("next steps: where the work stopped", () => {
  it("the newest failure no later run superseded, after the user's latest message, is a next step", () => {
    const content = summarize(withIds(textActionSession, "swe:"))
    expect(content.nextSteps).toContain(
      "Resolve the failure the work stopped at: `edit 2:2` on `/repo/src/loader.py` failed (2 attempts): SyntaxError: unmatched ']'"
    )
  })

  it("a text-action edit of the same file with another line range supersedes the failed edits: no failed approach, no step", () => {
    // SWE-agent's `edit 2:2` names only lines of the open file; a tool-call edit's target is its file
    // (ToolActions.inputCommand), so a later successful edit of that file supersedes a failed one either way.
    const content = summarize(
      withIds(
        [
          ...textActionSession.slice(0, -1),
          act("The range must include line 3.", "edit 2:3\n    return x[0] if x else None\nend_of_edit"),
          user(
            `[File: /repo/src/loader.py (40 lines total)]\n1:def load(x):\n2:    return x[0] if x else None\nFile updated.\n${footer("/repo/src/loader.py")}`
          ),
          assistant("The loader now returns None for empty input.")
        ],
        "swe:"
      )
    )
    expect(content.failedApproaches).toEqual(["`python repro.py` failed: IndexError: string index out of range"])
    expect(content.nextSteps.join("\n")).not.toContain("Resolve the failure")
    expect(content.progress.done).toContain("edited `/repo/src/loader.py` — adds `return x[0] if x else None`")
  })

  it("a failure before the user's latest message is not where the work stopped", () => {
    const content = summarize(
      withIds([
        user("Run the test suite please and tell me what you see."),
        calls({ id: "c1", name: "bash", input: { command: "npm test" } }),
        results({ id: "c1", name: "bash", text: "1 failed\nerror: expected 2 to equal 3" }),
        assistant("One test fails: expected 2 to equal 3."),
        user("Leave that, write the changelog entry for the release instead.")
      ])
    )
    expect(content.failedApproaches?.join("\n")).toContain("npm test")
    expect(content.nextSteps.join("\n")).not.toContain("Resolve the failure")
  })

  it.each([
    ["Gemini CLI (a cancelled call)", "[Operation Cancelled]"],
    [
      "Claude Code (a rejected tool use)",
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file)."
    ]
  ])(
    "a call the user declined is not a failure to resolve, only an approach not to retry, said as declined: %s",
    (_, declined) => {
      const content = summarize(
        withIds([
          user("Stage only the fixture docs for the next commit."),
          calls({ id: "c1", name: "edit", input: { path: "docs/guide.md", oldText: "old", newText: "new" } }),
          results({ id: "c1", name: "edit", text: declined, error: true })
        ])
      )
      expect(content.failedApproaches?.join("\n")).toContain("`docs/guide.md` declined by the user: ")
      expect(content.failedApproaches?.join("\n")).not.toContain("failed")
      expect(content.nextSteps.join("\n")).not.toContain("Resolve the failure")
    }
  )
})

describe("next steps: a plan the agent already carried out is not ahead", () => {
  it("the plan sentence that announced a call which ran is dropped; a step it names for after the call stays", () => {
    const content = summarize(
      withIds([
        user("Set up the dev environment and make sure the suite runs."),
        {
          role: "assistant",
          content: [
            {
              type: "text",
              text: "Let's install the package with its dev extras. Then I'll run the whole test suite."
            },
            { type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "pip install -e .[dev]" } }
          ]
        },
        results({
          id: "c1",
          name: "bash",
          text: "Successfully installed pkg-1.0\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"
        })
      ])
    )
    expect(content.nextSteps).toContain("Then I'll run the whole test suite. (the agent's plan, e1)")
    expect(content.nextSteps.join("\n")).not.toContain("Let's install")
    // The shell prompt and the agent's state footer after the output are not the command's result.
    expect(content.progress.done).toEqual(["ran `pip install -e .[dev]` → Successfully installed pkg-1.0"])
  })

  it("a call issued in a message after the plan's words (console imports write text and call apart) also carried it out", () => {
    const content = summarize(
      withIds([
        user("Prepare the next commit with just the fixture scripts and their docs."),
        assistant("I will now apply this change to docs/fixtures.md. Then I'll propose the commit message."),
        calls({ id: "c1", name: "edit", input: { path: "docs/fixtures.md", oldText: "old", newText: "new" } }),
        results({ id: "c1", name: "edit", text: "[Operation Cancelled]", error: true })
      ])
    )
    expect(content.nextSteps.join("\n")).not.toContain("I will now apply this change")
    expect(content.nextSteps).toContain("Then I'll propose the commit message. (the agent's plan, e1)")
  })
})

describe("next steps: future work, not a report of finished work", () => {
  const nextSteps = (last: string) =>
    summarize(withIds([user("add live reload of the theme files"), assistant(last)])).nextSteps.join("\n")

  it("'Now the … has …' reports; 'Now update …' and 'Then I'll …' plan", () => {
    expect(nextSteps("Perfect! Now the theme system has live reload:\n\n1. A watcher reloads the file")).not.toContain(
      "Now the theme system has live reload"
    )
    expect(nextSteps("Now it works for every custom theme file.")).not.toContain("Now it works")
    expect(nextSteps("Now update the table of contents.")).toContain("Now update the table of contents.")
    expect(nextSteps("The watcher is in. Then I'll document it in the README.")).toContain(
      "Then I'll document it in the README."
    )
  })
})

describe("decisions: choices, not narration", () => {
  it("an announced look or a step that names nothing is narration; a choice or a named change is kept", () => {
    expect(Decisions.plainStatement("Let me look at the config loader first.")).toBe("")
    expect(Decisions.plainStatement("You're right! Let me fix this properly:")).toBe("")
    expect(Decisions.plainStatement("Let me check the tests. I'll use a Map instead of a record.")).toBe(
      "Use a Map instead of a record."
    )
    expect(Decisions.plainStatement("Now let me keep the listeners:")).toBe("Keep the listeners.")
  })

  it("a steering answer that only narrates is recorded as the change it made", () => {
    const decisions = Decisions.fromRange(
      withIds([
        user("no console logs! setTheme should return an error the caller can show"),
        {
          role: "assistant",
          content: [
            { type: "text", text: "You're right! Let me fix this properly:" },
            {
              type: "tool-call",
              toolCallId: "c1",
              toolName: "edit",
              input: { path: "src/theme.ts", oldText: "console.log(e)", newText: "return e" }
            }
          ]
        },
        results({ id: "c1", name: "edit", text: "Successfully replaced text in src/theme.ts." })
      ])
    )
    expect(decisions.map((decision) => decision.decision)).toEqual(["edited `src/theme.ts` (e1)"])
  })
})

const messagesOf = async (file: string): Promise<Array<CoveredItem>> =>
  (await Import.importFilePromise(transcript(file))).transcript.entries
    .filter((entry): entry is Entry.MessageEntry => entry.kind === "message")
    .map((entry) => ({ entryId: entry.id, message: entry.message }))

describe("the real transcripts of the new-user trial", () => {
  it("Claude Code: the goal of a slash-command session is the typed task, not the template's first 500 characters", async () => {
    const items = await messagesOf("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    const content = summarize(items.slice(0, 40))
    expect(`${content.goal}\n${content.criticalContext.join("\n")}`).toContain("create TODO app by Next.js")
  })

  it("SWE-agent (text actions): the reproduction script, the failed run and the three rejected edits are in the handoff", async () => {
    const items = await messagesOf("swe-agent/pydicom__pydicom-1458.traj")
    const content = summarize(items.slice(0, 20), items.slice(2, 3))
    expect(content.progress.done).toContain(
      "created `/pydicom__pydicom/reproduce_bug.py` (2 edits) — adds `import numpy as np`"
    )
    expect(content.failedApproaches?.join("\n")).toMatch(/edit 287:295.*numpy_handler\.py.*failed \(3 attempts\)/)
    expect(content.nextSteps.join("\n")).toContain("Resolve the failure the work stopped at")
  })
})

/**
 * Handoff quality of the offline checkpoint (issue #11 requirements 1 and 3):
 * which constraints are kept when the budget is short, how Done reads, what
 * the ledger learns from git's output. Small built conversations; each test
 * names the behaviour, never a probe term of the continuity scenarios.
 */
import { Checkpoint, CheckpointRenderer, type Message, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Constraints from "../src/checkpoint/Constraints.ts"
import * as Decisions from "../src/checkpoint/Decisions.ts"
import * as Ledger from "../src/checkpoint/Ledger.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)

describe("constraints", () => {
  it("a message the user repeats within a few messages is a correction in force, said once", () => {
    const items = Constraints.fromSpeech([
      { entryId: "e1", text: "drop the legacy wrapper class." },
      { entryId: "e3", text: "drop the legacy wrapper class." },
      { entryId: "e5", text: "hi" },
      { entryId: "e7", text: "hi" },
      { entryId: "e9", text: "drop the legacy wrapper class." }
    ])
    expect(items).toEqual(['"drop the legacy wrapper class." (e9; said 3 times)'])
  })

  it("a question or a bare link said again is not a rule", () => {
    const speech = [
      { entryId: "e1", text: "is there a portable way to run a subprocess with the terminal? including curses, etc." },
      { entryId: "e2", text: "https://example.com/docs/install.html" },
      { entryId: "e2b", text: "how do i run the tests" },
      { entryId: "e2c", text: "how do i run the tests" },
      { entryId: "e3", text: "is there a portable way to run a subprocess with the terminal? including curses, etc." },
      { entryId: "e4", text: "https://example.com/docs/install.html" },
      { entryId: "e5", text: "can you keep the old loader? It is still used." },
      { entryId: "e6", text: "can you keep the old loader? It is still used." }
    ]
    // A question that asks for something ("can you keep …?") is a request; repeated, it is insisted on.
    expect(Constraints.fromSpeech(speech)).toEqual([
      '"can you keep the old loader? It is still used." (e6; said 2 times)'
    ])
  })

  it("the same words far apart (a new session) are not a repeat", () => {
    const speech = [
      { entryId: "e0", text: "drop the legacy wrapper class." },
      ...Array.from({ length: 6 }, (_, index) => ({ entryId: `f${index}`, text: `rename module number ${index}` })),
      { entryId: "e9", text: "drop the legacy wrapper class." }
    ]
    expect(Constraints.fromSpeech(speech).join("\n")).not.toContain("said")
  })

  it("binding rules outrank newer weak preferences when the budget is short", () => {
    const weak = Array.from({ length: 14 }, (_, index) => `"we should use helper ${index} here" (w${index})`)
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Refactor the session module (e0)",
      constraints: ['"only write end-to-end tests, never unit tests" (e1)', ...weak],
      progress: { done: ["edited `src/a.ts`"], inProgress: [], blocked: [] },
      nextSteps: ["continue"]
    }
    const fitted = ExtractiveSummarizer.fitToBudget(content, 300, count)
    expect(fitted.constraints).toContain('"only write end-to-end tests, never unit tests" (e1)')
    expect(fitted.constraints.length).toBeLessThan(content.constraints.length)
    expect(Constraints.strength(content.constraints[0]!)).toBeGreaterThan(Constraints.strength(weak[0]!))
  })
})

describe("done", () => {
  it("a short budget keeps the newest Done item beside an unknown outcome: Done never reads (none) when work was done", () => {
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Port the theme to the selectors (e0)",
      constraints: Array.from({ length: 14 }, (_, index) => `"never touch the legacy renderer ${index}" (u${index})`),
      progress: {
        done: Array.from({ length: 30 }, (_, index) => `ran \`pnpm check\` in package ${index} → ok`),
        inProgress: [],
        blocked: ["edit `themes/nord.json` was issued but no result was recorded (e90): outcome unknown"]
      },
      nextSteps: ["continue"],
      keyIdentifiers: Array.from({ length: 30 }, (_, index) => `\`themeColor${index}\``)
    }
    // The constraints and identifiers, ahead of Done in priority, take the whole budget.
    const fitted = ExtractiveSummarizer.fitToBudget(content, 300, count)
    expect(fitted.progress.blocked).toEqual(content.progress.blocked)
    expect(fitted.progress.done.at(-1)).toBe(content.progress.done.at(-1))
    expect(CheckpointRenderer.renderContent(fitted)).not.toMatch(/### Done\n- \(none\)/)
  })

  it("a short budget keeps the newest run beside the newest change when it fits, and not beyond the budget", () => {
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Port the theme to the selectors (e0)",
      constraints: Array.from(
        { length: 14 },
        (_, index) =>
          `"never touch the legacy renderer ${index}, customers still load their saved themes through it" (u${index})`
      ),
      progress: {
        done: [
          "edited `src/old.ts`",
          "the user ran `pnpm test -- theme-selectors` (e40)",
          ...Array.from({ length: 20 }, (_, index) => `edited \`src/theme${index}.ts\` (2 edits)`)
        ],
        inProgress: [],
        blocked: []
      },
      nextSteps: ["continue"],
      keyIdentifiers: Array.from({ length: 30 }, (_, index) => `\`themeColor${index}\``)
    }
    // The constraints, ahead of Done in priority, take the whole budget: the newest change and the newest run
    // are what is left of Done.
    const fitted = ExtractiveSummarizer.fitToBudget(content, 300, count)
    expect(fitted.progress.done).toEqual([
      "the user ran `pnpm test -- theme-selectors` (e40)",
      "edited `src/theme19.ts` (2 edits)"
    ])
    const tiny = ExtractiveSummarizer.fitToBudget(content, 60, count)
    expect(tiny.progress.done.join("\n")).not.toContain("the user ran")
  })

  const session = withIds([
    user("Add the export command and commit it."),
    calls({ id: "c1", name: "write", input: { path: "src/export.ts", content: "x" } }),
    results({ id: "c1", name: "write", text: "wrote src/export.ts" }),
    assistant("Added the export command with a dry-run flag for safety."),
    user("/run pnpm test"),
    assistant("Updated the docs to mention the export command in the usage section."),
    calls({ id: "c2", name: "bash", input: { command: "git commit -am 'feat: export'" } }),
    results({
      id: "c2",
      name: "bash",
      text: "[main 1a2b3c4] feat: export\n 2 files changed\n create mode 100644 src/export.ts\n create mode 100644 docs/export.md"
    }),
    assistant("Added the export command with a dry-run flag for safety."),
    assistant("I've updated the todo list to break the work into steps:"),
    assistant("updated=parse(row) if row else None")
  ])
  const content = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 4000, countTokens: count })

  it("reads oldest to newest across edits, the user's own commands, reports and commits; a repeated report once", () => {
    expect(content.progress.done).toEqual([
      "created `src/export.ts`",
      "the user ran `pnpm test` (e4)",
      "reported: Updated the docs to mention the export command in the usage section. (e5)",
      "committed `1a2b3c4` feat: export",
      "reported: Added the export command with a dry-run flag for safety. (e8)"
    ])
  })

  it("code and lead-ins are not completion reports", () => {
    const done = content.progress.done.join("\n")
    expect(done).not.toContain("updated=parse")
    expect(done).not.toContain("todo list")
  })

  it("files a commit created (git's create mode lines) join the ledger", () => {
    expect(content.artifacts).toContainEqual({
      kind: "file",
      value: "docs/export.md",
      status: "created",
      entryIds: ["e6"]
    })
    expect(CheckpointRenderer.renderContent(content)).toContain("docs/export.md")
  })
})

describe("done: the completion-report shapes agents write", () => {
  const reports = (...answers: ReadonlyArray<string>) =>
    ExtractiveSummarizer.summarizeSync({
      covered: withIds([user("Make the widgets follow the theme."), ...answers.map((text) => assistant(text))]),
      maxTokens: 4000,
      countTokens: count
    }).progress.done.filter((item) => item.startsWith("reported:"))

  it("an acknowledgement then the state the work reached ('Perfect! Now the …') is done work", () => {
    expect(
      reports("Perfect! Now the `Panel` widget properly re-renders when the theme changes:\n\n1. the cache is cleared")
    ).toEqual(["reported: Now the `Panel` widget properly re-renders when the theme changes (e1)"])
  })

  it("a summary heading's own words or the report under it is done work, its lead-in colon dropped", () => {
    expect(reports("## Summary: Fixed the Panel widget\n\n### Issues Found\n\n1. wrong width")).toEqual([
      "reported: Fixed the Panel widget (e1)"
    ])
    expect(
      reports("Let me summarize.\n\n## Summary\n\nAdded **3 new theme tokens for the panel borders**:\n- a")
    ).toEqual(["reported: Added 3 new theme tokens for the panel borders (e1)"])
    expect(reports("Done. I've properly ported the panel widget to the shared theme.")).toEqual([
      "reported: I've properly ported the panel widget to the shared theme. (e1)"
    ])
  })

  it("narration, plans, asks and hopes are not done work, in any of those shapes", () => {
    expect(
      reports(
        "Perfect! Now let me check the panel widget.",
        "Great! Now I'll add the theme tokens.",
        "Perfect! Now run it again in both terminals.",
        "Perfect! Now the panel should re-render.",
        "## Summary\n\nI'll add the theme tokens next, then update the docs.",
        "## Summary of the plan\n\n1. Add the tokens\n2. Update the docs",
        "Now the panel widget re-renders when the theme changes."
      )
    ).toEqual([])
  })

  it("a check the agent ran again does not crowd reported work out of a short budget: its newest run stays", () => {
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Port the theme to the widgets (e0)",
      progress: {
        done: [
          "reported: Added the theme tokens for the panel borders. (e1)",
          ...Array.from({ length: 12 }, (_, index) => `ran \`npm run check 2>&1 | tail -${index + 2}\``),
          "reported: Fixed the panel widget's width in narrow terminals. (e30)",
          "ran `npm run check 2>&1 | tail -3`"
        ],
        inProgress: [],
        blocked: []
      },
      nextSteps: ["continue"]
    }
    const fitted = ExtractiveSummarizer.fitToBudget(content, 110, count)
    expect(fitted.progress.done.length).toBeLessThan(content.progress.done.length)
    expect(fitted.progress.done).toEqual(
      expect.arrayContaining([
        "reported: Added the theme tokens for the panel borders. (e1)",
        "reported: Fixed the panel widget's width in narrow terminals. (e30)",
        "ran `npm run check 2>&1 | tail -3`"
      ])
    )
  })
})

describe("decisions", () => {
  it("a reason word inside brackets does not split the sentence; narration lead-ins like 'First, let me' are dropped", () => {
    const said = (text: string) => Decisions.fromRange(withIds([user("tidy the loader types"), assistant(text)]))
    expect(said("Minor cleanup (removed the unnecessary cast since type narrowing works). Committing it.")).toEqual([])
    expect(said("We use a Map for the handlers because a record type named constructor breaks object lookup.")).toEqual(
      [
        {
          decision: "We use a Map for the handlers",
          rationale: "because a record type named constructor breaks object lookup."
        }
      ]
    )
    expect(Decisions.plainStatement("First, let me remove the selector member variables.")).toBe(
      "Remove the selector member variables."
    )
  })

  it("the agent's conclusion that answered the user's steering question with a change is a decision, with the question as reason", () => {
    const decisions = Decisions.fromRange(
      withIds([
        user("why would the view keep its own cache? the store has one already, no?"),
        calls({ id: "c1", name: "bash", input: { command: "grep -n cache src/view.ts" } }),
        results({ id: "c1", name: "bash", text: "12: private cache" }),
        {
          role: "assistant",
          content: [
            { type: "text", text: "The store owns the cache and exposes it; the view should read it from there." },
            {
              type: "tool-call",
              toolCallId: "c2",
              toolName: "edit",
              input: { path: "src/view.ts", oldText: "a", newText: "b" }
            }
          ]
        },
        results({ id: "c2", name: "edit", text: "ok" }),
        user("ok, thanks")
      ])
    )
    expect(decisions).toEqual([
      {
        decision: "The store owns the cache and exposes it; the view should read it from there. (e3)",
        rationale: 'answering the user (e0): "why would the view keep its own cache? the store has one already, no?"'
      }
    ])
  })
})

describe("decisions: a fix and the failure that prompted it", () => {
  const edit = (id: string, text: string): Message.Message => ({
    role: "assistant",
    content: [
      { type: "text", text },
      {
        type: "tool-call",
        toolCallId: id,
        toolName: "edit",
        input: { path: "src/result.ts", oldText: "a", newText: "b" }
      }
    ]
  })
  const session = withIds([
    user("Add the retry option to the client."),
    calls({ id: "c1", name: "bash", input: { command: "pnpm check" } }),
    results({
      id: "c1",
      name: "bash",
      text: "src/client.ts(4,2): error TS2339: Property 'delayMs' does not exist on type 'Options'.\nexit code 2"
    }),
    assistant("Let me look at the Options type:"),
    calls({ id: "c2", name: "read", input: { path: "src/options.ts" } }),
    results({ id: "c2", name: "read", text: "export interface Options { retries: number }" }),
    edit("c3", "I see, Options has no delay. Let me drop the delay from the retry result to match:"),
    results({ id: "c3", name: "edit", text: "ok" }),
    calls({ id: "c4", name: "bash", input: { command: "pnpm check" } }),
    results({ id: "c4", name: "bash", text: "Checked 12 files." })
  ])

  it("the agent's first change after a failed check, before the check ran again, is a decision with the error as its reason", () => {
    expect(Decisions.fromRange(session)).toEqual([
      {
        decision: "Drop the delay from the retry result to match. (e6)",
        rationale:
          "fixing: `pnpm check` failed with \"src/client.ts(4,2): error TS2339: Property 'delayMs' does not exist on type 'Options'.\""
      }
    ])
  })

  it("a failure nobody fixed is not a decision (it stays a failed approach)", () => {
    expect(Decisions.fromRange(session.slice(0, 4))).toEqual([])
    const content = ExtractiveSummarizer.summarizeSync({
      covered: session.slice(0, 4),
      maxTokens: 2_000,
      countTokens: count
    })
    expect(content.failedApproaches?.join("\n")).toContain("delayMs")
  })

  it("narration lead-ins are not part of a decision", () => {
    expect(Decisions.plainStatement("You're absolutely right. Now let me keep the listeners:")).toBe(
      "Keep the listeners."
    )
    expect(Decisions.plainStatement("Let me update the plan")).toBe("Update the plan")
  })
})

describe("ledger", () => {
  it("a relative path (git, console logs) that ends an absolute one the tools named is that file, listed once", () => {
    const items = withIds([
      calls({ id: "c1", name: "edit", input: { path: "/repo/src/a.ts", oldText: "a", newText: "b" } }),
      results({ id: "c1", name: "edit", text: "ok" }),
      calls({ id: "c2", name: "Update", input: { summary: "src/a.ts" } }),
      results({ id: "c2", name: "Update", text: "Updated src/a.ts" })
    ])
    const ledger = Ledger.fromRange(items, ToolActions.actionsOf(items))
    expect(ledger.filter((artifact) => artifact.kind === "file")).toEqual([
      { kind: "file", value: "/repo/src/a.ts", status: "modified", entryIds: ["e0", "e2"] }
    ])
  })

  it("a relative path is the first absolute path that ends in '/<path>', not one that only ends in its characters", () => {
    const edit = (id: string, path: string) => [
      calls({ id, name: "edit", input: { path, oldText: "a", newText: "b" } }),
      results({ id, name: "edit", text: "ok" })
    ]
    const items = withIds([
      ...edit("c1", "/other/xsrc/a.ts"),
      ...edit("c2", "/repo/src/a.ts"),
      ...edit("c3", "/mirror/src/a.ts"),
      calls({ id: "c4", name: "Update", input: { summary: "src/a.ts" } }),
      results({ id: "c4", name: "Update", text: "Updated src/a.ts" })
    ])
    const files = Ledger.fromRange(items, ToolActions.actionsOf(items)).filter((artifact) => artifact.kind === "file")
    expect(files.map((artifact) => [artifact.value, artifact.entryIds])).toEqual([
      ["/other/xsrc/a.ts", ["e0"]],
      ["/repo/src/a.ts", ["e2", "e6"]],
      ["/mirror/src/a.ts", ["e4"]]
    ])
  })
})

/**
 * Key Decisions are choices (issue #11
 * requirement 1): an answer or an explanation is not a decision — only the
 * clause in it that chooses is; an observation or a hypothesis is not one;
 * a choice the user turned down is not in force. Small built conversations; each case is a kind of sentence,
 * never words of a particular transcript, and each has a guard that the
 * real thing of the same shape is still kept.
 */
import type { Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Decisions from "../src/checkpoint/Decisions.ts"
import { sentences } from "../src/checkpoint/Text.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

/** An assistant message with its text and an edit of `path`. */
const editing = (id: string, text: string, path = "src/report.py"): Message.Message => ({
  role: "assistant",
  content: [
    { type: "text", text },
    { type: "tool-call", toolCallId: id, toolName: "edit", input: { path, oldText: "a", newText: "b" } }
  ]
})
const decisionsOf = (messages: ReadonlyArray<Message.Message>) =>
  Decisions.fromRange(withIds(messages)).map((found) => found.decision)
const reasonsOf = (text: string) => decisionsOf([user("set up the report script"), assistant(text)])

describe("an answer to the user's steering: the decision is the clause that chooses, not the whole reply", () => {
  it("deferring to the user's words names no choice: the change made stands for it", () => {
    expect(
      decisionsOf([
        user("don't commit the generated files, leave them untracked"),
        editing("c1", "Understood. I will follow your instructions precisely.", ".gitignore"),
        results({ id: "c1", name: "edit", text: "ok" })
      ])
    ).toEqual(["edited `.gitignore` (e1)"])
  })

  it("an acknowledgement, the choice, then what the agent will show: only the choice", () => {
    expect(
      decisionsOf([
        user("instead of counting words, parse the blocks and print them as json"),
        editing(
          "c1",
          "Certainly! I'll change the script to parse the blocks and print them as JSON. We'll need an import for the parser. Here's the modified script:"
        ),
        results({ id: "c1", name: "edit", text: "ok" })
      ])
    ).toEqual(["Change the script to parse the blocks and print them as JSON. (e1)"])
  })

  it("an explanation, then the change it leads to: only the change", () => {
    expect(
      decisionsOf([
        user("do we load the files when the picker opens? then it reloads them anyway, no?"),
        editing(
          "c1",
          "Yes! The picker calls `listFiles()` in its constructor, which reads the folder each time. So new files show up when you open it. Let me update the README to mention this:",
          "README.md"
        ),
        results({ id: "c1", name: "edit", text: "ok" })
      ])
    ).toEqual(["Update the README to mention this. (e1)"])
  })

  it("the choice stated before the reads that prepare the change is the conclusion", () => {
    expect(
      decisionsOf([
        user("could we watch the files for changes? then edits show at once"),
        assistant("Yes, Node has a built-in watcher. Let me add a watcher for the custom files:"),
        calls({ id: "c1", name: "read", input: { path: "src/files.ts" } }),
        results({ id: "c1", name: "read", text: "export const load = () => {}" }),
        calls({ id: "c2", name: "edit", input: { path: "src/files.ts", oldText: "a", newText: "b" } }),
        results({ id: "c2", name: "edit", text: "ok" }),
        editing("c3", "Now let's note the live reload in the README:", "README.md"),
        results({ id: "c3", name: "edit", text: "ok" })
      ])
    ).toEqual(["Add a watcher for the custom files. (e1)"])
  })

  it("a choice that opens a list carries the list; an answer that chooses nothing is the change it made", () => {
    expect(
      decisionsOf([
        user("why would we queue and then append?"),
        editing(
          "c1",
          "I overcomplicated this. We just want to:\n\n1. Run the command, show its output\n2. Save it to the pending list\n\nLet me fix it:"
        ),
        results({ id: "c1", name: "edit", text: "ok" })
      ])
    ).toEqual(["We just want to: Run the command, show its output; Save it to the pending list (e1)"])
    expect(
      decisionsOf([
        user("why is the footer so bright?"),
        editing("c1", "The footer is using the muted color for both lines, which is the brighter one."),
        results({ id: "c1", name: "edit", text: "ok" })
      ])
    ).toEqual(["edited `src/report.py` (e1)"])
  })
})

describe("an observation, a diagnosis or a label is not a decision", () => {
  it("what happened to a thing, or what a thing does not do, set against what was expected", () => {
    expect(reasonsOf("The header was incorrectly identified as the language tag instead of the file's name.")).toEqual(
      []
    )
    expect(reasonsOf("The header was parsed as a file name rather than skipped.")).toEqual([])
    expect(reasonsOf("When we pass a relative path, it's being treated as a user name instead of a folder.")).toEqual(
      []
    )
    expect(reasonsOf("Git doesn't show it because empty folders are not tracked.")).toEqual([])
    expect(reasonsOf("`main.py` shows as uncovered because the runner calls the function directly.")).toEqual([])
    // A change described with "now" is what the agent made.
    expect(reasonsOf("The handler now returns the error instead of logging it.")).toEqual([
      "The handler now returns the error"
    ])
    expect(
      reasonsOf("The runner is the library's test helper that calls commands in-process rather than spawning one.")
    ).toEqual([])
    expect(reasonsOf("The plan is a two-step migration rather than a rewrite.")).toEqual([
      "The plan is a two-step migration"
    ])
    // How the work was made, in the passive, is still a choice with its reason.
    expect(reasonsOf("Built-in themes aren't watched since they can't be edited.")).toEqual([
      "Built-in themes aren't watched"
    ])
  })

  it("a hypothesis, a clause left unfinished, a label are not choices; a choice after a label is", () => {
    expect(reasonsOf("The most likely explanation is the stale cache, since it was never cleared.")).toEqual([])
    expect(reasonsOf("The decision was to avoid building tests on guesses.")).toEqual([])
    expect(reasonsOf("Schema Drift: Because it reads the live schema, the fixtures follow any change.")).toEqual([])
    expect(
      Decisions.fromRange(
        withIds([
          user("ask the other model"),
          assistant("Direct approach - Instead of piping the file, I'll name it in the prompt.")
        ])
      )
    ).toEqual([{ decision: "Name it in the prompt.", rationale: "instead of piping the file" }])
  })
})

describe("a choice the user turned down is not a decision in force", () => {
  const session = (reply: string) =>
    decisionsOf([
      user("speed up the lookups"),
      editing("c1", "I'll cache the results in a module global because each lookup reads the disk."),
      results({ id: "c1", name: "edit", text: "ok" }),
      user(reply)
    ])

  it("'No, …', 'don't …', a clause refusing a point: dropped; a reply that goes on: kept", () => {
    expect(session("No, keep the module free of state.")).toEqual([])
    expect(session("don't keep state in the module")).toEqual([])
    expect(session("we measured it, so NO on the cache. look at the query instead")).toEqual([])
    expect(session("good, now add a test for it")).toEqual(["Cache the results in a module global"])
  })

  it("a refusal steers: the agent's answer to it is the decision", () => {
    expect(
      decisionsOf([
        user("remove the duplicate rows"),
        assistant("I'll look at every column first."),
        calls({ id: "c1", name: "bash", input: { command: "sqlite3 app.db 'SELECT * FROM books'" } }),
        results({ id: "c1", name: "bash", text: "(cancelled)", error: true }),
        user("we shouldn't select *, use the narrower query like before"),
        assistant("You are right. We will use the narrower query to focus on the relevant columns."),
        calls({ id: "c2", name: "bash", input: { command: "sqlite3 app.db 'SELECT rowid, title FROM books'" } }),
        results({ id: "c2", name: "bash", text: "2|XP\n3|XP" }),
        editing("c3", "I'll keep the row with the lowest rowid.", "app.db.sql"),
        results({ id: "c3", name: "edit", text: "ok" })
      ])
    ).toEqual(["We will use the narrower query to focus on the relevant columns. (e5)"])
  })
})

describe("a choice the user later told the agent to take out is not in force", () => {
  // aider history at 32K: "raise the `ApplyShellCommandsError`" stayed a Key Decision after the user said three
  // times "drop the `ApplyShellCommandsError` nonsense"; the agent's decision to remove it is the one in force.
  const made = [
    user("add an --apply option that runs the commands in a file"),
    editing("c1", "We raise `ApplyShellCommandsError` rather than running the commands.", "aider/main.py"),
    results({ id: "c1", name: "edit", text: "ok" }),
    user("now add a test for it")
  ]
  it("before the withdrawal, it is a decision", () => {
    expect(decisionsOf(made)).toEqual(["We raise `ApplyShellCommandsError`"])
  })

  it("named in backticks or as a code-like word after drop / remove / revert: dropped; the removal stands", () => {
    for (const said of ["drop the `ApplyShellCommandsError` nonsense.", "please remove ApplyShellCommandsError"])
      expect(
        decisionsOf([
          ...made,
          user(said),
          editing(
            "c2",
            "We need to remove the `ApplyShellCommandsError` import, since it's no longer used.",
            "tests/test_main.py"
          ),
          results({ id: "c2", name: "edit", text: "ok" })
        ])
      ).toEqual(["We need to remove the `ApplyShellCommandsError` import"])
  })

  it("a removal of something else, or the name without a removal, leaves it", () => {
    for (const said of ["drop the `--yes` shortcut", "keep ApplyShellCommandsError but rename the flag"])
      expect(decisionsOf([...made, user(said)])).toEqual(["We raise `ApplyShellCommandsError`"])
  })
})

describe("sentences", () => {
  it("a numbered list item is one sentence, its number not a sentence of its own", () => {
    expect(sentences("We want to:\n\n1. Run it\n2. Save it")).toEqual(["We want to:", "Run it", "Save it"])
  })
})

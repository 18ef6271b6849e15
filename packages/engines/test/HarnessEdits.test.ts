/**
 * Edits a model writes as text and its harness applies (aider's
 * SEARCH/REPLACE blocks) are actions of the handoff: their outcome is only in
 * the harness's output (aider's `> ` lines, kept as output events beside the
 * messages), which the compaction attaches to the message before it. Small
 * built sessions; the report lines are aider's wording, no transcript's.
 */
import { type Entry, HarnessOutput, type Message, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Decisions from "../src/checkpoint/Decisions.ts"
import * as Extract from "../src/checkpoint/Extract.ts"
import * as Prepare from "../src/checkpoint/Prepare.ts"
import { prepareInput, request, withKeepRecent } from "./checkpoint/fixture.ts"
import { assistant, messageEntry, user } from "./support.ts"

const block = (path: string, search: string, replace: string) =>
  `${path}\n\`\`\`python\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\``
const failedMatch = (path: string) =>
  `The LLM did not conform to the edit format.\n# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in ${path}`

/** One step of a harness session: a message and the harness output printed after it (if any). */
interface Step {
  readonly message: Message.Message
  readonly output?: string
}

const steps: ReadonlyArray<Step> = [
  { message: user("make the retry delay configurable in net/client.py") },
  {
    message: assistant(`I'll add a delay argument.\n\n${block("net/client.py", "DELAY = 1", "DELAY = 2")}`),
    output: failedMatch("net/client.py")
  },
  {
    message: assistant(`Sorry, the constant is lower case.\n\n${block("net/client.py", "delay = 1", "delay = 2")}`),
    output: "Tokens: 2k sent, 90 received.\nApplied edit to net/client.py\nCommit 1a2b3c4 feat: configurable delay"
  },
  { message: user("also add a test for it") },
  {
    message: assistant(`Here is a new test file.\n\n${block("tests/test_client.py", "", "def test_delay(): ...")}`),
    output: "Creating empty file tests/test_client.py\nApplied edit to tests/test_client.py"
  },
  {
    message: assistant(`And the docs.\n\n${block("docs/client.md", "Delay: 1", "Delay: configurable")}`),
    output: failedMatch("docs/client.md")
  }
]

const items = steps.map((step, index) => ({
  entryId: `m${index}`,
  message: step.message,
  ...(step.output === undefined ? {} : { harnessOutput: step.output })
}))

/** The session as a transcript: each output an event after its message, as the aider importer writes it. */
const entries = (): Array<Entry.Entry> => {
  const out: Array<Entry.Entry> = []
  steps.forEach((step, index) => {
    out.push(messageEntry(`m${index}`, out.at(-1)?.id ?? null, step.message))
    if (step.output !== undefined)
      out.push({
        id: `o${index}`,
        parentId: `m${index}`,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "event",
        event: { name: HarnessOutput.AIDER_OUTPUT, data: { text: step.output } }
      })
  })
  return out
}

describe("edits a harness applied from the model's text", () => {
  it("are actions with the outcome the harness reported", () => {
    const edits = ToolActions.actionsOf(items).map((action) => [
      action.entryId,
      action.kind,
      action.path,
      action.outcome._tag
    ])
    expect(edits).toEqual([
      ["m1", "edit", "net/client.py", "failed"],
      ["m2", "edit", "net/client.py", "ok"],
      ["m4", "create", "tests/test_client.py", "ok"],
      ["m5", "edit", "docs/client.md", "failed"]
    ])
  })

  it("are done when applied; a block that matched nothing is a failed approach until a later edit of the file applied", () => {
    const content = Extract.extract(items)
    expect(content.progress.done).toEqual(
      expect.arrayContaining([
        // The applied block's new line, not the failed block's (EditChange.ofEditBlocks).
        "edited `net/client.py` — adds `delay = 2`",
        "created `tests/test_client.py` — adds `def test_delay(): ...`"
      ])
    )
    // The ledger's file lines are the files tool calls touched (the validator's critical identifiers); these are Done items.
    expect(content.filesModified).toEqual([])
    expect(content.failedApproaches).toEqual([
      "edit `docs/client.md` failed: SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in docs/client.md"
    ])
    expect(content.nextSteps.join("\n")).toContain(
      "Resolve the failure the work stopped at: edit `docs/client.md` failed"
    )
  })

  it("a block retried after it matched nothing is no decision; a steering answer that edits is, without its edit block", () => {
    const decisions = Decisions.fromRange([
      ...items,
      { entryId: "m6", message: user("why not keep the delay in the config file?") },
      {
        entryId: "m7",
        message: assistant(
          `Good idea, the config file is read at start. I'll keep the delay there.\n\n${block("net/config.py", "", "delay = 2")}`
        ),
        harnessOutput: "Applied edit to net/config.py"
      }
    ])
    expect(decisions).toEqual([
      {
        decision: "Keep the delay there. (m7)",
        rationale: 'answering the user (m6): "why not keep the delay in the config file?"'
      }
    ])
  })

  it("without the harness's output, text is not an action", () => {
    expect(ToolActions.actionsOf(items.map(({ entryId, message }) => ({ entryId, message })))).toEqual([])
  })
})

describe("the compaction reads each message's harness output from the transcript", () => {
  it("output events after a message reach the covered items, and output after another event belongs to no message", () => {
    const transcript = entries()
    expect(HarnessOutput.byMessage(transcript).get("m2")).toBe(steps[2]!.output)
    const started: Entry.Entry = {
      id: "s",
      parentId: "m5",
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "event",
      event: { name: "session.start" }
    }
    const banner: Entry.Entry = {
      ...started,
      id: "b",
      parentId: "s",
      event: { name: HarnessOutput.AIDER_OUTPUT, data: { text: "Applied edit to x.py" } }
    }
    expect(HarnessOutput.byMessage([...transcript, started, banner]).get("m5")).toBe(steps[5]!.output)

    const messages = steps.map((step) => step.message)
    const req = withKeepRecent(request(messages, 8_000, transcript), 1)
    const preparation = Prepare.prepare(prepareInput(req))
    if (preparation._tag !== "Ready") throw new Error(preparation.note)
    const covered = [...preparation.covered, ...preparation.turnPrefix]
    expect(covered.find((item) => item.entryId === "m2")?.harnessOutput).toBe(steps[2]!.output)
    expect(Extract.extract(covered).progress.done).toContain("edited `net/client.py` — adds `delay = 2`")
  })
})

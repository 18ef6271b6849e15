/**
 * A transcript of many harness sessions (aider appends every `# aider chat
 * started at …` session to one history file): "The session started with this
 * request" names the first request of the session the covered range ends in,
 * not the file's first (which quoted an old session's pasted hook output as
 * the current session's start).
 */
import type { Entry, Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Extract from "../src/checkpoint/Extract.ts"
import * as Prepare from "../src/checkpoint/Prepare.ts"
import { prepareInput, request, withKeepRecent } from "./checkpoint/fixture.ts"
import { assistant, messageEntry, user } from "./support.ts"

const OLD_ASK = "Add a spinner to the repo map refresh in aider/repomap.py"
const NEW_ASK = "Rename the fence argument of strip_filename and update its callers"
const LATEST = "Now add a test for strip_filename with a four-backtick fence"

const messages: ReadonlyArray<Message.Message> = [
  user(OLD_ASK),
  assistant("Added the spinner to the refresh in aider/repomap.py."),
  user(NEW_ASK),
  assistant("Renamed the argument in aider/coders/editblock_coder.py and updated two callers."),
  user("Also make the function check each opening fence from all_fences"),
  assistant("It now checks each opening fence."),
  user(LATEST),
  assistant("Added tests/test_editblock.py::test_strip_filename_fence.")
]

/** The messages as two sessions: a `session.start` event before m0 and before m2, as the aider importer writes them. */
const transcript = (): Array<Entry.Entry> => {
  const out: Array<Entry.Entry> = []
  messages.forEach((message, index) => {
    if (index === 0 || index === 2)
      out.push({
        id: `s${index}`,
        parentId: out.at(-1)?.id ?? null,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "event",
        event: { name: "session.start", data: { startedAt: `2024-08-22 08:1${index}:00` } }
      })
    out.push(messageEntry(`m${index}`, out.at(-1)!.id, message))
  })
  return out
}

describe("a transcript of many sessions", () => {
  it("marks the first message of each session in the covered items", () => {
    const req = withKeepRecent(request(messages, 8_000, transcript()), 1)
    const preparation = Prepare.prepare(prepareInput(req))
    if (preparation._tag !== "Ready") throw new Error(preparation.note)
    const opened = preparation.covered.filter((item) => item.opensSession).map((item) => item.entryId)
    expect(opened).toEqual(["m0", "m2"])
  })

  it("the session start quoted is the latest session's first request; the old session's ask is an earlier request", () => {
    const covered = messages.map((message, index) => ({
      entryId: `m${index}`,
      message,
      ...(index === 0 || index === 2 ? { opensSession: true as const } : {})
    }))
    const context = Extract.extract(covered).criticalContext.join("\n")
    expect(context).toContain(`The session started with this request (m2): "${NEW_ASK}"`)
    expect(context).not.toContain(`The session started with this request (m0)`)
    expect(context).toContain(`User (m0): "${OLD_ASK}"`)
  })

  it("without session marks the range's first request is the session's start (control)", () => {
    const covered = messages.map((message, index) => ({ entryId: `m${index}`, message }))
    expect(Extract.extract(covered).criticalContext.join("\n")).toContain(
      `The session started with this request (m0): "${OLD_ASK}"`
    )
  })
})

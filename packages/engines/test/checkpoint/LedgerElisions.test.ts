/**
 * The artifact ledger lists files the next model can open: a path a console showed with an elided part (Gemini
 * CLI's tool lines shorten a long path with `...` for its head or middle: `WriteFile Writing to
 * ...specs/apple_books/fixtures/_common.sh`) is resolved to the one full path the transcript shows with the same
 * head and tail, or left out of the ledger.
 */
import { Checkpoint, ToolActions } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../../transcripts/src/importers/Import.ts"
import { fitToBudget } from "../../src/checkpoint/Fit.ts"
import * as Ledger from "../../src/checkpoint/Ledger.ts"
import type { CoveredItem } from "../../src/Summarizer.ts"
import { assistant, calls, results, withIds } from "../support.ts"

const write = (id: string, summary: string) => [
  calls({ id, name: "WriteFile", input: { summary } }),
  results({ id, name: "WriteFile", text: "ok" })
]

const filesOf = (items: ReadonlyArray<CoveredItem>): Array<string> =>
  Ledger.fromRange(items, ToolActions.actionsOf(items)).flatMap((artifact) =>
    artifact.kind === "file" ? [artifact.value] : []
  )

describe("elided paths in the ledger", () => {
  it("a path shown with its head elided is the one full path the transcript names with that tail", () => {
    const items = withIds([
      assistant("I'll put the shared constants in specs/apple_books/fixtures/_common.sh."),
      ...write("w1", "Writing to ...specs/apple_books/fixtures/_common.sh")
    ])
    expect(filesOf(items)).toEqual(["specs/apple_books/fixtures/_common.sh"])
  })

  it("a path shown with a middle segment elided is the one full path with that head and tail", () => {
    const items = withIds([
      assistant("The fixture builder lives in src/fixtures/apple/create.py."),
      ...write("w1", "Writing to src/.../create.py")
    ])
    expect(filesOf(items)).toEqual(["src/fixtures/apple/create.py"])
  })

  it("the same file named relative and absolute is one match", () => {
    const items = withIds([
      assistant("Editing /Users/me/repo/src/fixtures/create.py, that is src/fixtures/create.py in the repo."),
      ...write("w1", "Writing to .../fixtures/create.py")
    ])
    expect(filesOf(items)).toEqual(["src/fixtures/create.py"])
  })

  it("is left out when two different files match, or none", () => {
    const ambiguous = withIds([
      assistant("There are src/a/create.py and src/b/create.py."),
      ...write("w1", "Writing to src/.../create.py")
    ])
    expect(filesOf(ambiguous)).toEqual([])
    const unknown = withIds([...write("w1", "Writing to ...specs/fixtures/other.sh")])
    expect(filesOf(unknown)).toEqual([])
  })

  it("a Done edit naming the elided path is known to the ledger when Done is shortened", () => {
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Write the fixture scripts",
      progress: {
        done: [
          ...Array.from({ length: 12 }, (_, index) => `ran \`make fixture-${index}\` → built fixture ${index}`),
          "created `...specs/apple_books/fixtures/_common.sh`"
        ],
        inProgress: [],
        blocked: []
      },
      nextSteps: ["continue"],
      artifacts: [{ kind: "file", value: "specs/apple_books/fixtures/_common.sh", status: "created", entryIds: ["e1"] }]
    }
    const fitted = fitToBudget(content, 150, (text) => Math.ceil(text.length / 4))
    expect(fitted.progress.done.filter((item) => item.includes("_common.sh"))).toEqual([])
  })
})

describe("Gemini CLI console (bookminder day 16)", () => {
  it("lists no elided path among its files, and the shared constants script by its full path", async () => {
    const items = (
      await Import.importFilePromise(transcript("gemini-cli-console/bookminder-day-016.md"))
    ).transcript.entries.flatMap((entry) =>
      entry.kind === "message" ? [{ entryId: entry.id, message: entry.message }] : []
    )
    const files = filesOf(items)
    expect(files.filter((path) => path.includes("..."))).toEqual([])
    expect(files).toContain("specs/apple_books/fixtures/_common.sh")
  })
})

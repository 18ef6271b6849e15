/**
 * A path a console's tool line showed shortened WITHOUT a mark is the file it stands for. Gemini CLI's
 * `shortenPath` (packages/core/src/utils/paths.ts, before it marked the cut) shows a path of more than 35
 * characters as its first segment and the longest run of last segments that fits the 35, counting a separator
 * before each: `app/generated_clients/billing/invoice_client.py` is shown as `app/billing/invoice_client.py`, and
 * when that is still over 35 characters, as `...` and its end. The expected paths below are worked out by hand from
 * that rule.
 */
import { ToolActions } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../../transcripts/src/importers/Import.ts"
import { extract } from "../../src/checkpoint/Extract.ts"
import * as Ledger from "../../src/checkpoint/Ledger.ts"
import type { CoveredItem } from "../../src/Summarizer.ts"
import { assistant, calls, results, withIds } from "../support.ts"

/** A console's WriteFile line: the call keeps only the line the console showed (`{ summary }`). */
const shownWrite = (id: string, path: string, text = "ok") => [
  calls({ id, name: "WriteFile", input: { summary: `Writing to ${path}` } }),
  results({ id, name: "WriteFile", text })
]

/** An agent's own Write call: the path is the call's input. */
const inputWrite = (id: string, path: string) => [
  calls({ id, name: "Write", input: { file_path: path, content: "x = 1\n" } }),
  results({ id, name: "Write", text: "ok" })
]

const filesOf = (items: ReadonlyArray<CoveredItem>): Array<string> =>
  Ledger.fromRange(items, ToolActions.actionsOf(items)).flatMap((artifact) =>
    artifact.kind === "file" ? [artifact.value] : []
  )

const FULL = "app/generated_clients/billing/invoice_client.py"
const SHOWN = "app/billing/invoice_client.py"

describe("paths a console showed with middle segments dropped and no mark", () => {
  it("a shown path is the one longer path the range names that the console shortens to it", () => {
    const items = withIds([
      assistant(`The billing client goes in ${FULL}.`),
      ...shownWrite("w1", SHOWN),
      ...shownWrite("w2", "app/billing/README.md")
    ])
    // README.md: no longer path shortens to it — a path within 35 characters is shown as it is.
    expect(filesOf(items)).toEqual([FULL, "app/billing/README.md"])
  })

  it("only what the console's rule shows: a path it would show otherwise is no match", () => {
    const items = withIds([
      // 26 characters: shown unchanged. Shortened, the next one keeps `core/`: `lib/core/billing/tax_rules.py`.
      assistant("See lib/x/billing/tax_rules.py and lib/generated_clients/core/billing/tax_rules.py."),
      ...shownWrite("w1", "lib/billing/tax_rules.py"),
      ...shownWrite("w2", SHOWN),
      assistant(`Then ${FULL}.`)
    ])
    expect(filesOf(items)).toEqual(["lib/billing/tax_rules.py", FULL])
  })

  it("the same file named absolute in a tool's output is the match", () => {
    const items = withIds([
      ...shownWrite("w1", SHOWN, `Successfully created and wrote to new file: /home/dev/${FULL}.`)
    ])
    expect(filesOf(items)).toEqual([`/home/dev/${FULL}`])
  })

  it("a path shown with `...` before a shortened form is the one longer path with that end", () => {
    // microservices/billing/invoice_client.py is 39 characters: shown as `...` and its last 38.
    const items = withIds([
      assistant("Writing microservices/generated_clients/billing/invoice_client.py now."),
      ...shownWrite("w1", "...icroservices/billing/invoice_client.py")
    ])
    expect(filesOf(items)).toEqual(["microservices/generated_clients/billing/invoice_client.py"])
  })

  it("is left out when two files could have been shown so, or the range names the shown path itself too", () => {
    const two = withIds([
      assistant(`Both ${FULL} and app/generated_servers/billing/invoice_client.py exist.`),
      ...shownWrite("w1", SHOWN)
    ])
    expect(filesOf(two)).toEqual([])
    const itself = withIds([assistant(`Compare ${SHOWN} with ${FULL}.`), ...shownWrite("w1", SHOWN)])
    expect(filesOf(itself)).toEqual([])
  })

  it("an agent's own path is never read as shortened", () => {
    const items = withIds([
      assistant(`The clients go in ${FULL} and app/generated_clients/billing/payment_client.py.`),
      ...inputWrite("w1", SHOWN),
      ...shownWrite("w2", SHOWN),
      ...shownWrite("w3", "app/billing/payment_client.py")
    ])
    // The input names SHOWN for real, so the console line showing SHOWN may be that file or FULL: left out.
    expect(filesOf(items)).toEqual([SHOWN, "app/generated_clients/billing/payment_client.py"])
  })

  it("Done and the failed approaches name the full path too", () => {
    const items = withIds([
      assistant(`The billing client goes in ${FULL}.`),
      ...shownWrite("w1", SHOWN),
      calls({ id: "w2", name: "WriteFile", input: { summary: "Writing to app/billing/payment_client.py" } }),
      results({ id: "w2", name: "WriteFile", text: "Error: permission denied", error: true }),
      assistant("I'll retry app/generated_clients/billing/payment_client.py later.")
    ])
    const content = extract(items)
    expect(content.progress.done.filter((item) => item.includes("invoice_client"))).toEqual([`created \`${FULL}\``])
    expect((content.failedApproaches ?? []).filter((item) => item.includes("payment_client"))).toEqual([
      "WriteFile `app/generated_clients/billing/payment_client.py` failed: Error: permission denied"
    ])
  })
})

describe("Gemini CLI console (bookminder day 16)", () => {
  it("lists the fixture script its tool lines showed shortened by the full path the git status shows", async () => {
    const items = (
      await Import.importFilePromise(transcript("gemini-cli-console/bookminder-day-016.md"))
    ).transcript.entries.flatMap((entry) =>
      entry.kind === "message" ? [{ entryId: entry.id, message: entry.message }] : []
    )
    const files = filesOf(items)
    expect(files).toContain("specs/apple_books/fixtures/create_fixture.sh")
    expect(files).not.toContain("specs/fixtures/create_fixture.sh")
  })
})

/**
 * The request assembled from the committed entries is the one the
 * compaction measured. Found replaying a SWE-agent trajectory at 8K
 * (claude-sonnet-4-5): the engine clamped a traceback observation (a
 * user-role message, data), read the clamped text — fewer lines, a marker —
 * as the user's words, and so covered the task message without pinning it;
 * `ActiveView.reconstruct` reads the entries, found the task to be the
 * latest words and pinned it ahead of the kept tail. Requests of 3,670 and
 * 3,544 tokens went out after compactions that reported 2,538 and 2,740
 * (budget 3,200). An edited user message is never the user's words
 * (`Turns.isUserWordsItem`), in the engine's view and in the rebuilt one.
 * Before the fix every window here failed at step 3 (the long traceback
 * clamped by `clamp.fit`): e.g. at 3,000 tokens the compaction reported
 * 1,106 and the request sent was 2,117 (budget 1,676).
 */
import { type Entry, type Message, PolicyRegistry } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, messageEntry, user } from "./support.ts"

const task = user(
  [
    "We're currently solving the following issue within our repository. Here's the issue text:",
    ...Array.from(
      { length: 30 },
      (_, line) =>
        `The pixel data handler should not require the optional attribute number ${line} when the data is float, and reading it must keep working for the integer case as well.`
    ),
    "Please fix the handler so that the example below runs without raising an error."
  ].join("\n")
)

// A traceback observation: user-role data (SWE-agent sends observations as user messages).
// Step 3's is long: only clamping it can make that request fit.
const traceback = (step: number): Message.Message =>
  user(
    [
      "Traceback (most recent call last):",
      ...Array.from({ length: step === 3 ? 90 : 6 }, (_, frame) =>
        [
          `  File "/repo/package/module_${step}_${frame}.py", line ${100 + frame}, in function_${frame}`,
          `    result = handler_${frame}.convert(dataset.pixel_data, representation=${frame})`
        ].join("\n")
      ),
      `AttributeError: 'Dataset' object has no attribute 'PixelRepresentation' (step ${step})`
    ].join("\n")
  )

const entryOf = (message: Message.Message, id: string, parentId: string | null): Entry.Entry =>
  messageEntry(id, parentId, message)

describe("tiered-summary: a task message, then user-role observations, in a small window", () => {
  it.each([3_000, 3_400, 3_800, 4_200])(
    "window %i: after every compaction the assembled request measures what the compaction reported, within the budget",
    async (windowTokens) => {
      const policy = PolicyRegistry.resolveSync({
        model: "pinned-user-test",
        contextWindowTokens: windowTokens,
        maxOutputTokens: 1_024
      })
      const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
      let entries: ReadonlyArray<Entry.Entry> = [
        entryOf({ role: "system", content: "You are a programmer." }, "s", null),
        entryOf(task, "task", "s")
      ]
      let compactions = 0
      for (let step = 0; step < 12; step++) {
        const parent = entries.at(-1)!.id
        entries = [
          ...entries,
          entryOf(assistant(`Let me run the reproduction script again (attempt ${step}).`), `a${step}`, parent),
          entryOf(traceback(step), `o${step}`, `a${step}`)
        ]
        const input = { entries, policy }
        if (!(await engine.shouldCompact(input)).compact) continue
        const result = await engine.compact(input)
        expect(result.fits).toBe(true)
        compactions++
        entries = [...entries, ...result.entriesToAppend]
        const sent = await engine.assembleContext({ entries, policy })
        expect({ step, sent: sent.measurement.inputTokens }).toEqual({ step, sent: result.after.inputTokens })
        expect(sent.measurement.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
      }
      expect(compactions).toBeGreaterThan(0)
    }
  )
})

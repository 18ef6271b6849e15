/**
 * Agents that send tool observations as user-role messages (SWE-agent) must compact into small windows like
 * agents with tool messages: old observations are cleared or trimmed with a marker naming the transcript
 * entry, the latest user message stays verbatim, and what still cannot fit is a typed error with the numbers.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as ExitCodes from "../src/ExitCodes.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")
const dir = mkdtempSync(join(tmpdir(), "user-role-observations-"))

interface Written {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : (content as ReadonlyArray<{ type: string; text?: string }>).map((part) => part.text ?? "").join("")

describe("user-role observations are reduced like tool output", { timeout: 180_000 }, () => {
  const task = textOf(
    (JSON.parse(readFileSync(swe, "utf8")) as { history: ReadonlyArray<{ role: string; content: unknown }> }).history
      .filter((message) => message.role === "user")
      .find((message) => textOf(message.content).startsWith("We're currently solving"))!.content
  )

  for (const window of [8_000, 10_000]) {
    it(`the SWE-agent pydicom trajectory fits a ${window / 1000}k window, its task verbatim`, async () => {
      const out = join(dir, `pydicom-${window}.json`)
      const { exitCode, report, output } = await Compact.run(swe, { contextWindow: window, out, json: true }, quiet)
      expect(exitCode, output).toBe(ExitCodes.OK)
      expect(report!.fits).toBe(true)
      expect(report!.tokens.after.input).toBeLessThanOrEqual(report!.policy.inputBudgetTokens)
      const written = JSON.parse(readFileSync(out, "utf8")) as Written
      const texts = written.messages.map((message) => textOf(message.content))
      // the latest user message (the task; every later user message is an observation) is sent word for word
      expect(texts).toContain(task)
      // old observations are cleared with a marker that says what was cut and where the full text is; the task
      // kept verbatim leaves the tail little room under the low-water mark, so a checkpoint stands in for the
      // cleared turns (no reduction drops them unsummarized) and a cleared one is sent only when the tail keeps it
      expect(report!.checkpoint).not.toBeNull()
      expect(report!.stages.some((stage) => stage.stage.startsWith("reduce:"))).toBe(false)
      const cleared = texts.filter((text) => text.startsWith("[Old observation cleared — user-role message of "))
      for (const text of cleared) expect(text).toMatch(/ of \d+ characters; full text in transcript entry swe:\d+\]$/)
      expect(report!.stages.some((stage) => /user-role output/.test(stage.note ?? ""))).toBe(true)
      // the trajectory has no checkpoint: a compaction that writes none does not claim to keep one
      for (const stage of report!.stages) expect(stage.note ?? "").not.toContain("kept the previous checkpoint")
      const skipped = report!.stages.find((stage) => stage.stage === "checkpoint" && stage.status === "skipped")
      if (skipped) expect(skipped.note).toMatch(/; no checkpoint written \(none before it\)$/)
    })
  }

  it("a synthetic run: observations cleared until it fits; a task too large for the window is BudgetExceeded with the numbers", async () => {
    const observation = (index: number) =>
      `[File: /repo/module_${index}.py (400 lines total)]\n${Array.from({ length: 120 }, (_, line) => `${line + 1}:    value_${index}_${line} = compute(${line})`).join("\n")}`
    const run = (taskText: string) => [
      { role: "system", content: "You are an autonomous programmer working in a shell." },
      { role: "user", content: taskText },
      ...Array.from({ length: 10 }, (_, index) => [
        { role: "assistant", content: `Let me open module ${index}.\n\`\`\`\nopen module_${index}.py\n\`\`\`` },
        { role: "user", content: observation(index) }
      ]).flat(),
      { role: "assistant", content: "I have read every module; next I edit module_3.py." }
    ]
    const small = join(dir, "small-task.json")
    writeFileSync(small, JSON.stringify(run("Please fix the rounding bug in module_3.py and keep the tests green.")))
    const fits = await Compact.run(small, { contextWindow: 8_000, json: true }, quiet)
    expect(fits.exitCode, fits.output).toBe(ExitCodes.OK)
    expect(fits.report!.fits).toBe(true)
    expect(fits.report!.stages.some((stage) => /[1-9]\d* user-role output/.test(stage.note ?? ""))).toBe(true)

    const huge = join(dir, "huge-task.json")
    const words = Array.from({ length: 3_000 }, (_, index) => `requirement${index}`).join(" ")
    writeFileSync(huge, JSON.stringify(run(`Please implement all of these in module_3.py: ${words}`)))
    const refused = await Compact.run(huge, { contextWindow: 8_000, json: true }, quiet)
    expect(refused.exitCode).toBe(ExitCodes.FAILED)
    const error = (JSON.parse(refused.output) as { error: { tag: string; message: string } }).error
    expect(error.tag).toBe("BudgetExceeded")
    expect(error.message).toMatch(/^Request of \d+ tokens exceeds the budget of 3200 tokens by \d+/)
  })
})

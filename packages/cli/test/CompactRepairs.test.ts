/**
 * #12 req 4: `compact` lists what it repaired to make the request valid for
 * the provider — duplicate tool-call ids, a call without a result, an
 * empty message, a reasoning-only assistant message, a trailing assistant
 * message on a model without prefill — even when no compaction is needed.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const dir = mkdtempSync(join(tmpdir(), "compact-repairs-"))

const call = (id: string, path: string) => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "read_file", input: { path } }]
})
const result = (id: string, text: string) => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "read_file", output: { type: "text", value: text } }]
})

describe("context-engine compact lists its repairs", { timeout: 120_000 }, () => {
  it("duplicate tool-call ids, a call without a result, empty and reasoning-only messages: listed although no compaction is needed", async () => {
    const file = join(dir, "repairs.json")
    writeFileSync(
      file,
      JSON.stringify([
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "Read a.ts and b.ts." },
        call("call_1", "a.ts"),
        result("call_1", "export const a = 1"),
        call("call_1", "b.ts"),
        result("call_1", "export const b = 2"),
        { role: "assistant", content: [{ type: "reasoning", text: "thinking about it" }] },
        { role: "assistant", content: [{ type: "text", text: "" }] },
        call("call_2", "c.ts"),
        { role: "user", content: "Now summarize both files." }
      ])
    )
    const { exitCode, report, output } = await Compact.run(file, { format: "model-messages", model: "gpt-4o" }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.decision.compact).toBe(false)
    const reasons = report!.repairs.map((repair) => `${repair.op} ${repair.reason}`).join("\n")
    expect(reasons).toMatch(/replace renamed a reused tool-call id/)
    expect(reasons).toMatch(/empty message/)
    expect(reasons).toMatch(/only reasoning/)
    expect(reasons).toMatch(/insert synthesized interrupted result/)
    expect(output).toContain(`Repairs: ${report!.repairs.length}`)
  })

  it("a valid transcript reports no repairs", async () => {
    const file = join(dir, "valid.json")
    writeFileSync(
      file,
      JSON.stringify([
        { role: "user", content: "Read a.ts." },
        call("call_1", "a.ts"),
        result("call_1", "export const a = 1"),
        { role: "user", content: "Thanks." }
      ])
    )
    const { report, output } = await Compact.run(file, { format: "model-messages", model: "gpt-4o" }, quiet)
    expect(report!.repairs).toEqual([])
    expect(output).toContain("Repairs: none")
  })

  it("the Decision line and the 'before' column give the count the decision measured: the request with its repairs", async () => {
    // Session 4: pi's session printed 'Decision: … 165,386 input tokens' (the raw view) while the decision measured
    // 165,460 (with the synthesized results of its unanswered calls) — two counts for one request.
    const file = join(dir, "interrupted.json")
    const interrupted = {
      role: "assistant",
      content: Array.from({ length: 24 }, (_, index) => ({
        type: "tool-call",
        toolCallId: `call_${index}`,
        toolName: "edit_file",
        input: { path: `src/file-${index}.ts`, oldText: "a", newText: "b" }
      }))
    }
    const exchanges = Array.from({ length: 8 }, (_, index) => [
      call(`read_${index}`, `docs/part-${index}.md`),
      result(
        `read_${index}`,
        `Part ${index} of the guide.\n${"The option controls how files are renamed. ".repeat(60)}`
      ),
      { role: "assistant", content: `Part ${index} read.` }
    ]).flat()
    writeFileSync(
      file,
      JSON.stringify([
        { role: "user", content: "Rename the option in every source file." },
        interrupted,
        { role: "user", content: "stop — I will do it by hand. Read the guide instead." },
        ...exchanges,
        { role: "user", content: "Now explain what the option does." }
      ])
    )
    const { exitCode, report, output } = await Compact.run(
      file,
      { format: "model-messages", model: "gpt-4o", contextWindow: 8_000 },
      quiet
    )
    expect(exitCode).toBe(0)
    expect(report!.decision.compact).toBe(true)
    const measured = report!.decision.inputTokens
    expect(report!.tokens.before.input).toBe(measured)
    expect(output).toContain(`Decision: compact (threshold) — ${measured.toLocaleString("en-US")} input tokens`)
    expect(output).toMatch(new RegExp(`total input\\s+${measured.toLocaleString("en-US")}\\s`))
    // The normalize stage starts from the raw view and ends at what the decision measured.
    const normalize = report!.stages.find((stage) => stage.stage === "normalize")
    expect(normalize!.tokensBefore).toBeLessThan(measured)
    expect(normalize!.tokensAfter).toBe(measured)
  })

  it("many repairs: the first 10 are listed and the rest counted by kind, so they do not bury the checkpoint", async () => {
    // a rolled 40 MiB pi session has 439 repairs; here 12 empty assistant messages and 3 calls without a result
    const file = join(dir, "many-repairs.json")
    const messages: Array<unknown> = [{ role: "user", content: "Read the files." }]
    for (let i = 0; i < 12; i++)
      messages.push(
        { role: "assistant", content: [{ type: "text", text: "" }] },
        call(`call_${i}`, `f${i}.ts`),
        result(`call_${i}`, "x")
      )
    for (let i = 12; i < 15; i++) messages.push(call(`call_${i}`, `f${i}.ts`), { role: "user", content: `Go on ${i}.` })
    writeFileSync(file, JSON.stringify(messages))
    const { report, output } = await Compact.run(file, { format: "model-messages", model: "gpt-4o" }, quiet)
    expect(report!.repairs).toHaveLength(15)
    const lines = output.split("\n")
    const at = lines.findIndex((line) => line.startsWith("Repairs: 15 "))
    const listed = lines.slice(at + 1).filter((line) => /^ {2}(drop|insert|replace) /.test(line))
    expect(listed).toHaveLength(10)
    expect(lines[at + 11]).toBe(
      "  … 5 more (--json lists them): 2 drop (normalize): empty message; 3 insert (normalize/toolPairing): synthesized interrupted result for 1 unanswered tool call(s)"
    )
  })
})

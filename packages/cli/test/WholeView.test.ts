/**
 * `WholeView` (issue #13 req 6): counting a view's items segment by segment
 * as they stream past gives the measurement of the whole view normalized at
 * once (`Normalization.normalize` + `Measurer.measure`), reasoning prior and
 * current by the view's last user message included; a tool call whose
 * result lies in a later segment is reported as split.
 */
import { type ContextView, Measurer, type Message, MessageTokens } from "@context-engine/core"
import { Normalization } from "@context-engine/strategies"
import { describe, expect, it } from "vitest"
import * as WholeView from "../src/WholeView.ts"

const item = (entryId: string, message: Message.Message): ContextView.ViewItem => ({
  entryId,
  message,
  source: "transcript",
  editedBy: []
})

/** `turns` user turns of tool work: reasoning, a call and its result, an empty and a reasoning-only message. */
const conversation = (turns: number, options: { readonly lateResult?: boolean } = {}): Array<ContextView.ViewItem> => {
  const items: Array<ContextView.ViewItem> = []
  for (let turn = 0; turn < turns; turn++) {
    items.push(item(`u${turn}`, { role: "user", content: `Please fix bug number ${turn} in src/file${turn}.ts.` }))
    for (let step = 0; step < 20; step++) {
      const id = `call_${turn}_${step}`
      items.push(
        item(`a${turn}_${step}`, {
          role: "assistant",
          content: [
            { type: "reasoning", text: `thinking about step ${step} of bug ${turn}` },
            { type: "tool-call", toolCallId: id, toolName: "read_file", input: { path: `src/file${turn}.ts` } }
          ]
        })
      )
      if (options.lateResult === true && turn === 1 && step === 0) continue
      items.push(
        item(`t${turn}_${step}`, {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: id,
              toolName: "read_file",
              output: { type: "text", value: `line ${step}` }
            }
          ]
        })
      )
    }
    items.push(item(`e${turn}`, { role: "assistant", content: [{ type: "text", text: "" }] }))
    items.push(item(`r${turn}`, { role: "assistant", content: [{ type: "reasoning", text: "interrupted" }] }))
  }
  if (options.lateResult === true)
    items.push(
      item("late", {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1_0",
            toolName: "read_file",
            output: { type: "text", value: "late" }
          }
        ]
      })
    )
  return items
}

const measurer = Measurer.forPolicy({ tokenizer: "o200k_base" }, { reasoningRule: "current-tool-loop" })

const metered = (items: ReadonlyArray<ContextView.ViewItem>) => {
  const lastUser = items.findLast((candidate) => candidate.message.role === "user")
  const meter = WholeView.make(measurer, lastUser?.entryId)
  const system = item("s", { role: "system", content: "You are a coding agent." })
  meter.prefix(system)
  for (const candidate of items) meter.add(candidate)
  const totals = meter.finish()
  const whole = measurer.measure(Normalization.normalize({ items: [system, ...items], tools: [] }).view)
  const measured = WholeView.measurement(totals, whole, {
    toolSchemaTokens: 0,
    replyPrimingTokens: MessageTokens.replyPrimingTokens
  })
  return { totals, measured, whole }
}

describe("WholeView", () => {
  it("segment by segment equals the whole view normalized and measured at once (prior and current reasoning)", () => {
    const items = conversation(40)
    const { totals, measured, whole } = metered(items)
    expect(items.length).toBeGreaterThan(4 * 256)
    expect(totals.splitPairs).toBe(0)
    expect(measured.byCategory).toEqual(whole.byCategory)
    expect(measured.inputTokens).toBe(whole.inputTokens)
    // reasoning of earlier turns is not counted under the current-tool-loop rule; the last turn's is
    expect(whole.byCategory.reasoning).toBeGreaterThan(0)
    const edits = Normalization.normalize({ items, tools: [] }).edits
    expect(totals.edits.map((edit) => (edit.op === "insert" ? edit.id : edit.entryId))).toEqual(
      edits.map((edit) => (edit.op === "insert" ? edit.id : edit.entryId))
    )
    expect(totals.items).toBe(items.length + 1)
  })

  it("a result far after its call, in a later segment, is reported as a split pair", () => {
    const { totals } = metered(conversation(40, { lateResult: true }))
    expect(totals.splitPairs).toBe(1)
  })
})

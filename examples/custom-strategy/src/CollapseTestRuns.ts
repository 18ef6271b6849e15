/**
 * A custom strategy in a few lines: older outputs of a test command become a
 * one-line summary; the newest stays verbatim. It only proposes edits — the
 * pipeline applies them, re-measures, enforces the invariants and reports.
 */
import type { Message, Strategy, ViewEdit } from "@context-engine/core"

/** Commands treated as test runs. */
const TEST_COMMAND = /\b(npm|pnpm|yarn) (run )?test\b|\bvitest\b|\bpytest\b|\bcargo test\b/

/** "12 passed, 3 failed" from typical runner output; "no counts" otherwise. */
export const summarize = (output: string): string => {
  const passed = /(\d+) pass(ed)?/i.exec(output)?.[1]
  const failed = /(\d+) fail(ed|ing)?/i.exec(output)?.[1]
  return passed === undefined && failed === undefined ? "no counts" : `${passed ?? 0} passed, ${failed ?? 0} failed`
}

export const collapseTestRuns: Strategy.Strategy = {
  name: "collapseTestRuns",
  apply: ({ view }) => {
    const commands = new Map<string, string>()
    for (const item of view.items)
      if (typeof item.message.content !== "string")
        for (const part of item.message.content)
          if (part.type === "tool-call")
            commands.set(part.toolCallId, String((part.input as { command?: unknown })?.command ?? ""))
    const runs = view.items.filter(
      (item) =>
        item.message.role === "tool" &&
        item.message.content.some(
          (part) => part.type === "tool-result" && TEST_COMMAND.test(commands.get(part.toolCallId) ?? "")
        )
    )
    const edits = runs.slice(0, -1).map(
      (item): ViewEdit.ViewEdit => ({
        op: "replace",
        entryId: item.entryId,
        strategy: "collapseTestRuns",
        reason: "older test run collapsed to its summary",
        message: {
          ...item.message,
          content: (item.message.content as Array<Message.ToolContentPart>).map((part) =>
            part.type === "tool-result" && part.output.type === "text"
              ? {
                  ...part,
                  output: {
                    type: "text",
                    value: `[older test run: ${summarize(part.output.value)}; full output in transcript entry ${item.entryId}]`
                  }
                }
              : part
          )
        } as Message.Message
      })
    )
    return { edits, note: `${edits.length} older test run(s)` }
  }
}

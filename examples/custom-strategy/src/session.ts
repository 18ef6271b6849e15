/** A small agent session: the same test suite run 12 times while fixing failures. */
import type { Entry, Message } from "@context-engine/core"

const testOutput = (run: number): string =>
  [
    ...Array.from({ length: 400 }, (_, line) => `  ✓ suite ${line % 40} › case ${line} (${(line * 7 + run) % 90} ms)`),
    `Tests: ${400 - (12 - run)} passed, ${12 - run} failed, 400 total`
  ].join("\n")

export const session = (): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [
    { role: "system", content: "You are a coding agent. Use the tools." },
    { role: "user", content: "Make the test suite pass." }
  ]
  for (let run = 0; run < 12; run++) {
    messages.push(
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: `t${run}`, toolName: "bash", input: { command: "pnpm test" } }]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `t${run}`,
            toolName: "bash",
            output: { type: "text", value: testOutput(run) }
          }
        ]
      },
      { role: "assistant", content: `Fixed one more failure (run ${run}).` }
    )
  }
  messages.push({ role: "user", content: "Status?" })
  return messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))
}

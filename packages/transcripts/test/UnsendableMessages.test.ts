/**
 * A message a provider rejects (empty, or an assistant message with only
 * reasoning) fails a `--strict` import with its line number; a lenient import
 * keeps the record as it is and the request path never sends it (#12 req 4).
 */
import { Errors, type Message, MessageParts } from "@context-engine/core"
import { Import } from "@context-engine/transcripts"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const header = JSON.stringify({ type: "session", id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/" })
const line = (id: string, parentId: string | null, message: unknown) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", message })

const lines = [
  header,
  line("u1", null, { role: "user", content: "Fix the build" }),
  line("a1", "u1", { role: "assistant", content: [{ type: "text", text: "" }] }),
  line("a2", "a1", {
    role: "assistant",
    content: [{ type: "thinking", thinking: "let me see", thinkingSignature: "sig" }]
  }),
  line("u2", "a2", { role: "user", content: "   " }),
  line("a3", "u2", { role: "assistant", content: [{ type: "text", text: "Done: the build passes." }] })
]

const messagesOf = (result: { transcript: { entries: ReadonlyArray<{ kind: string }> } }) =>
  result.transcript.entries.flatMap((entry) =>
    entry.kind === "message" ? [(entry as unknown as { message: Message.Message }).message] : []
  )

describe("importers never create unsendable messages", () => {
  it("lenient: the transcript keeps them as recorded (the request path drops them; engines' fuzz suite checks it)", () => {
    const result = Effect.runSync(Import.importText(`${lines.join("\n")}\n`, { format: "pi" }))
    expect(messagesOf(result)).toHaveLength(5)
  })

  it("strict: fails with TranscriptCorrupt naming the first such line", () => {
    const exit = Effect.runSyncExit(Import.importText(`${lines.join("\n")}\n`, { format: "pi", strict: true }))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail") : undefined
    const corrupt = (error as { error: Errors.TranscriptCorrupt }).error
    expect(corrupt).toBeInstanceOf(Errors.TranscriptCorrupt)
    expect(corrupt.line).toBe(3)
    expect(corrupt.message).toMatch(/line 3.*empty assistant message/)
    // A well-formed line that strict mode refuses is not called corrupt (new-user trial: real pi sessions).
    expect(corrupt.strictOnly).toBe(true)
    expect(corrupt.message).toMatch(/line 3 is refused in strict mode: .*lenient mode keeps the message/)
    expect(corrupt.message).not.toMatch(/corrupt/)
  })

  it("property (strict): a generated pi session either imports with no empty or reasoning-only message, or fails with the line", () => {
    const part = fc.oneof(
      fc.constant({ type: "text", text: "" }),
      fc.constant({ type: "text", text: " \n" }),
      fc
        .string({ minLength: 1, maxLength: 8 })
        .filter((text) => text.trim().length > 0)
        .map((text) => ({ type: "text", text })),
      fc.constant({ type: "thinking", thinking: "hmm", thinkingSignature: "s" })
    )
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), parts: fc.array(part, { maxLength: 3 }) }), {
          minLength: 1,
          maxLength: 8
        }),
        (specs) => {
          const text = [
            header,
            ...specs.map((spec, index) =>
              line(`e${index}`, index === 0 ? null : `e${index - 1}`, {
                role: spec.role,
                content: spec.role === "user" ? spec.parts.filter((p) => p.type === "text") : spec.parts
              })
            )
          ].join("\n")
          const exit = Effect.runSyncExit(Import.importText(`${text}\n`, { format: "pi", strict: true }))
          if (Exit.isSuccess(exit)) {
            for (const message of messagesOf(exit.value)) {
              expect(MessageParts.isEmptyMessage(message)).toBe(false)
              expect(MessageParts.isReasoningOnly(message)).toBe(false)
            }
          } else {
            const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail") as
              | { error: Errors.TranscriptCorrupt }
              | undefined
            expect(failure?.error).toBeInstanceOf(Errors.TranscriptCorrupt)
            expect(failure!.error.line).toBeGreaterThan(1)
          }
        }
      ),
      { numRuns: 100 }
    )
  })
})

/**
 * Opaque provider items (#12 req 1, C14): a provider compaction item counts
 * a fixed documented figure in the checkpoint category whatever the size of
 * its encrypted payload; other custom parts count what is readable, never
 * their opaque fields.
 */
import { describe, expect, it } from "vitest"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as OpaqueParts from "../src/OpaqueParts.ts"
import * as Tokenizers from "../src/Tokenizers.ts"

const measurer = Measurer.make(Tokenizers.get("o200k_base"))

const compactionMessage = (encryptedContent: string): Message =>
  ({
    role: "assistant",
    content: [
      { type: "custom", kind: "openai.compaction", providerOptions: { openai: { itemId: "cmp_1", encryptedContent } } }
    ]
  }) as Message

describe("OpaqueParts", () => {
  it("a provider compaction item is 20,000 tokens in the checkpoint category, for a 1 KiB or a 2 MiB payload", () => {
    for (const size of [1024, 2 * 1024 * 1024]) {
      const byCategory = measurer.countMessage(compactionMessage("gAAAAB".padEnd(size, "x")), "transcript")
      expect(byCategory.checkpoint).toBe(20_000)
      expect(byCategory.assistantText ?? 0).toBe(0)
    }
    expect(OpaqueParts.isCompactionItem({ type: "custom", kind: "xai.compaction" })).toBe(true)
    expect(OpaqueParts.isCompactionItem({ type: "custom", kind: "openai.compactionish" })).toBe(false)
  })

  it("another custom part counts its kind and readable option text, not ids or encrypted fields", () => {
    const count = (text: string) => text.length
    const part = {
      type: "custom" as const,
      kind: "acme.note",
      providerOptions: { acme: { id: "n_1", note: "hello", encryptedPayload: "z".repeat(1_000_000), signature: "s" } }
    }
    expect(OpaqueParts.customTokens(part, count)).toBe("acme.note".length + "hello".length)
    // The same rule inside a tool result.
    const message = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "t",
          output: {
            type: "content",
            value: [{ type: "custom", providerOptions: { acme: { encryptedBlob: "q".repeat(500_000) } } }]
          }
        }
      ]
    } as Message
    expect(measurer.messageTokens(message, "transcript")).toBeLessThan(50)
  })
})

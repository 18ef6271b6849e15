/**
 * Shared case C21 (../shared/cases) through the tiered engine: the pi session
 * ends with a ~31K-token shell-mode test run (a user-role message that is tool
 * output). In the case's 32K window it is clamped like a tool result, the
 * latest message the user typed stays verbatim, the request fits, and no
 * shell-output phrase becomes the checkpoint's goal, ask or constraint.
 */
import { createHash } from "node:crypto"
import { CheckpointValidation, type Entry, type Message, UserSpeech } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

interface C21 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly blobs: Record<string, Cases.Blob & { readonly sha256: string }>
  readonly shellOutputCanaries: Array<string>
  readonly userAsks: { readonly pi: Array<string> }
}

const c21 = loadCase<C21>("C21")
const messages = Cases.expandBlobs(c21.messages, c21.blobs)
const textOf = (message: Message.Message): string => CheckpointValidation.messageText(message)

describe("C21: shell-mode output is tool output, not the user's words (engine)", () => {
  it("C21 blob rule reproduces the test run's sha256", () => {
    for (const [name, blob] of Object.entries(c21.blobs))
      expect(createHash("sha256").update(Cases.blobText(blob)).digest("hex"), name).toBe(blob.sha256)
  })

  it("C21 in 32K: the final shell output is clamped, the latest typed message stays verbatim, the request fits", async () => {
    const entries: Array<Entry.Entry> = messages.map((message, index) => ({
      id: `pi${index}`,
      parentId: index === 0 ? null : `pi${index - 1}`,
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "message",
      message
    }))
    const policy = Cases.policySync(c21.policy, "C21")
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
    const input = { entries, policy }
    expect((await engine.shouldCompact(input)).compact).toBe(true)
    const result = await engine.compact(input)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    // The last entry (the monorepo-wide run) is in the request clamped, with a marker, not whole.
    const last = messages.at(-1)!
    expect(UserSpeech.classify(UserSpeech.userText(last))).toBe("shell-output")
    const kept = result.view.items.find((item) => item.entryId === entries.at(-1)!.id)
    expect(kept).toBeDefined()
    expect(textOf(kept!.message).length).toBeLessThan(textOf(last).length / 2)
    // The latest message the user typed is in the request verbatim.
    const typed = c21.userAsks.pi.at(-1)!
    expect(result.view.items.some((item) => item.message.role === "user" && textOf(item.message) === typed)).toBe(true)
    // A checkpoint, when one was written, quotes no shell-output phrase as the user's goal, ask or constraint.
    const content = result.checkpoint?.content
    if (content) {
      const spoken = [content.goal, ...content.pendingUserAsks, ...content.constraints].join("\n").toLowerCase()
      for (const canary of c21.shellOutputCanaries) expect(spoken).not.toContain(canary.toLowerCase())
    }
  })
})

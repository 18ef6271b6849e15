import { Tokenizers } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as ReplayCommand from "../src/commands/replay.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")

describe("context-engine replay", { timeout: 180_000 }, () => {
  it("reports each checkpoint's own size, apart from the size of the request it sits in", async () => {
    // gpt-4o: o200k_base is exact, so the checkpoint's size is its rendered text's tokens
    // plus the 3 tokens framing a message (OpenAI cookbook "How to count tokens with tiktoken").
    const { report } = await ReplayCommand.buildWithLargest(swe, { model: "gpt-4o", contextWindow: 16_000 }, quiet)
    const o200k = Tokenizers.get("o200k_base")
    const withCheckpoint = report.compactions.filter((compaction) => compaction.checkpoint !== null)
    expect(withCheckpoint.length).toBeGreaterThan(0)
    for (const compaction of withCheckpoint) {
      const checkpoint = compaction.checkpoint!
      expect(checkpoint.tokens).toBe(o200k.count(checkpoint.text) + 3)
      // The request after compaction also holds the kept tail and the system prompt.
      expect(checkpoint.tokens).toBeLessThan(compaction.tokensAfter)
    }
    const text = ReplayCommand.render(report)
    const first = withCheckpoint[0]!
    const fmt = (value: number) => value.toLocaleString("en-US")
    expect(text).toContain(`request ${fmt(first.tokensBefore)} → ${fmt(first.tokensAfter)} tokens`)
    expect(text).toContain(
      `checkpoint gen ${first.checkpoint!.generation}: ${fmt(first.checkpoint!.tokens)} tokens of the request`
    )
  })
})

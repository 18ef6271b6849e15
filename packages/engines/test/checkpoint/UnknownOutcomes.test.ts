/**
 * Side-effect calls whose outcome is unknown (the user interrupted them, no
 * result was recorded) are listed under "Blocked / Unknown Outcome" so the
 * next model checks before retrying. Found by the session-4 new-user trial on
 * pi's large session: 16 parallel edits of one file that the user interrupted
 * 930 messages earlier filled the section with the same line 9 times and
 * pushed the done list and decisions out of the 1,800-token cap, although the
 * file had been edited again since.
 */
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../../src/ExtractiveSummarizer.ts"
import { assistant, calls, results, user, withIds } from "../support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const edit = (id: string, path: string) => ({ id, name: "edit", input: { path, oldText: `a${id}`, newText: `b${id}` } })

describe("unknown outcomes in a checkpoint", () => {
  it("identical interrupted calls of one message are one line with their count", () => {
    const covered = withIds([
      user("Replace chalk with the theme colours in the renderer."),
      calls(edit("c1", "src/tui.ts"), edit("c2", "src/tui.ts"), edit("c3", "src/tui.ts"), edit("c4", "src/other.ts")),
      user("stop, I will do it by hand"),
      assistant("Understood, I stopped.")
    ])
    const content = ExtractiveSummarizer.summarizeSync({ covered, maxTokens: 2_000, countTokens: count })
    expect(content.progress.blocked).toEqual([
      "edit `src/tui.ts` was issued 3 times but no result was recorded (e1): outcome unknown — check its status before any retry",
      "edit `src/other.ts` was issued but no result was recorded (e1): outcome unknown — check its status before any retry"
    ])
  })

  it("a later call on the same file supersedes the unknown outcome (its result shows the state since)", () => {
    const covered = withIds([
      user("Replace chalk with the theme colours in the renderer."),
      calls(edit("c1", "src/tui.ts"), edit("c2", "src/other.ts")),
      user("stop, I removed the chalk uses by hand; now fix the colours in src/tui.ts"),
      calls(edit("c3", "src/tui.ts")),
      results({ id: "c3", name: "edit", text: "Successfully replaced text in src/tui.ts" })
    ])
    const content = ExtractiveSummarizer.summarizeSync({ covered, maxTokens: 2_000, countTokens: count })
    expect(content.progress.blocked).toEqual([
      "edit `src/other.ts` was issued but no result was recorded (e1): outcome unknown — check its status before any retry"
    ])
  })
})

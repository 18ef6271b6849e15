/**
 * The checkpoint carries the code identifiers the covered range worked with
 * (KeyIdentifiers): ranked by turns, then messages, then recency; never a
 * name only a tool result showed, a tool name, a file name or a single
 * mention; never one the kept messages still show; within the budget.
 */
import { Checkpoint, CheckpointRenderer, type Message } from "@context-engine/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as KeyIdentifiers from "../../src/checkpoint/KeyIdentifiers.ts"
import { mergeContent } from "../../src/checkpoint/Update.ts"
import * as ExtractiveSummarizer from "../../src/ExtractiveSummarizer.ts"
import { assistant, calls, results, user, withIds } from "../support.ts"

/** The ranking of the range below, written out (not computed by the code under test). */
const RANKED = [
  "thinkingHigh",
  "getBorderColor",
  "MAX_THEME_SIZE",
  "thinkingOff",
  "terminal.integrated.minimumContrastRatio"
]

const range: Array<Message.Message> = [
  user("Add explicit border tokens for each thinking level to the theme."),
  assistant("I'll add `thinkingOff` and `thinkingHigh` and read them in getBorderColor."),
  calls({
    id: "c1",
    name: "edit_file",
    input: { path: "src/theme.ts", newText: "thinkingOff: gray, thinkingHigh: red" }
  }),
  results({
    id: "c1",
    name: "edit_file",
    text: "edited; the file also defines unusedLegacyColor and unusedLegacyColor"
  }),
  assistant("Done: thinkingOff is gray. See theme_loader.ts for MAX_THEME_SIZE."),
  user("Now the VS Code colors look washed out."),
  assistant(
    "Set `terminal.integrated.minimumContrastRatio` to 1; thinkingHigh stays red; MAX_THEME_SIZE is unchanged."
  ),
  calls({
    id: "c2",
    name: "edit_file",
    input: { path: "README.md", newText: "terminal.integrated.minimumContrastRatio" }
  }),
  results({ id: "c2", name: "edit_file", text: "ok" }),
  assistant("getBorderColor now reads the tokens.")
]

describe("KeyIdentifiers.rank", () => {
  it("ranks by covered turns, then messages, then the latest mention; needs two messages; authored text only", () => {
    // thinkingHigh: 2 turns, 3 messages; getBorderColor and MAX_THEME_SIZE: 2 turns, 2 messages, getBorderColor
    // mentioned last; thinkingOff: 1 turn, 3 messages; the config key: 1 turn, 2 messages. unusedLegacyColor is
    // only in a tool result, edit_file is a tool name, theme_loader.ts a file name, "gray" a plain word.
    expect(KeyIdentifiers.rank(withIds(range))).toEqual(RANKED)
  })

  it("finds camelCase, PascalCase, snake_case, SCREAMING_SNAKE and dotted config keys, not paths or file names", () => {
    expect([
      ...KeyIdentifiers.fromText(
        "use parseConfig, ThemeSelector, load_theme, MAX_RETRIES, editor.tabSize; not src/fooBar.ts, fooBar.ts, gray"
      )
    ]).toEqual(["parseConfig", "ThemeSelector", "load_theme", "MAX_RETRIES", "editor.tabSize"])
  })

  it("records a member by its name, without the receiver it was written on (this., self.)", () => {
    // `this.retryCount` and `retryCount` are one identifier: the checkpoint listed `this.retryCount`, a name no
    // declaration or search shows.
    expect([
      ...KeyIdentifiers.fromText(
        "set this.retryCount, read self.max_retries and this.config.maxDelay; retryCount again; thisValue.fooBar"
      )
    ]).toEqual(["retryCount", "max_retries", "config.maxDelay", "thisValue.fooBar"])
  })

  it("leaves out what the kept messages still show", () => {
    const kept = [assistant("thinkingHigh is set"), results({ id: "c9", name: "read", text: "MAX_THEME_SIZE = 4" })]
    expect(KeyIdentifiers.notShownIn(["thinkingHigh", "thinkingOff", "MAX_THEME_SIZE"], kept)).toEqual(["thinkingOff"])
  })
})

describe("the extractive checkpoint", () => {
  const summarize = (kept: ReadonlyArray<Message.Message>, maxTokens = 2_000) =>
    Effect.runSync(
      ExtractiveSummarizer.make().summarize({
        covered: withIds(range),
        kept: withIds(kept, "k"),
        maxTokens,
        countTokens: (text) => Math.ceil(text.length / 4)
      })
    ).content

  it("lists the identifiers the agent introduced, except those the kept tail shows, under Exact Identifiers", () => {
    const content = summarize([user("thanks"), assistant("getBorderColor is tested")])
    expect(content.keyIdentifiers).toEqual(RANKED.filter((name) => name !== "getBorderColor"))
    const rendered = CheckpointRenderer.renderContent(content)
    expect(rendered).toContain("`terminal.integrated.minimumContrastRatio`")
    expect(rendered).not.toContain("unusedLegacyColor")
  })

  it("keeps the best ranked that fit a tight budget and says how many it left out", () => {
    // 125 tokens hold the goal, the progress (both edits: the newest Done items come before the identifiers),
    // the next step and three of the five
    const content = summarize([], 125)
    expect(Math.ceil(CheckpointRenderer.renderContent(content).length / 4)).toBeLessThanOrEqual(125)
    expect(content.keyIdentifiers).toEqual(RANKED.slice(0, 3))
    expect(content.dropped?.join(" ")).toContain("2 keyIdentifiers")
  })

  it("an update ranks the newer range's identifiers first and keeps the earlier ones after them", () => {
    const earlier = { ...Checkpoint.emptyContent(), keyIdentifiers: ["oldName", "sharedName"] }
    const later = { ...Checkpoint.emptyContent(), keyIdentifiers: ["sharedName", "newName"] }
    expect(mergeContent(earlier, later).keyIdentifiers).toEqual(["sharedName", "newName", "oldName"])
  })
})

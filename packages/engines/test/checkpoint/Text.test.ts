/**
 * `Text.clip` / `clipEnds`, the one rule for cutting a checkpoint's text: a cut falls between words, never inside an
 * inline code span (an unbalanced backtick turns the rest of the markdown into code), at a clause or sentence end
 * when one lies near the end of the allowance, and is marked with `…`; what is kept is the text verbatim, so
 * validation still finds a quote where it came from. The sentences are the pi large-session agent's own reports
 * (pi:93, pi:400 …), which the tight-budget short form of Done (`Progress.shortDone`) cut mid-word
 * ("… to match the pat…", "… tokens (`think…").
 */
import { describe, expect, it } from "vitest"
import { shortDone } from "../../src/checkpoint/Progress.ts"
import { clip, clipEnds } from "../../src/checkpoint/Text.ts"

const REPORTS = [
  "reported: I've ported the `user-message-selector.ts` to match the pattern used by the other selectors (pi:93)",
  "reported: Added 5 explicit thinking level border color tokens (`thinkingOff`, `thinkingMinimal`, `thinkingLow`, `thinkingMedium`, `thinkingHigh`) (pi:420)",
  "reported: Changed `dimGray` from `#444444` (very dark gray, RGB 68,68,68) to `#585858` (pi:371)",
  "reported: Now it's clear that custom themes are hot-reloaded - users can edit the file and see the change (pi:700)"
]

/** The kept text of a cut item: before its `…`, a closing backtick the cut added dropped. */
const keptOf = (cut: string): string => cut.slice(0, cut.lastIndexOf("…")).trimEnd()

const backticks = (text: string): number => text.match(/`/g)?.length ?? 0

describe("clip", () => {
  it.each(REPORTS)("cuts %s between words, outside code spans, verbatim up to the mark", (report) => {
    for (const max of [40, 55, 70, 90]) {
      const cut = clip(report, max)
      expect(cut.length).toBeLessThanOrEqual(max)
      expect(cut.endsWith("…")).toBe(true)
      const kept = keptOf(cut)
      // Verbatim: the kept words are the start of the text.
      expect(report.startsWith(kept)).toBe(true)
      // Never inside a word: what follows the kept part in the text is a space or punctuation, not a letter.
      expect(report[kept.length]).toMatch(/[\s,;:.)-]/)
      // Never inside a code span.
      expect(backticks(cut) % 2).toBe(0)
    }
  })

  it("cuts the pi report the tight budget showed as 'to match the pat…' after a whole word", () => {
    expect(clip(REPORTS[0]!, 70)).toBe("reported: I've ported the `user-message-selector.ts` to match the…")
  })

  it("ends a cut at a clause end in the last part of the allowance rather than at the last space", () => {
    const text = "Fixed the theme loader, so the footer renders with the dim color from the palette again"
    // The comma lies at 23 of an allowance of 30: within its last 30 %.
    expect(clip(text, 31)).toBe("Fixed the theme loader…")
    // At 60 characters the comma is far from the end: the last whole word is kept instead.
    expect(clip(text, 60)).toBe("Fixed the theme loader, so the footer renders with the dim…")
  })

  it("keeps a sentence's full stop when it cuts at the sentence end", () => {
    expect(clip("Built the package. Then the tests ran in watch mode for a while", 24)).toBe("Built the package. …")
  })

  it("closes a code span the text opens with and cannot keep whole, the mark outside the code", () => {
    expect(clip("`npm run build --workspace packages/coding-agent && npm test`", 30)).toBe(
      "`npm run build --workspace`…"
    )
  })

  it("cuts a long code span at a space inside it, closed, rather than give up most of the allowance before it", () => {
    expect(
      clip("Run the check with `npm run build --workspace packages/coding-agent && npm test` and report", 60)
    ).toBe("Run the check with `npm run build --workspace`…")
    // A span without a space (an identifier, a path) is never cut: the cut goes before it.
    expect(clip("Ported it to `packages/coding-agent/src/tui/user-message-selector.ts` today", 50)).toBe(
      "Ported it to…"
    )
  })

  it("reads backticks as CommonMark does: a run nothing closes is literal, not a span to keep out of", () => {
    // A flattened fence's unclosed ``` does not stop the cut at the fence.
    expect(clip("An unclosed ``` fence opener then plenty of words that go on and on", 40)).toBe(
      "An unclosed ``` fence opener then…"
    )
  })

  it("cuts a single long token where one of its words ends", () => {
    expect(clip("/Users/palimondo/Developer/BookMinder/specs/apple_books/fixtures/x.sh", 40)).toBe(
      "/Users/palimondo/Developer/BookMinder/…"
    )
  })
})

describe("clipEnds", () => {
  it("keeps the start and the end of a long message in whole words", () => {
    const text =
      "Please fix the `theme loader` first, then go through every selector component in the tui folder and finally run the tests"
    const cut = clipEnds(text, 60)
    const [head, tail] = cut.split(" … ")
    expect(text.startsWith(head!)).toBe(true)
    expect(text.endsWith(tail!)).toBe(true)
    expect(text[head!.length]).toMatch(/[\s,]/)
    expect(text[text.length - tail!.length - 1]).toBe(" ")
    expect(backticks(head!) % 2).toBe(0)
  })
})

describe("shortDone", () => {
  it("shortens a report without cutting a word or a code span", () => {
    for (const report of REPORTS) {
      const short = shortDone(report)
      expect(short.length).toBeLessThanOrEqual(70)
      const kept = keptOf(short)
      expect(report.startsWith(kept)).toBe(true)
      expect(report[kept.length]).toMatch(/[\s,;:.)-]/)
      expect(backticks(short) % 2).toBe(0)
    }
  })
})

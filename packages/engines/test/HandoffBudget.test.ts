/**
 * What the checkpoint's budget goes to: identifiers the work still depends on
 * (said in the recent turns, or acted on by a call) are kept verbatim, links
 * and paths only mentioned in older chat are not, so they do not crowd the
 * recent Done work out of a short budget (`CriticalIdentifiers.livenessIn`).
 * Built sessions; no transcript's words.
 */
import { CheckpointRenderer, CheckpointValidation, type Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)

/** The links of a page the user pasted once, as prose (a help page's text, a list of testimonials). */
const pastedLinks = Array.from({ length: 40 }, (_, index) => `https://forum.example.org/t/${4100 + index}`)

const pastedPage = user(
  `Here is the text of our landing page, so you know what the project says about itself:\n${pastedLinks
    .map(
      (link, index) =>
        `- It was much faster than writing the first working versions by hand, says reviewer ${index} (${link})`
    )
    .join("\n")}\nIts hero image is /assets/hero-banner.jpg and the page should stay as it is.`
)

/** Turn `turn`: the user asks for a change, the agent edits one module. */
const editTurn = (turn: number): Array<Message.Message> => [
  user(`rename the retry helper in module ${turn}`),
  calls({
    id: `c${turn}`,
    name: "edit",
    input: { path: `src/module_${turn}.ts`, old_string: "retryOnce", new_string: `retryWithBackoff${turn}` }
  }),
  results({ id: `c${turn}`, name: "edit", text: "ok" }),
  assistant(`Renamed it in src/module_${turn}.ts.`)
]

/** Turns of edits after the first two: more than `CriticalIdentifiers.RECENT_USER_TURNS` (20). */
const TURNS = 30

const session = withIds([
  pastedPage,
  assistant("Thanks, noted."),
  user("Use https://api.example.com/v2 as the API base URL of the client"),
  calls({
    id: "w0",
    name: "write",
    input: { path: "src/client.ts", content: 'export const BASE_URL = "https://api.example.com/v2"\n' }
  }),
  results({ id: "w0", name: "write", text: "ok" }),
  ...Array.from({ length: TURNS }, (_, turn) => editTurn(turn)).flat()
])

const summarize = (maxTokens: number) =>
  ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens, countTokens: count })

describe("the checkpoint budget goes to the recent work", () => {
  it("links and paths only mentioned in older chat are not listed as artifacts or exact identifiers", () => {
    const content = summarize(700)
    // (the session-start line quotes the first request; the ledger and the identifiers are what must be kept)
    const rendered = CheckpointRenderer.renderContent(content)
    const listed = rendered.slice(rendered.indexOf("## Artifacts"))
    for (const link of pastedLinks) expect(listed).not.toContain(link)
    expect(content.identifiers.urls).toEqual(["https://api.example.com/v2"])
    expect(content.identifiers.paths).not.toContain("/assets/hero-banner.jpg")
  })

  it("they do not crowd the newest Done items out of a short budget, and the handoff keeps every critical identifier", () => {
    const content = summarize(700)
    const done = content.progress.done.join("\n")
    for (let turn = TURNS - 8; turn < TURNS; turn++) expect(done).toContain(`src/module_${turn}.ts`)
    const checkpoint = {
      id: "cp1",
      generation: 1,
      coveredRange: { fromEntryId: null, toEntryId: session.at(-1)!.entryId },
      firstKeptEntryId: null,
      tokensBefore: 10_000,
      tokensAfter: 700,
      summarizer: { kind: "extractive" as const, promptVersion: "test" },
      content,
      createdAt: new Date(0).toISOString()
    }
    const report = CheckpointValidation.validate({
      checkpoint,
      covered: session.map((item) => item.message),
      checkpointTokens: 700,
      replacedTokens: 10_000
    })
    expect(report.identifierRetention).toBe(1)
  })
})

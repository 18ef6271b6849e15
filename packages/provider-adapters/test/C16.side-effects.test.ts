/**
 * Shared case C16 (../shared/cases): executed side-effect tool calls stay
 * recorded as done, never as pending. Through the tiered engine with the
 * offline summarizer and with a model summarizer answering the case's
 * replies: llm-then-repair (the first reply plans the clone, writes, commit
 * and deploys again and is refused; the repair is committed) and
 * llm-bad-twice (both replies refused; the offline fallback commits).
 */
import {
  type Checkpoint,
  CheckpointValidation,
  type Entry,
  Errors,
  type Message,
  ToolPairing
} from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { type CaseReply, replyModel, toEntries } from "./support/CaseModel.ts"

interface C16 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly summarizerReplies: {
    readonly "llm-then-repair": Array<CaseReply>
    readonly "llm-bad-twice": Array<CaseReply>
  }
}

const c16 = loadCase<C16>("C16")
const policy = Cases.policySync(c16.policy, "C16")
/** Evidence of each executed side effect: the clone, the two commits, the two staging deployments. */
const DONE = ["5d1e9a4", "8c41f0e", "1f7b2d9", "dep_01J9Z3K7Q2M4X8", "dep_01J9Z5N1B6T3R2"]
const REPLAY =
  /\b(?:clone|cloning|write|writing|commit|committing|deploy|deploying)\b.*(?:service-template|service\.yaml|retry\.ts|staging)/i

/** The checkpoint's still-to-do lines: pending asks, in progress and next steps. */
const todo = (content: Checkpoint.CheckpointContent): Array<string> => [
  ...content.pendingUserAsks,
  ...content.progress.inProgress,
  ...content.nextSteps
]

/**
 * What every committed checkpoint of C16 must say, whoever wrote it: no
 * executed side effect is planned again, the production deploy without a
 * result is an unknown outcome to check, and each side effect of the covered
 * range is recorded as done with its result — or, when the checkpoint budget
 * left older Done items out, the checkpoint says so (`complete: false`).
 */
const expectHandoff = (
  checkpoint: Checkpoint.Checkpoint | undefined,
  coveredIds: ReadonlyArray<string>,
  options: { readonly complete: boolean }
) => {
  expect(checkpoint?.validation?.ok).toBe(true)
  const content = checkpoint!.content!
  for (const line of todo(content)) expect(line).not.toMatch(REPLAY)
  const done = content.progress.done.join("\n")
  const evidence = [
    ["m3", "5d1e9a4"],
    ["m11", "8c41f0e"],
    ["m13", "dep_01J9Z3K7Q2M4X8"],
    ["m21", "1f7b2d9"],
    ["m23", "dep_01J9Z5N1B6T3R2"]
  ].filter(([id]) => coveredIds.includes(id!))
  const missing = evidence.filter(([, value]) => !done.includes(value!))
  if (options.complete) expect(missing).toEqual([])
  else {
    // The newest side effect is always there; older ones left out are counted under "Left Out".
    expect(done).toContain(evidence.at(-1)![1])
    if (missing.length > 0) expect((content.dropped ?? []).join("\n")).toMatch(/\d+ done/)
  }
  if (coveredIds.includes("m26")) {
    const unknown = content.progress.blocked.join("\n")
    expect(unknown).toMatch(/production|call_dep_prod|deploy/)
    expect(unknown).toMatch(/unknown|check|no result/i)
  }
}

const run = async (engine: ReturnType<typeof TieredSummaryEngine.makeAsync>) => {
  const entries: Array<Entry.Entry> = toEntries(c16.messages)
  const result = await engine.compact({ entries, policy, manual: true })
  const ids = entries.map((entry) => entry.id)
  const to = result.checkpoint ? ids.indexOf(result.checkpoint.coveredRange.toEntryId) : -1
  // Every tool call kept verbatim keeps exactly one result (the interrupted production deploy gets its marker).
  expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
  expect(result.fits).toBe(true)
  return { result, coveredIds: ids.slice(0, to + 1) }
}

describe("C16: executed side effects stay done, never pending", () => {
  it("C16 offline at the case's 320-token cap: every executed side effect is done with its result, none planned again", async () => {
    const { result, coveredIds } = await run(TieredSummaryEngine.makeAsync({ memory: { extractor: null } }))
    expect(coveredIds.length).toBeGreaterThan(20)
    // The summary cap is 0.8 × the case's 400 reserve tokens: the Done items take their short form (the
    // action and its outcome's ids; file writes are in the ledger) so none is left out.
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("applied")
    expectHandoff(result.checkpoint, coveredIds, { complete: true })
    const content = result.checkpoint!.content!
    expect(content.progress.done.join("\n")).toMatch(/clone_repo → 5d1e9a4/)
    const files = (content.artifacts ?? []).filter((artifact) => artifact.kind === "file" && artifact.status !== "read")
    expect(files.map((artifact) => artifact.value)).toEqual(
      expect.arrayContaining(["/work/payments-webhooks/service.yaml", "/work/payments-webhooks/src/config/retry.ts"])
    )
    expect(CheckpointValidation.checkpointText(result.checkpoint!)).toContain("service.yaml")
  })

  it("C16 llm-then-repair: the reply that replays the side effects fails validation; the repair is committed", async () => {
    const { model, prompts } = replyModel(c16.summarizerReplies["llm-then-repair"])
    const engine = TieredSummaryEngine.makeAsync({
      summarizer: LanguageModelSummarizer.make({ model }),
      fallbackSummarizer: null,
      memory: { extractor: null }
    })
    const { result, coveredIds } = await run(engine)
    expect(prompts).toHaveLength(2)
    const refused = result.failures?.find((f): f is Errors.ValidationFailed => f instanceof Errors.ValidationFailed)
    expect(refused?.failedChecks).toContain("no-replayed-side-effects")
    expect(refused?.missing.some((item) => item.startsWith("replayed:Clone https://github.com/acme-pay"))).toBe(true)
    expect(prompts[1]).toContain("already done (its result is in the transcript); move it to progress.done")
    expect(result.checkpoint?.summarizer.kind).toBe("language-model")
    expectHandoff(result.checkpoint, coveredIds, { complete: true })
    const text = CheckpointValidation.checkpointText(result.checkpoint!)
    for (const evidence of DONE) expect(text).toContain(evidence)
  })

  it("C16 llm-bad-twice: neither reply commits; the offline fallback does, and it satisfies the same rules", async () => {
    const { model, prompts } = replyModel(c16.summarizerReplies["llm-bad-twice"])
    const engine = TieredSummaryEngine.makeAsync({
      summarizer: LanguageModelSummarizer.make({ model }),
      memory: { extractor: null }
    })
    const { result, coveredIds } = await run(engine)
    expect(prompts).toHaveLength(2)
    expect(result.failures?.filter((f) => f instanceof Errors.ValidationFailed)).toHaveLength(2)
    expect(result.checkpoint?.summarizer.kind).toBe("extractive")
    expectHandoff(result.checkpoint, coveredIds, { complete: false })
  })
})

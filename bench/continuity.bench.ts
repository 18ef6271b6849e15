/**
 * Continuity probes (issue #11 requirement 8; ../shared/continuity/README.md):
 * per scenario, the probe score of our offline checkpoint, of the sliding
 * window on the same budget, of plain truncation (our view without its
 * checkpoint), of pi's real summaries at pi's two cuts and of the
 * uncompacted transcript, with the view's and the checkpoint's tokens. Then
 * the validator's verdict on pi's two real Opus-written summaries, with the
 * reasons (requirement 5: one rule set for model and offline summaries).
 *
 * Scored by the shared `score.mjs` as a black box. Not timed.
 */

import {
  compact,
  piCutOf,
  type Scenario,
  scenarios,
  score,
  uncompacted
} from "../packages/cli/test/support/continuity.ts"
import { CheckpointRenderer, CheckpointValidation, type Entry, Tokenizers } from "../packages/core/src/index.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { Import } from "../packages/transcripts/src/index.ts"

const count = (text: string) => Tokenizers.get("o200k_base").count(text)
const cell = (pass: number, total: number) => `${pass}/${total}`.padEnd(7)
const n = (value: number | undefined) => (value === undefined ? "–" : Math.round(value).toLocaleString("en-US"))

const row = async (scenario: Scenario): Promise<string> => {
  const ours = await compact(scenario, "tiered", count)
  const sliding = await compact(scenario, "sliding-window", count)
  const oursScore = score(scenario, [ours.viewFile])
  const truncation = score(scenario, [ours.viewFile], true)
  const slidingScore = score(scenario, [sliding.viewFile])
  const whole = score(scenario, [await uncompacted(scenario)])
  const cut = piCutOf(scenario)
  const pi = cut ? score(scenario, ["--pi-cut", String(cut), transcript("pi/before-compaction.jsonl")]) : undefined
  return [
    scenario.scenario.padEnd(28),
    cell(oursScore.pass, oursScore.total),
    n(oursScore.viewTokens).padStart(8),
    n(ours.checkpointTokens).padStart(6),
    "  ",
    cell(slidingScore.pass, slidingScore.total),
    cell(truncation.pass, truncation.total),
    pi ? cell(pi.pass, pi.total) : "–      ",
    cell(whole.pass, whole.total),
    oursScore.failed.length > 0 ? ` ours misses: ${oursScore.failed.join(", ")}` : ""
  ].join(" ")
}

/** pi's two recorded compactions judged by our validator against the messages each one covered. */
const piVerdicts = async (): Promise<Array<string>> => {
  const { transcript: imported } = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
  const entries = imported.entries
  const out: Array<string> = []
  let from = 0
  for (const entry of entries.filter((e): e is Entry.CheckpointEntry => e.kind === "checkpoint")) {
    const checkpoint = entry.checkpoint
    const to = entries.findIndex((e) => e.id === checkpoint.firstKeptEntryId)
    const covered = entries
      .slice(from, to)
      .flatMap((e) => (e.kind === "message" && e.message.role !== "system" ? [e.message] : []))
    const rendered = CheckpointRenderer.render(checkpoint)
    const report = CheckpointValidation.validate({
      checkpoint,
      covered,
      checkpointTokens: count(rendered),
      replacedTokens: covered.reduce((sum, message) => sum + count(JSON.stringify(message.content)), 0)
    })
    const failed = report.checks.filter((check) => !check.ok)
    out.push(
      `pi compaction ${checkpoint.generation} (${n(count(rendered))} tokens, ${covered.length} messages covered): ${report.ok ? "VALID" : "INVALID"}` +
        (failed.length > 0 ? ` — ${failed.map((check) => `${check.name}: ${check.detail}`).join("; ")}` : "") +
        ` (critical identifiers kept ${(report.identifierRetention * 100).toFixed(0)}%)`
    )
    from = to
  }
  return out
}

export default async function (): Promise<void> {
  console.log(
    `${"scenario".padEnd(28)} ${"ours".padEnd(7)} ${"view".padStart(8)} ${"ckpt".padStart(6)}    ${"sliding".padEnd(7)} ${"trunc".padEnd(7)} ${"pi".padEnd(7)} ${"whole".padEnd(7)}`
  )
  for (const scenario of scenarios()) console.log(await row(scenario))
  console.log("\nValidator verdicts on pi's real summaries (same rules as ours):")
  for (const line of await piVerdicts()) console.log(`  ${line}`)
}

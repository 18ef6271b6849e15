/**
 * Continuity probes (../shared/continuity/README.md) run the way the README
 * builds the views: the transcript (pi scenarios: the derived cut copies,
 * compaction records neutralized) through `context-engine compact` in
 * process, the view written like `--out`, scored by the shared `score.mjs`
 * as a black box (`--json`). Used by the floor test and `pnpm bench
 * continuity`. Never reads probe terms: the same code runs any scenario file.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { sharedDir } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { run } from "../../src/commands/compact.ts"
import type * as Progress from "../../src/Progress.ts"

/** One scenario file of ../shared/continuity. */
export interface Scenario {
  readonly file: string
  readonly scenario: string
  readonly transcript: string
  readonly model: string
  readonly howToBuildView: string
}

/** A probe score: passed of total, the view's input tokens, the checkpoint's tokens. */
export interface Score {
  readonly pass: number
  readonly total: number
  readonly viewTokens: number | undefined
  readonly failed: ReadonlyArray<string>
}

export const continuityDir = (): string => join(sharedDir, "continuity")

export const scenarios = (): Array<Scenario> =>
  readdirSync(continuityDir())
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({
      file: join(continuityDir(), file),
      ...JSON.parse(readFileSync(join(continuityDir(), file), "utf8"))
    }))

const work = mkdtempSync(join(tmpdir(), "continuity-"))

/** The README's derived pi copy: ends before compaction record `n` (0 keeps every line), earlier records made inert. */
export const piCut = (file: string, n: number): string => {
  const kept: Array<string> = []
  let seen = 0
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const record = JSON.parse(line) as { type?: string; timestamp?: string }
    if (record.type !== "compaction") {
      kept.push(line)
      continue
    }
    if (++seen === n) break
    kept.push(
      JSON.stringify({ type: "custom", customType: "compaction-removed-for-evaluation", timestamp: record.timestamp })
    )
  }
  const out = join(work, `pi-cut${n}-${Math.random().toString(36).slice(2)}.jsonl`)
  writeFileSync(out, `${kept.join("\n")}\n`)
  return out
}

/** The pi cut a scenario is at (1, 2), 0 for a pi session's end, undefined for other transcripts. */
export const piCutOf = (scenario: Scenario): number | undefined => {
  if (!scenario.transcript.startsWith("transcripts/pi/before-compaction")) return undefined
  const match = /cut(\d)/.exec(scenario.scenario)
  return match ? Number(match[1]) : 0
}

export const transcriptFile = (scenario: Scenario): string => {
  const file = join(sharedDir, scenario.transcript)
  const cut = piCutOf(scenario)
  return cut === undefined ? file : piCut(file, cut)
}

/** Scores a view file (or pi's own view with `["--pi-cut", n, file]`). */
export const score = (scenario: Scenario, view: ReadonlyArray<string>, dropCheckpoint = false): Score => {
  const args = [
    join(continuityDir(), "score.mjs"),
    scenario.file,
    ...view,
    "--json",
    ...(dropCheckpoint ? ["--drop-checkpoint"] : [])
  ]
  const result = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`score.mjs failed: ${result.stderr}`)
  const out = JSON.parse(result.stdout) as {
    pass: number
    total: number
    tokens?: number
    results: Array<{ id: string; pass: boolean }>
  }
  return {
    pass: out.pass,
    total: out.total,
    viewTokens: out.tokens,
    failed: out.results.filter((r) => !r.pass).map((r) => r.id)
  }
}

/** What `compact --out` wrote for a scenario, with the checkpoint's rendered tokens. */
export interface Compacted {
  readonly viewFile: string
  readonly checkpointTokens: number
  readonly checkpointValid: boolean | undefined
}

const silent: Progress.Progress = { update: () => {}, stop: () => {} }

/** Runs `compact` as the scenario's `howToBuildView` says (engine: tiered or sliding-window). */
export const compact = async (
  scenario: Scenario,
  engine: "tiered" | "sliding-window",
  countTokens: (text: string) => number
): Promise<Compacted> => {
  const viewFile = join(work, `${scenario.scenario}-${engine}.json`)
  const force = scenario.howToBuildView.includes("--force")
  const result = await run(transcriptFile(scenario), { model: scenario.model, engine, force, out: viewFile }, silent)
  if (result.exitCode !== 0) throw new Error(result.output)
  const written = JSON.parse(readFileSync(viewFile, "utf8")) as {
    messages: Array<{ role: string; content: unknown }>
    checkpoint: { validation?: { ok: boolean } } | null
  }
  const text = written.messages
    .filter(
      (message) => message.role !== "assistant" && JSON.stringify(message.content).includes("[Context checkpoint")
    )
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as Array<{ text?: string }>).map((part) => part.text ?? "").join("")
    )
    .join("\n")
  return {
    viewFile,
    checkpointTokens: text ? countTokens(text) : 0,
    checkpointValid: written.checkpoint?.validation?.ok
  }
}

/** The uncompacted view: every message the importer produces. */
export const uncompacted = async (scenario: Scenario): Promise<string> => {
  const { transcript } = await Import.importFilePromise(transcriptFile(scenario))
  const out = join(work, `${scenario.scenario}-uncompacted.json`)
  writeFileSync(
    out,
    JSON.stringify({
      messages: transcript.entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
    })
  )
  return out
}

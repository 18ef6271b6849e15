/**
 * Behaviour kept (issue #10 req 9): every engine on every shared case
 * (`../shared/cases`) produces the same stage reports and the same assembled
 * messages as the recorded baseline `fixtures/stage-reports.json`, which was
 * generated from the code before the view/kernel refactor.
 *
 * Per engine and case: `shouldCompact`, a `compact` as the engine decides
 * (threshold), the messages `assembleContext` builds after appending its
 * entries, then a manual compaction and a second manual compaction on top
 * (two checkpoints for the tiered engine) with the messages after each.
 * `durationMs` is left out (wall clock); messages are compared by content hash.
 *
 * A deliberate behaviour change regenerates the baseline — say why in the
 * commit message:
 *
 *     UPDATE_STAGE_REPORTS=1 pnpm vitest run packages/engines/test/StageReports.baseline.test.ts
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { ContextEngine, Entry as EntryType, Message } from "@context-engine/core"
import { Entry, Measurer, Tokenizers } from "@context-engine/core"
import { sharedDir } from "@context-engine/core/test-support"
import { Cases, deepFreeze } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import * as ProviderNativeEngine from "../src/ProviderNativeEngine.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const FIXTURE = join(import.meta.dirname, "fixtures", "stage-reports.json")
const UPDATE = process.env.UPDATE_STAGE_REPORTS === "1"

interface Case {
  readonly id: string
  readonly policy?: Cases.CasePolicy
  readonly messages?: ReadonlyArray<Message.Message>
  readonly tools?: Record<string, { readonly description: string; readonly inputSchema?: Message.JsonValue }>
}

const cases: ReadonlyArray<Case> = readdirSync(join(sharedDir, "cases"))
  .filter((name) => /^C\d+-.*\.json$/.test(name))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(sharedDir, "cases", name), "utf8")) as Case)
  .filter((c) => c.policy !== undefined && (c.messages?.length ?? 0) > 0)

const o200k = Measurer.make(Tokenizers.get("o200k_base"))
const NOW = new Date(Date.UTC(2026, 2, 2))

/** Fresh engines per case (engines keep anchor/overflow state), measured with the exact o200k tokenizer. */
const engines: Record<string, () => ContextEngine.ContextEngine> = {
  "sliding-window": () => SlidingWindowEngine.make({ measurer: () => o200k }),
  "tiered-summary": () => TieredSummaryEngine.make({ measurer: () => o200k, now: () => NOW }),
  "provider-native": () =>
    ProviderNativeEngine.make({
      fallback: TieredSummaryEngine.make({ measurer: () => o200k, now: () => NOW })
    })
}

const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<EntryType.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(Date.UTC(2026, 2, 1, 0, 0, index)).toISOString(),
    schemaVersion: Entry.CURRENT_SCHEMA_VERSION,
    kind: "message",
    message
  }))

const errorRecord = (cause: unknown) => {
  const error = (cause as { reasons?: ReadonlyArray<{ _tag: string; error?: { _tag?: string; message?: string } }> })
    .reasons?.[0]?.error
  return { error: error?._tag ?? "defect", message: error?.message ?? String(cause) }
}

const compactionRecord = (result: ContextEngine.CompactionResult) => ({
  stages: result.stages.map(({ durationMs: _durationMs, ...stage }) => stage),
  fits: result.fits,
  beforeTokens: result.before.inputTokens,
  afterTokens: result.after.inputTokens,
  appended: result.entriesToAppend.map((entry) => `${entry.kind}:${entry.id}`),
  failures: (result.failures ?? []).map((failure) => failure._tag)
})

/**
 * A message as role, size and content hash (the full messages of every case
 * would make a fixture of megabytes; the hash still compares them exactly),
 * with the first characters of its text for a readable diff.
 */
const digest = (message: Message.Message) => {
  const json = JSON.stringify(message)
  const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content)
  return {
    role: message.role,
    chars: json.length,
    sha256: createHash("sha256").update(json).digest("hex").slice(0, 16),
    head: text.slice(0, 60)
  }
}

/** One compaction then the messages assembled from the transcript with its entries appended. */
const step = async (engine: ContextEngine.ContextEngine, input: ContextEngine.EngineInput) => {
  const exit = await Effect.runPromiseExit(engine.compact(input))
  if (Exit.isFailure(exit)) return { input, record: errorRecord(exit.cause) }
  const next = deepFreeze({ ...input, manual: false, entries: [...input.entries, ...exit.value.entriesToAppend] })
  const assembled = await Effect.runPromise(engine.assembleContext(next))
  return { input: next, record: { ...compactionRecord(exit.value), messages: assembled.messages.map(digest) } }
}

const run = async (make: () => ContextEngine.ContextEngine, c: Case) => {
  const engine = make()
  const input: ContextEngine.EngineInput = deepFreeze({
    entries: entriesOf(c.messages ?? []),
    policy: Cases.policySync(c.policy!, c.id),
    tools: Object.entries(c.tools ?? {}).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: tool.inputSchema ?? { type: "object" }
    }))
  })
  const decision = await Effect.runPromiseExit(engine.shouldCompact(input))
  const initial = await Effect.runPromise(engine.assembleContext(input))
  const threshold = await step(engine, input)
  const manual = await step(engine, { ...threshold.input, manual: true })
  const manualAgain = await step(engine, { ...manual.input, manual: true })
  return {
    decision: Exit.isSuccess(decision)
      ? {
          compact: decision.value.compact,
          reasons: decision.value.reasons,
          tokens: decision.value.measurement.inputTokens
        }
      : errorRecord(decision.cause),
    initialMessages: initial.messages.length,
    threshold: threshold.record,
    manual: manual.record,
    manualAgain: manualAgain.record
  }
}

const baseline: Record<string, unknown> =
  !UPDATE && existsSync(FIXTURE) ? (JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<string, unknown>) : {}
const recorded: Record<string, unknown> = {}

describe("stage reports and assembled messages match the recorded baseline", () => {
  for (const [name, make] of Object.entries(engines))
    for (const c of cases)
      it(`${name} on ${c.id}`, async () => {
        // JSON round trip: the fixture holds what JSON can hold (no undefined fields).
        const actual = JSON.parse(JSON.stringify(await run(make, c))) as unknown
        recorded[`${name}/${c.id}`] = actual
        if (!UPDATE) expect(actual).toEqual(baseline[`${name}/${c.id}`])
      })

  afterAll(() => {
    if (UPDATE) writeFileSync(FIXTURE, `${JSON.stringify(recorded, null, 1)}\n`)
  })
})

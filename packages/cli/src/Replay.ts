/**
 * Replays a transcript step by step as an agent with the context-engine
 * middleware would have run it: before every assistant message the
 * application's messages so far go through `ContextController.prepare` (the
 * code path of `contextEngineMiddleware` and `prepareStep`), which measures,
 * compacts when due and assembles what is sent. Recorded checkpoints in the
 * file are ignored: the replay starts from the original messages.
 *
 * Per step it records the request's tokens per category and the budget, the
 * time the step took, and whether the request rewrote the previous
 * request's prefix (a prompt-cache rewrite). Per compaction: step, reasons,
 * request tokens before/after, the tier that resolved it (the last applied
 * stage), the checkpoint's own size (its rendered message as sent, not the
 * request it sits in), text and validation, and whether it was a shadow (mode
 * `shadow` or `advisory`). Per compaction that was due but did not happen
 * (the controller's `compaction-failed` / `compaction-skipped` events): step
 * and reason — the request then went out uncompacted, so the steps over the
 * budget are counted too. Two damage measures no peer reports:
 *
 * - re-reads: a file read in a covered range is read again within
 *   {@link DEFAULT_DAMAGE_WINDOW_STEPS} steps after the compaction (Codex
 *   users measured 95 % of compactions followed by a re-read);
 * - repeated side effects: a side-effect tool call (write, edit, shell, …)
 *   repeated with the same input within the same window.
 *
 * @since 0.2.0
 */
import {
  Budget,
  type Checkpoint,
  CheckpointRenderer,
  type Entry,
  type Measurement,
  Measurer,
  type Message,
  type ModelPolicy
} from "@context-engine/core"
import { SlidingWindowEngine, TieredSummaryEngine } from "@context-engine/engines"
// loaded by `replay` itself: the other commands (compact's memory, issue #13 req 6) never load the AI SDK
import type { ContextController, RolloutMode } from "@context-engine/provider-adapters"
import * as ToolCalls from "./ToolCalls.ts"

/** Steps after a compaction in which re-reads and repeats count as its damage. @category constants */
export const DEFAULT_DAMAGE_WINDOW_STEPS = 10

/** @category models */
export interface StepRecord {
  readonly step: number
  /** The assistant message this request produced. */
  readonly entryId: string
  readonly inputTokens: number
  readonly byCategory: Measurement.CategoryCounts
  /** The largest input allowed (`Budget.inputBudgetTokens`). */
  readonly budgetTokens: number
  readonly messagesSent: number
  readonly compacted: boolean
  readonly cacheRewrite: boolean
  readonly durationMs: number
}

/** @category models */
export interface CompactionRecord {
  readonly step: number
  readonly reasons: ReadonlyArray<string>
  /** Input tokens of the request before compaction. */
  readonly tokensBefore: number
  /** Input tokens of the request after compaction (checkpoint, kept tail and fixed overhead together). */
  readonly tokensAfter: number
  /** The last stage that applied: the tier that resolved it. */
  readonly tier: string
  /**
   * Why no checkpoint was written when the engine had a checkpoint stage and skipped it (its stage note, e.g.
   * "nothing to summarize" or the validation that failed): the tier is then a deterministic one (`reduce:…`).
   */
  readonly checkpointSkipped?: string
  readonly stages: ReadonlyArray<{ readonly stage: string; readonly status: string; readonly tokensAfter: number }>
  readonly shadow: boolean
  /** Index (in the replayed messages) of the first message not covered: re-reads of files read before it count. */
  readonly coveredUntilIndex: number
  readonly checkpoint: {
    readonly id: string
    readonly generation: number
    /**
     * Tokens of the checkpoint itself: its rendered message as sent
     * (`CheckpointRenderer.toMessage`), framing included, counted with the
     * policy's tokenizer. Not the request size (that is `tokensAfter`).
     */
    readonly tokens: number
    /** Messages before the first kept one: everything this and earlier checkpoints cover. */
    readonly coveredEntries: number
    readonly firstKeptEntryId: string | null
    readonly text: string
    readonly validation: { readonly ok: boolean; readonly failedChecks: ReadonlyArray<string> } | null
  } | null
}

/**
 * A compaction that was due but did not happen: `failed` — it ran and failed
 * (typed error; the request went out as it was, the previous valid context
 * kept); `skipped` — automatic compaction was off on the route (the circuit
 * opened after consecutive failures) and the deterministic reduction that
 * still runs then failed too. From the controller's
 * `compaction-failed` / `compaction-skipped` events.
 *
 * @category models
 */
export interface FailureRecord {
  readonly step: number
  /** `over-budget`: the compaction fell short of the budget and its best reduction went out (not the raw request). */
  readonly kind: "failed" | "skipped" | "over-budget"
  /** The error's message (failed) or the controller's reason (skipped). */
  readonly reason: string
}

/** @category models */
export interface DamageRecord {
  readonly step: number
  readonly compactionStep: number
  readonly toolName: string
  readonly target: string
}

/** @category models */
export interface ReplayResult {
  readonly mode: RolloutMode.RolloutMode
  readonly engine: string
  readonly steps: ReadonlyArray<StepRecord>
  readonly compactions: ReadonlyArray<CompactionRecord>
  /** Compactions that were due but failed or were skipped, in step order. */
  readonly failures: ReadonlyArray<FailureRecord>
  /** The largest request sent, and the input budget at that step. */
  readonly peak: { readonly step: number; readonly inputTokens: number; readonly budgetTokens: number }
  /** Requests sent with more input tokens than the budget (`StepRecord.budgetTokens`). */
  readonly overBudgetSteps: number
  readonly cacheRewrites: number
  readonly timePerStepMs: { readonly mean: number; readonly max: number; readonly total: number }
  readonly damage: {
    readonly windowSteps: number
    readonly rereads: ReadonlyArray<DamageRecord>
    readonly compactionsFollowedByReread: number
    readonly repeatedSideEffects: ReadonlyArray<DamageRecord>
    readonly compactionsFollowedByRepeat: number
  }
}

/** @category models */
export interface ReplayOptions {
  readonly policy: ModelPolicy.ModelPolicy
  readonly engine?: "tiered" | "sliding-window" | undefined
  readonly mode?: RolloutMode.RolloutMode | undefined
  readonly damageWindowSteps?: number | undefined
  readonly onProgress?: ((done: number, total: number) => void) | undefined
}

const checkpointRecord = (
  checkpoint: Checkpoint.Checkpoint | undefined,
  coveredEntries: number,
  measurer: Measurer.Measurer
): CompactionRecord["checkpoint"] =>
  checkpoint
    ? {
        id: checkpoint.id,
        generation: checkpoint.generation,
        tokens: measurer.messageTokens(CheckpointRenderer.toMessage(checkpoint), "checkpoint"),
        coveredEntries,
        firstKeptEntryId: checkpoint.firstKeptEntryId,
        text: CheckpointRenderer.render(checkpoint),
        validation: checkpoint.validation
          ? {
              ok: checkpoint.validation.ok,
              failedChecks: checkpoint.validation.checks.filter((check) => !check.ok).map((check) => check.name)
            }
          : null
      }
    : null

/** Identity of what a request sent: entry ids with their edits, to detect prefix rewrites. */
const fingerprint = (items: ReadonlyArray<{ readonly entryId: string; readonly editedBy: ReadonlyArray<string> }>) =>
  items.map((item) => `${item.entryId}|${item.editedBy.join(",")}`)

const isPrefix = (previous: ReadonlyArray<string>, next: ReadonlyArray<string>): boolean =>
  previous.length <= next.length && previous.every((key, index) => key === next[index])

/**
 * Replays `entries` (an imported transcript). Only message entries are
 * replayed.
 *
 * @category constructors
 */
export const replay = async (entries: ReadonlyArray<Entry.Entry>, options: ReplayOptions): Promise<ReplayResult> => {
  const mode = options.mode ?? "active"
  const engine = options.engine === "sliding-window" ? SlidingWindowEngine.makeAsync() : TieredSummaryEngine.makeAsync()
  const { ContextController, RolloutMode } = await import("@context-engine/provider-adapters")
  const events: Array<ContextController.ContextEvent> = []
  const messages: ReadonlyArray<{ readonly id: string; readonly message: Message.Message }> = entries.flatMap(
    (entry) => (entry.kind === "message" ? [{ id: entry.id, message: entry.message }] : [])
  )
  const controller = ContextController.make({
    engine,
    policy: options.policy,
    mode,
    // The session names each message as the transcript does (`inspect` and `compact` use these ids), so
    // checkpoints and their first kept entry are found among the replayed messages.
    messageId: (position) => messages[position]?.id,
    onEvent: (event) => events.push(event)
  })
  const model = { provider: "replay", modelId: options.policy.model }
  const indexOf = new Map(messages.map((item, index) => [item.id, index]))
  const measurer = Measurer.forPolicy(options.policy)
  const stepIndexes = messages.flatMap((item, index) => (item.message.role === "assistant" && index > 0 ? [index] : []))
  const steps: Array<StepRecord> = []
  const compactions: Array<CompactionRecord> = []
  const failures: Array<FailureRecord> = []
  let previous: ReadonlyArray<string> = []
  for (const [step, index] of stepIndexes.entries()) {
    const startedAt = performance.now()
    const seen = events.length
    const prepared = await controller.prepare(
      model,
      messages.slice(0, index).map((item) => item.message),
      []
    )
    const durationMs = performance.now() - startedAt
    const session = prepared.session
    for (const event of events.slice(seen)) {
      // The system prompt and tool schemas alone exceed the input budget: no step can fit, say so (exit 3).
      if (event.type === "compaction-skipped" && event.error !== undefined) throw event.error
      if (event.type === "compaction")
        compactions.push(
          compactionOf(step, index, event, RolloutMode.shadows(session.entries()), session.entries(), indexOf, measurer)
        )
      const failure = failureOf(step, event)
      // A failure at a step that also compacted: the engine's best reduction went out, over the budget.
      if (failure)
        failures.push(
          failure.kind === "failed" && compactions.at(-1)?.step === step ? { ...failure, kind: "over-budget" } : failure
        )
    }
    const items = prepared.assembled.view.items
    const sent = mode === "shadow" ? messages.slice(0, index).map((item) => `${item.id}|`) : fingerprint(items)
    const measurement = prepared.assembled.measurement
    steps.push({
      step,
      entryId: messages[index]!.id,
      inputTokens: measurement.inputTokens,
      byCategory: measurement.byCategory,
      budgetTokens: Number.isFinite(measurement.budgetTokens)
        ? measurement.budgetTokens
        : Budget.make(options.policy, {
            systemTokens: measurement.byCategory.system,
            toolSchemaTokens: measurement.byCategory.toolSchemas
          }).inputBudgetTokens,
      messagesSent: prepared.messages.length,
      compacted: events.slice(seen).some((event) => event.type === "compaction"),
      cacheRewrite: step > 0 && !isPrefix(previous, sent),
      durationMs
    })
    previous = sent
    options.onProgress?.(step + 1, stepIndexes.length)
  }
  return summarize(mode, engine.name, steps, { compactions, failures }, messages, stepIndexes, options)
}

const compactionOf = (
  step: number,
  index: number,
  event: Extract<ContextController.ContextEvent, { type: "compaction" }>,
  shadows: ReturnType<typeof RolloutMode.shadows>,
  sessionEntries: ReadonlyArray<Entry.Entry>,
  indexOf: ReadonlyMap<string, number>,
  measurer: Measurer.Measurer
): CompactionRecord => {
  const shadow = event.shadowEntryId !== undefined
  const shadowData = shadow ? shadows.find((record) => record.entryId === event.shadowEntryId)?.data : undefined
  const committed = sessionEntries.find(
    (entry): entry is Entry.CheckpointEntry => entry.kind === "checkpoint" && entry.checkpoint.id === event.checkpointId
  )?.checkpoint
  const checkpoint = (shadowData?.checkpoint as Checkpoint.Checkpoint | null | undefined) ?? committed
  const applied = event.stages.filter((stage) => stage.status === "applied")
  const firstKept = checkpoint?.firstKeptEntryId ? indexOf.get(checkpoint.firstKeptEntryId) : undefined
  const coveredUntilIndex = firstKept ?? index
  return {
    step,
    reasons: event.reasons,
    tokensBefore: event.tokensBefore,
    tokensAfter: event.tokensAfter,
    tier: applied.at(-1)?.stage ?? "none",
    ...skippedNote(event.stages),
    stages: event.stages.map((stage) => ({ stage: stage.stage, status: stage.status, tokensAfter: stage.tokensAfter })),
    shadow,
    coveredUntilIndex,
    checkpoint: checkpointRecord(checkpoint ?? undefined, coveredUntilIndex, measurer)
  }
}

/** The note of a checkpoint stage that was skipped ({@link CompactionRecord.checkpointSkipped}). */
const skippedNote = (
  stages: ReadonlyArray<{ readonly stage: string; readonly status: string; readonly note?: string | undefined }>
): { readonly checkpointSkipped?: string } => {
  const stage = stages.find((candidate) => candidate.stage === "checkpoint" && candidate.status === "skipped")
  return stage === undefined ? {} : { checkpointSkipped: stage.note ?? "no reason given" }
}

const failureOf = (step: number, event: ContextController.ContextEvent): FailureRecord | undefined => {
  if (event.type === "compaction-skipped") return { step, kind: "skipped", reason: event.reason }
  if (event.type !== "compaction-failed") return undefined
  const error = event.error as { readonly message?: unknown; readonly _tag?: unknown }
  const reason = typeof error.message === "string" && error.message !== "" ? error.message : String(error._tag)
  return { step, kind: "failed", reason }
}

const summarize = (
  mode: RolloutMode.RolloutMode,
  engine: string,
  steps: ReadonlyArray<StepRecord>,
  { compactions, failures }: Pick<ReplayResult, "compactions" | "failures">,
  messages: ReadonlyArray<{ readonly id: string; readonly message: Message.Message }>,
  stepIndexes: ReadonlyArray<number>,
  options: ReplayOptions
): ReplayResult => {
  const windowSteps = options.damageWindowSteps ?? DEFAULT_DAMAGE_WINDOW_STEPS
  const peak = steps.reduce(
    (best, step) =>
      step.inputTokens > best.inputTokens
        ? { step: step.step, inputTokens: step.inputTokens, budgetTokens: step.budgetTokens }
        : best,
    { step: 0, inputTokens: 0, budgetTokens: 0 }
  )
  const durations = steps.map((step) => step.durationMs)
  const total = durations.reduce((sum, value) => sum + value, 0)
  const damage = ToolCalls.damage(
    messages.map((item) => item.message),
    stepIndexes,
    compactions.map((compaction) => ({ step: compaction.step, coveredUntilIndex: compaction.coveredUntilIndex })),
    windowSteps
  )
  return {
    mode,
    engine,
    steps,
    compactions,
    failures,
    peak,
    overBudgetSteps: steps.filter((step) => step.inputTokens > step.budgetTokens).length,
    cacheRewrites: steps.filter((step) => step.cacheRewrite).length,
    timePerStepMs: {
      mean: steps.length > 0 ? total / steps.length : 0,
      max: durations.reduce((max, value) => Math.max(max, value), 0),
      total
    },
    damage: { windowSteps, ...damage }
  }
}

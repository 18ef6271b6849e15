/**
 * Rolling (windowed) compaction of a large line-format transcript — what a
 * long-running agent does anyway: compact repeatedly, each checkpoint
 * updating the previous one (`checkpoint/Update.ts`) — so `compact` never
 * holds the whole file (issue #13 req 6: a 100 MB transcript within 3× its
 * size in memory).
 *
 * 1. Pass 1 (`RollingScan.ts`) streams the file once and keeps per entry only
 *    its id, parent, kind and flags: the branch, the view's shape, the
 *    import's facts and the recorded model.
 * 2. Pass 2 streams it again and feeds the branch's entries, as one chain,
 *    into a window. After every `windowBytes` of file read, a round runs
 *    (on the window up to its last entry where no tool call awaited its
 *    result, so a window never ends between a call and its recorded result;
 *    the entries after it are carried over to the next window)
 *    the engine as `compact` does (`shouldCompact` → `compact(input, plan)`);
 *    a round that wrote a checkpoint appends its entries to the window and
 *    keeps only what the engine's next view needs: the prefix (system
 *    messages, memory entries), the checkpoint and the entry its covered
 *    range ends at, the pinned user messages, every message from the
 *    checkpoint's first kept entry on, and the edits on those; the rest is
 *    dropped. A round whose decision is "fits" keeps reading. Retained
 *    entries are copies re-linked into one chain (caller input never changes).
 * 3. At the end the last window goes through `compact`'s final flow; after
 *    an earlier round compacted, it is compacted even when it fits, so its
 *    repairs (pairing, empty messages) are appended entries too.
 *
 * The whole transcript's `tokens.before`, decision and pre-compaction
 * repairs come from `WholeView.ts`, which counts each message of the
 * transcript's view once as it streams past. `entriesToAppend` is what to
 * append to the original file so that `ActiveView.reconstruct` of it gives
 * `messages`: the edits and memory of every round that still apply and the
 * last checkpoint (superseded checkpoints left out), one chain after the
 * file's last entry.
 *
 * `--force` and `--instructions` make every round manual: each round then
 * writes a checkpoint, and the instructions guide each round's summary, so
 * the final checkpoint (which merges the earlier ones) follows them
 * throughout.
 *
 * @since 0.6.0
 */
import { stat } from "node:fs/promises"
import {
  ActiveView,
  type ContextEngine,
  type ContextView,
  Entry,
  Measurer,
  MessageTokens,
  Turns
} from "@context-engine/core"
import { ByteCap } from "@context-engine/engines"
import { Import } from "@context-engine/transcripts"
import * as CompactFlow from "./CompactFlow.ts"
import type * as CompactReports from "./CompactReport.ts"
import type { CompactOptions } from "./commands/compact.ts"
import * as FullGc from "./FullGc.ts"
import * as PolicyOptions from "./PolicyOptions.ts"
import type * as Progress from "./Progress.ts"
import * as RequestRepairs from "./RequestRepairs.ts"
import * as RollingScan from "./RollingScan.ts"
import * as WholeView from "./WholeView.ts"

const MIB = 1024 * 1024

/**
 * Line-format files larger than this (32 MiB) are compacted rolling unless
 * `--window-mib 0`. The in-memory path's peak grows with the file: ≈ 177 MiB
 * RSS of node, modules and the o200k encoder plus ≈ 4.8 MiB per MiB of
 * transcript (658–666 MiB for the 101 MiB pi session of
 * `bench/compact-memory.bench.ts`; by that slope ≈ 330 MiB at 32 MiB); the rolling
 * path's peak is set by its window, not the file (240–280 MiB from 41 to
 * 101 MiB, same bench and the new-user trial's 41 MB file). Around 32 MiB
 * the two peaks meet; below it the in-memory path costs no more memory and
 * runs one compaction instead of several (rolling costs 15–50 % more CPU).
 * Neither path is within 3× of a file much smaller than ≈ 90 MiB: the
 * 177 MiB floor alone is more.
 *
 * @category constants
 */
export const ROLLING_THRESHOLD_BYTES = 32 * MIB

/**
 * The default window: 8 MiB of transcript lines per round. Chosen by
 * measurement (notes of issue #13 req 6, `bench/compact-memory.bench.ts`):
 * the peak of a round is the window's entries plus the engine's working set
 * over them, which must fit the ≈ 127 MiB left above the floor for a 101 MiB
 * file to stay ≤ 3×. A window is never too small for the budget: a round
 * whose request fits keeps reading.
 *
 * @category constants
 */
export const DEFAULT_WINDOW_BYTES = 8 * MIB

/**
 * The window in bytes for `file`, or undefined for the in-memory path:
 * `--window-mib 0` never rolls; `--window-mib N` rolls a line-format file of
 * any size with an N MiB window; without it, a line-format file over
 * {@link ROLLING_THRESHOLD_BYTES} rolls with {@link DEFAULT_WINDOW_BYTES}.
 * Whole-JSON documents never roll.
 *
 * @category getters
 */
export const windowFor = async (file: string, options: CompactOptions): Promise<number | undefined> => {
  const mib = options.windowMib
  if (mib === 0) return undefined
  if (mib === undefined) {
    const size = await stat(file).then(
      (stats) => (stats.isFile() ? stats.size : 0),
      () => 0
    )
    if (size <= ROLLING_THRESHOLD_BYTES) return undefined
  }
  const detected = await Import.detectFile(file, { format: options.format ?? "auto", strict: options.strict ?? false })
  if (detected.kind !== "lines") return undefined
  return mib === undefined ? DEFAULT_WINDOW_BYTES : Math.max(1, Math.round(mib * MIB))
}

/** What a run hands to `compact`'s report and output. @category models */
export interface Rolled {
  readonly imported: Import.StreamResult
  readonly engine: string
  readonly entries: ReadonlyArray<CompactReports.EntryFacts>
  readonly resolved: PolicyOptions.ResolvedPolicy
  readonly decision: ContextEngine.CompactionDecision
  readonly result: ContextEngine.CompactionResult
  readonly repairs: ReadonlyArray<RequestRepairs.Repair>
  readonly entriesToAppend: ReadonlyArray<Entry.Entry>
  readonly rolling: { readonly windowBytes: number; readonly rounds: number }
}

const relinked = (entries: ReadonlyArray<Entry.Entry>, parentId: string | null): Array<Entry.Entry> => {
  const out: Array<Entry.Entry> = []
  let parent = parentId
  for (const entry of entries) {
    out.push(Entry.withParent(entry, parent))
    parent = entry.id
  }
  return out
}

/**
 * The entries of `window` the engine's next view needs after a checkpoint
 * (see the module doc), in window order.
 */
const retained = (window: ReadonlyArray<Entry.Entry>): Array<Entry.Entry> => {
  const active = ActiveView.reconstruct(window)
  const keep = new Set<string>()
  for (const item of [...active.prefix, ...active.conversation]) keep.add(item.entryId)
  const checkpoint = active.checkpoint
  if (checkpoint !== undefined) {
    keep.add(checkpoint.id)
    keep.add(checkpoint.checkpoint.coveredRange.toEntryId)
  }
  const firstKept = checkpoint?.checkpoint.firstKeptEntryId ?? null
  const keptAt = firstKept === null ? -1 : window.findIndex((entry) => entry.id === firstKept)
  const from = keptAt >= 0 ? keptAt : window.findIndex((entry) => entry.id === checkpoint?.id) + 1
  window.forEach((entry, index) => {
    if (entry.kind === "memory" || (entry.kind === "message" && (index >= from || entry.message.role === "system")))
      keep.add(entry.id)
  })
  const target = (edit: Entry.EditEntry["edit"]) => (edit.op === "insert" ? edit.afterEntryId : edit.entryId)
  return window.filter((entry) => keep.has(entry.id) || (entry.kind === "edit" && keep.has(target(entry.edit))))
}

/** The whole transcript's decision from the meter's totals and the last window's decision (`Engine` reasons). */
const wholeDecision = (
  totals: WholeView.Totals,
  last: ContextEngine.CompactionDecision,
  input: ContextEngine.EngineInput,
  measurer: Measurer.Measurer
): ContextEngine.CompactionDecision => {
  if (last.reasons.includes("fixed-overhead-exceeded")) return last
  const measurement = WholeView.measurement(totals, last.measurement, {
    toolSchemaTokens: measurer.toolSchemaTokens(input.tools ?? []),
    replyPrimingTokens: MessageTokens.replyPrimingTokens
  })
  const reasons: Array<ContextEngine.CompactionReason> = []
  if (input.manual === true) reasons.push("manual")
  if (measurement.inputTokens > last.budget.inputBudgetTokens) reasons.push("threshold")
  const capBytes = ByteCap.budgetBytes(input.policy)
  if (capBytes !== undefined && WholeView.viewBytes(totals, 0) > capBytes) reasons.push("request-bytes")
  return { compact: reasons.length > 0, reasons, measurement, budget: last.budget }
}

const transcriptItem = (entry: Entry.MessageEntry): ContextView.ViewItem => ({
  entryId: entry.id,
  message: entry.message,
  source: "transcript",
  editedBy: []
})

/**
 * Runs a rolling compaction of `file` with a window of `windowBytes`; the
 * overhead error when the system messages and tools exceed the budget.
 *
 * @category constructors
 */
export const run = async (
  file: string,
  options: CompactOptions,
  windowBytes: number,
  makeEngine: (measurer: Measurer.Measurer) => ContextEngine.AsyncContextEngine,
  progress: Progress.Progress
): Promise<Rolled | { readonly overhead: unknown }> => {
  const importOptions = { format: options.format ?? "auto", strict: options.strict ?? false, metaKeys: ["model"] }
  const scan = await RollingScan.scan(file, importOptions, (done, total) => progress.update("reading", done, total))
  const resolved = await PolicyOptions.resolve(options, scan.recordedModel)
  // One measurer for the meter and the engine: a message the meter counted as it streamed past is not tokenized
  // again by the round. Its counts are needed only until the next round: its content-hash cache (up to 100,000
  // counts) is emptied after each one.
  const measurer = Measurer.forPolicy(resolved.policy)
  const engine = makeEngine(measurer)
  const meter = WholeView.make(measurer, scan.lastUserId)
  let window: Array<Entry.Entry> = []
  let made = new Set<string>()
  // an earlier round changed the window: the last window's decision no longer describes the transcript
  let pruned = false
  let rounds = 0
  let branchIndex = -1
  let roundAt = 0
  // Calls of the latest assistant message awaiting their result; the window's length when none was. A round stops
  // there (a call cut from its result would be sent as interrupted) and carries the rest over. Calls still open at
  // the next assistant message or user's words are unanswered in the whole view too (normalization's repair).
  let open = new Set<string>()
  let settled = 0
  const push = (entry: Entry.Entry) => {
    window.push(Entry.withParent(entry, window.at(-1)?.id ?? null))
  }
  const onEntry = (entry: Entry.Entry) => {
    if (scan.onBranch !== undefined && !scan.onBranch.has(entry.id)) return
    branchIndex++
    if (entry.kind === "message") {
      if (entry.message.role === "assistant" || Turns.isUserWordsItem(transcriptItem(entry))) open = new Set()
      WholeView.callIdsOf(entry, open)
      if (entry.message.role === "system") meter.prefix(transcriptItem(entry))
      else if (branchIndex >= scan.tailFrom || scan.pinned.has(entry.id)) meter.add(transcriptItem(entry))
    } else if (entry.kind === "checkpoint" && entry.id === scan.checkpointId)
      meter.checkpoint(ActiveView.checkpointItem(entry.id, entry.checkpoint))
    push(entry)
    if (open.size === 0) settled = window.length
  }
  const round = async () => {
    const pending = window.splice(settled)
    await compactWindow()
    settled = window.length
    for (const entry of pending) push(entry)
  }
  const compactWindow = async () => {
    const input = CompactFlow.inputOf([...window], resolved.policy, options)
    const decision = await engine.shouldCompact(input)
    if (!decision.compact && input.manual !== true) return measurer.clearCache()
    const result = await engine.compact(input, await engine.plan(input)).catch((error: unknown) => {
      // The turn in progress at the window's end does not fit alone (a sliding window keeps it verbatim): the
      // round keeps reading — the turn ends in a later window, or the final flow fails as the in-memory path does.
      if ((error as { readonly _tag?: unknown } | null)?._tag === "BudgetExceeded") return undefined
      throw error
    })
    measurer.clearCache()
    if (result === undefined) return
    rounds++
    pruned = true
    for (const entry of result.entriesToAppend) {
      made.add(entry.id)
      push(entry)
    }
    if (result.checkpoint === undefined) return
    const kept = retained(window)
    window = relinked(kept, null)
    made = new Set(kept.filter((entry) => made.has(entry.id)).map((entry) => entry.id))
    FullGc.collect()
  }
  await Import.streamFile(
    file,
    {
      ...importOptions,
      onProgress: async (done, total) => {
        progress.update("compacting", done, total)
        if (done - roundAt < windowBytes || done >= total) return
        roundAt = done
        await round()
      }
    },
    onEntry
  )
  const input = CompactFlow.inputOf([...window], resolved.policy, options)
  const decided = await CompactFlow.decideAndCompact(engine, input)
  if ("overhead" in decided) return decided
  // An earlier round compacted, so the run appends a checkpoint: the last window is compacted too even when it
  // fits, as the in-memory path compacts the whole transcript — a request sent unchanged repairs its view
  // (pairing, empty messages) without persisting the edits, and the appended entries would not reproduce it.
  const final =
    pruned && !decided.decision.compact && input.manual !== true
      ? { ...decided, result: await engine.compact(input, await engine.plan(input)) }
      : decided
  rounds++
  const totals = meter.finish()
  const earlier = window.filter((entry) => made.has(entry.id))
  const appended = [...earlier, ...final.result.entriesToAppend]
  const lastCheckpoint = appended.findLast((entry): entry is Entry.CheckpointEntry => entry.kind === "checkpoint")
  const entriesToAppend = relinked(
    appended.filter((entry) => entry.kind !== "checkpoint" || entry === lastCheckpoint),
    scan.stubs.at(-1)?.id ?? null
  )
  const decision = pruned ? wholeDecision(totals, final.decision, input, measurer) : final.decision
  const result = {
    ...final.result,
    before: pruned ? decision.measurement : final.result.before,
    ...(lastCheckpoint !== undefined ? { checkpoint: lastCheckpoint.checkpoint } : {})
  }
  const repairs = pruned
    ? [
        ...totals.edits.map(RequestRepairs.repairOf),
        ...(await RequestRepairs.after(engine, input, final.result.entriesToAppend))
      ]
    : await RequestRepairs.list(engine, input, final.result.entriesToAppend)
  const split =
    pruned && totals.splitPairs > 0
      ? [
          `rolling compaction: ${totals.splitPairs} tool call(s) had their pairing split between segments of the whole-transcript count; tokens before may differ from an in-memory count by their repairs (--window-mib 0 counts in memory)`
        ]
      : []
  return {
    imported: scan.imported,
    engine: engine.name,
    entries: scan.stubs.map(RollingScan.factsOfStub),
    resolved: { ...resolved, warnings: [...resolved.warnings, ...split] },
    decision,
    result,
    repairs,
    entriesToAppend,
    rolling: { windowBytes, rounds }
  }
}

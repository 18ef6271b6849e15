/**
 * The report of `context-engine compact` (`--json`, and `report` in
 * `--out`): the decision, tokens per category before and after, stages, cut
 * point, checkpoint, and what the next request holds (`handoff`).
 * `CompactRender.ts` renders it as text.
 *
 * @since 0.2.0
 */
import {
  Budget,
  type Checkpoint,
  type ContextEngine,
  type ContextView,
  type Entry,
  type Measurement,
  Measurer,
  MessageParts,
  MessageTokens,
  type ModelPolicy
} from "@context-engine/core"
import type { ImportResult } from "@context-engine/transcripts"
import type { CompactOptions } from "./commands/compact.ts"
import type * as PolicyOptions from "./PolicyOptions.ts"
import type * as RequestRepairs from "./RequestRepairs.ts"

/**
 * The machine-readable report (`--json`, and `report` in `--out`).
 *
 * @category models
 */
export interface CompactReport {
  readonly file: string
  readonly format: string
  readonly entries: number
  readonly model: {
    readonly id: string
    readonly source: "flag" | "transcript" | "default"
    readonly known: boolean
    /** The built-in catalog entry the id resolved to (longest boundary prefix), null when none. */
    readonly catalogId: string | null
  }
  readonly policy: {
    readonly contextWindowTokens: number
    readonly reserveTokens: number
    readonly keepRecentTokens: number
    /** Largest request input (`Budget.inputBudgetTokens`), reached as `inputBudgetFormula` says. */
    readonly inputBudgetTokens: number
    /** `Budget.formula`: e.g. `window 128,000 − output reserve 16,384 − tool-loop reserve 6,400 − safety margin 2,560`. */
    readonly inputBudgetFormula: string
  }
  readonly engine: string
  /** E.g. the generic fallback used for an unknown model the transcript records. */
  readonly warnings: ReadonlyArray<string>
  readonly summarizer: string
  /** `--instructions` (`/compact <instructions>`) given to the summarizer, or null. */
  readonly instructions: string | null
  /**
   * The engine's decision; `inputTokens` is the request it measured (as sent: after the pairing repair), the
   * same count as `tokens.before.input`.
   */
  readonly decision: {
    readonly compact: boolean
    readonly reasons: ReadonlyArray<string>
    readonly inputTokens: number
  }
  /** What the request needed repaired to be valid for the provider, listed even when no compaction was needed. */
  readonly repairs: ReadonlyArray<RequestRepairs.Repair>
  readonly tokens: {
    readonly before: Measurement.CategoryCounts & { readonly input: number }
    readonly after: Measurement.CategoryCounts & { readonly input: number }
  }
  readonly stages: ReadonlyArray<ContextEngine.StageReport>
  readonly cutPoint: ContextEngine.CompactionPlan["cutPoint"] | null
  readonly checkpoint: {
    readonly id: string
    readonly generation: number
    readonly summarizer: Checkpoint.SummarizerInfo
    readonly coveredRange: Checkpoint.Checkpoint["coveredRange"]
    readonly firstKeptEntryId: string | null
    readonly tokensBefore: number
    readonly tokensAfter: number
    readonly validation: Checkpoint.ValidationReport | null
  } | null
  readonly failures: ReadonlyArray<{ readonly tag: string; readonly message: string }>
  readonly fits: boolean
  readonly messages: number
  /**
   * What the next request holds, as `render` explains it: the kept tail (the
   * newest messages, sent as recorded except where a stage in `changedBy`
   * shortened them), how many transcript messages are not sent, and the
   * checkpoint standing in for them (`written`: made by this run, else the
   * last one recorded in the transcript). Tokens include message framing.
   */
  readonly handoff: {
    readonly keptTail: {
      readonly messages: number
      readonly tokens: number
      readonly firstEntryId: string | null
      readonly lastEntryId: string | null
      readonly changedMessages: number
      readonly changedBy: ReadonlyArray<string>
      /** Of `messages`, the ones the request adds that are not in the transcript (results for interrupted tool calls; `normalize`). */
      readonly synthesizedMessages: number
      /** Messages after the cut that are not sent because a provider would reject them (empty or reasoning-only; `normalize`). */
      readonly leftOutMessages: number
    }
    /**
     * The user messages from the checkpoint's summarized range kept verbatim
     * between the checkpoint and the kept tail (`Checkpoint.keptUserEntryIds`:
     * Codex's rule, newest first within 20,000 tokens); null when none.
     * Not counted in `keptTail`.
     */
    readonly keptUsers: {
      readonly messages: number
      readonly tokens: number
      readonly firstEntryId: string
      readonly lastEntryId: string
    } | null
    /**
     * The transcript's system messages the next request sends, as recorded;
     * null when none. Not counted in `keptTail`.
     */
    readonly systemPrompt: { readonly messages: number; readonly tokens: number } | null
    /** Every message in the transcript, system messages included (the count `inspect` prints). */
    readonly transcriptMessages: number
    /** Of those, the messages the next request does not contain. */
    readonly notSentMessages: number
    readonly checkpoint: {
      readonly written: boolean
      readonly generation: number
      readonly tokens: number
      /** Transcript messages not sent that this checkpoint (with the ones it replaced) summarizes: `summarizedMessages + earlierMessages`. */
      readonly standsInForMessages: number
      /** Of `standsInForMessages`, the ones in this checkpoint's own range (`coveredFromEntryId` … the cut), counted in the transcript. */
      readonly summarizedMessages: number
      /** Of `standsInForMessages`, the ones before `coveredFromEntryId`, which earlier checkpoints summarized. */
      readonly earlierMessages: number
      /** Tokens of the checkpoint's text without its message framing: its row in the category table (`tokens` includes the framing). */
      readonly textTokens: number
      /** The range this checkpoint summarized itself; earlier ones came from its predecessor. */
      readonly coveredFromEntryId: string | null
      readonly coveredToEntryId: string
    } | null
    /** Memory records in the request (written by the memory flush from summarized messages). */
    readonly memory: { readonly records: number; readonly tokens: number } | null
    /** Messages after the cut, neither empty nor reasoning-only, that are not sent and no checkpoint stands in for (dropped by a sliding window, also between a pinned first ask and the tail). */
    readonly dropped: {
      readonly messages: number
      readonly firstEntryId: string
      readonly lastEntryId: string
    } | null
  }
  /**
   * Set when the file was compacted rolling (a line-format file over the
   * `--window-mib` threshold, `RollingCompact.ts`): the window in bytes of
   * transcript lines and how many compaction rounds ran (the last one
   * included); `tokens.before` and `decision` still describe the whole
   * transcript. Null for the in-memory path.
   */
  readonly rolling: { readonly windowBytes: number; readonly rounds: number } | null
  /** Lines the import skipped or kept in a degraded form (the first 50 issues listed). */
  readonly import: {
    readonly skipped: number
    readonly keptAsEvent: number
    readonly repaired: number
    readonly issues: ReadonlyArray<ImportResult.ImportIssue>
  }
}

/**
 * What the report reads of each transcript entry (every branch, in file
 * order): its id and kind, whether a message is a system message or one a
 * provider would reject (empty or reasoning-only), and a checkpoint's
 * content. A rolling compaction keeps these instead of the entries.
 *
 * @category models
 */
export interface EntryFacts {
  readonly id: string
  readonly kind: Entry.Entry["kind"]
  readonly system: boolean
  readonly unsendable: boolean
  readonly checkpoint?: Checkpoint.Checkpoint | undefined
}

/**
 * The facts of one entry.
 *
 * @category constructors
 */
export const factsOf = (entry: Entry.Entry): EntryFacts =>
  entry.kind === "message"
    ? {
        id: entry.id,
        kind: entry.kind,
        system: entry.message.role === "system",
        unsendable: MessageParts.isEmptyMessage(entry.message) || MessageParts.isReasoningOnly(entry.message)
      }
    : {
        id: entry.id,
        kind: entry.kind,
        system: false,
        unsendable: false,
        ...(entry.kind === "checkpoint" ? { checkpoint: entry.checkpoint } : {})
      }

const withInput = (measurement: Measurement.Measurement) => ({
  ...measurement.byCategory,
  input: measurement.inputTokens
})

/**
 * What the next request holds: the kept tail, how many transcript messages
 * are not sent, the checkpoint standing in for the older ones (the one
 * written now, else the last recorded one still in the view) and the
 * messages dropped with no summary (sliding window). Tokens are counted
 * with the policy's tokenizer, message framing included.
 */
export const handoffOf = (
  entries: ReadonlyArray<EntryFacts>,
  result: ContextEngine.CompactionResult,
  policy: ModelPolicy.ModelPolicy
): CompactReport["handoff"] => {
  const measurer = Measurer.forPolicy(policy)
  const items = result.view.items
  const isConversation = (item: ContextView.ViewItem) =>
    item.message.role !== "system" && item.source !== "checkpoint" && item.source !== "memory"
  const kept = items.filter(isConversation)
  const keptIds = new Set(kept.map((item) => item.entryId))
  const fromTranscript = kept.filter((item) => item.source === "transcript")
  const indexOf = new Map(entries.map((entry, index) => [entry.id, index]))
  const notSent = entries.flatMap((entry, index) =>
    entry.kind === "message" && !entry.system && !keptIds.has(entry.id) ? [{ entry, index }] : []
  )
  const systemSent = items.filter((item) => item.message.role === "system" && item.source === "transcript")
  const systemSentIds = new Set(systemSent.map((item) => item.entryId))
  const systemEntries = entries.filter((entry) => entry.kind === "message" && entry.system)
  const checkpointItem = items.find((item) => item.source === "checkpoint")
  const memory = items.filter((item) => item.source === "memory")
  const checkpoint = checkpointItem
    ? (result.checkpoint ?? entries.findLast((entry) => entry.checkpoint !== undefined)?.checkpoint)
    : undefined
  const firstKeptIndex = checkpoint?.firstKeptEntryId
    ? (indexOf.get(checkpoint.firstKeptEntryId) ?? entries.length)
    : checkpoint
      ? entries.length
      : 0
  const covered = notSent.filter((item) => item.index < firstKeptIndex)
  const ownFromIndex = checkpoint?.coveredRange.fromEntryId
    ? (indexOf.get(checkpoint.coveredRange.fromEntryId) ?? 0)
    : 0
  const keptUserIds = new Set(checkpointItem ? (checkpoint?.keptUserEntryIds ?? []) : [])
  const keptUsers = kept.filter((item) => keptUserIds.has(item.entryId))
  const tail = kept.filter((item) => !keptUserIds.has(item.entryId))
  const tailFromTranscript = tail.filter((item) => item.source === "transcript")
  const changed = tail.filter((item) => item.editedBy.length > 0)
  // Kept messages as one request, less the reply priming counted once per request: the parts add up to the request.
  const tokensOf = (messages: ReadonlyArray<ContextView.ViewItem>) =>
    messages.length === 0
      ? 0
      : measurer.measure({ items: messages, tools: [] }).inputTokens - MessageTokens.replyPrimingTokens
  // After the cut, a message is left out by normalization only when a provider would reject it (empty or
  // reasoning-only); any other one was dropped by the sliding window — also between a pinned first ask and the tail.
  const unsendable = (item: { readonly entry: EntryFacts }) => item.entry.unsendable
  const afterCut = notSent.filter((item) => item.index >= firstKeptIndex)
  const dropped = afterCut.filter((item) => !unsendable(item))
  return {
    keptTail: {
      messages: tail.length,
      tokens: tokensOf(tail),
      firstEntryId: tailFromTranscript[0]?.entryId ?? null,
      lastEntryId: tailFromTranscript.at(-1)?.entryId ?? null,
      changedMessages: changed.length,
      synthesizedMessages: tail.filter((item) => item.source === "synthetic").length,
      changedBy: [...new Set(changed.flatMap((item) => item.editedBy))],
      // in a split turn the tail starts with the turn's user message, before the cut: the messages between are the checkpoint's (covered)
      leftOutMessages: afterCut.filter(unsendable).length
    },
    keptUsers:
      keptUsers.length > 0
        ? {
            messages: keptUsers.length,
            tokens: tokensOf(keptUsers),
            firstEntryId: keptUsers[0]!.entryId,
            lastEntryId: keptUsers.at(-1)!.entryId
          }
        : null,
    systemPrompt: systemSent.length > 0 ? { messages: systemSent.length, tokens: tokensOf(systemSent) } : null,
    transcriptMessages: notSent.length + fromTranscript.length + systemEntries.length,
    notSentMessages: notSent.length + systemEntries.filter((entry) => !systemSentIds.has(entry.id)).length,
    checkpoint:
      checkpoint && checkpointItem
        ? {
            written: result.checkpoint !== undefined,
            generation: checkpoint.generation,
            tokens: measurer.messageTokens(checkpointItem.message, "checkpoint"),
            standsInForMessages: covered.length,
            summarizedMessages: covered.filter((item) => item.index >= ownFromIndex).length,
            earlierMessages: covered.filter((item) => item.index < ownFromIndex).length,
            textTokens: measurer.measure({ items: [checkpointItem], tools: [] }).byCategory.checkpoint,
            coveredFromEntryId: checkpoint.coveredRange.fromEntryId,
            coveredToEntryId: checkpoint.coveredRange.toEntryId
          }
        : null,
    memory:
      memory.length > 0
        ? {
            records: memory.length,
            tokens: memory.reduce((sum, item) => sum + measurer.messageTokens(item.message, "memory"), 0)
          }
        : null,
    dropped:
      dropped.length > 0
        ? { messages: dropped.length, firstEntryId: dropped[0]!.entry.id, lastEntryId: dropped.at(-1)!.entry.id }
        : null
  }
}

/**
 * Builds the report from one compaction's inputs and result.
 *
 * @category constructors
 */
export const build = (input: {
  readonly file: string
  readonly options: CompactOptions
  readonly imported: Omit<ImportResult.ImportResult, "transcript">
  /** Every entry of the transcript ({@link factsOf}). */
  readonly entries: ReadonlyArray<EntryFacts>
  /** Set when the compaction was rolling (`RollingCompact.ts`). */
  readonly rolling?: CompactReport["rolling"] | undefined
  readonly resolved: PolicyOptions.ResolvedPolicy
  readonly engine: string
  readonly decision: ContextEngine.CompactionDecision
  readonly result: ContextEngine.CompactionResult
  readonly repairs: ReadonlyArray<RequestRepairs.Repair>
}): CompactReport => {
  const { file, options, imported, resolved, decision, result, entries } = input
  const { policy } = resolved
  const checkpoint = result.checkpoint
  return {
    file,
    format: imported.format,
    entries: entries.length,
    model: { id: resolved.modelId, source: resolved.source, known: resolved.known, catalogId: resolved.catalogId },
    policy: {
      contextWindowTokens: policy.contextWindowTokens,
      reserveTokens: policy.reserveTokens,
      keepRecentTokens: policy.keepRecentTokens,
      inputBudgetTokens: decision.budget.inputBudgetTokens,
      inputBudgetFormula: Budget.formula(decision.budget)
    },
    engine: input.engine,
    warnings: resolved.warnings,
    summarizer:
      options.engine === "sliding-window"
        ? "none (sliding window drops whole turns)"
        : typeof options.summarizer === "object"
          ? options.summarizer.name
          : (options.summarizer ?? "extractive"),
    instructions: options.instructions?.trim() || null,
    decision: { compact: decision.compact, reasons: decision.reasons, inputTokens: decision.measurement.inputTokens },
    repairs: input.repairs,
    tokens: { before: withInput(result.before), after: withInput(result.after) },
    stages: result.stages,
    cutPoint: checkpoint
      ? {
          firstKeptEntryId: checkpoint.firstKeptEntryId,
          coveredFromEntryId: checkpoint.coveredRange.fromEntryId,
          coveredToEntryId: checkpoint.coveredRange.toEntryId,
          splitTurn: result.stages.some((stage) => stage.note?.includes("split turn") === true)
        }
      : null,
    checkpoint: checkpoint
      ? {
          id: checkpoint.id,
          generation: checkpoint.generation,
          summarizer: checkpoint.summarizer,
          coveredRange: checkpoint.coveredRange,
          firstKeptEntryId: checkpoint.firstKeptEntryId,
          tokensBefore: checkpoint.tokensBefore,
          tokensAfter: checkpoint.tokensAfter,
          validation: checkpoint.validation ?? null
        }
      : null,
    failures: (result.failures ?? []).map((failure) => ({ tag: failure._tag, message: failure.message })),
    fits: result.fits,
    messages: result.view.items.length,
    handoff: handoffOf(entries, result, policy),
    rolling: input.rolling ?? null,
    import: {
      skipped: imported.issues.filter((issue) => issue.action === "skipped").length,
      keptAsEvent: imported.issues.filter((issue) => issue.action === "kept-as-event").length,
      repaired: imported.issues.filter((issue) => issue.action === "repaired").length,
      issues: imported.issues.slice(0, 50)
    }
  }
}

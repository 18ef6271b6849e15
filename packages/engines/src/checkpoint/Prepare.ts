/**
 * Phase 1 of the checkpoint tier, "prepare" (Pi's `findCutPoint` +
 * `prepareCompaction`): from the view the deterministic stages left, where
 * to cut, what the checkpoint covers (original messages, before any stage
 * edit), the split turn's prefix, the covered user messages kept verbatim
 * (`KeptUsers`, the pinned latest ask among them), the kept tail and the
 * summary cap. Pure: plain records in, a plain record out.
 *
 * @since 0.2.0
 */
import {
  ActiveView,
  type Budget,
  type Checkpoint,
  type ContextEngine,
  type ContextView,
  Entry,
  HarnessOutput,
  type Measurer,
  type ModelPolicy,
  SubAgentWork
} from "@context-engine/core"
import * as CutPoint from "../CutPoint.ts"
import type { CoveredItem } from "../Summarizer.ts"
import { DEFAULT_CHECKPOINT_TOKENS } from "./Fit.ts"
import { COVERED_USER_MESSAGES_MAX_TOKENS, continuation, keptUserIndices } from "./KeptUsers.ts"

/**
 * Share of `reserveTokens` a summary may use: Pi's `generateSummary` caps the
 * summary at `Math.floor(0.8 * reserveTokens)`.
 *
 * @category constants
 */
export const SUMMARY_SHARE_OF_RESERVE = 0.8

/**
 * Largest share of the conversation budget (`availableTokens`) a summary or
 * the kept tail may use — own choice, so small windows still leave room for
 * the other (Pi has no such cap; its windows are ≥ 128K).
 *
 * @category constants
 */
export const MAX_SHARE_OF_AVAILABLE = { summary: 0.25, keepRecent: 0.5 } as const

/** Smallest summary cap in tokens (own choice: room for a goal and a next step). @category constants */
export const MIN_SUMMARY_TOKENS = 64

/**
 * The summary cap in tokens before the request's room is known:
 * `0.8 × reserveTokens` (Pi), at most a quarter of the conversation budget
 * and at most `maxCheckpointTokens` (default 2,000), at least 64.
 *
 * @category constructors
 */
export const summaryCapTokens = (
  policy: ModelPolicy.ModelPolicy,
  budget: Budget.Budget,
  maxCheckpointTokens: number = DEFAULT_CHECKPOINT_TOKENS
): number =>
  Math.max(
    MIN_SUMMARY_TOKENS,
    Math.min(
      Math.floor(policy.reserveTokens * SUMMARY_SHARE_OF_RESERVE),
      Math.floor(budget.availableTokens * MAX_SHARE_OF_AVAILABLE.summary),
      maxCheckpointTokens
    )
  )

/** The conversation of `view`: its items less the stable prefix (system, memory) and the checkpoint. */
export const conversationOf = (
  view: ContextView.ContextView,
  prefix: ReadonlyArray<ContextView.ViewItem>
): Array<ContextView.ViewItem> => {
  const skip = new Set(prefix.map((item) => item.entryId))
  return view.items.filter((item) => !skip.has(item.entryId) && item.source !== "checkpoint")
}

/** Inputs of {@link cutOf}. Token counts in tokens of the measurer's tokenizer. @category models */
export interface CutInput {
  readonly conversation: ReadonlyArray<ContextView.ViewItem>
  readonly measurer: Measurer.Measurer
  readonly budget: Budget.Budget
  readonly policy: ModelPolicy.ModelPolicy
  /**
   * Largest kept tail (the room under the landing beside the summary: the low-water mark of a threshold
   * compaction, the target of a manual or overflow one); the tail is `policy.keepRecentTokens`, lowered to
   * this when it is smaller.
   */
  readonly landAtTokens?: number | undefined
  readonly minRecentTurns?: number | undefined
}

/**
 * The cut point of a conversation and each item's tokens. The kept tail is
 * `keepRecentTokens`, at most `landAtTokens` and half the conversation
 * budget ({@link MAX_SHARE_OF_AVAILABLE}), at least 1.
 *
 * Why not more when there is room: a checkpoint is a prompt-cache rewrite
 * from the checkpoint on (Anthropic and OpenAI prompt caching match the
 * request by prefix), and it costs one rewrite whatever tail it keeps; the
 * landing (prefix + summary + tail) decides how much the session can grow
 * before the next compaction and its next rewrite. Pi keeps
 * `keepRecentTokens` (`findCutPoint`) beside its summary, Codex at most
 * 20,000 tokens of recent user messages; a larger tail buys verbatim text
 * with extra rewrites (issue #13 req 4: no more rewrites than pi).
 *
 * @category constructors
 */
export const cutOf = (input: CutInput): { readonly cut: CutPoint.CutPoint; readonly tokens: Array<number> } => {
  const tokens = input.conversation.map((item) => input.measurer.messageTokens(item.message, item.source))
  const keepRecentTokens = Math.max(
    1,
    Math.min(
      input.policy.keepRecentTokens,
      input.landAtTokens ?? Number.POSITIVE_INFINITY,
      Math.floor(input.budget.availableTokens * MAX_SHARE_OF_AVAILABLE.keepRecent)
    )
  )
  const cut = CutPoint.find({
    items: input.conversation,
    tokens,
    keepRecentTokens,
    ...(input.minRecentTurns !== undefined ? { minRecentTurns: input.minRecentTurns } : {})
  })
  return { cut, tokens }
}

/**
 * {@link cutOf}, with the latest user message counted in the kept tail's
 * room when the cut keeps it verbatim before the tail (pinned: DESIGN.md
 * "the latest user message survives verbatim"): the request then holds the
 * pinned ask and the tail, so a threshold compaction's room
 * (`landAtTokens`, what lands under the low-water mark beside the summary)
 * must hold both. When the first cut pins the ask, the cut is taken again
 * with the room less the ask's tokens (at least 1, which keeps the turn in
 * progress or its last unit: `CutPoint.find`); the ask stays pinned, since a
 * later cut only covers more. Without a room the tail is
 * `keepRecentTokens` as before.
 *
 * @category constructors
 */
export const cutLeavingRoom = (input: CutInput): ReturnType<typeof cutOf> => {
  const first = cutOf(input)
  const pinned = first.cut.pinnedUserIndex
  if (input.landAtTokens === undefined || pinned < 0) return first
  const landAtTokens = Math.max(1, input.landAtTokens - (first.tokens[pinned] ?? 0))
  return landAtTokens === input.landAtTokens ? first : cutOf({ ...input, landAtTokens })
}

/**
 * Id of the last of `items` that is a transcript entry. View items can be
 * synthesized (an "interrupted" result for a call without one, id
 * `ToolPairing.interruptedResultId`); a checkpoint that referenced one would
 * point at nothing the store or a rebuilt view knows.
 *
 * @category constructors
 */
export const lastRealEntryId = (
  entries: ReadonlyArray<{ readonly id: string }>,
  items: ReadonlyArray<{ readonly entryId: string }>
): string => {
  const ids = new Set<string>()
  for (const entry of entries) ids.add(entry.id)
  for (let index = items.length - 1; index >= 0; index--)
    if (ids.has(items[index]!.entryId)) return items[index]!.entryId
  return items[items.length - 1]!.entryId
}

/** Inputs of {@link plannedCut}. @category models */
export interface PlanInput extends Omit<CutInput, "conversation" | "landAtTokens"> {
  readonly entries: ReadonlyArray<{ readonly id: string }>
  /** The request's view, before any stage. */
  readonly view: ContextView.ContextView
  readonly prefix: ReadonlyArray<ContextView.ViewItem>
}

/**
 * The cut point a plan announces (`CompactionPlan.cutPoint`): computed on
 * the request's view with the kept tail at `keepRecentTokens`; `undefined`
 * when nothing would be covered. The compaction itself cuts again, on the
 * view the deterministic stages leave.
 *
 * @category constructors
 */
export const plannedCut = (input: PlanInput): ContextEngine.CompactionPlan["cutPoint"] => {
  const conversation = conversationOf(input.view, input.prefix)
  const { cut } = cutOf({ ...input, conversation })
  const covered = conversation.slice(0, cut.firstKeptIndex)
  if (covered.length === 0) return undefined
  return {
    firstKeptEntryId: conversation[cut.firstKeptIndex]?.entryId ?? null,
    coveredFromEntryId: covered[0]?.entryId ?? null,
    coveredToEntryId: lastRealEntryId(input.entries, covered),
    splitTurn: cut.splitTurn
  }
}

/** Inputs of {@link prepare}. Token counts in input tokens of the policy's tokenizer. @category models */
export interface PrepareInput {
  /**
   * The transcript entries of the request (ids of real entries, originals of covered messages, the runs of
   * sub-agents — a side chain, off the active branch: `SubAgentWork.byMessage`).
   */
  readonly entries: ReadonlyArray<Entry.Entry>
  /** The request's active view (its prefix and branch). */
  readonly active: ActiveView.ActiveView
  /** The view after the deterministic stages. */
  readonly view: ContextView.ContextView
  /**
   * The view's measured input tokens, when the measurement is anchored on
   * the provider's usage: the low-water mark is on that scale, the cut walks
   * per-message estimates, so the room for the kept tail is converted.
   */
  readonly viewTokens?: number | undefined
  readonly measurer: Measurer.Measurer
  readonly budget: Budget.Budget
  readonly policy: ModelPolicy.ModelPolicy
  readonly targetTokens: number
  readonly lowWaterTokens: number
  readonly minRecentTurns?: number | undefined
  readonly maxCheckpointTokens?: number | undefined
  /** `ContextEngine.EngineInput.nextGeneration`: the store's next generation when `entries` are one branch of several. */
  readonly nextGeneration?: number | undefined
}

/** What a checkpoint will cover and keep: the record between "prepare" and "summarize". @category models */
export interface Preparation {
  readonly _tag: "Ready"
  readonly conversation: ReadonlyArray<ContextView.ViewItem>
  readonly cut: CutPoint.CutPoint
  /** Covered history (original messages), up to the split turn's start. */
  readonly covered: ReadonlyArray<CoveredItem>
  /** The covered start of a split turn (original messages); empty when the turn is not split. */
  readonly turnPrefix: ReadonlyArray<CoveredItem>
  /** Every covered view item's entry id, in order (the split-turn prefix included). */
  readonly coveredEntryIds: ReadonlyArray<string>
  /** The covered range's last transcript entry (never a synthesized item). */
  readonly lastCoveredEntryId: string
  /**
   * Where the covered range starts when it continues a previous checkpoint
   * (`KeptUsers.continuation`); null for the first checkpoint (the transcript's start).
   */
  readonly coveredFromEntryId: string | null
  readonly firstKept: ContextView.ViewItem | undefined
  /** Every user message kept verbatim before `firstKept` (`KeptUsers.continuation`). */
  readonly keptUserEntryIds: ReadonlyArray<string>
  /** The latest user message, kept verbatim though it lies in the covered range. */
  readonly pinned: ContextView.ViewItem | undefined
  /** Covered user messages kept verbatim after the checkpoint, in order (`KeptUsers.keptUserIndices`; the pinned ask among them). */
  readonly keptUsers: ReadonlyArray<ContextView.ViewItem>
  readonly tail: ReadonlyArray<ContextView.ViewItem>
  readonly previous: Checkpoint.Checkpoint | undefined
  /**
   * The new checkpoint's generation: the store's next one (the highest installed on any branch + 1:
   * `ActiveView.nextGeneration`, or `PrepareInput.nextGeneration` when higher), which the store requires;
   * after a rewritten history or a rollback the active checkpoint's generation + 1 names one already installed.
   */
  readonly generation: number
  /**
   * The new checkpoint's id, `checkpoint:<generation>:<lastCoveredEntryId>`, suffixed when an input entry
   * already has it (`Entry.freshId`).
   */
  readonly checkpointId: string
  /** Tokens the checkpoint replaces: the covered items (less the pinned ask) plus the previous checkpoint. */
  readonly replacedTokens: number
  /** {@link summaryCapTokens}. */
  readonly summaryCapTokens: number
}

/** Nothing older than the kept recent window: no checkpoint can be written. @category models */
export interface NothingToSummarize {
  readonly _tag: "NothingToSummarize"
  readonly note: string
}

/** Ids of the first message after each `Entry.SESSION_START_EVENT` of `branch` ({@link CoveredItem.opensSession}). */
const sessionOpeners = (branch: ReadonlyArray<Entry.Entry>): Set<string> => {
  const out = new Set<string>()
  let started = false
  for (const entry of branch) {
    if (entry.kind === "event" && entry.event.name === Entry.SESSION_START_EVENT) started = true
    else if (started && entry.kind === "message") {
      out.add(entry.id)
      started = false
    }
  }
  return out
}

/**
 * Room beside the summary cap under where a compaction lands (a threshold compaction's low-water mark, a manual or
 * overflow one's target), on the cut's scale: a `/compact` at 16K kept a whole tail and as much again of user
 * messages, and its summaries failed `next-request-fits`.
 */
const landingRoomTokens = (input: PrepareInput, capTokens: number, estimateShare: number): number => {
  const landTokens = Math.min(input.lowWaterTokens, input.targetTokens) - input.budget.fixedOverheadTokens
  return Math.max(1, Math.floor((landTokens - capTokens) * estimateShare))
}

/**
 * The "prepare" phase. The kept tail is `keepRecentTokens` ({@link cutOf}),
 * lowered so that it lands at or under the landing beside a summary of at
 * most the cap and the pinned latest ask ({@link cutLeavingRoom}): the
 * low-water mark of a threshold compaction, the target of a manual or
 * overflow one. The covered user messages kept verbatim get what room is
 * left.
 *
 * @category constructors
 */
export const prepare = (input: PrepareInput): Preparation | NothingToSummarize => {
  const { budget, measurer } = input
  const cap = summaryCapTokens(input.policy, budget, input.maxCheckpointTokens)
  const conversation = conversationOf(input.view, input.active.prefix)
  // One scale (C13): an anchored measurement above the estimates shrinks the tail's room by the same share.
  const estimateShare =
    input.viewTokens === undefined
      ? 1
      : Math.min(1, measurer.measure(input.view, { budget }).inputTokens / Math.max(1, input.viewTokens))
  const landAtTokens = landingRoomTokens(input, cap, estimateShare)
  const { cut, tokens } = cutLeavingRoom({
    conversation,
    measurer,
    budget,
    policy: input.policy,
    minRecentTurns: input.minRecentTurns,
    landAtTokens
  })
  if (cut.firstKeptIndex === 0)
    return { _tag: "NothingToSummarize", note: "nothing older than the kept recent window to summarize" }
  const historyEnd = cut.splitTurn ? cut.turnStartIndex : cut.firstKeptIndex
  const originals = ActiveView.originalMessages(input.active.branch)
  const outputs = HarnessOutput.byMessage(input.active.branch)
  const openers = sessionOpeners(input.active.branch)
  const subAgents = SubAgentWork.byMessage(input.entries)
  const original = (item: ContextView.ViewItem): CoveredItem => {
    const harnessOutput = outputs.get(item.entryId)
    const subAgentMessages = subAgents.get(item.entryId)
    return {
      entryId: item.entryId,
      message: originals.get(item.entryId) ?? item.message,
      ...(harnessOutput === undefined ? {} : { harnessOutput }),
      ...(subAgentMessages === undefined ? {} : { subAgentMessages }),
      ...(openers.has(item.entryId) ? { opensSession: true as const } : {})
    }
  }
  const coveredItems = conversation.slice(0, cut.firstKeptIndex)
  const previousItem = input.view.items.find((item) => item.source === "checkpoint")
  let coveredTokens = 0
  for (const count of tokens.slice(0, cut.firstKeptIndex)) coveredTokens += count
  const previous = input.active.checkpoint?.checkpoint
  const generation = Math.max(input.nextGeneration ?? 0, input.active.nextGeneration)
  let tailTokens = 0
  for (const count of tokens.slice(cut.firstKeptIndex)) tailTokens += count
  const pinnedTokens = cut.pinnedUserIndex >= 0 ? (tokens[cut.pinnedUserIndex] ?? 0) : 0
  // Codex's 20,000 tokens of user messages, at most keepRecentTokens (the kept users are verbatim text like the
  // tail) and, in a threshold compaction, the room the tail and the pinned ask leave under the low-water mark.
  const userBudgetTokens = Math.max(
    0,
    Math.min(COVERED_USER_MESSAGES_MAX_TOKENS, input.policy.keepRecentTokens, landAtTokens - tailTokens - pinnedTokens)
  )
  const keptUsers = keptUserIndices(conversation, tokens, cut, userBudgetTokens)
  let keptUserTokens = 0
  for (const index of keptUsers) keptUserTokens += tokens[index] ?? 0
  const tail = conversation.slice(cut.firstKeptIndex)
  const kept = keptUsers.map((index) => conversation[index]!)
  const { coveredFromEntryId, lastCoveredEntryId, firstKept, keptUserEntryIds } = continuation({
    entries: input.entries,
    covered: coveredItems,
    lastCoveredEntryId: lastRealEntryId(input.entries, coveredItems),
    keptUsers: kept,
    tail,
    previous
  })
  return {
    _tag: "Ready",
    conversation,
    cut,
    covered: conversation.slice(0, historyEnd).map(original),
    turnPrefix: cut.splitTurn ? conversation.slice(cut.turnStartIndex, cut.firstKeptIndex).map(original) : [],
    coveredEntryIds: coveredItems.map((item) => item.entryId),
    lastCoveredEntryId,
    coveredFromEntryId,
    firstKept,
    keptUserEntryIds,
    pinned: cut.pinnedUserIndex >= 0 ? conversation[cut.pinnedUserIndex] : undefined,
    keptUsers: kept,
    tail,
    previous,
    generation,
    checkpointId: Entry.freshId(`checkpoint:${generation}:${lastCoveredEntryId}`, input.entries),
    replacedTokens:
      coveredTokens - keptUserTokens + (previousItem ? measurer.messageTokens(previousItem.message, "checkpoint") : 0),
    summaryCapTokens: cap
  }
}

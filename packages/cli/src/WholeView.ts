/**
 * The whole transcript's request, measured as it streams past: what a rolling
 * compaction (`RollingCompact.ts`) reports as `tokens.before` and the
 * decision, although it never holds the transcript (issue #13 req 6).
 *
 * The items of the transcript's view (`ActiveView.reconstruct` of every
 * entry: system messages, the active checkpoint, the pinned user messages and
 * the tail) come in view order. Conversation items are normalized as the
 * engine normalizes the whole view (`Normalization.normalize`: empty and
 * reasoning-only messages dropped, tool pairing repaired) one segment at a
 * time, and each normalized item is counted once with the measurer's own
 * per-message counter (`Measurer.countMessage`) — reasoning `prior` before the
 * whole view's last user message (`ReasoningTokens.currentLoopStart`),
 * `current` from it on — so the sums are the whole view's measurement
 * (`Measurement.fromCounts`, categories add up exactly).
 *
 * A segment ends before the user's next words (`Turns.isUserWordsItem`) or,
 * inside a turn, before an assistant message when every tool call of the
 * segment has its result; it is normalized with the items up to the next
 * assistant message after it as context, so neither the segment's last user
 * message nor its last assistant message is the view's latest (which
 * normalization protects) unless it is the whole view's. A result that
 * answers a call of an earlier segment beyond that context is repaired per
 * segment (an `interrupted` result, an orphan dropped): such calls are
 * counted (`splitPairs`) and the report warns that its count may differ by
 * their repairs. None in the shared transcripts or the 101 MiB bench session;
 * `RollingCompact.test.ts` compares the sums with the in-memory path. Reused
 * tool-call ids are renamed as items arrive (`ToolPairing.reusedCallIdRenamer`),
 * so a reuse across segments gets the whole view's `~2` (exact unless a later
 * call's literal id is `X~2`) and splits no pair.
 *
 * @since 0.6.0
 */
import {
  type ContextView,
  Measurement,
  type Measurer,
  MessageParts,
  type ReasoningTokens,
  RequestBytes,
  ToolPairing,
  Turns,
  type ViewEdit
} from "@context-engine/core"
import { Normalization } from "@context-engine/strategies"

type Item = ContextView.ViewItem

/** Conversation items a segment holds before it may end at the next boundary. */
const SEGMENT_ITEMS = 256

/**
 * What the meter found: per-category counts of the view's messages (no tool
 * schemas, reply priming or reserved output), the view's item count and
 * message bytes (`RequestBytes.messageBytes`), and the normalization's edits
 * on the conversation (per segment, in segment order).
 *
 * @category models
 */
export interface Totals {
  readonly byCategory: Measurement.CategoryCounts
  readonly items: number
  readonly messageBytes: number
  readonly edits: ReadonlyArray<ViewEdit.ViewEdit>
  /**
   * Tool calls whose pairing a segment boundary split: a call id reused from
   * an earlier segment, or a result in a segment for a call of an earlier one.
   * 0 means the sums are the whole view's exactly; otherwise each may differ
   * by that call's repair (see the module doc).
   */
  readonly splitPairs: number
}

/**
 * The meter. `lastUserId`: the entry id of the view's last `user` message
 * that normalization keeps (where the current tool loop starts), or
 * undefined when the view has none.
 *
 * @category models
 */
export interface WholeView {
  readonly prefix: (item: Item) => void
  readonly checkpoint: (item: Item) => void
  readonly add: (item: Item) => void
  readonly finish: () => Totals
}

/**
 * Tracks the tool calls awaiting their result: adds the call ids of `item`'s
 * tool calls to `open` and removes those its tool results answer.
 *
 * @category utils
 */
export const callIdsOf = (item: Pick<Item, "message">, open: Set<string>): void => {
  for (const part of MessageParts.contentParts(item.message)) {
    if (part.type === "tool-call") open.add(part.toolCallId)
    else if (part.type === "tool-result") open.delete(part.toolCallId)
  }
}

/**
 * Per-segment edits in the order normalizing the whole view lists them:
 * the drops of empty and reasoning-only messages, then the pairing repairs —
 * renamed call ids, removed results, inserted results (`ToolPairing.repairEdits`).
 * Removals of orphan and of misplaced results keep segment order.
 */
const inWholeOrder = (edits: ReadonlyArray<ViewEdit.ViewEdit>): Array<ViewEdit.ViewEdit> => {
  const rank = (edit: ViewEdit.ViewEdit): number =>
    edit.strategy === Normalization.NORMALIZE_STAGE
      ? 0
      : edit.op === "insert"
        ? 3
        : edit.op === "replace" && edit.reason === ToolPairing.RENAMED_REASON
          ? 1
          : 2
  return edits
    .map((edit, index) => ({ edit, index }))
    .sort((a, b) => rank(a.edit) - rank(b.edit) || a.index - b.index)
    .map(({ edit }) => edit)
}

/**
 * Counts the tool calls of `segment` whose pairing crosses a segment
 * boundary: a call id an earlier segment already used, or a result for a
 * call of an earlier segment (`earlier`: their call ids, extended here with
 * this segment's).
 */
const pairsAcross = (segment: ReadonlyArray<Item>, earlier: Set<string>): number => {
  const own = new Set<string>()
  let split = 0
  for (const item of segment)
    for (const part of MessageParts.contentParts(item.message)) {
      if (part.type === "tool-call") {
        if (earlier.has(part.toolCallId)) split++
        own.add(part.toolCallId)
      } else if (part.type === "tool-result" && !own.has(part.toolCallId) && earlier.has(part.toolCallId)) split++
    }
  for (const id of own) earlier.add(id)
  return split
}

/**
 * Creates a meter counting with `measurer` (the engine's, `Measurer.forPolicy`).
 *
 * @category constructors
 */
export const make = (measurer: Measurer.Measurer, lastUserId: string | undefined): WholeView => {
  const byCategory = Measurement.zeroCounts()
  const edits: Array<ViewEdit.ViewEdit> = []
  let items = 0
  let messageBytes = 0
  let current = lastUserId === undefined
  let segment: Array<Item> = []
  let context: Array<Item> | undefined
  let open = new Set<string>()
  // call ids of the segments already counted, and how many pairs a segment boundary split
  const earlierCalls = new Set<string>()
  let splitPairs = 0
  const rename = ToolPairing.reusedCallIdRenamer<Item>(`${Normalization.NORMALIZE_STAGE}/toolPairing`)

  const count = (item: Item, position: ReasoningTokens.Position): void => {
    const counts = measurer.countMessage(item.message, item.source, position)
    for (const [category, tokens] of Object.entries(counts)) byCategory[category as Measurement.Category] += tokens ?? 0
  }
  const raw = (item: Item): void => {
    items++
    messageBytes += RequestBytes.messageBytes(item.message)
  }
  /** Normalizes `segment` with `after` as context and counts the segment's normalized items. */
  const flush = (after: ReadonlyArray<Item>): void => {
    if (segment.length === 0) return
    const ids = new Set(segment.map((item) => item.entryId))
    const normalized = Normalization.normalize({
      items: after.length > 0 ? [...segment, ...after] : segment,
      tools: []
    })
    const stop = after.length > 0 ? after[0]!.entryId : undefined
    for (const item of normalized.view.items) {
      if (item.entryId === stop) break
      if (item.entryId === lastUserId) current = true
      count(item, current ? "current" : "prior")
    }
    for (const edit of normalized.edits)
      if (ids.has(edit.op === "insert" ? edit.afterEntryId : edit.entryId)) edits.push(edit)
    splitPairs += pairsAcross(segment, earlierCalls)
  }
  const startSegment = (from: Array<Item>): void => {
    segment = from
    open = new Set()
    for (const item of segment) callIdsOf(item, open)
  }
  const isBoundary = (item: Item): boolean =>
    segment.length >= SEGMENT_ITEMS &&
    ((item.message.role === "user" && Turns.isUserWordsItem(item)) ||
      (item.message.role === "assistant" && open.size === 0))

  return {
    prefix: (item) => {
      raw(item)
      count(item, "prior")
    },
    checkpoint: (item) => {
      raw(item)
      count(item, "prior")
    },
    add: (original) => {
      raw(original)
      // the whole view's renames of reused call ids, in view order: a reuse may span segments
      const { item, edit } = rename(original)
      if (edit !== undefined) edits.push(edit)
      if (context !== undefined) {
        context.push(item)
        if (item.message.role !== "assistant") return
        flush(context)
        startSegment(context)
        context = undefined
        return
      }
      if (isBoundary(item)) {
        context = [item]
        if (item.message.role !== "assistant") return
        flush(context)
        startSegment(context)
        context = undefined
        return
      }
      segment.push(item)
      callIdsOf(item, open)
    },
    finish: () => {
      if (context !== undefined) segment = [...segment, ...context]
      context = undefined
      flush([])
      segment = []
      return { byCategory, items, messageBytes, edits: inWholeOrder(edits), splitPairs }
    }
  }
}

/**
 * The whole view's measurement from the meter's totals, with what a
 * measurement adds to its messages (`Measurer.measure`): the tool schemas,
 * the reply priming counted once per request (`MessageTokens.replyPrimingTokens`)
 * and the reserved output; budget, method and tokenizer as `like` (the
 * engine's measurement of the last window).
 *
 * @category constructors
 */
export const measurement = (
  totals: Totals,
  like: Measurement.Measurement,
  fixed: { readonly toolSchemaTokens: number; readonly replyPrimingTokens: number }
): Measurement.Measurement =>
  Measurement.fromCounts(
    {
      ...totals.byCategory,
      toolSchemas: totals.byCategory.toolSchemas + fixed.toolSchemaTokens,
      framing: totals.byCategory.framing + fixed.replyPrimingTokens,
      reservedOutput: like.byCategory.reservedOutput
    },
    {
      budgetTokens: like.budgetTokens,
      method: like.method,
      tokenizer: like.tokenizer,
      ...(like.notes !== undefined ? { notes: like.notes } : {})
    }
  )

/**
 * Bytes of the whole view's request body (`RequestBytes.viewBytes`: the
 * messages' JSON, one comma between two, the brackets, and the tools).
 *
 * @category getters
 */
export const viewBytes = (totals: Totals, toolBytes: number): number =>
  2 + Math.max(0, totals.items - 1) + totals.messageBytes + toolBytes

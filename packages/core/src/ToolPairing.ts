/**
 * Tool-call / tool-result pairing: analysis and repair.
 *
 * Every provider rejects a request whose tool results lack their call, and
 * Anthropic and OpenAI both reject an assistant tool call that is not
 * answered before the next assistant turn ("tool_use ids were found without
 * tool_result blocks immediately after", Anthropic Messages API; "An
 * assistant message with 'tool_calls' must be followed by tool messages
 * responding to each 'tool_call_id'", OpenAI Chat Completions). Repairs are
 * view edits, never transcript edits.
 *
 * @since 0.1.0
 */
import type { ContextView, ViewItem } from "./ContextView.ts"
import type { ContentPart, Message } from "./Message.ts"
import type { ViewEdit } from "./ViewEdit.ts"

/**
 * A pairing problem, naming the entry it was found in.
 *
 * - `orphan-result`: a result with no earlier call of that id (or a second
 *   result for a call that was already answered);
 * - `result-not-adjacent`: the call's result exists but not in the run of
 *   tool messages right after the assistant message that made the call
 *   (another user or assistant message comes between), which Anthropic and
 *   OpenAI reject; `entryId` holds the result, `callEntryId` the call;
 * - `call-without-result`: no result at all;
 * - `duplicate-call-id`: several calls share an id.
 *
 * @category models
 */
export type Problem =
  | { readonly kind: "orphan-result"; readonly entryId: string; readonly toolCallId: string }
  | {
      readonly kind: "result-not-adjacent"
      readonly entryId: string
      readonly toolCallId: string
      readonly callEntryId: string
    }
  | {
      readonly kind: "call-without-result"
      readonly entryId: string
      readonly toolCallId: string
      readonly toolName: string
    }
  | { readonly kind: "duplicate-call-id"; readonly entryIds: ReadonlyArray<string>; readonly toolCallId: string }

/**
 * Result of {@link analyze}.
 *
 * @category models
 */
export interface Report {
  readonly problems: ReadonlyArray<Problem>
  readonly toolCalls: number
  readonly toolResults: number
}

type Item = Pick<ViewItem, "entryId" | "message">
type ResultPart = Extract<ContentPart, { type: "tool-result" }>

interface Call {
  readonly itemIndex: number
  readonly toolName: string
  answered: boolean
  /** The entry of every call with this id so far: one id as it is, an array once it repeats. */
  readonly entryIds: string | ReadonlyArray<string>
}

interface Scan {
  readonly orphans: Array<{ readonly itemIndex: number; readonly part: ResultPart }>
  readonly notAdjacent: Array<{ readonly itemIndex: number; readonly part: ResultPart; readonly callIndex: number }>
  readonly missing: Array<{ readonly callIndex: number; readonly toolCallId: string; readonly toolName: string }>
  readonly duplicates: Array<{ readonly toolCallId: string; readonly entryIds: ReadonlyArray<string> }>
  readonly toolCalls: number
  readonly toolResults: number
}

const contentParts = (message: Message): ReadonlyArray<ContentPart> =>
  typeof message.content === "string" ? [] : message.content

// One pass over the items. A result is adjacent when it sits in the assistant
// message that made the call (provider-executed tools) or in the run of tool
// messages that directly follows it.
const scan = (items: ReadonlyArray<Item>): Scan => {
  const calls = new Map<string, Call>()
  const result: Scan = { orphans: [], notAdjacent: [], missing: [], duplicates: [], toolCalls: 0, toolResults: 0 }
  let toolCalls = 0
  let toolResults = 0
  let runOwner = -1
  const answer = (part: ResultPart, itemIndex: number, owner: number) => {
    toolResults++
    const call = calls.get(part.toolCallId)
    if (call === undefined || call.answered) {
      result.orphans.push({ itemIndex, part })
      return
    }
    call.answered = true
    if (call.itemIndex !== owner) result.notAdjacent.push({ itemIndex, part, callIndex: call.itemIndex })
  }
  items.forEach((item, itemIndex) => {
    const role = item.message.role
    const parts = contentParts(item.message)
    if (role === "assistant") {
      let hasCalls = false
      for (const part of parts) {
        if (part.type !== "tool-call") continue
        hasCalls = true
        toolCalls++
        // one record per call id (no second map and array per call: a scan of 30,000 calls held both)
        const seen = calls.get(part.toolCallId)?.entryIds
        const entryIds =
          seen === undefined ? item.entryId : [...(typeof seen === "string" ? [seen] : seen), item.entryId]
        calls.set(part.toolCallId, { itemIndex, toolName: part.toolName, answered: false, entryIds })
      }
      for (const part of parts) if (part.type === "tool-result") answer(part, itemIndex, itemIndex)
      runOwner = hasCalls ? itemIndex : -1
      return
    }
    for (const part of parts) if (part.type === "tool-result") answer(part, itemIndex, role === "tool" ? runOwner : -1)
    if (role !== "tool") runOwner = -1
  })
  for (const [toolCallId, call] of calls) {
    if (typeof call.entryIds !== "string") result.duplicates.push({ toolCallId, entryIds: call.entryIds })
  }
  for (const [toolCallId, call] of calls) {
    if (!call.answered) result.missing.push({ callIndex: call.itemIndex, toolCallId, toolName: call.toolName })
  }
  return { ...result, toolCalls, toolResults }
}

/**
 * Finds orphan tool results, results that are not adjacent to their call,
 * calls without a result, and tool-call ids used by more than one call.
 * Provider-executed calls (`providerExecuted: true`) whose result sits in the
 * same assistant message count as answered in place.
 *
 * @category analysis
 */
export const analyze = (items: ReadonlyArray<Item>): Report => {
  const found = scan(items)
  const problems: Array<Problem> = [
    ...found.orphans.map(
      ({ itemIndex, part }): Problem => ({
        kind: "orphan-result",
        entryId: items[itemIndex]!.entryId,
        toolCallId: part.toolCallId
      })
    ),
    ...found.notAdjacent.map(
      ({ itemIndex, part, callIndex }): Problem => ({
        kind: "result-not-adjacent",
        entryId: items[itemIndex]!.entryId,
        toolCallId: part.toolCallId,
        callEntryId: items[callIndex]!.entryId
      })
    ),
    ...found.duplicates.map(
      ({ toolCallId, entryIds }): Problem => ({ kind: "duplicate-call-id", entryIds, toolCallId })
    ),
    ...found.missing.map(
      ({ callIndex, toolCallId, toolName }): Problem => ({
        kind: "call-without-result",
        entryId: items[callIndex]!.entryId,
        toolCallId,
        toolName
      })
    )
  ]
  return { problems, toolCalls: found.toolCalls, toolResults: found.toolResults }
}

/**
 * The text of a synthesized result for a call that never got one.
 *
 * @category constants
 */
export const INTERRUPTED_RESULT_TEXT =
  "[interrupted] This tool call did not complete: no result was recorded. Do not assume it ran."

/**
 * Deterministic id of the synthesized result for `toolCallId`, so that
 * repairing twice inserts it once.
 *
 * @category constructors
 */
export const interruptedResultId = (toolCallId: string): string => `interrupted:${toolCallId}`

/**
 * The reason of the `replace` edit that renames a reused tool-call id ({@link repairEdits}).
 *
 * @category constants
 */
export const RENAMED_REASON = "renamed a reused tool-call id"

/**
 * Gives every reused tool-call id a fresh one, item by item in view order:
 * the n-th call (n ≥ 2) of id `X` becomes `X~n` (the next free suffix), and
 * the first result of `X` that follows it is renamed with it, so each call
 * keeps exactly one result. Providers reject a request with two calls of one
 * id ("tool_use ids must be unique", Anthropic Messages API), and a naive
 * pairing silently drops one of their results. Returns the item unchanged
 * (same object) or renamed, with the `replace` edit ({@link RENAMED_REASON}).
 * `taken`: every call id of the view, asked for at the first reused id; a
 * caller that streams the view (the rolling meter, `cli/WholeView.ts`) omits
 * it, and the ids seen so far count as taken.
 *
 * @category repair
 */
export const reusedCallIdRenamer = <I extends Item>(
  strategy: string,
  taken?: () => Set<string>
): ((item: I) => { readonly item: I; readonly edit?: ViewEdit }) => {
  let ids: Set<string> | undefined
  const streamed = taken === undefined ? new Set<string>() : undefined
  const takenIds = (): Set<string> => (ids ??= streamed ?? taken!())
  const seen = new Set<string>()
  const pending = new Map<string, string>()
  const renamed = (part: ContentPart): ContentPart => {
    if (part.type === "tool-call") {
      if (!seen.has(part.toolCallId)) {
        seen.add(part.toolCallId)
        streamed?.add(part.toolCallId)
        pending.delete(part.toolCallId)
        return part
      }
      const ids = takenIds()
      let suffix = 2
      while (ids.has(`${part.toolCallId}~${suffix}`)) suffix++
      const fresh = `${part.toolCallId}~${suffix}`
      ids.add(fresh)
      pending.set(part.toolCallId, fresh)
      return { ...part, toolCallId: fresh }
    }
    const fresh = part.type === "tool-result" ? pending.get(part.toolCallId) : undefined
    if (part.type !== "tool-result" || fresh === undefined) return part
    pending.delete(part.toolCallId)
    return { ...part, toolCallId: fresh }
  }
  return (item) => {
    const content = contentParts(item.message)
    // copied only when a part is renamed (a new array per message and scan was most of this pass's garbage)
    let parts: Array<ContentPart> | undefined
    for (let partIndex = 0; partIndex < content.length; partIndex++) {
      const part = renamed(content[partIndex]!)
      if (part === content[partIndex]) continue
      parts ??= content.slice()
      parts[partIndex] = part
    }
    if (parts === undefined) return { item }
    const message = { ...item.message, content: parts } as Message
    return {
      item: { ...item, message },
      edit: { op: "replace", entryId: item.entryId, strategy, reason: RENAMED_REASON, message }
    }
  }
}

/** {@link reusedCallIdRenamer} over a whole view: the renamed items (`items` itself when none) and the edits. */
const renameReusedCallIds = <I extends Item>(
  items: ReadonlyArray<I>,
  strategy: string
): { readonly items: ReadonlyArray<I>; readonly edits: Array<ViewEdit> } => {
  const rename = reusedCallIdRenamer<I>(strategy, () => {
    const taken = new Set<string>()
    for (const item of items)
      for (const part of contentParts(item.message)) if (part.type === "tool-call") taken.add(part.toolCallId)
    return taken
  })
  const edits: Array<ViewEdit> = []
  let out: Array<I> | undefined
  items.forEach((item, index) => {
    const result = rename(item)
    if (result.edit === undefined) return
    out ??= items.slice()
    out[index] = result.item
    edits.push(result.edit)
  })
  return { items: out ?? items, edits }
}

/**
 * `items` with every reused tool-call id renamed as the request repair
 * renames it (`X~2` for the second call of `X` and the first result after
 * it; see `repair`), so that pairing a result with its call by id gives the
 * same pairs the repaired request sends. `items` itself when no id is
 * reused; otherwise a copy (the caller's items and messages are not
 * changed).
 *
 * @category repair
 */
export const withUniqueCallIds = <I extends Item>(items: ReadonlyArray<I>): ReadonlyArray<I> =>
  renameReusedCallIds(items, "unique-call-ids").items

/**
 * View edits that make the view's pairing valid:
 *
 * - a result that sits away from its call (a user or assistant message came
 *   between) is moved into a tool message right after the call's own run of
 *   tool messages — the original entry is untouched, the view shows the
 *   result where providers require it;
 * - a call without a result gets one synthesized `interrupted` error result
 *   in that same place (so a parallel batch stays answered in one place);
 * - an orphan tool result is removed from its message (the message is
 *   dropped when nothing else is left in it);
 * - a reused tool-call id is renamed (`X~2`) in the later call and the
 *   result that follows it.
 *
 * Results that a provider executed inside an assistant message stay where
 * they are. Idempotent: on a repaired view it returns no edits.
 *
 * @category repair
 */
export const repairEdits = (view: ContextView, strategy = "toolPairing"): Array<ViewEdit> => {
  const renamed = renameReusedCallIds(view.items, strategy)
  const items = renamed.items
  const found = scan(items)
  const edits: Array<ViewEdit> = renamed.edits
  const removals = new Map<number, Set<ContentPart>>()
  const remove = (itemIndex: number, part: ContentPart) => {
    const set = removals.get(itemIndex) ?? new Set()
    set.add(part)
    removals.set(itemIndex, set)
  }
  for (const { itemIndex, part } of found.orphans) remove(itemIndex, part)
  const placed = new Map<number, Map<string, ResultPart>>()
  const place = (callIndex: number, part: ResultPart) => {
    const map = placed.get(callIndex) ?? new Map()
    map.set(part.toolCallId, part)
    placed.set(callIndex, map)
  }
  for (const { itemIndex, part, callIndex } of found.notAdjacent) {
    if (items[itemIndex]!.message.role !== "tool") continue
    remove(itemIndex, part)
    place(callIndex, part)
  }
  for (const { callIndex, toolCallId, toolName } of found.missing) {
    place(callIndex, {
      type: "tool-result",
      toolCallId,
      toolName,
      output: { type: "error-text", value: INTERRUPTED_RESULT_TEXT }
    })
  }
  const dropped = new Set<number>()
  for (const [itemIndex, parts] of removals) {
    const item = items[itemIndex]!
    const kept = contentParts(item.message).filter((part) => !parts.has(part))
    if (kept.length === 0) dropped.add(itemIndex)
    edits.push(
      kept.length === 0
        ? { op: "drop", entryId: item.entryId, strategy, reason: "tool results that belong elsewhere or nowhere" }
        : {
            op: "replace",
            entryId: item.entryId,
            strategy,
            reason: "moved or removed tool results that were not adjacent to their call",
            message: { ...item.message, content: kept } as Message
          }
    )
  }
  for (const [callIndex, byId] of [...placed].sort(([a], [b]) => a - b)) {
    const call = items[callIndex]!
    // In the order the assistant made the calls.
    const ordered = contentParts(call.message).flatMap((part) =>
      part.type === "tool-call" && byId.has(part.toolCallId) ? [byId.get(part.toolCallId)!] : []
    )
    // After the last surviving tool message of the call's own run.
    let anchor = call.entryId
    for (let after = callIndex + 1; after < items.length && items[after]!.message.role === "tool"; after++) {
      if (!dropped.has(after)) anchor = items[after]!.entryId
    }
    const ids = ordered.map((part) => part.toolCallId)
    const synthesized = ordered.filter(
      (part) => part.output.type === "error-text" && part.output.value === INTERRUPTED_RESULT_TEXT
    )
    const moved = ordered.length - synthesized.length
    edits.push({
      op: "insert",
      id: moved > 0 ? `relocated:${ids.join("+")}` : interruptedResultId(ids.join("+")),
      afterEntryId: anchor,
      strategy,
      reason:
        moved > 0
          ? `moved ${moved} tool result(s) next to their call${synthesized.length > 0 ? ` and synthesized ${synthesized.length} interrupted result(s)` : ""}`
          : `synthesized interrupted result for ${synthesized.length} unanswered tool call(s)`,
      message: { role: "tool", content: ordered }
    })
  }
  return edits
}

/**
 * The invariants every stage must keep (DESIGN.md "Invariants"), checked and
 * enforced by the pipeline after every stage:
 *
 * 1. every tool result has its call and every call a result (a call without
 *    one gets a synthesized `interrupted` result, idempotently);
 * 2. system messages and the latest user message are verbatim;
 * 3. no empty messages;
 * 4. no assistant message is left with only reasoning;
 * 5. the latest assistant message's reasoning parts are untouched.
 *
 * {@link enforce} repairs what it can (pairing) and refuses edits that would
 * break the rest; {@link check} lists what is still wrong.
 *
 * @since 0.1.0
 */

import type { Message, ViewEdit } from "@context-engine/core"
import { ContextView, MessageParts, ToolPairing, Turns } from "@context-engine/core"

/**
 * Entries a strategy may not change.
 *
 * @category models
 */
export interface Protected {
  /** System messages (verbatim). */
  readonly systemIds: ReadonlySet<string>
  /** The latest user message (verbatim), if any. */
  readonly latestUserId: string | undefined
  /** The latest assistant message, whose reasoning parts stay untouched. */
  readonly latestAssistantId: string | undefined
  /** Index of the first item of the turn in progress (the last turn). */
  readonly currentTurnStart: number
}

/**
 * What is protected in `view`.
 *
 * @category analysis
 */
export const protectedOf = (view: ContextView.ContextView): Protected => {
  const systemIds = new Set<string>()
  let latestAssistantId: string | undefined
  for (const item of view.items) {
    if (item.message.role === "system") systemIds.add(item.entryId)
    else if (item.message.role === "assistant") latestAssistantId = item.entryId
  }
  const userIndex = Turns.latestUserIndex(view.items)
  return {
    systemIds,
    latestUserId: userIndex === -1 ? undefined : view.items[userIndex]!.entryId,
    latestAssistantId,
    currentTurnStart: Turns.lastTurnStart(view.items)
  }
}

/**
 * Whether an entry may be replaced or dropped at all.
 *
 * @category guards
 */
export const isEditable = (guard: Protected, entryId: string): boolean =>
  !guard.systemIds.has(entryId) && guard.latestUserId !== entryId

const reasoningKey = (message: Message.Message): string =>
  JSON.stringify(
    MessageParts.contentParts(message).filter((part) => part.type === "reasoning" || part.type === "reasoning-file")
  )

/**
 * A violated invariant.
 *
 * @category models
 */
export interface Violation {
  readonly invariant:
    | "tool-pairing"
    | "system-verbatim"
    | "latest-user-verbatim"
    | "no-empty-message"
    | "no-reasoning-only-assistant"
    | "latest-reasoning-untouched"
  readonly entryId: string
  readonly detail: string
}

/**
 * Lists the invariants `after` breaks relative to `before` (the view the
 * stages started from).
 *
 * @category validation
 */
export const check = (before: ContextView.ContextView, after: ContextView.ContextView): Array<Violation> => {
  const violations: Array<Violation> = []
  for (const problem of ToolPairing.analyze(after.items).problems) {
    violations.push({
      invariant: "tool-pairing",
      entryId: "entryId" in problem ? problem.entryId : problem.entryIds.join(","),
      detail: `${problem.kind} ${problem.toolCallId}`
    })
  }
  const guard = protectedOf(before)
  const afterById = new Map(after.items.map((item) => [item.entryId, item]))
  for (const item of before.items) {
    const kept = afterById.get(item.entryId)
    const guarded = guard.systemIds.has(item.entryId) || guard.latestUserId === item.entryId
    const verbatim =
      guarded &&
      kept !== undefined &&
      (kept.message === item.message || JSON.stringify(kept.message) === JSON.stringify(item.message))
    if (guard.systemIds.has(item.entryId) && !verbatim)
      violations.push({
        invariant: "system-verbatim",
        entryId: item.entryId,
        detail: "system message changed or missing"
      })
    if (guard.latestUserId === item.entryId && !verbatim)
      violations.push({
        invariant: "latest-user-verbatim",
        entryId: item.entryId,
        detail: "latest user message changed or missing"
      })
    if (
      guard.latestAssistantId === item.entryId &&
      kept !== undefined &&
      reasoningKey(kept.message) !== reasoningKey(item.message)
    )
      violations.push({
        invariant: "latest-reasoning-untouched",
        entryId: item.entryId,
        detail: "reasoning parts of the latest assistant message changed"
      })
  }
  for (const item of after.items) {
    if (
      MessageParts.isEmptyMessage(item.message) &&
      !guard.systemIds.has(item.entryId) &&
      guard.latestUserId !== item.entryId
    )
      violations.push({
        invariant: "no-empty-message",
        entryId: item.entryId,
        detail: `empty ${item.message.role} message`
      })
    if (MessageParts.isReasoningOnly(item.message))
      violations.push({
        invariant: "no-reasoning-only-assistant",
        entryId: item.entryId,
        detail: "assistant message with only reasoning"
      })
  }
  return violations
}

/**
 * Result of {@link enforce}.
 *
 * @category models
 */
export interface Enforced {
  /** The accepted edits followed by the repairs, in order. */
  readonly edits: ReadonlyArray<ViewEdit.ViewEdit>
  readonly view: ContextView.ContextView
  /** Edits refused because they would break an invariant. */
  readonly refused: number
}

/**
 * Applies a stage's edits to `view` while keeping the invariants: refuses
 * edits to system messages and the latest user message, refuses changes to
 * the latest assistant message's reasoning, turns a replacement that leaves
 * a message empty or reasoning-only into a drop, refuses empty inserts, then
 * repairs tool pairing ({@link ToolPairing.repairEdits}).
 *
 * @category combinators
 */
export const enforce = (
  view: ContextView.ContextView,
  edits: ReadonlyArray<ViewEdit.ViewEdit>,
  strategy: string,
  options: {
    /** Allow `replace` of the latest user message (a clamp the policy allows). Default false. */
    readonly allowLatestUserReplace?: boolean
  } = {}
): Enforced => {
  const guard = protectedOf(view)
  // The only item an edit is compared with: the last one of the latest assistant message's entry (no map of the
  // whole view per stage: ≈4 MiB of garbage each at 60,000 items, issue #13 req 6).
  const latestAssistant = view.items.findLast((item) => item.entryId === guard.latestAssistantId)
  const accepted: Array<ViewEdit.ViewEdit> = []
  let refused = 0
  for (const edit of edits) {
    if (edit.op === "insert") {
      if (MessageParts.isEmptyMessage(edit.message) || MessageParts.isReasoningOnly(edit.message)) refused++
      else accepted.push(edit)
      continue
    }
    const latestUserReplace =
      options.allowLatestUserReplace === true && edit.op === "replace" && guard.latestUserId === edit.entryId
    if (!isEditable(guard, edit.entryId) && !latestUserReplace) {
      refused++
      continue
    }
    if (edit.op === "drop") {
      accepted.push(edit)
      continue
    }
    if (
      latestAssistant !== undefined &&
      guard.latestAssistantId === edit.entryId &&
      reasoningKey(latestAssistant.message) !== reasoningKey(edit.message)
    ) {
      refused++
      continue
    }
    if (MessageParts.isEmptyMessage(edit.message) || MessageParts.isReasoningOnly(edit.message)) {
      if (guard.latestAssistantId === edit.entryId) refused++
      else
        accepted.push({
          op: "drop",
          entryId: edit.entryId,
          strategy: edit.strategy,
          reason: `${edit.reason} (nothing left)`
        })
      continue
    }
    accepted.push(edit)
  }
  const applied = ContextView.applyEdits(view, accepted)
  const repairs = ToolPairing.repairEdits(applied, `${strategy}/toolPairing`)
  return {
    edits: repairs.length === 0 ? accepted : [...accepted, ...repairs],
    view: ContextView.applyEdits(applied, repairs),
    refused
  }
}

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
 * @category models
 */
export type Problem =
  | { readonly kind: "orphan-result"; readonly entryId: string; readonly toolCallId: string }
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

const contentParts = (message: Message): ReadonlyArray<ContentPart> =>
  typeof message.content === "string" ? [] : message.content

/**
 * Finds orphan tool results (no earlier call with that id), calls without a
 * result, and tool-call ids used by more than one call. Provider-executed
 * calls (`providerExecuted: true`) whose result sits in the same assistant
 * message count as answered.
 *
 * @category analysis
 */
export const analyze = (items: ReadonlyArray<Pick<ViewItem, "entryId" | "message">>): Report => {
  const calls = new Map<string, { entryId: string; toolName: string; answered: boolean }>()
  const callEntries = new Map<string, Array<string>>()
  const problems: Array<Problem> = []
  let toolCalls = 0
  let toolResults = 0
  for (const item of items) {
    for (const part of contentParts(item.message)) {
      if (part.type === "tool-call") {
        toolCalls++
        const seen = callEntries.get(part.toolCallId)
        if (seen) seen.push(item.entryId)
        else callEntries.set(part.toolCallId, [item.entryId])
        calls.set(part.toolCallId, { entryId: item.entryId, toolName: part.toolName, answered: false })
      } else if (part.type === "tool-result") {
        toolResults++
        const call = calls.get(part.toolCallId)
        if (call === undefined)
          problems.push({ kind: "orphan-result", entryId: item.entryId, toolCallId: part.toolCallId })
        else call.answered = true
      }
    }
  }
  for (const [toolCallId, entryIds] of callEntries) {
    if (entryIds.length > 1) problems.push({ kind: "duplicate-call-id", entryIds, toolCallId })
  }
  for (const [toolCallId, call] of calls) {
    if (!call.answered)
      problems.push({ kind: "call-without-result", entryId: call.entryId, toolCallId, toolName: call.toolName })
  }
  return { problems, toolCalls, toolResults }
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
 * View edits that make the view's pairing valid:
 *
 * - a call without a result gets one synthesized `interrupted` error result,
 *   inserted after the block of tool messages that follows its assistant
 *   message (so a parallel batch stays answered in one place);
 * - an orphan tool result is removed from its message (the message is
 *   dropped when nothing else is left in it).
 *
 * Idempotent: on a repaired view it returns no edits.
 *
 * @category repair
 */
export const repairEdits = (view: ContextView, strategy = "toolPairing"): Array<ViewEdit> => {
  const items = view.items
  const edits: Array<ViewEdit> = []
  const report = analyze(items)
  const orphanIds = new Set<string>()
  const orphanEntries = new Set<string>()
  for (const problem of report.problems) {
    if (problem.kind === "orphan-result") {
      orphanIds.add(`${problem.entryId}\u0000${problem.toolCallId}`)
      orphanEntries.add(problem.entryId)
    }
  }
  const dropped = new Set<string>()
  for (const item of items) {
    if (!orphanEntries.has(item.entryId) || typeof item.message.content === "string") continue
    const kept = (item.message.content as ReadonlyArray<ContentPart>).filter(
      (part) => !(part.type === "tool-result" && orphanIds.has(`${item.entryId}\u0000${part.toolCallId}`))
    )
    if (kept.length === 0) dropped.add(item.entryId)
    edits.push(
      kept.length === 0
        ? { op: "drop", entryId: item.entryId, strategy, reason: "tool result without its call" }
        : {
            op: "replace",
            entryId: item.entryId,
            strategy,
            reason: "removed tool results without their call",
            message: { ...item.message, content: kept } as Message
          }
    )
  }
  const missing = report.problems.filter(
    (problem): problem is Extract<Problem, { kind: "call-without-result" }> => problem.kind === "call-without-result"
  )
  const byEntry = new Map<string, Array<Extract<Problem, { kind: "call-without-result" }>>>()
  for (const problem of missing) {
    const list = byEntry.get(problem.entryId) ?? []
    list.push(problem)
    byEntry.set(problem.entryId, list)
  }
  for (const [entryId, problems] of byEntry) {
    const index = items.findIndex((item) => item.entryId === entryId)
    // Anchor after the last surviving tool message of the block that follows
    // the call, so the synthesized result stays inside the call's unit.
    let anchor = entryId
    for (let after = index + 1; after < items.length && items[after]?.message.role === "tool"; after++) {
      const candidate = items[after]!.entryId
      if (!dropped.has(candidate)) anchor = candidate
    }
    edits.push({
      op: "insert",
      id: interruptedResultId(problems.map((problem) => problem.toolCallId).join("+")),
      afterEntryId: anchor,
      strategy,
      reason: `synthesized interrupted result for ${problems.length} unanswered tool call(s)`,
      message: {
        role: "tool",
        content: problems.map((problem) => ({
          type: "tool-result" as const,
          toolCallId: problem.toolCallId,
          toolName: problem.toolName,
          output: { type: "error-text" as const, value: INTERRUPTED_RESULT_TEXT }
        }))
      }
    })
  }
  return edits
}

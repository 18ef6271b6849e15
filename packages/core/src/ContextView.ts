/**
 * The context view: what the next model request is built from, derived from
 * the transcript with view edits applied as overlays (DESIGN.md "Context
 * view"). A view never shares mutable state with the transcript: applying
 * edits returns a new view and leaves entries untouched.
 *
 * @since 0.1.0
 */
import type { Entry } from "./Entry.ts"
import type { JsonValue, Message } from "./Message.ts"
import type { ViewEdit } from "./ViewEdit.ts"

/**
 * Where a view item comes from.
 *
 * @category models
 */
export type ItemSource = "transcript" | "checkpoint" | "memory" | "synthetic"

/**
 * One message of the view, tied to the entry it came from.
 *
 * @category models
 */
export interface ViewItem {
  /** The transcript entry id (or the edit id for synthetic items). */
  readonly entryId: string
  readonly message: Message
  readonly source: ItemSource
  /** The strategy names whose edits shaped this item, in order. */
  readonly editedBy: ReadonlyArray<string>
}

/**
 * A tool definition as sent to the model; its schema counts as fixed overhead.
 *
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description?: string
  readonly inputSchema: JsonValue
}

/**
 * A context view.
 *
 * @category models
 */
export interface ContextView {
  readonly items: ReadonlyArray<ViewItem>
  readonly tools: ReadonlyArray<ToolDefinition>
}

/**
 * A view of plain messages, with ids `m0`, `m1`, … by position.
 *
 * @category constructors
 */
export const fromMessages = (
  messages: ReadonlyArray<Message>,
  tools: ReadonlyArray<ToolDefinition> = []
): ContextView => ({
  items: messages.map((message, index) => ({
    entryId: `m${index}`,
    message,
    source: "transcript",
    editedBy: []
  })),
  tools
})

/**
 * A view of the message entries of a transcript (no checkpoint handling;
 * engines assemble checkpoints and memory themselves).
 *
 * @category constructors
 */
export const fromEntries = (entries: ReadonlyArray<Entry>, tools: ReadonlyArray<ToolDefinition> = []): ContextView => ({
  items: entries.flatMap(
    (entry): ReadonlyArray<ViewItem> =>
      entry.kind === "message"
        ? [{ entryId: entry.id, message: entry.message, source: "transcript", editedBy: [] }]
        : []
  ),
  tools
})

/**
 * The view's messages in order.
 *
 * @category getters
 */
export const toMessages = (view: ContextView): Array<Message> => view.items.map((item) => item.message)

/**
 * Applies edits in order and returns a new view. Edits naming entries that
 * are not in the view are ignored; an `insert` whose id is already present is
 * not inserted again (idempotent).
 *
 * @category combinators
 */
export const applyEdits = (view: ContextView, edits: ReadonlyArray<ViewEdit>): ContextView => {
  if (edits.length === 0) return view
  let items: ReadonlyArray<ViewItem> = view.items
  // Runs of drop/replace edits are applied in one pass over the items (each
  // item's edits in order), which equals applying them one by one: a drop or
  // replace only ever affects the item it names. Runs of inserts are one pass
  // too (insertRun). The runs keep their order.
  let run: Map<string, Array<ViewEdit>> | undefined
  let inserts: Array<ViewEdit & { readonly op: "insert" }> | undefined
  const flush = (): void => {
    if (inserts !== undefined) {
      items = insertRun(items, inserts)
      inserts = undefined
    }
    if (run === undefined) return
    const byId = run
    run = undefined
    const next: Array<ViewItem> = []
    for (const item of items) {
      const mine = byId.get(item.entryId)
      if (mine === undefined) {
        next.push(item)
        continue
      }
      let current: ViewItem | undefined = item
      for (const edit of mine) {
        if (current === undefined) break
        if (edit.op === "drop") current = undefined
        else if (edit.op === "replace")
          current = { ...current, message: edit.message, editedBy: [...current.editedBy, edit.strategy] }
      }
      if (current !== undefined) next.push(current)
    }
    items = next
  }
  for (const edit of edits) {
    if (edit.op === "insert") {
      if (run !== undefined) flush()
      inserts ??= []
      inserts.push(edit)
      continue
    }
    if (inserts !== undefined) flush()
    run ??= new Map()
    const list = run.get(edit.entryId)
    if (list === undefined) run.set(edit.entryId, [edit])
    else list.push(edit)
  }
  flush()
  return { items: items === view.items ? items.slice() : (items as Array<ViewItem>), tools: view.tools }
}

/**
 * A run of inserts in one pass, equal to applying them one at a time: an
 * insert whose id is already in the view (or inserted before it) is skipped,
 * as is one whose anchor is missing; each goes right after the first item of
 * its anchor's id, so later inserts after one anchor come before earlier ones
 * (X then Y after A gives A, Y, X) and an insert after an inserted item
 * follows that item. One scan per insert made normalization quadratic on
 * long sessions (issue #13 req 6).
 */
const insertRun = (
  items: ReadonlyArray<ViewItem>,
  inserts: ReadonlyArray<ViewEdit & { readonly op: "insert" }>
): ReadonlyArray<ViewItem> => {
  const asked = new Set<string>()
  for (const edit of inserts) asked.add(edit.id).add(edit.afterEntryId)
  const present = new Set<string>()
  for (const item of items) if (asked.has(item.entryId)) present.add(item.entryId)
  // Per anchor id, the items inserted after it, in edit order.
  const after = new Map<string, Array<ViewItem>>()
  for (const edit of inserts) {
    if (present.has(edit.id) || !present.has(edit.afterEntryId)) continue
    present.add(edit.id)
    const inserted: ViewItem = {
      entryId: edit.id,
      message: edit.message,
      source: "synthetic",
      editedBy: [edit.strategy]
    }
    const list = after.get(edit.afterEntryId)
    if (list === undefined) after.set(edit.afterEntryId, [inserted])
    else list.push(inserted)
  }
  if (after.size === 0) return items
  const next: Array<ViewItem> = []
  const pending: Array<ViewItem> = []
  for (const item of items) {
    pending.push(item)
    while (pending.length > 0) {
      const current = pending.pop()!
      next.push(current)
      const mine = after.get(current.entryId)
      if (mine === undefined) continue
      // only the first item of an id is an anchor; the latest insert comes first
      after.delete(current.entryId)
      for (const inserted of mine) pending.push(inserted)
    }
  }
  return next
}

/**
 * {@link ActiveView.reconstruct} step after step in O(new entries), for the
 * request path: a step that appends plain message entries to the branch's
 * leaf extends the previous view instead of walking the branch, selecting
 * the checkpoint, collecting edits and rebuilding every item again (issue
 * #13: the per-step cost must not grow with the session).
 *
 * The previous view is extended only when that is what `reconstruct` would
 * return: the new entries follow the previous entries (same objects), each is
 * a non-system message entry with a fresh id that continues the entry before
 * it (`parentId` null without a root mark, that entry's id, or no earlier entry), no edit entry
 * names it, the view is not navigated (`leafId` / `beforeCheckpointId`), and
 * no user message arrives while the view pins the latest user message ahead
 * of a checkpoint's kept tail (`ActiveView.pinsLatestUser`: the pin would
 * move). Edit entries appended with messages are applied to them when they
 * name only those messages. Otherwise the view is reconstructed cold.
 *
 * @since 0.1.0
 */
import * as ActiveView from "./ActiveView.ts"
import * as ArrayLineage from "./ArrayLineage.ts"
import * as BranchRoot from "./BranchRoot.ts"
import type { ViewItem } from "./ContextView.ts"
import * as ContextView from "./ContextView.ts"
import type { Entry } from "./Entry.ts"
import type { ViewEdit } from "./ViewEdit.ts"

interface State {
  readonly entries: ReadonlyArray<Entry>
  readonly active: ActiveView.ActiveView
  /** Ids of `entries`; `duplicates` when one repeats (then every step is cold). */
  readonly ids: Set<string>
  readonly duplicates: boolean
  /** Ids the branch's edit entries name (dropped, replaced, inserted after, or inserted). */
  readonly edited: Set<string>
  /** The view pins the latest user message ahead of the checkpoint's tail (`ActiveView.pinsLatestUser`). */
  readonly pinned: boolean
}

const editedIds = (branch: ReadonlyArray<Entry>): Set<string> => {
  const ids = new Set<string>()
  for (const entry of branch) {
    if (entry.kind !== "edit") continue
    const edit = entry.edit
    if (edit.op === "insert") {
      ids.add(edit.afterEntryId)
      ids.add(edit.id)
    } else ids.add(edit.entryId)
  }
  return ids
}

/** `active` with its conversation and view items as the first arrays of their lineages (`ArrayLineage`). */
const recorded = (active: ActiveView.ActiveView): ActiveView.ActiveView => {
  const conversation = ArrayLineage.extend([], active.conversation)
  const items = active.view.items === active.conversation ? conversation : ArrayLineage.extend([], active.view.items)
  return { ...active, conversation, view: { ...active.view, items } }
}

const coldState = (entries: ReadonlyArray<Entry>, options: ActiveView.ViewOptions): State => {
  const active = recorded(ActiveView.reconstruct(entries, options))
  const ids = new Set<string>()
  let duplicates = false
  for (const entry of entries) {
    if (ids.has(entry.id)) duplicates = true
    ids.add(entry.id)
  }
  const edited = editedIds(active.branch)
  return { entries, active, ids, duplicates, edited, pinned: ActiveView.pinsLatestUser(active.branch) }
}

/** The targets an edit names (an insert: the entry it follows) and the id it brings (an insert's item). */
const namedBy = (edit: ViewEdit): { readonly target: string; readonly inserted?: string } =>
  edit.op === "insert" ? { target: edit.afterEntryId, inserted: edit.id } : { target: edit.entryId }

/**
 * The appended entries as view items, or undefined when the shortcut does
 * not apply. Appended edit entries (e.g. an offload of a tool result that
 * just arrived) are applied to the appended items when every one names only
 * messages appended with it — an edit affects only the items it names, so
 * the earlier items are untouched.
 */
const appendedItems = (
  state: State,
  entries: ReadonlyArray<Entry>
):
  | { readonly items: Array<ViewItem>; readonly ids: ReadonlySet<string>; readonly edits: Array<ViewEdit> }
  | undefined => {
  const before = state.entries
  if (state.duplicates || entries.length < before.length) return undefined
  // Entries recorded as extending the previous ones (`ArrayLineage`: the middleware's snapshots) are not compared.
  if (!ArrayLineage.isExtensionOf(entries, before))
    for (let index = 0; index < before.length; index++) if (entries[index] !== before[index]) return undefined
  const fresh = new Set<string>()
  const items: Array<ViewItem> = []
  const edits: Array<ViewEdit> = []
  for (let index = before.length; index < entries.length; index++) {
    const entry = entries[index]!
    if (entry.kind !== "message" && entry.kind !== "edit") return undefined
    if (entry.kind === "message" && entry.message.role === "system") return undefined
    if (state.ids.has(entry.id) || fresh.has(entry.id) || state.edited.has(entry.id)) return undefined
    // A new root (`BranchRoot`) starts a branch the previous view is no part of.
    if (BranchRoot.isRoot(entry)) return undefined
    const parent = entry.parentId
    const previous = entries[index - 1]
    if (parent !== null && parent !== previous?.id && (state.ids.has(parent) || fresh.has(parent))) return undefined
    fresh.add(entry.id)
    if (entry.kind === "edit") edits.push(entry.edit)
    if (entry.kind !== "message") continue
    if (entry.message.role === "user" && state.pinned) return undefined
    items.push({ entryId: entry.id, message: entry.message, source: "transcript", editedBy: [] })
  }
  if (edits.length === 0) return { items, ids: fresh, edits }
  const messageIds = new Set(items.map((item) => item.entryId))
  for (const edit of edits) {
    const { target, inserted } = namedBy(edit)
    if (!messageIds.has(target)) return undefined
    if (inserted !== undefined && (state.ids.has(inserted) || state.edited.has(inserted) || fresh.has(inserted)))
      return undefined
  }
  return { items: [...ContextView.applyEdits({ items, tools: [] }, edits).items], ids: fresh, edits }
}

/**
 * Reconstructs views of one session's growing entries.
 *
 * @category models
 */
export type Incremental = (entries: ReadonlyArray<Entry>, options?: ActiveView.ViewOptions) => ActiveView.ActiveView

/**
 * A fresh {@link Incremental}: equal to `ActiveView.reconstruct(entries, options)`
 * at every call (property-tested). `options` other than the tools must be
 * the same at every call of one instance (an engine's memory options); a
 * navigated view (`leafId`, `beforeCheckpointId`) is always reconstructed cold.
 *
 * @category constructors
 */
export const make = (): Incremental => {
  let state: State | undefined
  return (entries, options = {}) => {
    const navigated = options.leafId !== undefined || options.beforeCheckpointId !== undefined
    const appended = state === undefined || navigated ? undefined : appendedItems(state, entries)
    if (state === undefined || appended === undefined) {
      const cold = coldState(entries, options)
      if (!navigated) state = cold
      return cold.active
    }
    const previous = state.active
    for (const id of appended.ids) state.ids.add(id)
    for (const edit of appended.edits) {
      const { target, inserted } = namedBy(edit)
      state.edited.add(target)
      if (inserted !== undefined) state.edited.add(inserted)
    }
    const items = appended.items
    const grown = entries.length > state.entries.length
    // Recorded as extending the previous arrays (`ArrayLineage`), so the measurer, the anchor and normalization
    // know the earlier items are the same without comparing them.
    const conversation = items.length === 0 ? previous.conversation : ArrayLineage.extend(previous.conversation, items)
    const branch = !grown
      ? previous.branch
      : previous.branch === state.entries
        ? entries
        : previous.branch.concat(entries.slice(state.entries.length))
    const active: ActiveView.ActiveView = {
      ...previous,
      view: {
        // One array when the view is the conversation (no prefix, no checkpoint: `ActiveView.reconstruct`).
        items:
          items.length === 0
            ? previous.view.items
            : previous.view.items === previous.conversation
              ? conversation
              : ArrayLineage.extend(previous.view.items, items),
        tools: options.tools ?? []
      },
      conversation,
      branch
    }
    state = { ...state, entries, active }
    return active
  }
}

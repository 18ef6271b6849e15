/**
 * View edits: overlays on transcript entries that a strategy proposes. An edit
 * never changes the entry it names; the context view applies it when it is
 * assembled (DESIGN.md "Context view").
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Message } from "./Message.ts"

const common = {
  /** The strategy that made the edit, e.g. `"toolTrim"`. */
  strategy: Schema.String,
  /** Why, in words a person reads in a report. */
  reason: Schema.String
}

/**
 * Leave the entry out of the view.
 *
 * @category schemas
 */
export const Drop = Schema.Struct({ op: Schema.Literal("drop"), entryId: Schema.String, ...common })

/**
 * Show `message` in place of the entry (clamp, trim, clear with placeholder,
 * media reference). The placeholder text names the original `entryId`.
 *
 * @category schemas
 */
export const Replace = Schema.Struct({
  op: Schema.Literal("replace"),
  entryId: Schema.String,
  message: Message,
  ...common
})

/**
 * Insert a synthetic message right after `afterEntryId` (e.g. the
 * `interrupted` result of a tool call that never got one). `id` is
 * deterministic so that re-applying the edit is idempotent.
 *
 * @category schemas
 */
export const Insert = Schema.Struct({
  op: Schema.Literal("insert"),
  id: Schema.String,
  afterEntryId: Schema.String,
  message: Message,
  ...common
})

/** @category schemas */
export const ViewEdit = Schema.Union([Drop, Replace, Insert])
/** @category models */
export type ViewEdit = typeof ViewEdit.Type

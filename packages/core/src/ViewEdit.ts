/**
 * View edits: overlays on transcript entries that a strategy proposes. An edit
 * never changes the entry it names; the context view applies it when it is
 * assembled (DESIGN.md "Context view").
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { type ContentPart, Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"

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

/**
 * Parts to show in place of others, per view item: item index → (part index
 * → the part shown instead). Strategies that rewrite single parts (tool-result
 * trim and clear, tool-input clear, dedupe) collect them with {@link setPart}
 * and turn them into edits with {@link replaceParts}.
 *
 * @category models
 */
export type PartReplacements = Map<number, Map<number, ContentPart>>

/**
 * Record `part` in place of part `partIndex` of view item `itemIndex`
 * (mutates `replacements`, the caller's own accumulator).
 *
 * @category constructors
 */
export const setPart = (
  replacements: PartReplacements,
  itemIndex: number,
  partIndex: number,
  part: ContentPart
): void => {
  let parts = replacements.get(itemIndex)
  if (parts === undefined) {
    parts = new Map()
    replacements.set(itemIndex, parts)
  }
  parts.set(partIndex, part)
}

/**
 * One `replace` edit per item that has replacements, in view order: the
 * item's message with the replaced parts swapped in and every other part,
 * the role and the provider options kept.
 *
 * @category constructors
 */
export const replaceParts = (
  items: ReadonlyArray<{ readonly entryId: string; readonly message: Message }>,
  replacements: PartReplacements,
  strategy: string,
  reason: string
): Array<ViewEdit> =>
  [...replacements]
    .sort(([a], [b]) => a - b)
    .map(([itemIndex, parts]) => {
      const item = items[itemIndex]!
      const content = MessageParts.contentParts(item.message)
      return {
        op: "replace",
        entryId: item.entryId,
        message: MessageParts.withParts(
          item.message,
          content.map((part, index) => parts.get(index) ?? part)
        ),
        strategy,
        reason
      }
    })

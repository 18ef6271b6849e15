/**
 * The persisted `context-overflow` event: written once per overflow
 * recovery (`engines` `OverflowRecovery`), read back when a session is
 * reopened so the window the provider taught is not forgotten
 * (`provider-adapters` `Session`). Its payload has one schema, and
 * {@link make} / {@link decode} are the only writer and reader.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { type Entry, type EventEntry, make as makeEntry } from "./Entry.ts"

/**
 * The event name.
 *
 * @category constants
 */
export const NAME = "context-overflow"

/**
 * The payload. Tokens throughout. `limitTokens` / `requestedTokens` are
 * what the provider's error stated (`null` when it stated none);
 * `learnedWindowTokens` is the window the recovery compacted against. Events
 * written by older builds may lack the fields marked optional.
 *
 * @category schemas
 */
export const Data = Schema.Struct({
  model: Schema.String,
  learnedWindowTokens: Schema.Number,
  provider: Schema.optionalKey(Schema.String),
  providerMessage: Schema.optionalKey(Schema.String),
  limitTokens: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  requestedTokens: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  /** Our measurement of the request the provider rejected. */
  measuredInputTokens: Schema.optionalKey(Schema.Number),
  /** Whether the recovery's compaction succeeded. */
  compacted: Schema.optionalKey(Schema.Boolean)
})
/** @category models */
export type Data = typeof Data.Type

/**
 * The event entry for `data`, chained after `parentId`.
 *
 * @category constructors
 */
export const make = (
  header: { readonly id: string; readonly parentId: string | null; readonly timestamp: string },
  data: Data
): EventEntry => makeEntry(header, { kind: "event", event: { name: NAME, data } })

const decodeData = Schema.decodeUnknownOption(Data)

/**
 * The payload of a `context-overflow` event entry, or `undefined` for any
 * other entry and for an overflow event whose payload does not decode.
 *
 * @category decoding
 */
export const decode = (entry: Entry): Data | undefined => {
  if (entry.kind !== "event" || entry.event.name !== NAME) return undefined
  const decoded = decodeData(entry.event.data)
  return decoded._tag === "Some" ? decoded.value : undefined
}

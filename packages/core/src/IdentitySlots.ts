/**
 * Values by object identity and a string slot (the measurer's counts per
 * message object and cache slot). Almost every object has one slot, so that
 * value is held as it is; only an object given a second slot gets an array.
 * A `Map` per object instead held ≈9 MiB more for a 60,000-message
 * transcript (issue #13 req 6). Objects are held weakly. Internal (not
 * exported from the package).
 */
import type { Message } from "./Message.ts"
import * as MessageSeal from "./MessageSeal.ts"
import * as ViewPrefix from "./ViewPrefix.ts"

/** One remembered value and its slot. */
interface Held<V> {
  readonly slot: string
  readonly value: V
}

/**
 * An identity-and-slot cache.
 *
 * @category models
 */
export interface IdentitySlots<V> {
  readonly get: (key: object, slot: string) => V | undefined
  /** Remembers `value` for `key` under `slot`, replacing the slot's previous value. */
  readonly set: (key: object, slot: string, value: V) => void
}

/**
 * An empty cache.
 *
 * @category constructors
 */
export const make = <V>(): IdentitySlots<V> => {
  const byKey = new WeakMap<object, Held<V> | Array<Held<V>>>()
  return {
    get: (key, slot) => {
      const known = byKey.get(key)
      if (known === undefined || !Array.isArray(known)) return known?.slot === slot ? known.value : undefined
      return known.find((held) => held.slot === slot)?.value
    },
    set: (key, slot, value) => {
      const known = byKey.get(key)
      if (known === undefined || (!Array.isArray(known) && known.slot === slot)) byKey.set(key, { slot, value })
      else if (!Array.isArray(known)) byKey.set(key, [known, { slot, value }])
      else {
        const index = known.findIndex((held) => held.slot === slot)
        if (index === -1) known.push({ slot, value })
        else known[index] = { slot, value }
      }
    }
  }
}

/**
 * A value kept by message identity (the measurer's count): the value alone
 * for a sealed message (`MessageSeal`: it cannot change), else with the
 * message's `ViewPrefix` shape, checked on every reuse. No shape per sealed
 * message: ≈100 bytes less per imported message (issue #13 req 6).
 *
 * @category models
 */
export type Kept<V extends object> = V | { readonly value: V; readonly shape: ViewPrefix.Shape }

/**
 * What to keep for `value`, counted from `message` ({@link Kept}).
 *
 * @category constructors
 */
export const keep = <V extends object>(message: Message, value: V): Kept<V> =>
  MessageSeal.isSealed(message) ? value : { value, shape: ViewPrefix.shallowStamps.stampOf(message) }

/**
 * The kept value while it is still valid for `message` (sealed, or the same `ViewPrefix` shape), else undefined.
 *
 * @category utils
 */
export const reuse = <V extends object>(kept: Kept<V> | undefined, message: Message): V | undefined => {
  if (kept === undefined || !("shape" in kept)) return kept
  return ViewPrefix.shallowStamps.stillSame(kept.shape, message) ? kept.value : undefined
}

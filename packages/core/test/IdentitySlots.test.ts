import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as IdentitySlots from "../src/IdentitySlots.ts"

describe("IdentitySlots", () => {
  it("answers what a Map per object and slot answers, for any sequence of sets and gets", () => {
    const keys = [{}, {}, {}]
    const slots = ["transcript", "transcript|prior", "synthetic"]
    const op = fc.record({ set: fc.boolean(), key: fc.nat(2), slot: fc.nat(2), value: fc.integer() })
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const cache = IdentitySlots.make<number>()
        const reference = new Map<object, Map<string, number>>(keys.map((key) => [key, new Map()]))
        for (const { set, key, slot, value } of ops) {
          if (set) {
            cache.set(keys[key]!, slots[slot]!, value)
            reference.get(keys[key]!)!.set(slots[slot]!, value)
          }
          for (const k of keys) for (const s of slots) expect(cache.get(k, s)).toBe(reference.get(k)!.get(s))
        }
      })
    )
  })
})

/**
 * The in-memory transcript store, for tests: the same semantics as the
 * durable stores (validation, idempotent appends, checkpoint
 * compare-and-set, lenient/strict reads), with records kept in an array per
 * session. Nothing survives the process.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import * as BackendTranscriptStore from "./BackendTranscriptStore.ts"
import type { Backend, RawRecord } from "./TranscriptBackend.ts"
import { type AsyncTranscriptStore, type Service, TranscriptStore, toAsync } from "./TranscriptStore.ts"

/**
 * The stored records of every session (JSON text per record), exposed so
 * tests can corrupt them on purpose.
 *
 * @category models
 */
export type Records = Map<string, { texts: Array<string>; updatedAt: string }>

/**
 * Creates the in-memory backend over `records`.
 *
 * @category constructors
 */
export const makeBackend = (records: Records = new Map()): Backend => ({
  kind: "memory",
  atomicWrites: true,
  describe: (sessionId) => `memory:${sessionId}`,
  records: async function* (sessionId) {
    const texts = (records.get(sessionId)?.texts ?? []).slice()
    for (let index = 0; index < texts.length; index++) {
      yield { line: index + 1, text: texts[index]!, torn: false } satisfies RawRecord
    }
  },
  exclusive: (sessionId, body) =>
    body({
      readSince: async (cursor) => {
        const texts = records.get(sessionId)?.texts ?? []
        if (texts.length < cursor.offset) return { records: [], cursor, reset: true }
        return {
          records: texts
            .slice(cursor.offset)
            .map((text, index) => ({ line: cursor.offset + index + 1, text, torn: false })),
          cursor: { offset: texts.length, line: texts.length },
          reset: false
        }
      },
      write: async (cursor, texts) => {
        const session = records.get(sessionId) ?? { texts: [], updatedAt: "" }
        for (const text of texts) session.texts.push(text)
        session.updatedAt = new Date().toISOString()
        records.set(sessionId, session)
        return { offset: cursor.offset + texts.length, line: cursor.line + texts.length }
      }
    }),
  listSessions: async () =>
    [...records.entries()].map(([sessionId, session]) => ({ sessionId, updatedAt: session.updatedAt })),
  close: async () => {}
})

/**
 * Creates an in-memory transcript store.
 *
 * @category constructors
 */
export const make = (records?: Records): Service => BackendTranscriptStore.make(makeBackend(records))

/**
 * A layer providing an empty in-memory {@link TranscriptStore}.
 *
 * @category layers
 */
export const layer: Layer.Layer<TranscriptStore> = Layer.effect(
  TranscriptStore,
  Effect.sync(() => make())
)

/**
 * The Promise face of an in-memory store.
 *
 * @category constructors
 */
export const open = (records?: Records): AsyncTranscriptStore => toAsync(make(records))

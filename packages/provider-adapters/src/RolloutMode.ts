/**
 * Rollout modes: the adoption path from offline replay to full control
 * (offline `replay` → `shadow` → `advisory` → `active`).
 *
 * - `shadow`: compaction is computed and recorded — spans, events, and the
 *   checkpoint written to the transcript as a shadow entry (an event entry
 *   named {@link SHADOW_EVENT}, which no request's view applies) — while the
 *   request goes out exactly as the application passed it. The decisions
 *   read the transcript as if the shadows had been applied ({@link applied}),
 *   so a shadow compaction happens where an active one would, not at every
 *   step once the request is over the threshold (a compaction per step — a
 *   summarizer call per step with a model summarizer).
 * - `advisory`: only the deterministic tiers are applied (clamp, dedupe,
 *   tool-trim, media and, when still over budget, dropping whole old turns:
 *   the engine's reduction for `EngineInput.deterministicOnly`); a
 *   checkpoint the engine would write is recorded as a shadow entry instead.
 * - `active` (default): today's behaviour — everything is committed.
 *
 * @since 0.2.0
 */
import { type ContextEngine, Entry } from "@context-engine/core"

/** @category models */
export type RolloutMode = "shadow" | "advisory" | "active"

/** The modes, in adoption order. @category constants */
export const modes: ReadonlyArray<RolloutMode> = ["shadow", "advisory", "active"]

/** Name of the event entry holding a shadow checkpoint. @category constants */
export const SHADOW_EVENT = "context_engine.shadow-checkpoint"

/**
 * The data of a shadow entry: what compaction would have done.
 *
 * @category models
 */
export interface ShadowData {
  readonly mode: RolloutMode
  readonly reasons: ReadonlyArray<string>
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly stages: ReadonlyArray<string>
  readonly checkpoint: unknown
  /**
   * Mode `shadow`: the entries the compaction would have appended (`entriesToAppend`, as JSON), which
   * {@link applied} puts in the transcript for the decisions. Absent in shadow entries written before 0.6.
   */
  readonly entries?: ReadonlyArray<unknown>
}

/**
 * Splits a compaction result by mode: the entries to commit to the
 * transcript, and the shadow record (when something is withheld).
 *
 * @category constructors
 */
export const split = (
  mode: RolloutMode,
  result: ContextEngine.CompactionResult,
  reasons: ReadonlyArray<string>,
  header: { readonly id: string; readonly parentId: string | null; readonly timestamp: string }
): { readonly commit: ReadonlyArray<Entry.Entry>; readonly shadow: Entry.Entry | undefined } => {
  if (mode === "active") return { commit: result.entriesToAppend, shadow: undefined }
  const withheld = mode === "shadow" || result.checkpoint !== undefined
  const commit = mode === "shadow" ? [] : result.entriesToAppend.filter((entry) => entry.kind !== "checkpoint")
  if (!withheld) return { commit, shadow: undefined }
  const data: ShadowData = {
    mode,
    reasons,
    tokensBefore: result.before.inputTokens,
    tokensAfter: result.after.inputTokens,
    stages: result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage),
    checkpoint: result.checkpoint ? JSON.parse(JSON.stringify(result.checkpoint)) : null,
    ...(mode === "shadow" ? { entries: result.entriesToAppend } : {})
  }
  const shadow = Entry.make(header, {
    kind: "event",
    event: { name: SHADOW_EVENT, data: JSON.parse(JSON.stringify(data)) }
  })
  return { commit, shadow }
}

/**
 * The shadow records of a transcript, in order.
 *
 * @category utils
 */
export const shadows = (
  entries: ReadonlyArray<Entry.Entry>
): ReadonlyArray<{ readonly entryId: string; readonly data: ShadowData }> =>
  entries.flatMap((entry) =>
    entry.kind === "event" && entry.event.name === SHADOW_EVENT
      ? [{ entryId: entry.id, data: entry.event.data as unknown as ShadowData }]
      : []
  )

/**
 * `entries` as an active session would hold them: each shadow entry of mode
 * `shadow` preceded by the entries its compaction would have appended (they
 * continue from the shadow's parent, and the shadow now follows the last of
 * them, so the entries after it stay on the same path). The engine's
 * decisions in shadow mode read this; the request still goes out as the
 * application passed it. `entries` is not changed; the same array is
 * returned when it holds no such shadow.
 *
 * @category utils
 */
export const applied = (entries: ReadonlyArray<Entry.Entry>): ReadonlyArray<Entry.Entry> => {
  let out: Array<Entry.Entry> | undefined
  entries.forEach((entry, index) => {
    const withheld = withheldEntries(entry)
    if (withheld === undefined) {
      out?.push(entry)
      return
    }
    out ??= entries.slice(0, index)
    out.push(...withheld, Entry.withParent(entry, withheld.at(-1)!.id))
  })
  return out ?? entries
}

/** The entries a shadow entry of mode `shadow` withheld, when there are any. */
const withheldEntries = (entry: Entry.Entry): ReadonlyArray<Entry.Entry> | undefined => {
  if (entry.kind !== "event" || entry.event.name !== SHADOW_EVENT) return undefined
  const data = entry.event.data as unknown as ShadowData
  return data.mode === "shadow" && Array.isArray(data.entries) && data.entries.length > 0
    ? (data.entries as ReadonlyArray<Entry.Entry>)
    : undefined
}

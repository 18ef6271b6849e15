/**
 * What `compact` repaired to make the request valid for the provider, listed
 * whether or not compaction was needed (#12 req 4): the normalization every
 * request gets — duplicate tool-call ids renamed, a stub result for a call
 * without one (`interrupted:<id>`), results moved next to their call, orphan
 * results dropped, empty and reasoning-only messages dropped
 * (`Normalization.normalize` over the transcript's view) — and the trailing
 * assistant messages dropped where the model has no prefill (the engine's
 * `assembleContext` `repairs`, `RequestShape`). The transcript keeps every
 * original.
 *
 * @since 0.3.0
 */
import { ActiveView, type ContextEngine, type Entry, type ViewEdit } from "@context-engine/core"
import { Normalization } from "@context-engine/strategies"

/**
 * One repair: the entry, what was done (`drop`, `replace`, `insert` …), by
 * which stage and why.
 *
 * @category models
 */
export interface Repair {
  readonly entryId: string
  readonly op: string
  readonly stage: string
  readonly reason: string
}

/**
 * A view edit as a repair.
 *
 * @category constructors
 */
export const repairOf = (edit: ViewEdit.ViewEdit): Repair => ({
  entryId: edit.op === "insert" ? edit.afterEntryId : edit.entryId,
  op: edit.op,
  stage: edit.strategy,
  reason: edit.reason
})

/**
 * The repairs of the request the transcript sends (before compaction) and
 * of the request after it (`appended`: the compaction's entries).
 *
 * @category constructors
 */
export const list = async (
  engine: ContextEngine.AsyncContextEngine,
  input: ContextEngine.EngineInput,
  appended: ReadonlyArray<Entry.Entry>
): Promise<ReadonlyArray<Repair>> => {
  const view = ActiveView.reconstruct(input.entries, { tools: input.tools ?? [] }).view
  const normalized = Normalization.normalize(view).edits
  return [...normalized.map(repairOf), ...(await after(engine, input, appended))]
}

/**
 * The repairs of the request after the compaction alone (the engine's
 * `assembleContext` `repairs` over the input and `appended`).
 *
 * @category constructors
 */
export const after = async (
  engine: ContextEngine.AsyncContextEngine,
  input: ContextEngine.EngineInput,
  appended: ReadonlyArray<Entry.Entry>
): Promise<ReadonlyArray<Repair>> => {
  const assembled = await engine.assembleContext({ ...input, entries: [...input.entries, ...appended] })
  return (assembled.repairs ?? []).map(repairOf)
}

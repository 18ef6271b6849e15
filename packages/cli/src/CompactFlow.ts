/**
 * The steps of `context-engine compact` that the in-memory and the rolling
 * path (`RollingCompact.ts`) share: the engine the options choose, the input
 * of one run, and the final decision → compaction or unchanged request.
 *
 * @since 0.6.0
 */
import { Budget, type ContextEngine, type Entry, type Measurer, type ModelPolicy } from "@context-engine/core"
import { SlidingWindowEngine, type Summarizer, TieredSummaryEngine } from "@context-engine/engines"
import type { CompactOptions } from "./commands/compact.ts"

/**
 * The engine `--engine` chooses, with the summarizer (`--summarizer`) for the tiered one; `measurer` replaces
 * the engine's own (`EngineOptions.measurer`; a rolling compaction empties its cache between rounds).
 *
 * @category constructors
 */
export const engineFor = (
  options: CompactOptions,
  summarizer: Summarizer.Summarizer | undefined,
  measurer?: Measurer.Measurer
): ContextEngine.AsyncContextEngine => {
  const measuring = measurer === undefined ? {} : { measurer: () => measurer }
  return options.engine === "sliding-window"
    ? SlidingWindowEngine.makeAsync(measuring)
    : TieredSummaryEngine.makeAsync({ ...(summarizer ? { summarizer } : {}), ...measuring })
}

/**
 * The engine input of one run: `--force` / `--instructions` make it manual, the
 * instructions go to the summarizer (`EngineInput.compactInstructions`).
 *
 * @category constructors
 */
export const inputOf = (
  entries: ReadonlyArray<Entry.Entry>,
  policy: ModelPolicy.ModelPolicy,
  options: CompactOptions
): ContextEngine.EngineInput => {
  const instructions = options.instructions?.trim() || undefined
  return {
    entries,
    policy,
    ...(options.force || instructions ? { manual: true } : {}),
    ...(instructions ? { compactInstructions: instructions } : {})
  }
}

/** The request as it goes out when no compaction is due: the engine's assembled view, no stage run, nothing to append. */
const unchanged = async (
  engine: ContextEngine.AsyncContextEngine,
  input: ContextEngine.EngineInput
): Promise<ContextEngine.CompactionResult> => {
  const { view, measurement } = await engine.assembleContext(input)
  return { view, edits: [], entriesToAppend: [], stages: [], before: measurement, after: measurement, fits: true }
}

/**
 * The decision, then — as the middleware does — a compaction only when the
 * decision says one is due (or the input is manual); a request that fits goes
 * out as it is (a threshold compaction would summarize it down to the
 * low-water mark). `overhead`: the system messages and tool schemas alone
 * exceed the input budget — no compaction helps, nothing "fits" (exit 3).
 *
 * @category constructors
 */
export const decideAndCompact = async (
  engine: ContextEngine.AsyncContextEngine,
  input: ContextEngine.EngineInput
): Promise<
  | { readonly decision: ContextEngine.CompactionDecision; readonly result: ContextEngine.CompactionResult }
  | { readonly overhead: unknown }
> => {
  const decision = await engine.shouldCompact(input)
  const overhead = Budget.fixedOverheadError(decision.budget, {
    toolSchemaTokens: decision.measurement.byCategory.toolSchemas
  })
  if (overhead !== undefined) return { overhead }
  const result =
    decision.compact || input.manual === true
      ? await engine.compact(input, await engine.plan(input))
      : await unchanged(engine, input)
  return { decision, result }
}

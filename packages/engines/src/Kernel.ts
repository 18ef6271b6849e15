/**
 * The engine kernel's shapes (`Engine.kernel` builds it): an input made
 * ready (`Prepared`), the targets of one compaction and the kernel's
 * operations that engine configurations call.
 *
 * @since 0.3.0
 */
import type {
  ActiveView,
  Budget,
  ContextEngine,
  ContextView,
  Entry as EntryType,
  Measurement,
  Measurer,
  ModelPolicy,
  Strategy,
  ViewEdit
} from "@context-engine/core"
import type { IncrementalNormalization, Pipeline } from "@context-engine/strategies"
import type * as RequestPath from "./RequestPath.ts"

/** An input made ready: its view, the measurer, overhead, budget and measurement. @category models */
export interface Prepared {
  readonly active: ActiveView.ActiveView
  readonly view: ContextView.ContextView
  readonly measurer: Measurer.Measurer
  readonly overhead: { readonly systemTokens: number; readonly toolSchemaTokens: number }
  readonly budget: Budget.Budget
  readonly measurement: Measurement.Measurement
  /** The checkpoint's view item and its tokens, when the view has one. */
  readonly checkpoint: { readonly item: ContextView.ViewItem; readonly tokens: number } | undefined
  /**
   * Set when `measurer` estimates the old part of a cold view (`EstimateFirst`): the exact measurer that
   * `run` measures the result with (and re-runs the pipeline with when the result is over its target).
   */
  readonly exact?: Measurer.Measurer
}

/** The targets of one compaction, in input tokens. @category models */
export interface Targets {
  readonly reasons: ReadonlyArray<ContextEngine.CompactionReason>
  /** Manual or overflow: compact even when the request fits. */
  readonly force: boolean
  /** The request must fit this: the input budget, lowered by a caller's plan, an overflow or `/compact`. */
  readonly targetTokens: number
  /** Where a compaction that is not manual or an overflow aims (hysteresis); `targetTokens` otherwise. */
  readonly lowWaterTokens: number
}

/** The kernel an engine configuration is built on. @category models */
export interface Kernel {
  readonly measurerFor: (policy: ModelPolicy.ModelPolicy) => Measurer.Measurer
  readonly prepare: (input: ContextEngine.EngineInput) => Prepared
  /**
   * `prepare` for a compaction: a view the measurer has not counted and that is far over the target is
   * prepared estimate-first (`EstimateFirst`: exact counts for the recent suffix only); `run` then measures
   * the result exactly. Never cached for `shouldCompact` / `measure`.
   */
  readonly prepareToCompact: (input: ContextEngine.EngineInput) => Prepared
  readonly reasons: (input: ContextEngine.EngineInput, prepared: Prepared) => Array<ContextEngine.CompactionReason>
  readonly targets: (
    input: ContextEngine.EngineInput,
    prepared: Prepared,
    plan?: ContextEngine.CompactionPlan
  ) => Targets
  /**
   * The stages before the lossy tier: built-in (or their replacement), then the custom strategies.
   * `rewriting` (default false): the compaction rewrites the prompt cache whatever its stages free (a
   * threshold compaction of the tiered engine, run to the bottom: cheap stages or a checkpoint, either edits
   * the cached prefix); the built-in stages' prompt-cache guard (`Tiers.cacheGuardTokens`, a minimum each
   * stage must free so that an edit pays for the cache write it causes) is then off, unless the options set
   * `toolTrim.minReclaimTokens`. Providers cache by prefix (Anthropic, OpenAI prompt caching), so the rewrite
   * starts at the first edit whatever the later stages add; Anthropic's `clear_at_least` is likewise one
   * minimum per activation of `clear_tool_uses` (results and inputs together), not one per kind of edit.
   */
  readonly ladder: (
    input: ContextEngine.EngineInput,
    prepared: Prepared,
    rewriting?: boolean
  ) => Array<Strategy.Strategy>
  /** Runs strategies on the prepared view with the checkpoint out of their reach. */
  readonly run: (
    input: ContextEngine.EngineInput,
    prepared: Prepared,
    strategies: ReadonlyArray<Strategy.Strategy>,
    targetTokens: number,
    protectLatestUserMessage?: boolean
  ) => Pipeline.Result
  /**
   * The prepared view normalized (pairing repaired, empty messages dropped) as the pipeline's normalize stage
   * does, with its measurement; incremental across steps of one session (`IncrementalNormalization`).
   */
  readonly normalize: (prepared: Prepared) => IncrementalNormalization.Normalized
  /**
   * The request `input` sends from `prepared` (`RequestPath.shape` of its normalized view), once per
   * preparation: what `assembleContext` sends and what {@link measured} measures.
   */
  readonly request: (input: ContextEngine.EngineInput, prepared: Prepared) => RequestPath.Shaped
  /**
   * What the request measures once assembled ({@link request}'s measurement — what `measure`, `shouldCompact`
   * and the threshold reason use); an estimate-counted preparation keeps its own.
   */
  readonly measured: (input: ContextEngine.EngineInput, prepared: Prepared) => Measurement.Measurement
  readonly editEntries: (
    input: ContextEngine.EngineInput,
    edits: ReadonlyArray<ViewEdit.ViewEdit>,
    timestamp: string,
    after?: ReadonlyArray<EntryType.Entry>
  ) => Array<EntryType.EditEntry>
  /** The clock ({@link Options.now}), as an ISO timestamp. */
  readonly timestamp: (input: ContextEngine.EngineInput) => string
  /** A compaction succeeded: a pending overflow is handled. */
  readonly compacted: () => void
}

/**
 * The kernel's per-request methods: assemble the request an input sends, and
 * record what the provider said about it.
 *
 * @since 0.3.0
 */
import {
  type ContextEngine,
  ContextView,
  Errors,
  type Measurement,
  Measurer,
  type Message,
  RequestShape,
  UsageScale,
  type ViewEdit
} from "@context-engine/core"
import { IncrementalNormalization } from "@context-engine/strategies"
import { Effect } from "effect"
import type { Kernel } from "./Engine.ts"
import type { Prepared } from "./Kernel.ts"

/**
 * What `recordOutcome` leaves for later calls: the provider's usage as an
 * anchor, the usage-to-local-count ratio it showed ({@link UsageScale}), and
 * a pending overflow.
 *
 * @category models
 */
export interface State {
  anchor: Measurer.Anchor | undefined
  usage: UsageScale.UsageRatio | undefined
  overflow: Errors.ContextOverflow | undefined
}

/**
 * The request a preparation sends, from its normalized view: where the
 * policy has no assistant prefill, the assistant messages that end it are
 * dropped (`RequestShape.trailingAssistantDrops`); recorded commands at its
 * end are marked as executed (`RequestShape.markExecutedCommands`, C18); and
 * its measurement (the normalized one when nothing changed). The one home of
 * the request's shape: `shouldCompact`'s threshold, `measure` and
 * `assembleContext` all read it (the threshold measured the normalized view,
 * so a request whose marks added tokens went out over the budget unnoticed).
 *
 * @category models
 */
export interface Shaped {
  readonly view: ContextView.ContextView
  readonly measurement: Measurement.Measurement
  readonly drops: ReadonlyArray<typeof ViewEdit.Drop.Type>
}

/**
 * {@link Shaped} of `normalized` (the kernel's `normalize` of `prepared`).
 *
 * @category constructors
 */
export const shape = (
  input: ContextEngine.EngineInput,
  prepared: Prepared,
  normalized: IncrementalNormalization.Normalized
): Shaped => {
  let view = normalized.view
  const drops =
    input.policy.assistantPrefill === false ? RequestShape.trailingAssistantDrops(view.items, input.policy.model) : []
  if (drops.length > 0) {
    const dropped = new Set(drops.map((edit) => edit.entryId))
    view = { ...view, items: view.items.filter((item) => !dropped.has(item.entryId)) }
  }
  const items = RequestShape.markExecutedCommands(view.items)
  if (items !== view.items) view = { ...view, items }
  const measurement =
    view === normalized.view ? normalized.after : prepared.measurer.measure(view, { budget: prepared.budget })
  return { view, measurement, drops }
}

/**
 * The kernel's `normalize` and `request`, each computed once per
 * preparation (one step's `shouldCompact`, `measure` and `assembleContext`
 * share them): the view normalized as the pipeline's normalize stage does,
 * incrementally across steps (`IncrementalNormalization`), and its
 * {@link shape}.
 *
 * @category constructors
 */
export const perPreparation = (): Pick<Kernel, "normalize" | "request"> => {
  const incremental = IncrementalNormalization.make()
  const normalized = new WeakMap<Prepared, IncrementalNormalization.Normalized>()
  const shaped = new WeakMap<Prepared, Shaped>()
  const normalize: Kernel["normalize"] = (prepared) => {
    let found = normalized.get(prepared)
    if (found === undefined) {
      found = incremental(prepared.view, prepared.measurer, prepared.measurement)
      normalized.set(prepared, found)
    }
    return found
  }
  const request: Kernel["request"] = (input, prepared) => {
    let found = shaped.get(prepared)
    if (found === undefined) {
      found = shape(input, prepared, normalize(prepared))
      shaped.set(prepared, found)
    }
    return found
  }
  return { normalize, request }
}

/**
 * The request for an input: the view with pairing repaired and empty or
 * reasoning-only messages dropped (the pipeline's normalize stage), ending on
 * a user message or tool result where the policy has no assistant prefill
 * (`RequestShape`; those drops are reported in `repairs`). An empty latest
 * user message fails with `InvalidInput` (never sent silently).
 *
 * @category constructors
 */
export const assemble = (
  core: Kernel,
  input: ContextEngine.EngineInput
): Effect.Effect<ContextEngine.AssembledContext, Errors.InvalidInput> =>
  Effect.suspend(() => {
    const prepared = core.prepare(input)
    // Pairing repair and empty-message removal apply to every request, compacted or not; incrementally, so a
    // step costs what it appends (the same view and measurement as the pipeline's normalize stage).
    const normalized = core.normalize(prepared)
    const empty = RequestShape.emptyLatestUser(normalized.view.items)
    if (empty >= 0) {
      const entryId = normalized.view.items[empty]!.entryId
      const index = input.entries.findIndex((entry) => entry.id === entryId)
      return Effect.fail(
        new Errors.InvalidInput({
          what: "request",
          path: index >= 0 ? `entries[${index}].message.content` : `entry ${entryId}`,
          detail:
            "the latest user message is empty; providers reject an empty message (Anthropic: text content blocks must be non-empty), so there is nothing to send"
        })
      )
    }
    const { view, measurement, drops } = core.request(input, prepared)
    const sent = view
    let messages: ReadonlyArray<Message.Message> | undefined
    return Effect.succeed({
      // Built on first read: the middleware sends the view's items (ControllerRuntime), so a step that never
      // reads the message list does not build one the length of the view.
      get messages() {
        messages ??= ContextView.toMessages(sent)
        return messages
      },
      view,
      measurement,
      ...(drops.length > 0 ? { repairs: drops } : {})
    })
  })

/**
 * Records an outcome: an overflow is kept for the next compaction and drops
 * the anchor (the usage it recorded was wrong); a usage becomes the anchor
 * (it carries the fingerprint of the view it describes, so it expires by
 * itself once a compaction edits that prefix) and sets the usage-to-local
 * ratio (`UsageScale`) that later counts use until the next usage.
 *
 * @category constructors
 */
export const recordOutcome = (
  core: Kernel & { readonly state: State },
  input: ContextEngine.EngineInput,
  outcome: ContextEngine.Outcome
): Effect.Effect<void> =>
  Effect.sync(() => {
    if (outcome.overflow !== undefined) {
      core.state.overflow = outcome.overflow
      core.state.anchor = undefined
    } else if (outcome.inputTokens !== undefined && outcome.lastEntryId !== undefined) {
      const usage = { inputTokens: outcome.inputTokens, lastEntryId: outcome.lastEntryId }
      const view = core.prepare(input).view
      core.state.usage = UsageScale.ratioFor(core.measurerFor(input.policy), view, usage) ?? core.state.usage
      core.state.anchor = Measurer.anchorFor(view, usage, core.state.anchor)
    }
  })

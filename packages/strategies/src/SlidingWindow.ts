/**
 * `slidingWindow`: drops the oldest whole turns until the view is estimated
 * to fit. System messages are never dropped (they stay where they are), the
 * turn in progress (the last turn, from the latest user message on) is never
 * dropped, nor is the latest user message when its turn goes (it stays, as
 * the invariants require), and a turn goes as a whole, so a tool call never loses its result
 * and a parallel batch moves as one (turns are built from `Turns.units`).
 *
 * This is the only lossy built-in stage: what it drops is still in the
 * transcript, but the view holds no reference to it. Engines that must not
 * lose context run a checkpoint instead.
 *
 * @since 0.1.0
 */

import type { Strategy, ViewEdit } from "@context-engine/core"
import { Turns } from "@context-engine/core"

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  /**
   * Most recent turns never dropped, counting the turn in progress.
   * Default 1: only the turn in progress is guaranteed (Pi's `findCutPoint`
   * never cuts inside the current turn; everything older may go).
   */
  readonly keepRecentTurns?: number
  /**
   * Tokens the stage must free to be applied (prompt-cache guard). Default 0:
   * the window runs only when cheaper stages did not make the view fit.
   */
  readonly minReclaimTokens?: number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = { keepRecentTurns: 1, minReclaimTokens: 0 } as const satisfies Required<Options>

/**
 * Name of the strategy (and of its stage in reports).
 *
 * @category constants
 */
export const NAME = "slidingWindow"

/**
 * Builds the strategy.
 *
 * @category constructors
 */
export const make = (options: Options = {}): Strategy.Strategy => {
  const keepRecentTurns = Math.max(1, options.keepRecentTurns ?? defaults.keepRecentTurns)
  return {
    name: NAME,
    lossy: true,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: ({ view, measurement, targetTokens, measurer }) => {
      const spans = Turns.turns(view.items)
      // The latest user message stays where it is, like a system message (the invariants refuse its drop):
      // counting it as freed stopped the window short of its target.
      const latestUser = Turns.latestUserIndex(view.items)
      const droppable = spans.slice(0, Math.max(0, spans.length - keepRecentTurns))
      const needed = measurement.inputTokens - targetTokens
      const edits: Array<ViewEdit.ViewEdit> = []
      let freed = 0
      let turnsDropped = 0
      for (const span of droppable) {
        if (freed >= needed) break
        for (let index = span.start; index < span.end; index++) {
          const item = view.items[index]!
          if (item.message.role === "system" || index === latestUser) continue
          // A dropped turn is before the current tool loop: it counts as the measurement counted it (prior-turn
          // reasoning by its provider rule, ReasoningTokens), or the window stops short of its target.
          freed += measurer.messageTokens(item.message, item.source, "prior")
          edits.push({
            op: "drop",
            entryId: item.entryId,
            strategy: NAME,
            reason: `oldest turn dropped (turn starting at ${view.items[span.start]!.entryId})`
          })
        }
        turnsDropped++
      }
      return { edits, tokensFreed: freed, note: `${turnsDropped} of ${spans.length} turn(s) dropped` }
    }
  }
}

/**
 * The strategy with default options.
 *
 * @category constructors
 */
export const slidingWindow: Strategy.Strategy = make()

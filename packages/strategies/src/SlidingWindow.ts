/**
 * `slidingWindow`: drops the oldest whole turns until the view is estimated
 * to fit. System messages are never dropped (they stay where they are), the
 * turn in progress (the last turn, from the latest user message on) is never
 * dropped, nor is the latest user message when its turn goes (it stays, as
 * the invariants require). The last turn to go, when dropping it whole would
 * free far more than needed and its older steps alone free enough, keeps its
 * ask and its latest step and loses only its oldest steps (a long tool loop
 * dropped whole left 80 tokens of a 3,200-token budget on Gemini CLI day 16
 * at 8K; pi's `findCutPoint` likewise cuts inside a turn). Steps go as whole
 * units (`Turns.units`), so a tool call never loses its result and a
 * parallel batch moves as one; a newer turn never goes while an older one's
 * ask stays.
 *
 * This is the only lossy built-in stage: what it drops is still in the
 * transcript, but the view holds no reference to it. Engines that must not
 * lose context run a checkpoint instead.
 *
 * @since 0.1.0
 */

import type { ContextView, Strategy, ViewEdit } from "@context-engine/core"
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
  /**
   * Entry ids of messages the window keeps in place, like the latest user
   * message (e.g. the reduction's pinned task-setting ask: `Reduce`). Default none.
   */
  readonly keepEntryIds?: ReadonlyArray<string>
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  keepRecentTurns: 1,
  minReclaimTokens: 0,
  keepEntryIds: []
} as const satisfies Required<Options>

/**
 * Name of the strategy (and of its stage in reports).
 *
 * @category constants
 */
export const NAME = "slidingWindow"

/**
 * The steps of a turn after the user messages that open it (`Turns.units`): what a partly dropped turn may lose,
 * oldest first. Empty for a turn that opens with no user message (a leading run).
 */
const stepsAfterAsk = (items: ReadonlyArray<ContextView.ViewItem>, span: Turns.Span): Array<Turns.Span> => {
  const inTurn = Turns.units(items.slice(span.start, span.end)).map((unit) => ({
    start: span.start + unit.start,
    end: span.start + unit.end
  }))
  let first = 0
  while (first < inTurn.length && items[inTurn[first]!.start]!.message.role === "user") first++
  return first === 0 ? [] : inTurn.slice(first)
}

/**
 * What a window drops from a view, and how much that frees: never a system
 * message, the latest user message or a kept entry (they stay in place and
 * count as nothing freed). `position` is the dropped messages' place for
 * their reasoning (`ReasoningTokens`): a dropped older turn counts as the
 * measurement counted it, "prior", or the window stops short of its target.
 */
const dropper = (input: Strategy.StrategyInput, kept: ReadonlySet<string>, strategy: string, position?: "prior") => {
  const { view, measurer } = input
  const latestUser = Turns.latestUserIndex(view.items)
  const edits: Array<ViewEdit.ViewEdit> = []
  let freed = 0
  const tokensIn = (start: number, end: number): number => {
    let tokens = 0
    for (let index = start; index < end; index++) {
      const item = view.items[index]!
      if (item.message.role === "system" || index === latestUser || kept.has(item.entryId)) continue
      tokens += measurer.messageTokens(item.message, item.source, position)
    }
    return tokens
  }
  const drop = (start: number, end: number, reason: string): void => {
    freed += tokensIn(start, end)
    for (let index = start; index < end; index++) {
      const item = view.items[index]!
      if (item.message.role === "system" || index === latestUser || kept.has(item.entryId)) continue
      edits.push({ op: "drop", entryId: item.entryId, strategy, reason })
    }
  }
  /** Drops `steps` but the latest, oldest first, until `needed` tokens are freed; how many went. */
  const dropOldestSteps = (steps: ReadonlyArray<Turns.Span>, needed: number, reason: string): number => {
    let dropped = 0
    for (const step of steps.slice(0, -1)) {
      if (freed >= needed) break
      drop(step.start, step.end, reason)
      dropped++
    }
    return dropped
  }
  return { edits, tokensIn, drop, dropOldestSteps, freed: () => freed }
}

/**
 * Builds the strategy.
 *
 * @category constructors
 */
export const make = (options: Options = {}): Strategy.Strategy => {
  const keepRecentTurns = Math.max(1, options.keepRecentTurns ?? defaults.keepRecentTurns)
  const kept = new Set(options.keepEntryIds ?? defaults.keepEntryIds)
  return {
    name: NAME,
    lossy: true,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: (input) => {
      const { view, measurement, targetTokens } = input
      const spans = Turns.turns(view.items)
      const droppable = spans.slice(0, Math.max(0, spans.length - keepRecentTurns))
      const needed = measurement.inputTokens - targetTokens
      // The latest user message stays where it is, like a system message (the invariants refuse its drop):
      // counting it as freed stopped the window short of its target.
      const window = dropper(input, kept, NAME, "prior")
      let turnsDropped = 0
      let stepsDropped = 0
      for (const span of droppable) {
        if (window.freed() >= needed) break
        const start = view.items[span.start]!.entryId
        const steps = stepsAfterAsk(view.items, span)
        const older = steps.slice(0, -1)
        // Its steps but the latest: when even they cannot free what is needed, the whole turn goes (a newer turn
        // never goes while an older one's ask stays).
        const olderTokens = older.reduce((sum, step) => sum + window.tokensIn(step.start, step.end), 0)
        if (
          window.freed() + window.tokensIn(span.start, span.end) <= needed ||
          older.length === 0 ||
          window.freed() + olderTokens < needed
        ) {
          window.drop(span.start, span.end, `oldest turn dropped (turn starting at ${start})`)
          turnsDropped++
          continue
        }
        // The last turn to go would free far more than needed (a long tool loop, gemini day 16 at 8K: 80 tokens
        // were left of a 3,200-token budget): its ask stays and only its oldest steps go, whole units, so every
        // tool call keeps its result and the turn's latest step stays.
        stepsDropped += window.dropOldestSteps(
          steps,
          needed,
          `oldest steps of a turn dropped (turn starting at ${start})`
        )
      }
      const partly = stepsDropped > 0 ? `, the oldest ${stepsDropped} step(s) of the next` : ""
      return {
        edits: window.edits,
        tokensFreed: window.freed(),
        note: `${turnsDropped} of ${spans.length} turn(s) dropped${partly}`
      }
    }
  }
}

/**
 * Name of {@link turnSteps} (and of its stage in reports).
 *
 * @category constants
 */
export const STEPS_NAME = "slidingWindow.steps"

/**
 * The window inside the turn in progress, for when that turn alone is over
 * the target: a long tool loop (one ask, then dozens of edit steps) whose old
 * calls and results the trims have already cut to placeholders. It drops the
 * turn's oldest steps, whole units (a tool call goes with its result), and
 * keeps its ask, its latest step and the latest user message. Pi's
 * `findCutPoint` likewise cuts inside the current turn when it alone exceeds
 * what is kept; without a summary, what goes stays in the transcript. The
 * last-resort rungs run it (`Tiers.lastResort`, the tiered engine's
 * reduction); a 70-step edit loop went out at 10,314 tokens into an 8,000-token
 * window without it.
 *
 * @category constructors
 */
export const turnSteps = (options: Pick<Options, "keepEntryIds"> = {}): Strategy.Strategy => {
  const kept = new Set(options.keepEntryIds ?? defaults.keepEntryIds)
  return {
    name: STEPS_NAME,
    lossy: true,
    minReclaimTokens: 0,
    apply: (input) => {
      const last = Turns.turns(input.view.items).at(-1)
      const steps = last === undefined ? [] : stepsAfterAsk(input.view.items, last)
      const inTurn = dropper(input, kept, STEPS_NAME)
      const dropped =
        last === undefined
          ? 0
          : inTurn.dropOldestSteps(
              steps,
              input.measurement.inputTokens - input.targetTokens,
              `oldest step of the turn in progress dropped (turn starting at ${input.view.items[last.start]!.entryId})`
            )
      return {
        edits: inTurn.edits,
        tokensFreed: inTurn.freed(),
        note: `${dropped} of ${steps.length} step(s) of the turn in progress dropped`
      }
    }
  }
}

/**
 * The strategy with default options.
 *
 * @category constructors
 */
export const slidingWindow: Strategy.Strategy = make()

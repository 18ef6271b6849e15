/**
 * Estimate-first compaction of a cold view (issue #13 req 2): the pipeline
 * needs exact counts only near its cut, so a compaction whose view the
 * measurer has not counted yet estimates the old part of the view (where
 * tool results get cleared and turns dropped) and counts exactly only the
 * recent suffix that will likely stay, plus the result. The result is then
 * measured exactly; when that count is over the target, the pipeline runs
 * again on the result with exact counts (all of them cached by then, so the
 * second pass is cheap). A compaction therefore never overshoots its target
 * by an estimation error: `after` is always an exact measurement.
 *
 * Only `before` (and the token numbers of the first pass's stage reports)
 * carry estimates; the measurement says so (`method: "estimate"` with a note
 * of how many messages were estimated).
 *
 * @since 0.3.0
 */
import type { ContextEngine, ContextView, Measurer, Message, Tokenizer } from "@context-engine/core"
import { Estimator } from "@context-engine/core"
import type { Pipeline } from "@context-engine/strategies"

/**
 * The estimator of the old part: characters / 4 (≈ 100× cheaper than exact
 * BPE counting and within ~15 % in aggregate on the real transcripts, `node
 * bench/run.ts measure`). Its error costs no correctness — the result is
 * counted exactly — only a second (cheap) pass when it under-estimates.
 *
 * @category constants
 */
export const estimator: Tokenizer.Tokenizer = {
  name: "estimate:chars/4",
  method: "estimate",
  count: Estimator.charsPerFour
}

/**
 * The recent suffix counted exactly, as a multiple of the compaction's
 * target: the cut lands inside it (what a compaction keeps is at most the
 * target), with room for the estimator's error. Own choice (issue #13: "exact
 * counts only near the budget boundary — a suffix of ~2× the budget"; 1.5× measured as fast on the pi session, `bench/pipeline.bench.ts`).
 *
 * @category constants
 */
export const EXACT_SUFFIX_FACTOR = 1.5

/**
 * The path is taken only when the estimated view is more than this multiple
 * of the target: below it most of the view stays and exact counting costs
 * about the same. Own choice.
 *
 * @category constants
 */
export const MIN_VIEW_FACTOR = 2

/**
 * The messages to count exactly: the system prompt and memory (fixed
 * overhead) and the suffix whose estimated tokens reach
 * `EXACT_SUFFIX_FACTOR × targetTokens`. Everything else — the old part and
 * every message a stage writes (trimmed results, placeholders) — is
 * estimated until the result is measured. `undefined` when the view is not
 * over `MIN_VIEW_FACTOR × targetTokens` (then count everything exactly).
 *
 * @category constructors
 */
export const exactSuffix = (
  view: ContextView.ContextView,
  rough: Measurer.Measurer,
  targetTokens: number
): Set<Message.Message> | undefined => {
  let total = 0
  const tokens = view.items.map((item) => rough.messageTokens(item.message, item.source))
  for (const count of tokens) total += count
  if (total <= MIN_VIEW_FACTOR * targetTokens) return undefined
  const exact = new Set<Message.Message>()
  let suffix = 0
  for (const item of view.items) if (item.source === "memory" || item.message.role === "system") exact.add(item.message)
  for (let index = view.items.length - 1; index >= 0 && suffix < EXACT_SUFFIX_FACTOR * targetTokens; index--) {
    suffix += tokens[index]!
    exact.add(view.items[index]!.message)
  }
  return exact
}

/**
 * Finishes an estimate-first compaction: measures `first`'s view exactly;
 * when it is over `targetTokens`, runs `rerun` (the pipeline again, on that
 * view with the exact measurer) and merges both passes (edits in order,
 * stage reports per stage).
 *
 * @category constructors
 */
export const finish = (
  first: Pipeline.Result,
  exact: Measurer.Measurer,
  measureOptions: Parameters<Measurer.Measurer["measure"]>[1],
  targetTokens: number,
  rerun: (view: ContextView.ContextView, measurement: ReturnType<Measurer.Measurer["measure"]>) => Pipeline.Result
): Pipeline.Result => {
  const after = exact.measure(first.view, measureOptions)
  if (after.inputTokens <= targetTokens) return { ...first, after, fits: true }
  const second = rerun(first.view, after)
  const failures = [...(first.failures ?? []), ...(second.failures ?? [])]
  return {
    view: second.view,
    edits: [...first.edits, ...second.edits],
    stages: mergeStages(first.stages, second.stages),
    before: first.before,
    after: second.after,
    fits: second.fits,
    ...(failures.length > 0 ? { failures } : {})
  }
}

/** One report per stage: the exact pass's work added to the stage it repeated. */
const mergeStages = (
  first: ReadonlyArray<ContextEngine.StageReport>,
  second: ReadonlyArray<ContextEngine.StageReport>
): Array<ContextEngine.StageReport> =>
  first.map((stage, index) => {
    const more = second[index]
    if (more === undefined || more.stage !== stage.stage) return stage
    const durationMs = stage.durationMs + more.durationMs
    if (more.status !== "applied") return { ...stage, durationMs }
    const applied = stage.status === "applied"
    return {
      ...stage,
      status: "applied",
      tokensBefore: applied ? stage.tokensBefore : more.tokensBefore,
      tokensAfter: more.tokensAfter,
      edits: (applied ? stage.edits : 0) + more.edits,
      durationMs,
      note: [applied ? stage.note : undefined, `exact pass: ${more.note ?? `${more.edits} edit(s)`}`]
        .filter((note) => note !== undefined)
        .join("; ")
    }
  })

/**
 * A progress bar (cli-progress, on stderr) that appears only when a phase
 * has been running for more than `delayMs` (default 1,000 ms) and stderr
 * is a terminal, so short runs and piped output stay clean.
 *
 * @since 0.1.0
 */
import cliProgress from "cli-progress"

/**
 * A progress reporter for one command run.
 *
 * @category models
 */
export interface Progress {
  /** Reports `done` of `total` units for the named phase. */
  readonly update: (phase: string, done: number, total: number) => void
  /** Removes the bar, if shown. */
  readonly stop: () => void
}

/**
 * Creates a progress reporter.
 *
 * @category constructors
 */
export const make = (
  options: { readonly delayMs?: number; readonly enabled?: boolean; readonly stream?: NodeJS.WriteStream } = {}
): Progress => {
  const stream = options.stream ?? process.stderr
  const enabled = options.enabled ?? stream.isTTY === true
  const delayMs = options.delayMs ?? 1_000
  const startedAt = performance.now()
  let bar: cliProgress.SingleBar | undefined
  let currentPhase = ""
  return {
    update: (phase, done, total) => {
      if (!enabled || performance.now() - startedAt < delayMs) return
      if (bar === undefined) {
        bar = new cliProgress.SingleBar(
          {
            stream,
            format: "{phase} [{bar}] {percentage}% | {value}/{total}",
            hideCursor: true,
            clearOnComplete: true
          },
          cliProgress.Presets.shades_classic
        )
        bar.start(total, done, { phase })
        currentPhase = phase
      } else if (phase !== currentPhase) {
        bar.setTotal(total)
        currentPhase = phase
      }
      bar.update(done, { phase })
    },
    stop: () => {
      bar?.stop()
      bar = undefined
    }
  }
}

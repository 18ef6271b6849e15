/**
 * A full garbage collection, run by a rolling compaction between rounds
 * (`RollingCompact.ts`): the moment a round's working set — the window's
 * dropped entries and the engine's intermediate views — has just become
 * garbage. V8 lets the old generation grow to several times the live set
 * before it marks again (measured on the 101 MiB pi session of
 * `bench/compact-memory.bench.ts`: ≈ 80 MB live, 356 MB heap before the next
 * mark-compact, 510 MiB peak RSS), so without it the peak is set by garbage,
 * not by the window. Node exposes `gc` only behind `--expose-gc`; the flag is
 * set at run time (`v8.setFlagsFromString`, which Node documents with a
 * warning that flags set after start-up may not take effect) and the
 * function read from a fresh context. Where that is refused, collecting is
 * skipped (results never depend on it).
 *
 * @since 0.6.0
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

let gc: (() => void) | null | undefined

/**
 * Runs a full garbage collection when the runtime allows it; otherwise does nothing.
 *
 * @category utils
 */
export const collect = (): void => {
  if (gc === undefined) {
    try {
      setFlagsFromString("--expose-gc")
      const found = runInNewContext("gc") as unknown
      gc = typeof found === "function" ? (found as () => void) : null
    } catch {
      gc = null
    }
  }
  gc?.()
}

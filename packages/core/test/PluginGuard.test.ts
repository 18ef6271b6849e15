import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as PluginGuard from "../src/PluginGuard.ts"

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: E } | undefined
  if (reason === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

const options = { plugin: "p", kind: "hook" as const, timeoutMs: 50 }

describe("PluginGuard.guardPromise", () => {
  it("passes a result through", async () => {
    expect(await Effect.runPromise(PluginGuard.guardPromise({ ...options, run: async () => 42 }))).toBe(42)
  })

  it("a synchronous throw, a rejection, a hang and a malformed result are typed failures", async () => {
    const cases: Array<
      [PluginGuard.PluginFailure, () => Promise<number> | number, ((n: number) => string | undefined)?]
    > = [
      [
        "threw",
        () => {
          throw new TypeError("boom")
        }
      ],
      ["threw", () => Promise.reject(new Error("rejected"))],
      ["timeout", () => new Promise<number>(() => {})],
      ["malformed", async () => -1, (n) => (n < 0 ? "negative" : undefined)]
    ]
    for (const [expected, run, validate] of cases) {
      const error = failureOf(await Effect.runPromiseExit(PluginGuard.guardPromise({ ...options, run, validate })))
      expect(error._tag).toBe("PluginFailed")
      expect(error.failure).toBe(expected)
      expect(error.message).toContain("hook p")
    }
  })

  it("the caller's abort ends a plug-in that ignores it, and the plug-in's own signal fires", async () => {
    const controller = new AbortController()
    let seen: AbortSignal | undefined
    const pending = Effect.runPromiseExit(
      PluginGuard.guardPromise({
        ...options,
        timeoutMs: 60_000,
        signal: controller.signal,
        run: (signal) => {
          seen = signal
          return new Promise<number>(() => {})
        }
      })
    )
    controller.abort(new Error("user pressed stop"))
    const error = failureOf(await pending)
    expect(error.failure).toBe("aborted")
    expect(error.detail).toContain("user pressed stop")
    expect(seen?.aborted).toBe(true)
  })

  it("an already aborted signal never starts the plug-in", async () => {
    let started = false
    const error = failureOf(
      await Effect.runPromiseExit(
        PluginGuard.guardPromise({
          ...options,
          signal: AbortSignal.abort(),
          run: async () => {
            started = true
            return 1
          }
        })
      )
    )
    expect(error.failure).toBe("aborted")
    expect(started).toBe(false)
  })
})

describe("PluginGuard.guardEffect", () => {
  it("turns a defect into a typed failure and keeps typed failures", async () => {
    const died = failureOf(
      await Effect.runPromiseExit(
        PluginGuard.guardEffect(
          Effect.sync(() => {
            throw new RangeError("Maximum call stack size exceeded")
          }),
          options
        )
      )
    )
    expect(died._tag === "PluginFailed" && died.failure).toBe("threw")
    const typed = failureOf(await Effect.runPromiseExit(PluginGuard.guardEffect(Effect.fail("mine" as const), options)))
    expect(typed).toBe("mine")
  })

  it("times out a never-ending effect and honours the signal", async () => {
    const timedOut = failureOf(await Effect.runPromiseExit(PluginGuard.guardEffect(Effect.never, options)))
    expect(timedOut._tag === "PluginFailed" && timedOut.failure).toBe("timeout")
    const controller = new AbortController()
    const pending = Effect.runPromiseExit(
      PluginGuard.guardEffect(Effect.never, { ...options, timeoutMs: 60_000, signal: controller.signal })
    )
    controller.abort()
    const aborted = failureOf(await pending)
    expect(aborted._tag === "PluginFailed" && aborted.failure).toBe("aborted")
  })
})

describe("PluginGuard.runGuarded", () => {
  it("a synchronous effect's exit is guardEffect's: value, defect, typed failure, malformed result", async () => {
    const cases: Array<[Effect.Effect<number, "mine">, ((n: number) => string | undefined)?]> = [
      [Effect.sync(() => 42)],
      [
        Effect.sync(() => {
          throw new TypeError("boom")
        })
      ],
      [Effect.fail("mine" as const)],
      [Effect.succeed(-1), (n) => (n < 0 ? "negative" : undefined)]
    ]
    const outcomes = []
    for (const [effect, validate] of cases) {
      const viaRun = await PluginGuard.runGuarded(effect, { ...options, validate })
      const viaGuard = await Effect.runPromiseExit(PluginGuard.guardEffect(effect, { ...options, validate }))
      const shown = (exit: typeof viaRun) =>
        Exit.isSuccess(exit) ? exit.value : ((failureOf(exit) as { failure?: string }).failure ?? failureOf(exit))
      expect(shown(viaRun)).toEqual(shown(viaGuard))
      outcomes.push(shown(viaRun))
    }
    expect(outcomes).toEqual([42, "threw", "mine", "malformed"])
  })

  it("an effect that suspends gets the deadline and the signal, and is interrupted by either", async () => {
    let interrupted = 0
    const hang = Effect.onInterrupt(Effect.never, () => Effect.sync(() => interrupted++))
    const timedOut = failureOf(await PluginGuard.runGuarded(hang, options))
    expect(timedOut.failure).toBe("timeout")
    const controller = new AbortController()
    const pending = PluginGuard.runGuarded(hang, { ...options, timeoutMs: 60_000, signal: controller.signal })
    controller.abort(new Error("stop"))
    expect(failureOf(await pending).failure).toBe("aborted")
    const aborted = new AbortController()
    aborted.abort(new Error("gone"))
    const before = failureOf(
      await PluginGuard.runGuarded(hang, { ...options, timeoutMs: 60_000, signal: aborted.signal })
    )
    expect(before.failure).toBe("aborted")
    expect(interrupted).toBe(3)
    const later = await PluginGuard.runGuarded(
      Effect.promise(() => new Promise<number>((resolve) => setTimeout(() => resolve(7), 5))),
      options
    )
    expect(Exit.isSuccess(later) && later.value).toBe(7)
  })
})

describe("PluginGuard.makeCircuitBreaker", () => {
  it("opens after the cap of consecutive failures, per route, and a success closes it", () => {
    const breaker = PluginGuard.makeCircuitBreaker()
    expect(breaker.maxConsecutiveFailures).toBe(3)
    expect(breaker.recordFailure("a").open).toBe(false)
    expect(breaker.recordFailure("a").open).toBe(false)
    expect(breaker.recordFailure("b")).toEqual({ consecutiveFailures: 1, open: false })
    expect(breaker.recordFailure("a")).toEqual({ consecutiveFailures: 3, open: true })
    expect(breaker.state("b").open).toBe(false)
    breaker.recordSuccess("a")
    expect(breaker.state("a")).toEqual({ consecutiveFailures: 0, open: false })
  })
})

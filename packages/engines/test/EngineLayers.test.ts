import { Checkpoint, ContextEngine, Errors, Measurer } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import { type Summarizer, SummarizerService } from "../src/Summarizer.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { sessionMessages } from "./checkpoint/fixture.ts"
import { entriesOf } from "./support.ts"

const input: ContextEngine.EngineInput = {
  entries: entriesOf(sessionMessages(8)),
  policy: { ...StrategyInput.policy(8_000, 500), keepRecentTokens: 1_200 },
  manual: true
}

const withEngine = <A, E>(
  layer: Layer.Layer<ContextEngine.ContextEngineService>,
  use: (engine: ContextEngine.ContextEngine) => Effect.Effect<A, E>
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* use(yield* ContextEngine.ContextEngineService)
    }).pipe(Effect.provide(layer))
  )

describe("engine layers consume the summarizer and measurer services", () => {
  it("the tiered engine summarizes with the SummarizerService in context", async () => {
    const asked: Array<number> = []
    const recording: Summarizer = {
      name: "recording",
      summarize: (request) => {
        asked.push(request.covered.length)
        return Effect.fail(new Errors.SummarizerFailed({ summarizer: "recording", reason: "offline" }))
      }
    }
    const result = await withEngine(
      TieredSummaryEngine.layer({ fallbackSummarizer: null }).pipe(
        Layer.provide(Layer.succeed(SummarizerService, recording))
      ),
      (engine) => engine.compact(input)
    )
    expect(asked).toHaveLength(1)
    expect(asked[0]).toBeGreaterThan(0)
    expect(result.checkpoint).toBeUndefined()
    expect(result.failures?.[0]).toBeInstanceOf(Errors.SummarizerFailed)
  })

  it("with ExtractiveSummarizer.layer it writes the offline checkpoint", async () => {
    const result = await withEngine(
      TieredSummaryEngine.layer().pipe(Layer.provide(ExtractiveSummarizer.layer)),
      (engine) => engine.compact(input)
    )
    expect(result.checkpoint?.summarizer.kind).toBe("extractive")
    expect(result.checkpoint?.content).not.toEqual(Checkpoint.emptyContent())
  })

  it("every engine measures with the MeasurerService when one is provided, and without it by the policy", async () => {
    let counted = 0
    const measurerLayer = Layer.succeed(Measurer.MeasurerService, FakeMeasurer.make({ onCount: () => counted++ }))
    const tiered = TieredSummaryEngine.layer().pipe(
      Layer.provide(Layer.mergeAll(ExtractiveSummarizer.layer, measurerLayer))
    )
    const viaTiered = await withEngine(tiered, (engine) => engine.measure(input))
    expect(counted).toBeGreaterThan(0)
    expect(viaTiered.tokenizer).toBe(FakeMeasurer.tokenizer.name)

    counted = 0
    const viaSliding = await withEngine(SlidingWindowEngine.layer().pipe(Layer.provide(measurerLayer)), (engine) =>
      engine.measure(input)
    )
    expect(counted).toBeGreaterThan(0)
    expect(viaSliding.inputTokens).toBe(viaTiered.inputTokens)

    const byPolicy = await withEngine(SlidingWindowEngine.layer(), (engine) => engine.measure(input))
    expect(byPolicy.tokenizer).not.toBe(FakeMeasurer.tokenizer.name)
  })
})

/**
 * @context-engine/core/testing: the test doubles and builders the project's
 * own tests use, published so users test their strategies and engines
 * against the same ones (like `ai/test`): a deterministic fake measurer, a
 * strategy-input builder, `deepFreeze`, and the loader of regression cases in
 * the shared case-file format with its policy mapping. Node only (the case
 * loader reads files).
 *
 * @example
 * ```ts
 * import { ContextView } from "@context-engine/core"
 * import { deepFreeze, FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
 * const view = deepFreeze(ContextView.fromMessages([{ role: "user", content: "hello" }]))
 * const input = StrategyInput.make(view, FakeMeasurer.make(), 1_000)
 * ```
 *
 * @since 0.2.0
 */

export * as Cases from "./testing/Cases.ts"
export { deepFreeze } from "./testing/DeepFreeze.ts"
export * as FakeMeasurer from "./testing/FakeMeasurer.ts"
export * as StrategyInput from "./testing/StrategyInput.ts"

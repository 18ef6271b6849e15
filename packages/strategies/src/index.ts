/**
 * @context-engine/strategies: the deterministic strategies (clamp, dedupe,
 * tool trim, media, sliding window), the invariants they keep, and the
 * re-measuring pipeline runner.
 *
 * @since 0.1.0
 */
export * as Clamp from "./Clamp.ts"
export * as Dedupe from "./Dedupe.ts"
export * as HeadTail from "./HeadTail.ts"
export * as IncrementalNormalization from "./IncrementalNormalization.ts"
export * as Invariants from "./Invariants.ts"
export * as Media from "./Media.ts"
export * as Normalization from "./Normalization.ts"
export * as Offload from "./Offload.ts"
export * as Pipeline from "./Pipeline.ts"
export * as SlidingWindow from "./SlidingWindow.ts"
export * as Tiers from "./Tiers.ts"
export * as ToolInputClear from "./ToolInputClear.ts"
export * as ToolTrim from "./ToolTrim.ts"
export * as UserData from "./UserData.ts"

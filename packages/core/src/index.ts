/**
 * @context-engine/core: schemas, measurement, budgets, policies and the
 * engine and strategy contracts.
 *
 * This entry loads no `node:` built-in, so it runs wherever the AI SDK runs
 * (Node, Deno, Bun, edge runtimes, browsers); `test/EdgeSafe.test.ts` bundles
 * it for a neutral platform to prove it. Node-only code (file and SQLite
 * stores, the file lock, policy files, the tiktoken backend) is exported from
 * `@context-engine/core/node`.
 *
 * @since 0.1.0
 */

export * as ActiveView from "./ActiveView.ts"
export * as BackendTranscriptStore from "./BackendTranscriptStore.ts"
export * as Budget from "./Budget.ts"
export * as Checkpoint from "./Checkpoint.ts"
export * as CheckpointRenderer from "./CheckpointRenderer.ts"
export * as CheckpointValidation from "./CheckpointValidation.ts"
export * as ContentHash from "./ContentHash.ts"
export * as ContextEngine from "./ContextEngine.ts"
export * as ContextView from "./ContextView.ts"
export * as CriticalIdentifiers from "./CriticalIdentifiers.ts"
export * as Decode from "./Decode.ts"
export * as DegenerateSummary from "./DegenerateSummary.ts"
export * as EngineInput from "./EngineInput.ts"
export * as Entry from "./Entry.ts"
export * as Errors from "./Errors.ts"
export * as Estimator from "./Estimator.ts"
export * as IdentifierExtraction from "./IdentifierExtraction.ts"
export * as InMemoryTranscriptStore from "./InMemoryTranscriptStore.ts"
export * as JsonSafety from "./JsonSafety.ts"
export * as MeasureCache from "./MeasureCache.ts"
export * as Measurement from "./Measurement.ts"
export * as Measurer from "./Measurer.ts"
export * as MediaTokens from "./MediaTokens.ts"
export * as Memory from "./Memory.ts"
export * as Message from "./Message.ts"
export * as MessageParts from "./MessageParts.ts"
export * as MessageTokens from "./MessageTokens.ts"
export * as ModelCatalog from "./ModelCatalog.ts"
export * as ModelFamilies from "./ModelFamilies.ts"
export * as ModelId from "./ModelId.ts"
export * as ModelPolicy from "./ModelPolicy.ts"
export * as ModelsDevCatalog from "./ModelsDevCatalog.ts"
export * as OverflowEvent from "./OverflowEvent.ts"
export * as PluginGuard from "./PluginGuard.ts"
export * as PolicyLimits from "./PolicyLimits.ts"
export * as PolicyRegistry from "./PolicyRegistry.ts"
export * as ReasoningTokens from "./ReasoningTokens.ts"
export * as ReplayedSideEffects from "./ReplayedSideEffects.ts"
export * as RequestShape from "./RequestShape.ts"
export * as Strategy from "./Strategy.ts"
export * as SubstringIndex from "./SubstringIndex.ts"
export * as Telemetry from "./Telemetry.ts"
export * as TextChunks from "./TextChunks.ts"
export * as Tokenizer from "./Tokenizer.ts"
export * as Tokenizers from "./Tokenizers.ts"
export * as ToolActions from "./ToolActions.ts"
export * as ToolPairing from "./ToolPairing.ts"
export * as TranscriptBackend from "./TranscriptBackend.ts"
export * as TranscriptIndex from "./TranscriptIndex.ts"
export * as TranscriptLog from "./TranscriptLog.ts"
export * as TranscriptSearch from "./TranscriptSearch.ts"
export * as TranscriptStore from "./TranscriptStore.ts"
export * as Turns from "./Turns.ts"
export * as UsageScale from "./UsageScale.ts"
export * as UserSpeech from "./UserSpeech.ts"
export * as ViewEdit from "./ViewEdit.ts"

/**
 * @context-engine/core: schemas, measurement, budgets, policies and the
 * engine and strategy contracts.
 *
 * @since 0.1.0
 */
export * as Budget from "./Budget.ts"
export * as Checkpoint from "./Checkpoint.ts"
export * as ContextEngine from "./ContextEngine.ts"
export * as ContextView from "./ContextView.ts"
export * as Decode from "./Decode.ts"
export * as Entry from "./Entry.ts"
export * as Errors from "./Errors.ts"
export * as Measurement from "./Measurement.ts"
export * as Measurer from "./Measurer.ts"
export * as Message from "./Message.ts"
export * as ModelPolicy from "./ModelPolicy.ts"
export * as Strategy from "./Strategy.ts"
export * as Tokenizer from "./Tokenizer.ts"
export * as ToolPairing from "./ToolPairing.ts"
export * as Turns from "./Turns.ts"
export * as ViewEdit from "./ViewEdit.ts"
export * as Tokenizers from "./Tokenizers.ts"
export * as Estimator from "./Estimator.ts"
export * as MediaTokens from "./MediaTokens.ts"
export * as MessageTokens from "./MessageTokens.ts"
export * as ContentHash from "./ContentHash.ts"
export * as ModelCatalog from "./ModelCatalog.ts"
export * as PolicyLimits from "./PolicyLimits.ts"
export * as PolicyRegistry from "./PolicyRegistry.ts"
export * as PolicyFile from "./PolicyFile.ts"
export * as CheckpointValidation from "./CheckpointValidation.ts"
export * as IdentifierExtraction from "./IdentifierExtraction.ts"

/**
 * The provider-native context-management wire formats a policy enables (see
 * `ProviderNativeEngine`): Anthropic context editing and server compaction
 * (`providerOptions.anthropic.contextManagement.edits`) and OpenAI Responses
 * compaction (`providerOptions.openai.contextManagement`). Plain objects; no
 * AI SDK import. Sources: Anthropic "Context editing" and "Compaction" docs;
 * `@ai-sdk/anthropic` `anthropicLanguageModelOptions`; `@ai-sdk/openai`.
 *
 * @since 0.2.0
 */
import { Budget, type ModelPolicy } from "@context-engine/core"

/**
 * Anthropic settings. Sizes in tokens. `false` turns an edit off.
 *
 * @category models
 */
export interface AnthropicSettings {
  readonly clearToolUses?:
    | false
    | {
        /** Input size at which old tool results are cleared. Default: 60 % of the input budget. */
        readonly triggerInputTokens?: number
        /** Most recent tool uses kept. Default 3 (Anthropic's default). */
        readonly keepToolUses?: number
        /** Clear at least this many tokens, so a prompt-cache break pays off. */
        readonly clearAtLeastInputTokens?: number
        readonly clearToolInputs?: boolean
        readonly excludeTools?: ReadonlyArray<string>
      }
  readonly clearThinking?: false | { readonly keepThinkingTurns?: number | "all" }
  readonly compaction?:
    | false
    | {
        /** Input size at which the server compacts. Default: 80 % of the input budget, at least 50,000 (the API minimum). */
        readonly triggerInputTokens?: number
        readonly instructions?: string
        readonly pauseAfterCompaction?: boolean
      }
}

/**
 * OpenAI Responses settings.
 *
 * @category models
 */
export interface OpenAISettings {
  readonly compaction?: false | { readonly compactThresholdTokens?: number }
}

const inputBudget = (policy: ModelPolicy.ModelPolicy): number =>
  Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 }).inputBudgetTokens

/** Anthropic's minimum `compact_20260112` trigger (Compaction docs). @category constants */
export const ANTHROPIC_MIN_COMPACTION_TRIGGER_TOKENS = 50_000

/**
 * Builds the Anthropic `contextManagement` provider option for a policy.
 * `clear_thinking_20251015` comes first (the API requires it to precede other
 * edits) and only when the model reasons.
 *
 * @category constructors
 */
export const anthropicContextManagement = (
  policy: ModelPolicy.ModelPolicy,
  settings: AnthropicSettings = {}
): { readonly edits: ReadonlyArray<Record<string, unknown>> } | undefined => {
  const budget = inputBudget(policy)
  const edits: Array<Record<string, unknown>> = []
  if (policy.nativeCompaction.anthropicContextEditing) {
    if (policy.reasoning && settings.clearThinking !== false) {
      const keep = settings.clearThinking?.keepThinkingTurns ?? 1
      edits.push({
        type: "clear_thinking_20251015",
        keep: keep === "all" ? "all" : { type: "thinking_turns", value: keep }
      })
    }
    if (settings.clearToolUses !== false) {
      const clear = settings.clearToolUses ?? {}
      edits.push({
        type: "clear_tool_uses_20250919",
        trigger: { type: "input_tokens", value: clear.triggerInputTokens ?? Math.floor(budget * 0.6) },
        keep: { type: "tool_uses", value: clear.keepToolUses ?? 3 },
        ...(clear.clearAtLeastInputTokens !== undefined
          ? { clearAtLeast: { type: "input_tokens", value: clear.clearAtLeastInputTokens } }
          : {}),
        ...(clear.clearToolInputs !== undefined ? { clearToolInputs: clear.clearToolInputs } : {}),
        ...(clear.excludeTools !== undefined ? { excludeTools: [...clear.excludeTools] } : {})
      })
    }
  }
  if (policy.nativeCompaction.anthropicCompaction && settings.compaction !== false) {
    const compaction = settings.compaction ?? {}
    edits.push({
      type: "compact_20260112",
      trigger: {
        type: "input_tokens",
        value: Math.max(
          ANTHROPIC_MIN_COMPACTION_TRIGGER_TOKENS,
          compaction.triggerInputTokens ?? Math.floor(budget * 0.8)
        )
      },
      ...(compaction.pauseAfterCompaction !== undefined
        ? { pauseAfterCompaction: compaction.pauseAfterCompaction }
        : {}),
      ...(compaction.instructions !== undefined ? { instructions: compaction.instructions } : {})
    })
  }
  return edits.length > 0 ? { edits } : undefined
}

/**
 * Builds the OpenAI Responses `contextManagement` provider option for a policy.
 *
 * @category constructors
 */
export const openaiContextManagement = (
  policy: ModelPolicy.ModelPolicy,
  settings: OpenAISettings = {}
): ReadonlyArray<{ readonly type: "compaction"; readonly compactThreshold: number }> | undefined => {
  if (!policy.nativeCompaction.openaiResponsesCompaction || settings.compaction === false) return undefined
  const threshold = settings.compaction?.compactThresholdTokens ?? Math.floor(inputBudget(policy) * 0.8)
  return [{ type: "compaction", compactThreshold: threshold }]
}

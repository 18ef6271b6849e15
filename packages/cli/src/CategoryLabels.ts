/**
 * The words the CLI uses for each measurement category, in `inspect`,
 * `compact`, `replay` and the HTML report (one table, so every view names a
 * category the same way).
 *
 * @since 0.2.0
 */
import type { Measurement } from "@context-engine/core"

/**
 * Label per category. `framing` is what the chat format adds around the
 * messages (per-message wrapper and the reply priming), not anyone's text.
 *
 * @category rendering
 */
export const categoryLabels: Readonly<Record<Measurement.Category, string>> = {
  system: "system",
  toolSchemas: "tool schemas",
  userText: "user text",
  assistantText: "assistant text",
  // Signatures and item ids are verification data the model does not read: 0 tokens (ReasoningTokens).
  reasoning: "reasoning",
  toolCalls: "tool calls",
  toolResults: "tool results",
  media: "media",
  checkpoint: "checkpoint",
  memory: "memory",
  framing: "message framing",
  reservedOutput: "reserved output"
}

/**
 * @context-engine/transcripts: importers of agent session formats (pi,
 * Claude Code JSONL and console, Aider chat history, SWE-agent trajectories,
 * Gemini CLI console, OpenAI Chat, Anthropic Messages, AI SDK `ModelMessage`
 * JSON) into context-engine transcript entries, and exporters of entries
 * back to the provider wire formats. Depends on `@context-engine/core` only.
 *
 * `Import.importFile*` and `LineSource` read files with `node:fs`; the
 * per-format parsers and the exporters work on strings and values.
 *
 * @since 0.2.0
 */

export * as AnthropicMessagesExport from "./exporters/AnthropicMessagesExport.ts"
export * as ExportInput from "./exporters/ExportInput.ts"
export * as ModelMessagesExport from "./exporters/ModelMessagesExport.ts"
export * as OpenAIChatExport from "./exporters/OpenAIChatExport.ts"
export * as AiderHistory from "./importers/AiderHistory.ts"
export * as AnthropicMessages from "./importers/AnthropicMessages.ts"
export * as ClaudeCode from "./importers/ClaudeCode.ts"
export * as ClaudeCodeConsole from "./importers/ClaudeCodeConsole.ts"
export * as Detect from "./importers/Detect.ts"
export * as GeminiCliConsole from "./importers/GeminiCliConsole.ts"
export * as Import from "./importers/Import.ts"
export * as ImportResult from "./importers/ImportResult.ts"
export * as LineSource from "./importers/LineSource.ts"
export * as ModelMessages from "./importers/ModelMessages.ts"
export * as OpenAIChat from "./importers/OpenAIChat.ts"
export * as PiSession from "./importers/PiSession.ts"
export * as SweAgent from "./importers/SweAgent.ts"

/**
 * The `Summarizer` service: turns the previous checkpoint plus a newly
 * covered range into checkpoint content (DESIGN.md "Summarize, validate,
 * commit"). Implementations: `ExtractiveSummarizer` (offline, deterministic,
 * the default) and `LanguageModelSummarizer` (any AI SDK model, in
 * `@context-engine/provider-adapters`).
 *
 * A summarizer sees only the newly covered range — never the whole session
 * again — and the previous checkpoint to update (Pi's
 * `UPDATE_SUMMARIZATION_PROMPT`: "PRESERVE all existing information from the
 * previous summary"). A split turn's prefix arrives separately, like Pi's
 * turn-prefix summary, and is merged by the summarizer.
 *
 * @since 0.1.0
 */
import type { Checkpoint, Errors, Message } from "@context-engine/core"
import { Context, type Effect } from "effect"

/**
 * One covered message with the transcript entry it came from.
 *
 * @category models
 */
export interface CoveredItem {
  readonly entryId: string
  readonly message: Message.Message
  /**
   * What the agent's harness printed after the message and never sent to the
   * model (aider's `> ` lines: applied and failed edits), when the transcript
   * recorded it (`HarnessOutput.byMessage`): the only record of what became
   * of edits written as text.
   */
  readonly harnessOutput?: string | undefined
  /**
   * Set on the first message after a `session.start` event: the transcript
   * holds many harness sessions one after another (aider appends every
   * `# aider chat started at …` session to one history file; pi writes a
   * session header), and the range may cover several of them.
   */
  readonly opensSession?: true | undefined
  /**
   * The tool calls and results of the sub-agents the message's calls started
   * (Claude Code's `Task`), which the transcript keeps beside the main
   * conversation (`SubAgentWork.byMessage`): the files they changed are the
   * session's work too.
   */
  readonly subAgentMessages?: ReadonlyArray<Message.Message> | undefined
}

/**
 * A repair request: the previous attempt failed validation; `missing` names
 * what it lacked (the validator's `missing` list: `identifier:…`,
 * `section:…`, `ask:…`, `file:…`, `action:…`).
 *
 * @category models
 */
export interface RepairRequest {
  readonly attempt: Checkpoint.CheckpointContent
  readonly failedChecks: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
  /** The failed checks with the validator's detail (e.g. `"smaller-than-replaced": "2,400 tokens replace 1,900 tokens"`). */
  readonly details?: ReadonlyArray<{ readonly name: string; readonly detail: string }> | undefined
}

/**
 * What a summarizer is asked to do.
 *
 * @category models
 */
export interface SummarizeRequest {
  /** The checkpoint being updated; its sections are carried forward. */
  readonly previous?: Checkpoint.Checkpoint | undefined
  /** The newly covered range, oldest first (excluding a split turn's prefix). */
  readonly covered: ReadonlyArray<CoveredItem>
  /** A split turn's prefix (its user message and the work before the cut), summarized separately and merged. */
  readonly turnPrefix?: ReadonlyArray<CoveredItem> | undefined
  /**
   * The messages kept verbatim after the checkpoint, in order: the pinned
   * latest user message (an entry of the covered range) first, then the kept
   * tail. The summary does not repeat what they carry (issue #11
   * requirement 3); it may point at them by entry id.
   */
  readonly kept?: ReadonlyArray<CoveredItem> | undefined
  /** Largest summary wanted, in tokens of {@link SummarizeRequest.countTokens}. */
  readonly maxTokens: number
  /** Counts tokens of a text in the target model's tokenizer. */
  readonly countTokens: (text: string) => number
  /**
   * Instructions for the summary from the caller (`/compact <instructions>`,
   * `EngineInput.compactInstructions`): they steer what the checkpoint keeps
   * and are never a task — not the goal, an ask or a next step (shared case C18).
   */
  readonly instructions?: string | undefined
  /** Set on the single repair retry after a failed validation. */
  readonly repair?: RepairRequest | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * What a summarizer returns.
 *
 * @category models
 */
export interface SummarizeResult {
  readonly content: Checkpoint.CheckpointContent
  readonly summarizer: Checkpoint.SummarizerInfo
  /** Tokens the summarizer model used, when it called one. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number } | undefined
}

/**
 * A summarizer.
 *
 * @category models
 */
export interface Summarizer {
  readonly name: string
  readonly summarize: (request: SummarizeRequest) => Effect.Effect<SummarizeResult, Errors.SummarizerFailed>
}

/**
 * Service tag for the {@link Summarizer}, so tests and applications swap it.
 *
 * @category services
 */
export class SummarizerService extends Context.Service<SummarizerService, Summarizer>()(
  "@context-engine/engines/Summarizer"
) {}

/**
 * Merges two contents (a previous checkpoint and a newer range, a split
 * turn's prefix, staged summaries): newer wins, done never regresses, the
 * ledger is cumulative. See `checkpoint/Update.ts`.
 *
 * @category combinators
 */
export { mergeContent } from "./checkpoint/Update.ts"

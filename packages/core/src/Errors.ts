/**
 * Typed errors a caller can act on. Each carries the numbers that explain it
 * and a readable `message`. No string errors cross a package boundary.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Input did not match a schema. `path` names the bad field
 * (e.g. `messages[3].content[0].text`; empty when the whole input is wrong,
 * e.g. a policy file that is not JSON), `detail` says what was expected.
 * The message names the field only when there is one: "Invalid policy file
 * p.json: not JSON …", not "… at <root>: …".
 *
 * @category errors
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  what: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `Invalid ${this.what}${this.path ? ` at ${this.path}` : ""}: ${this.detail}`
  }
}

/**
 * The fixed part of every request (system messages + tool schemas) is larger
 * than the input budget (`Budget.inputBudgetTokens`: the context window less
 * the reserved output, the tool-loop reserve and the safety margin), so no
 * compaction of the conversation can make a request fit. Reported once;
 * engines do not loop. `systemTokens` counts the system messages with their
 * message framing (`Measurer.messageTokens`); `reservedTokens` is reserved
 * output + tool-loop reserve + safety margin, `reservedOutputTokens` the
 * first of them (the policy's `reserveTokens`). All values in tokens.
 *
 * @category errors
 */
export class FixedOverheadExceedsBudget extends Schema.TaggedError<FixedOverheadExceedsBudget>()(
  "FixedOverheadExceedsBudget",
  {
    fixedOverheadTokens: Schema.Number,
    systemTokens: Schema.Number,
    toolSchemaTokens: Schema.Number,
    contextWindowTokens: Schema.Number,
    reservedTokens: Schema.Number,
    reservedOutputTokens: Schema.Number,
    inputBudgetTokens: Schema.Number
  }
) {
  override get message(): string {
    const others = this.reservedTokens - this.reservedOutputTokens
    const window = this.contextWindowTokens - this.reservedTokens
    const budget =
      this.inputBudgetTokens === window
        ? `context window ${this.contextWindowTokens} − reserve ${this.reservedOutputTokens}${others > 0 ? ` − tool-loop reserve and safety margin ${others}` : ""}`
        : "the provider's input limit less the safety margin"
    return `Fixed overhead of ${this.fixedOverheadTokens} tokens (system messages ${this.systemTokens} with their message framing + tool schemas ${this.toolSchemaTokens}) exceeds the input budget of ${this.inputBudgetTokens} tokens (${budget}): no compaction of the conversation can make the request fit; raise the context window or shorten the system prompt and tool schemas`
  }
}

/**
 * After every allowed reduction the request is still larger than the budget.
 * `bestEffort`: when the engine's reduction made the request smaller, that
 * reduction (a `ContextEngine.CompactionResult` with `fits: false`, read
 * with `ContextEngine.bestEffortOf`): the request path sends it rather than
 * the unreduced request — a few tokens over the input budget usually still
 * fits the context window (the budget keeps the output reserve), the
 * unreduced request may be several windows long.
 *
 * @category errors
 */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  requestTokens: Schema.Number,
  budgetTokens: Schema.Number,
  reason: Schema.String,
  bestEffort: Schema.optionalKey(Schema.Unknown)
}) {
  override get message(): string {
    return `Request of ${this.requestTokens} tokens exceeds the budget of ${this.budgetTokens} tokens by ${this.requestTokens - this.budgetTokens}: ${this.reason}`
  }
}

/**
 * The summarizer failed (threw, timed out, or returned nothing usable).
 *
 * @category errors
 */
export class SummarizerFailed extends Schema.TaggedError<SummarizerFailed>()("SummarizerFailed", {
  summarizer: Schema.String,
  reason: Schema.String,
  cause: Schema.optionalKey(Schema.Unknown)
}) {
  override get message(): string {
    return `Summarizer ${this.summarizer} failed: ${this.reason}`
  }
  get isRetryable(): boolean {
    return true
  }
}

/**
 * A checkpoint failed deterministic validation.
 *
 * @category errors
 */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  failedChecks: Schema.Array(Schema.String),
  missing: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `Checkpoint failed validation: ${this.failedChecks.join(", ")}${this.missing.length > 0 ? `; missing: ${this.missing.slice(0, 10).join(", ")}` : ""}`
  }
}

/**
 * The provider rejected a request as longer than its context window.
 * `limitTokens` / `requestedTokens` are filled when the provider said them.
 *
 * @category errors
 */
export class ContextOverflow extends Schema.TaggedError<ContextOverflow>()("ContextOverflow", {
  provider: Schema.String,
  limitTokens: Schema.optionalKey(Schema.Number),
  requestedTokens: Schema.optionalKey(Schema.Number),
  providerMessage: Schema.String
}) {
  override get message(): string {
    const numbers =
      this.limitTokens !== undefined
        ? ` (limit ${this.limitTokens}${this.requestedTokens !== undefined ? `, requested ${this.requestedTokens}` : ""} tokens)`
        : ""
    return `Context overflow at ${this.provider}${numbers}: ${this.providerMessage}`
  }
}

/**
 * A transcript file or record could not be read — or, with `strictOnly`, a
 * well-formed record that strict mode refuses: a message no provider accepts
 * (empty, reasoning only), which real sessions hold after an interrupted
 * response and lenient mode keeps in the transcript and leaves out of
 * requests.
 *
 * @category errors
 */
export class TranscriptCorrupt extends Schema.TaggedError<TranscriptCorrupt>()("TranscriptCorrupt", {
  source: Schema.String,
  line: Schema.optionalKey(Schema.Number),
  reason: Schema.String,
  strictOnly: Schema.optionalKey(Schema.Boolean)
}) {
  override get message(): string {
    const where = `Transcript ${this.source}${this.line !== undefined ? ` line ${this.line}` : ""}`
    return this.strictOnly === true
      ? `${where} is refused in strict mode: ${this.reason}. The line is well-formed; lenient mode keeps the message in the transcript and leaves it out of requests`
      : `${where} is corrupt: ${this.reason}`
  }
}

/**
 * A policy value as the user wrote it: a number as JavaScript prints it
 * (`NaN`, `Infinity`, `-5`, `-0` — `JSON.stringify` turns the first two into
 * `null`, which is not what was given), a bigint with its `n`, anything else
 * as JSON (a string in quotes), or `String(value)` when JSON has no text for
 * it (`undefined`, a function, a cycle).
 */
const showValue = (value: unknown): string => {
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value)
  if (typeof value === "bigint") return `${value}n`
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * A model policy is impossible (e.g. reserve ≥ window) or has unknown keys.
 * Its message shows the value as given (`contextWindowTokens = NaN`).
 *
 * @category errors
 */
export class PolicyInvalid extends Schema.TaggedError<PolicyInvalid>()("PolicyInvalid", {
  model: Schema.String,
  field: Schema.String,
  value: Schema.Unknown,
  reason: Schema.String
}) {
  override get message(): string {
    return `Policy for ${this.model}: ${this.field} = ${showValue(this.value)} is invalid: ${this.reason}`
  }
}

/**
 * Two compactions raced to install a checkpoint for the same generation
 * (compare-and-set on the checkpoint generation) and this one lost. The
 * loser's checkpoint was not written; `winnerCheckpointId` names the one that
 * was installed, when known. Recompute from the new active view and retry.
 *
 * @category errors
 */
export class CheckpointConflict extends Schema.TaggedError<CheckpointConflict>()("CheckpointConflict", {
  sessionId: Schema.String,
  checkpointId: Schema.String,
  /** The generation the caller tried to install. */
  attemptedGeneration: Schema.Number,
  /** The highest generation already installed when the install was attempted. */
  installedGeneration: Schema.Number,
  winnerCheckpointId: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    return `Checkpoint ${this.checkpointId} (generation ${this.attemptedGeneration}) lost the race in session ${this.sessionId}: generation ${this.installedGeneration} is already installed${this.winnerCheckpointId !== undefined ? ` (${this.winnerCheckpointId})` : ""}; expected generation ${this.installedGeneration + 1}`
  }
  get isRetryable(): boolean {
    return true
  }
}

/**
 * A transcript store could not read or write its storage (I/O error, lock
 * timeout, database busy). Nothing was acknowledged; the write may be retried.
 *
 * @category errors
 */
export class TranscriptStoreFailed extends Schema.TaggedError<TranscriptStoreFailed>()("TranscriptStoreFailed", {
  source: Schema.String,
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Transcript store ${this.source}: ${this.operation} failed: ${this.reason}`
  }
  get isRetryable(): boolean {
    return true
  }
}

/**
 * An exact encoding (`o200k_base`, `cl100k_base`) was counted before its rank
 * table was loaded, on a runtime that cannot load it synchronously (no
 * `process.getBuiltinModule`: an edge runtime). Await
 * `Tokenizers.ensureLoaded(encoding)` first; the engines do it themselves
 * (`EngineInput.guard`).
 *
 * @category errors
 */
export class EncodingNotLoaded extends Schema.TaggedError<EncodingNotLoaded>()("EncodingNotLoaded", {
  encoding: Schema.String
}) {
  override get message(): string {
    return `The ${this.encoding} rank table is not loaded and this runtime cannot load it synchronously: await Tokenizers.ensureLoaded("${this.encoding}") before counting`
  }
}

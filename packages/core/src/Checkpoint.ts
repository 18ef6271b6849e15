/**
 * A checkpoint: a structured task handoff that stands in for a covered range
 * of the transcript (DESIGN.md "Checkpoints"). Sections follow the handoff
 * shape used by Pi's compaction prompt and Codex's "handoff summary":
 * goal, constraints, progress, decisions, next steps, critical context.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

const Strings = Schema.Array(Schema.String)

/**
 * Exact identifiers that a summary must keep verbatim.
 *
 * @category schemas
 */
export const Identifiers = Schema.Struct({
  paths: Strings,
  ids: Strings,
  hashes: Strings,
  urls: Strings,
  ports: Strings,
  commands: Strings,
  errors: Strings
})
/** @category models */
export type Identifiers = typeof Identifiers.Type

/**
 * One artifact of the cumulative ledger (DESIGN.md "Checkpoints are
 * handoffs"): a file read, modified or created, a branch, a commit, a URL or
 * a port, with the transcript entries that touched it (oldest first, at most
 * {@link MAX_ARTIFACT_ENTRY_IDS}). Carried through every later checkpoint.
 *
 * @category schemas
 */
export const Artifact = Schema.Struct({
  kind: Schema.Literals(["file", "branch", "commit", "url", "port"]),
  /** The path, branch name, commit hash (with its subject after a space), URL or port. */
  value: Schema.String,
  /** Files: `read`, `modified` or `created`; commits: `committed`; others: `mentioned` or `created`. */
  status: Schema.String,
  entryIds: Strings
})
/** @category models */
export type Artifact = typeof Artifact.Type

/**
 * Most entry ids an artifact keeps (the first and the latest ones).
 *
 * @category constants
 */
export const MAX_ARTIFACT_ENTRY_IDS = 4

/**
 * The sections of a checkpoint: a handoff another model can continue from.
 * `goal` is the current objective (the latest task-setting request);
 * `constraints` the user's rules and corrections still in force, in their
 * words; `progress.done` side effects with outcomes (never read-only
 * commands); `progress.inProgress` work started and not finished;
 * `progress.blocked` outcomes to check; `failedApproaches` what was tried and
 * failed; `nextSteps` the agent's own plan or todo items; `pendingUserAsks`
 * the latest unresolved ask; `artifacts` the cumulative ledger;
 * `keyIdentifiers` the code identifiers (symbols, config keys) the covered
 * ranges worked with, best first (the extractive summarizer's ranking,
 * `KeyIdentifiers` in the engines package); `dropped` what an iterative
 * update removed and why.
 *
 * @category schemas
 */
export const CheckpointContent = Schema.Struct({
  goal: Schema.String,
  constraints: Strings,
  progress: Schema.Struct({ done: Strings, inProgress: Strings, blocked: Strings }),
  decisions: Schema.Array(Schema.Struct({ decision: Schema.String, rationale: Schema.String })),
  nextSteps: Strings,
  criticalContext: Strings,
  pendingUserAsks: Strings,
  identifiers: Identifiers,
  filesRead: Strings,
  filesModified: Strings,
  failedApproaches: Schema.optionalKey(Strings),
  artifacts: Schema.optionalKey(Schema.Array(Artifact)),
  keyIdentifiers: Schema.optionalKey(Strings),
  dropped: Schema.optionalKey(Strings)
})
/** @category models */
export type CheckpointContent = typeof CheckpointContent.Type

/**
 * One deterministic validation check and its outcome.
 *
 * @category schemas
 */
export const ValidationCheck = Schema.Struct({
  name: Schema.String,
  ok: Schema.Boolean,
  detail: Schema.String
})

/**
 * The validation report stored with a checkpoint.
 *
 * @category schemas
 */
export const ValidationReport = Schema.Struct({
  ok: Schema.Boolean,
  checks: Schema.Array(ValidationCheck),
  /** Share (0..1) of identifiers from the covered range kept in the summary. */
  identifierRetention: Schema.Number,
  missing: Strings
})
/** @category models */
export type ValidationReport = typeof ValidationReport.Type

/**
 * Who wrote the summary.
 *
 * @category schemas
 */
export const SummarizerInfo = Schema.Struct({
  kind: Schema.Literals(["extractive", "language-model", "hook", "imported", "provider-native"]),
  model: Schema.optionalKey(Schema.String),
  promptVersion: Schema.String
})
/** @category models */
export type SummarizerInfo = typeof SummarizerInfo.Type

/**
 * A checkpoint. `content` holds the structured sections; `text` holds a
 * verbatim summary written elsewhere (a Pi `compaction` entry, a provider's
 * compaction item). At least one of them is present.
 *
 * @category schemas
 */
export const Checkpoint = Schema.Struct({
  id: Schema.String,
  /** 1 for the first checkpoint of a session, +1 for each later one. */
  generation: Schema.Int,
  /** Entries covered: from the first entry after the previous checkpoint's cover (or the session start) through `toEntryId`. */
  coveredRange: Schema.Struct({ fromEntryId: Schema.NullOr(Schema.String), toEntryId: Schema.String }),
  /** The first transcript entry kept verbatim after this checkpoint; null when nothing is kept. */
  firstKeptEntryId: Schema.NullOr(Schema.String),
  /**
   * Covered user messages kept verbatim between this checkpoint and `firstKeptEntryId`, in transcript order;
   * absent: only the latest user message, when covered (checkpoints written before this field).
   */
  keptUserEntryIds: Schema.optionalKey(Schema.Array(Schema.String)),
  tokensBefore: Schema.Int,
  tokensAfter: Schema.Int,
  summarizer: SummarizerInfo,
  content: Schema.optionalKey(CheckpointContent),
  text: Schema.optionalKey(Schema.String),
  usage: Schema.optionalKey(Schema.Struct({ inputTokens: Schema.Int, outputTokens: Schema.Int })),
  validation: Schema.optionalKey(ValidationReport),
  /** ISO 8601 timestamp. */
  createdAt: Schema.String
})
/** @category models */
export type Checkpoint = typeof Checkpoint.Type

/**
 * An empty content object, for summarizers to fill.
 *
 * @category constructors
 */
export const emptyContent = (): CheckpointContent => ({
  goal: "",
  constraints: [],
  progress: { done: [], inProgress: [], blocked: [] },
  decisions: [],
  nextSteps: [],
  criticalContext: [],
  pendingUserAsks: [],
  identifiers: { paths: [], ids: [], hashes: [], urls: [], ports: [], commands: [], errors: [] },
  filesRead: [],
  filesModified: []
})

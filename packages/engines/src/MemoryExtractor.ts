/**
 * The memory extractor: reads the originals of a range about to be covered
 * by a checkpoint and proposes durable memory records — user preferences,
 * project conventions, standing decisions, environment facts — each with
 * the entry ids it came from (DESIGN.md "Durable memory").
 *
 * {@link make} is the offline default: extractive, deterministic, no model
 * call. It reads only the user's own words (`UserSpeech.spokenText`: tool
 * output, shell output, pasted logs and observations are data, not the
 * user's preference) and keeps a sentence when it states a standing rule. A model-backed extractor lives in
 * `@context-engine/provider-adapters` (`LanguageModelMemoryExtractor`).
 *
 * Supersession: a new record whose content words mostly overlap a record in
 * force of the same scope (Jaccard ≥ {@link SUPERSEDE_OVERLAP}) replaces it
 * (`supersedes`); an identical record is not proposed again.
 *
 * @since 0.1.0
 */
import { type Entry, UserSpeech } from "@context-engine/core"
import { Effect } from "effect"
import * as Text from "./checkpoint/Text.ts"
import type { CoveredItem } from "./Summarizer.ts"

/**
 * A proposed memory record (the flush turns it into a `MemoryEntry`).
 *
 * @category models
 */
export interface MemoryCandidate {
  readonly text: string
  /** `preference`, `convention`, `decision` or `environment`. */
  readonly scope: string
  readonly sourceEntryIds: ReadonlyArray<string>
  readonly key?: string
  readonly supersedes?: ReadonlyArray<string>
}

/**
 * What an extractor is given.
 *
 * @category models
 */
export interface ExtractRequest {
  /**
   * Originals of the range the checkpoint will cover, oldest first (never a
   * summary), less the messages kept verbatim beside it (`MemoryFlush`).
   */
  readonly covered: ReadonlyArray<CoveredItem>
  /** Memory records in force before this flush. */
  readonly existing: ReadonlyArray<Entry.MemoryEntry>
  readonly signal?: AbortSignal | undefined
}

/**
 * A memory extractor. Failures are reported by the flush and never block
 * the checkpoint.
 *
 * @category models
 */
export interface MemoryExtractor {
  readonly name: string
  readonly extract: (request: ExtractRequest) => Effect.Effect<ReadonlyArray<MemoryCandidate>, unknown>
}

/**
 * Content-word overlap (Jaccard) at which a new record of the same scope
 * supersedes an older one. Own choice: half the words in common means the
 * same topic restated ("use tabs" → "actually use spaces, not tabs").
 *
 * @category constants
 */
export const SUPERSEDE_OVERLAP = 0.5

/** Longest record, in characters (a memory is one fact, not a paragraph). */
const MAX_RECORD_CHARS = 300

/**
 * Sentence patterns per scope, on the user's own words.
 *
 * A preference says how things should be in general ("I want tests to run
 * before every commit", "I prefer tabs"). "I want you to <verb> …" addressed
 * to the agent is a directive for now — the same ask as the bare imperative
 * "<verb> …", which no pattern records ("Then I want you to summarize the
 * current status …") — so it is a preference only when it says the act
 * recurs: always / never / from now on (the other alternatives), or before /
 * after every, whenever, each time, every time.
 */
const RULES: ReadonlyArray<{ readonly scope: string; readonly pattern: RegExp }> = [
  {
    scope: "preference",
    pattern:
      /\b(?:i (?:prefer|like|hate|dislike)|i want(?! (?:you|u) to\b)|i want (?:you|u) to\b.*\b(?:(?:before|after) (?:every|each)|whenever|each time|every time)|please (?:always|never)|always|never|from now on|don'?t ever|do not ever)\b/i
  },
  {
    scope: "convention",
    pattern:
      /\b(?:we use|our (?:convention|style|rule)|the project uses|this (?:repo|project|codebase) uses|by convention|naming convention|use \S+ (?:for|instead of))\b/i
  },
  {
    scope: "decision",
    pattern: /\b(?:we (?:decided|agreed|chose|will go with)|let'?s go with|decision:|decided to)\b/i
  },
  {
    scope: "environment",
    pattern:
      /\b(?:runs? on|we'?re on|i'?m on|installed|node (?:version )?\d|python \d|the (?:server|database|db|api) (?:is|runs)|env(?:ironment)? var(?:iable)?|port \d{2,5})\b/i
  }
]

const STOP = new Set(
  "a an the and or but to of in on for with we i you it is are be use using this that from now always never please not no do don't dont".split(
    " "
  )
)

/**
 * Candidate sentences: the checkpoint's sentence split (`checkpoint/Text.ts`:
 * a console's hard wrap inside a sentence is no break, so a terminal-wrapped
 * "… Then I want you to⏎summarize …" stays one sentence instead of the
 * fragment "Then I want you to"), within the record length.
 */
const sentences = (text: string): Array<string> =>
  Text.sentences(text)
    .map((sentence) => sentence.replace(/\s+/g, " ").trim())
    .filter((sentence) => sentence.length >= 8 && sentence.length <= MAX_RECORD_CHARS)

/**
 * Content words of a record, lower-cased, for overlap.
 *
 * @category utils
 */
export const contentWords = (text: string): ReadonlySet<string> =>
  new Set(
    text
      .toLowerCase()
      .split(/[^a-z0-9_./:-]+/)
      .filter((word) => word.length > 1 && !STOP.has(word))
  )

const overlap = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const word of a) if (b.has(word)) shared++
  return shared / (a.size + b.size - shared)
}

/**
 * Links candidates to the records in force: drops a candidate identical to
 * one in force (or to an earlier candidate), and marks the records of the
 * same scope it restates as superseded. Shared by every extractor.
 *
 * @category combinators
 */
export const reconcile = (
  candidates: ReadonlyArray<MemoryCandidate>,
  existing: ReadonlyArray<Entry.MemoryEntry>
): ReadonlyArray<MemoryCandidate> => {
  const seen = new Set(existing.map((entry) => entry.memory.text.trim().toLowerCase()))
  const result: Array<MemoryCandidate> = []
  for (const candidate of candidates) {
    const normalized = candidate.text.trim().toLowerCase()
    if (normalized.length === 0 || seen.has(normalized)) continue
    seen.add(normalized)
    const words = contentWords(candidate.text)
    const restated = existing
      .filter(
        (entry) =>
          (entry.memory.scope ?? "") === candidate.scope &&
          overlap(words, contentWords(entry.memory.text)) >= SUPERSEDE_OVERLAP
      )
      .map((entry) => entry.id)
    const supersedes = [...new Set([...(candidate.supersedes ?? []), ...restated])]
    result.push({ ...candidate, ...(supersedes.length > 0 ? { supersedes } : {}) })
  }
  return result
}

/**
 * The offline extractive extractor (see the module docs).
 *
 * @category constructors
 */
export const make = (): MemoryExtractor => ({
  name: "extractive",
  extract: (request) =>
    Effect.sync(() => {
      const candidates: Array<MemoryCandidate> = []
      for (const item of request.covered) {
        for (const sentence of sentences(UserSpeech.spokenText(item.message))) {
          const rule = RULES.find((candidate) => candidate.pattern.test(sentence))
          if (rule) candidates.push({ text: sentence, scope: rule.scope, sourceEntryIds: [item.entryId] })
        }
      }
      return reconcile(candidates, request.existing)
    })
})

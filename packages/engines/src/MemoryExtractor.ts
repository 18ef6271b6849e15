/**
 * The memory extractor: reads the originals of a range about to be covered
 * by a checkpoint and proposes durable memory records — user preferences,
 * project conventions, standing decisions, environment facts — each with
 * the entry ids it came from (DESIGN.md "Durable memory").
 *
 * {@link make} is the offline default: extractive, deterministic, no model
 * call. It reads only the user's own words (`UserSpeech.ownWords`: tool
 * output, shell output, pasted logs, observations, and the code, documents
 * and quotes a message pastes are data, not the user's preference) and
 * keeps a sentence when it states a standing rule — not a question
 * (`Constraints.isQuestion`), error text or the user's account of their
 * own situation (`Constraints.notARule`), nor a part of a sentence said
 * whole elsewhere. A record is sent with every later request, so the rules
 * favour precision. A model-backed extractor lives in
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
import * as Constraints from "./checkpoint/Constraints.ts"
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
 * "always" / "never" as a rule: said to someone — where a clause starts
 * ("Always run …", "so never …", "please always …") or after a subject and
 * an optional modal ("you should never …", "we always …", "themes must
 * NEVER …"). Elsewhere it describes ("it will always use the latest
 * version", "this is always true", "the mantra was always …") or sits in a
 * name (`never-opened-user`).
 */
const ABSOLUTE = String.raw`(?:(?:^|[,;:—–(]\s*|\s-+\s+|\b(?:and|but|so|then|please|pls|just|also|and then)\s+)|\b(?:you|u|we|i|agents?)\s+(?:(?:should|must|shall|will|'ll|need to|have to|are to|can)\s+)?|\b(?:should|must)\s+)(?:always|never)\b(?![-'’_])`

/**
 * Sentence patterns per scope, on the user's own words.
 *
 * A preference says how things should be in general ("I prefer tabs",
 * "Always run the linter", "you should never load the logs in full", "I
 * hate when you …"). "I want …" — to the agent or not ("I want to add a
 * web UI", "I want you to summarize …") — is the task for now, like the
 * bare imperative no pattern records; it is a preference only when it says
 * the act recurs: always / never, before / after every, whenever, each
 * time, every time, from now on.
 */
const RULES: ReadonlyArray<{ readonly scope: string; readonly pattern: RegExp }> = [
  {
    scope: "preference",
    pattern: new RegExp(
      String.raw`\bi (?:prefer|hate|dislike|(?:don'?t|do not) like|like it when)\b|\bi want\b.*\b(?:(?:before|after) (?:every|each)|whenever|each time|every time|always|never)\b|${ABSOLUTE}|\bfrom now on\b|\b(?:don'?t|do not) ever\b`,
      "i"
    )
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
      /\b(?:(?:it|this|the (?:app|server|service|api|db|database|project|code|site|cli|tool)) runs? on|we'?re on|i'?m on|we run|node (?:version )?\d|python \d|the (?:server|database|db|api) (?:is|runs)|env(?:ironment)? var(?:iable)? \S+ (?:is|=)|port \d{2,5})\b/i
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

/** Lower-cased words of a sentence, space-joined with spaces around, to find one sentence inside another. */
const wordKey = (text: string): string => ` ${(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).join(" ")} `

/**
 * Candidates less those whose words lie inside another candidate's, in
 * order: a part of a sentence the user said whole elsewhere (quoting
 * themselves, or a console that wrapped the line and printed it again) is
 * that sentence, said once. The longer one is kept, with both sources.
 */
const withoutFragments = (candidates: ReadonlyArray<MemoryCandidate>): Array<MemoryCandidate> => {
  const keys = candidates.map((candidate) => wordKey(candidate.text))
  const kept: Array<MemoryCandidate> = []
  candidates.forEach((candidate, index) => {
    const key = keys[index]!
    if (key.trim().length === 0) return
    // Inside a longer (or an earlier equal) candidate: that one stands for it.
    const host = keys.findIndex(
      (other, at) => at !== index && other.includes(key) && (other.length > key.length || at < index)
    )
    if (host >= 0) return
    const sources = new Set(candidate.sourceEntryIds)
    keys.forEach((other, at) => {
      if (at !== index && key.includes(other) && (key.length > other.length || at > index))
        for (const id of candidates[at]!.sourceEntryIds) sources.add(id)
    })
    kept.push({ ...candidate, sourceEntryIds: [...sources] })
  })
  return kept
}

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
        for (const sentence of sentences(UserSpeech.ownWords(item.message))) {
          if (Constraints.isQuestion(sentence) || Constraints.notARule(sentence)) continue
          const rule = RULES.find((candidate) => candidate.pattern.test(sentence))
          if (rule) candidates.push({ text: sentence, scope: rule.scope, sourceEntryIds: [item.entryId] })
        }
      }
      return reconcile(withoutFragments(candidates), request.existing)
    })
})

/**
 * The user's constraints and corrections (issue #11 requirement 1:
 * "constraints and corrections still in force (the user's words)"): which
 * sentences of the user's speech state a rule, a preference or a correction,
 * one quoted item per message, and how strongly each binds, so the budget
 * fill (`Fit`) keeps the binding ones before the merely recent ones.
 *
 * Error text the user pastes, their account of their own situation and,
 * in a correction, their verdict on what happened are not rules (they were
 * filed here before: s6 new-user trial).
 *
 * A message the user had to repeat word for word ("drop the X nonsense." three
 * times) is a correction in force whatever its wording: the agent did not do
 * it the first time. Repeats become one item that says how often it was said.
 * A question or a bare link asked again is not a rule (a link names a page;
 * a question wants an answer).
 *
 * @since 0.2.0
 */
import { clip, sentences } from "./Text.ts"

/** Longest quoted constraint (the rule sentences of one user message), in characters. */
const CONSTRAINT_CHARS = 240

/**
 * "don't" / "do not" said to someone: where a clause starts (the sentence's
 * start, after punctuation, a conjunction or "please") or after its subject
 * ("you don't need …", "we don't want …"; with `firstPerson`, also the
 * user's own "I don't want …"). Elsewhere it sits inside a noun phrase —
 * "the don't-retry flag", "a 'don't touch' list", "that 2% don't care
 * conclusion" — or a relative clause ("files that don't exist") and names a
 * thing, not a rule; so does a hyphenated or quoted "don't" ("don't-retry",
 * "'don't'").
 */
const prohibition = (firstPerson: boolean): string =>
  String.raw`(?<=(?:^|[\n.!?,;:(…—–*-]\s*|\b(?:and|but|so|or|then|please|pls|just|also|simply|really|still|ever|why|you|we|u${firstPerson ? "|i" : ""})\s+))(?:don'?t|do not)\b(?![-'’])`
/** Words that make a sentence a rule or preference. */
const CONSTRAINT_RE = new RegExp(
  String.raw`${prohibition(true)}|\b(?:never|always|must|mustn'?t|should(?:n'?t)?|prefer|instead|make sure|avoid|only|no need|keep|want|use|in full)\b|^(?:why|no|not)\b`,
  "i"
)
/** A message that opens by correcting the agent. */
const CORRECTION_RE = /^\s*(?:no\b|nope\b|actually\b|wait\b|instead\b|don'?t\b|stop\b|that'?s wrong|wrong\b|nah\b)/i
/**
 * A message that turns down what the agent just did or proposed — the
 * corrections ({@link CORRECTION_RE}) that refuse rather than redirect
 * ("actually", "wait", "instead" redirect): it opens with a refusal ("No, …",
 * "Nope", "Wrong", "That's wrong", "That's not what I asked", "Don't …",
 * "Stop", "Undo …", "Revert …", "We shouldn't …") or refuses a point of it in
 * a clause of its own ("so NO on #3", "no to the cache").
 */
const REJECTION_RE =
  /^\s*(?:no+\b|nope\b|nah\b|wrong\b|that'?s (?:wrong|not (?:right|it|what))|this is wrong|don'?t\b|do not\b|stop\b|undo\b|revert\b|(?:we|you) (?:shouldn'?t|should not)\b)|(?:[.!?;,]\s*|\b(?:so|but|and)\s+)no(?:\s*[,.!;:]|\s+(?:on|to)\b)/i

/**
 * Whether the user's message turns down what the agent did or proposed
 * before it ({@link REJECTION_RE}): a choice or a hypothesis the user
 * refused is not a decision in force.
 *
 * @category guards
 */
export const isRejection = (said: string): boolean => REJECTION_RE.test(said.slice(0, 600))
/** Questions that are requests ("can we keep …?", "could you …?", "why do you …?"). */
const REQUEST_QUESTION_RE =
  /\b(?:can|could|would|shall) (?:we|you)\b|\bplease\b|\bhow about\b|^why (?:do|does|did|would|are|is|not)\b|\b(?:shouldn'?t|isn'?t|can'?t|don'?t) (?:we|you|it|that|this)\b/i
/** Markers of a binding rule (strength 2 each): absolutes, prohibitions, an order of operations. */
const STRONG_RE = new RegExp(
  String.raw`${prohibition(false)}|\b(?:never|always|must(?:n'?t)?|only|make sure|avoid|instead|prefer|no need|in full|first\b[^.?!]{0,80}\bbefore|before you)\b`,
  "gi"
)
/** Markers of a weaker preference (strength 1 each). */
const WEAK_RE = /\b(?:should(?:n'?t)?|want|keep|use|first)\b|^why\b/gi
/**
 * Error text the user pasted (a sentence that opens with an error or
 * exception name — "Exception can only concatenate…", "Unhandled exception in
 * event loop: …" — or holds a `SomeError: ` marker): output they report, not
 * a rule. "Error handling must…" names a topic, not an error, and stays.
 */
const REPORTED_ERROR_RE =
  /^(?:(?:unhandled|uncaught|fatal)\s+)?[a-z]*(?:error|exception)\b(?!\s+(?:handl\w*|messages?|types?|class(?:es)?|codes?|paths?)\b)|\b[A-Z][A-Za-z]*(?:Error|Exception): /i
/**
 * The user's account of their own situation ("I cannot paste it because …",
 * "I couldn't find it", "I don't think …"): what happened to them, not what
 * the agent must do — unless it states a preference or an absolute
 * ({@link STANDS_RE}).
 */
const OWN_ACCOUNT_RE =
  /^(?:(?:no+|nope|nah|yes|yeah|ok|okay|wait|w8)[,.!]*\s+)?(?:(?:and|but|so|also)\s+)*i\s+(?:can(?:no|')t|cannot|could(?:n'?t| not)|did(?:n'?t| not)|do(?:n'?t| not) (?:see|know|think|understand|remember|have|get|own)|was|am|'m|tried|pressed|saw|see|think|guess|just|have|had|got)\b/i
/** What keeps a first-person sentence a rule: a preference or an absolute. */
const STANDS_RE = /\b(?:want|prefer|like|expect|never|always|must)\b/i
/**
 * A sentence with a subject of its own that is not the agent's task ("That
 * conclusion is bogus.", "Our session was chasing one gap …"): in a
 * correction, only the directions count — its other sentences are the user's
 * verdict on what happened, kept when they state a rule ({@link CONSTRAINT_RE}).
 */
const VERDICT_RE =
  /^(?:(?:and|but|so|also)\s+)*(?:the|that|this|these|those|our|my|it|its|there|a|an|his|her|their|we'?ve|we were|we had|i'?ve|i was)\b/i

/**
 * A bare "No!" or "Wait!!!" (a correction's opening whose reason was the user's verdict or a question): alone it
 * names no rule.
 */
const BARE_NO_RE = /^\s*(?:no+|nope|nah|wait|hold on|whoa|hey)[\s.!,]*$/i
/** A question, also one typed with trailing exclamation marks ("What did you `rm` last time?!?!"). */
const QUESTION_END_RE = /\?[!?]*$/

/**
 * The user's praise of what the agent did ("that was smart, only using
 * other_files …", "this is perfect"): a verdict, not a rule — though it may
 * hold a rule word ("only"). Not "it's better to …" or "that's right, but
 * …", which can state a preference.
 */
const PRAISE_RE =
  /^(?:(?:ok|okay|oh|wow|yes|yeah|ah)[,!.]?\s+)?(?:that|this|it)(?:'s|’s| is| was| looks)\s+(?:(?:very|really|so|pretty|quite)\s+)?(?:smart|great|nice|perfect|clever|neat|cool|excellent|awesome|brilliant|elegant|beautiful|fantastic|amazing)\b/i

/**
 * Whether a sentence of the user's is error text, praise or their own situation, not a rule for the agent.
 *
 * @category guards
 */
export const notARule = (sentence: string): boolean =>
  REPORTED_ERROR_RE.test(sentence) ||
  PRAISE_RE.test(sentence) ||
  (OWN_ACCOUNT_RE.test(sentence) && !STANDS_RE.test(sentence))

/**
 * "I want you to …" said once: the ask for now, like the bare imperative
 * ("Then I want you to summarize the current status …"), not a rule in force
 * — its "want" is no rule word, unless the sentence says the act recurs
 * (`MemoryExtractor` reads it the same way).
 */
const DIRECTIVE_RE =
  /\b(?:then\s+)?i want (?:you|u) to\b(?![^.!?]*\b(?:always|never|every|each time|whenever|from now on)\b)/gi

/** The note that marks a repeated message. */
const REPEATED_RE = /said (\d+) times\)$/

/** Whitespace- and case-insensitive key of what the user said, to recognise a repeat. */
const keyOf = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim()

/** A repeat counts when it comes within this many user messages of the previous time it was said. */
const REPEAT_WINDOW = 4
/** Fewest words of a repeated message for the repeat to count as insistence (not "hi", "do that"). */
const REPEAT_MIN_WORDS = 3

/** A link or a path: a message of only these names something, it asks nothing. */
const LINK_OR_PATH_RE = /\b[a-z][a-z+.-]*:\/\/\S+|(?:^|\s)[~.]?\/\S+/gi

/** A sentence that opens as a question, typed with or without its question mark ("how do i run tests"). */
const INTERROGATIVE_RE = /^(?:how|what|where|which|who|whom|whose|when|is there|are there|is it|am i|do i|does)\b/i

/** A question that asks the agent to do something ("can we use …", "could you …", "should we …", "will you …"). */
const ASKING_RE =
  /^(?:(?:and|but|so|also|ok|okay)\s+)*(?:(?:can|could|would|will|shall|should|do|does|did|is|are|may|might) (?:we|you|u|i|it|this|that|there)|how about|what about|why not)\b/i

/**
 * Whether a sentence is a question, typed with its question mark (also
 * "?!?!") or without it ("how do i run tests", "can we use X for Y"), a
 * request phrased as one included: it wants an answer or an act now, it
 * states no standing rule.
 *
 * @category guards
 */
export const isQuestion = (sentence: string): boolean => {
  // A quoted question ("- \"how about we …?\"") is a question too.
  const trimmed = sentence.trim().replace(/^["'“‘([]+|["'”’)\]]+$/g, "")
  return QUESTION_END_RE.test(trimmed) || INTERROGATIVE_RE.test(trimmed) || ASKING_RE.test(trimmed)
}

/**
 * A message that opens with a question that is not a request ("is there a
 * portable way to …? including …", "how do i run tests"): asked again, it
 * is still a question — the user wants an answer, not a rule kept.
 */
const opensWithQuestion = (text: string): boolean => {
  const first = (sentences(text)[0] ?? "").trim()
  return (first.endsWith("?") || INTERROGATIVE_RE.test(first)) && !REQUEST_QUESTION_RE.test(first)
}

/**
 * Per message, how many times in a row (each within {@link REPEAT_WINDOW}
 * user messages of the last) the user has said it by then; 1 for a message
 * said once, a greeting, a question or a bare link or path (words are
 * counted without links and paths).
 */
const repeats = (speech: ReadonlyArray<{ readonly text: string }>): Array<number> => {
  const last = new Map<string, { index: number; times: number }>()
  return speech.map((item, index) => {
    const key = keyOf(item.text)
    const words = key.replace(LINK_OR_PATH_RE, " ").match(/[\p{L}\p{N}_`'-]+/gu)?.length ?? 0
    if (words < REPEAT_MIN_WORDS || key.endsWith("?") || opensWithQuestion(item.text)) return 1
    const known = last.get(key)
    const times = known && index - known.index <= REPEAT_WINDOW ? known.times + 1 : 1
    last.set(key, { index, times })
    return times
  })
}

/**
 * One quoted item per user message that states a rule, a preference or a
 * correction (its rule sentences, in the user's words, with the entry id),
 * and one per message the user repeated (said again within a few messages:
 * the newest entry id, "said N times"). Oldest first. A sentence the
 * handoff already carries verbatim elsewhere (`carried`: the quoted goal,
 * the message kept after the checkpoint) is not quoted again.
 *
 * @category constructors
 */
export const fromSpeech = (
  speech: ReadonlyArray<{ readonly entryId: string; readonly text: string }>,
  carried: ReadonlyArray<string> = []
): Array<string> => {
  const said = repeats(speech)
  const carriedKeys = carried.map(keyOf)
  const isCarried = (sentence: string) => carriedKeys.some((text) => text.includes(keyOf(sentence)))
  const out = new Map<string, string>()
  // Each message's key in `out`, by the message's own key.
  const itemOf = new Map<string, string>()
  speech.forEach((item, index) => {
    const times = said[index]!
    const correction = CORRECTION_RE.test(item.text)
    const kept =
      times > 1 && item.text.length <= 600 && !isCarried(item.text) && !notARule(item.text)
        ? [item.text]
        : sentences(item.text.slice(0, 4000)).filter(
            (sentence) =>
              sentence.length <= 300 &&
              !isCarried(sentence) &&
              !notARule(sentence) &&
              (!QUESTION_END_RE.test(sentence) || REQUEST_QUESTION_RE.test(sentence)) &&
              (CONSTRAINT_RE.test(sentence.replace(DIRECTIVE_RE, "")) || (correction && !VERDICT_RE.test(sentence)))
          )
    if (kept.length === 0 || kept.every((sentence) => BARE_NO_RE.test(sentence))) return
    const quote = `"${clip(kept.join(" … "), CONSTRAINT_CHARS)}"`
    // A repeat replaces the earlier item (same message — quoted whole or in part — or same rule words): one line,
    // the newest entry id.
    for (const key of [keyOf(item.text), quote, itemOf.get(keyOf(item.text))]) if (key !== undefined) out.delete(key)
    const key = times > 1 ? keyOf(item.text) : quote
    itemOf.set(keyOf(item.text), key)
    out.set(key, `${quote} (${item.entryId}${times > 1 ? `; said ${times} times` : ""})`)
  })
  return [...out.values()]
}

/**
 * How strongly a quoted constraint binds: 2 per absolute, prohibition or
 * order of operations ("never", "only", "don't", "first … before"), 1 per
 * weaker preference ("should", "want", "keep", "use", "first", a "why …?" challenge),
 * 2 for a message that opens by correcting the agent, 2 for a repeated one.
 *
 * @category getters
 */
export const strength = (item: string): number => {
  const quoted = /^"(.*)"/.exec(item)?.[1] ?? item
  const repeats = Number(REPEATED_RE.exec(item)?.[1] ?? 1)
  return (
    2 * (quoted.match(STRONG_RE)?.length ?? 0) +
    (quoted.match(WEAK_RE)?.length ?? 0) +
    (CORRECTION_RE.test(quoted) ? 2 : 0) +
    (repeats > 1 ? 2 : 0)
  )
}

/**
 * What a sentence of the agent's is, for the handoff's Key Decisions (issue
 * #11 requirement 1, "decisions with their reasons"). Claude Code's compact
 * prompt asks for the "key technical decisions" apart from what the agent was
 * doing; a decision is a choice — between ways to do a thing ("use X instead
 * of Y", "we'll keep …", "the view should read it from the store") — made by
 * whoever acts. Three kinds are told apart:
 *
 * - narration: an acknowledgement, an announced look ("Let me check the
 *   tests"), a step that names nothing ("Let me fix this:");
 * - an explanation: words to the user, a pointer, a finding (what a thing
 *   does or did), a diagnosis or hypothesis, a label, a clause left unfinished;
 * - a choice: an announced change that names its object, a choosing word
 *   (instead, rather than, will use, should), or the lead-in of the chosen
 *   list of changes ("Changes needed:").
 *
 * @since 0.3.0
 */
import { sentences } from "./Text.ts"

/** Narration lead-ins that carry no decision ("I see,", "Let me", "Now", "First,"), dropped from the quoted text. */
const NARRATION_RE =
  /^(?:(?:i see|ok(?:ay)?|alright|good|great|perfect|got it|certainly|sure|of course|absolutely|exactly|you'?re (?:absolutely |completely |totally )?right)[,.!:](?:\s+|$)|(?:now|first|next|then),?\s+|let me\s+|i'?ll\s+)+/i

/** A sentence announcing the agent's next step ("Let me …", "I'll …", "Now I need to …"), not stating a choice. */
const INTENT_RE =
  /^(?:(?:ok(?:ay)?|alright|so|now|first|next|then)[,.!]?\s+)*(?:let me|let'?s|let us|i'?ll|i will|we will|i'?m going to|i am going to|we'?ll|i need to|we need to|i should|we should)\s+(?:(?:first|now|also|quickly|just|then|carefully)\s+)?([\w-]+)/i
/** Verbs of looking (reading, searching, running a check), not of choosing: their sentences narrate, they decide nothing. */
const LOOKING_RE =
  /^(?:look|check|see|read|examine|explore|search|find|grep|investigate|open|view|inspect|review|verify|test|run|try|debug|understand|analy[sz]e|start|begin|take|get|trace|figure|confirm|identify|locate|understand|study|dig|think|re-?run|re-?read|re-?check)$/i
/** Words that state a choice or its reason (Claude Code's compact prompt asks for decisions "and why"). */
const CHOICE_RE =
  /\b(?:instead|rather than|because|since|so that|decided?|chose|choose|prefer|opted?|to avoid|will use|switch(?:ed|ing)? to|go(?:ing)? with|keep(?:ing)? .* as)\b/i
/**
 * Words that choose — {@link CHOICE_RE} without the reason words (a reason
 * explains a choice, alone it is an explanation) — or prescribe what a thing
 * should do ("the view should read it from the store"; not in a relative
 * clause, "messages that should trigger a response", which describes).
 */
const CHOOSES_RE =
  /\b(?:instead|rather than|decided?|chose|choose|prefer|opted?|will use|switch(?:ed|ing)? to|go(?:ing)? with|keep(?:ing)? .* as)\b|(?:^|[,;]\s*)(?:the|we|i)\b[^,;:.]{0,60}?(?<!\b(?:that|which|who)\s)\b(?:should(?:n'?t)?|must)\b(?!\s+(?:now\s+)?(?:be|work|pass|resolve|fix|prevent|help|succeed)\b)/i
/**
 * The lead-in of the chosen list of changes ("We just want to:", "Changes
 * needed:", "The fix:"): the choice is the list it opens.
 */
const LEAD_IN_RE =
  /^(?:(?:so|and|but)\s+)?(?:(?:i|we) (?:just |only |really |actually )?(?:want|need|have) to|(?:the )?(?:fix|plan|solution|approach|changes?)(?: (?:needed|is|should be|will be))?|what we (?:actually |really )?want(?: is)?)\s*:$/i
/**
 * What follows an announced step's verb when it names nothing: a pronoun and
 * adverbs ("fix this properly", "do that now"), or the user's own words
 * ("follow your explicit instructions" defers, it chooses nothing).
 */
const NAMES_NOTHING_RE =
  /^\s*(?:(?:this|that|it|these|those|them|things|everything|both)(?:\s+(?:properly|correctly|now|again|first|too|up|out|quickly|right|then))*|your\s+(?:\w+\s+)?(?:instructions?|requests?|suggestions?|advice|lead|directions?)(?:\s+(?:\w+ly|now|again|to the letter))*)[\s.:!]*$/i
/** Acknowledgements of the user that carry no content ("You're right!", "Good catch."). */
const ACK_RE =
  /^(?:you'?re (?:absolutely |completely |totally )?right|good (?:catch|point|question)|i see|ok(?:ay)?|got it|sure|yes|perfect|great|certainly|of course|absolutely|exactly)[\s.!,:-]*$/i

/**
 * Whether a sentence is narration rather than a decision: an
 * acknowledgement, or an announced next step ({@link INTENT_RE}) that states
 * no choice ({@link CHOICE_RE}) and either only looks (reads, searches, runs a
 * check — {@link LOOKING_RE}) or names nothing it changes (only a pronoun
 * after its verb: {@link NAMES_NOTHING_RE}). An announced change that names
 * its object ("Now let me keep the listeners") stays: in answer to the user's
 * steering it is the choice made.
 */
const isNarration = (sentence: string): boolean => {
  if (ACK_RE.test(sentence)) return true
  const intent = INTENT_RE.exec(sentence)
  if (intent === null || CHOICE_RE.test(sentence)) return false
  return LOOKING_RE.test(intent[1]!) || NAMES_NOTHING_RE.test(sentence.slice(intent.index + intent[0].length))
}

/** A sentence without its narration lead-ins ({@link NARRATION_RE}), capitalized. */
const withoutLeadIns = (sentence: string): string => {
  const rest = sentence.replace(NARRATION_RE, "")
  return rest.length > 0 ? rest.charAt(0).toUpperCase() + rest.slice(1) : rest
}

/**
 * The agent's words as a decision: narration sentences ({@link isNarration})
 * dropped, narration lead-ins dropped at the start of each other sentence, a
 * trailing lead-in colon ended as a sentence. `""` when only narration is
 * left.
 *
 * @category getters
 */
export const plainStatement = (text: string): string =>
  sentences(text)
    .filter((sentence) => !isNarration(sentence))
    .map(withoutLeadIns)
    .filter((sentence) => sentence.length > 0)
    .join(" ")
    .replace(/:$/, ".")

/** A clause addressed to the user ("You're getting …", "Your build …"): it tells them something, it chooses nothing. */
const TO_THE_USER_RE = /^(?:you|you'?re|your)\b/i
/** A clause that only points ("This is the crucial step", "That's it"): it names no choice. */
const POINTER_RE = /^(?:this|that|it|which)(?:'s|\s+(?:is|was))\b/i
/** A failure in the clause a "because" / "since" explains ("The previous command failed because …"): a finding, not a choice. */
const FAILURE_RE =
  /\b(?:fail(?:s|ed|ing)?|errors?|exceptions?|crash(?:es|ed)?|broke|broken|wrong|missing|incorrect|(?:does|did|is)(?:n'?t| not) work(?:ing)?)\b/i

/**
 * A clause that reports what a thing is doing or what happened to it ("The
 * config path is resolving to /app instead of /app/project", "The filename
 * was identified as `python` instead of the file's name"): its subject is a
 * thing, not whoever chooses, and its verb a progressive state or a past
 * passive — an observation, not a choice. A change described with "now"
 * ("The test is now checking only the titles rather than their order") is
 * what the agent made, and stays.
 */
const FINDING_RE =
  /^(?:the|its|their|this|that|these|those)\s+[^,;:]{1,80}?\s+(?:(?:is|are|was|were)\s+(?:still\s+|actually\s+|currently\s+)?(?:being\s+\w+ed|(?!being\b|going\b)\w+ing)|(?:was|were|has been|have been|had been)\s+(?:(?!now\b)\w+ly\s+)?(?:\w+ed|\w+en|set|made|found|put|left|read|run|built|kept|sent|lost|caught|thrown)(?!\s+now\b))\b/i
/** A thing gone wrong ("incorrectly", "mistakenly"): whatever the clause's form, it reports a fault, it chooses nothing. */
const MISHAP_RE = /\b(?:incorrectly|wrongly|mistakenly|erroneously|accidentally|unexpectedly|inadvertently)\b/i
/**
 * A diagnosis or hypothesis: a clause about a cause ("The most likely
 * explanation is …", "The root cause was …") or a hedged claim ("This is
 * probably due to …", "it seems to …") — a guess about what is so, not a
 * choice; an announced step ({@link INTENT_RE}) with a hedge is still one.
 */
const HYPOTHESIS_RE =
  /^(?:the|a|one|my|our)\s+(?:\w+\s+){0,2}(?:explanation|cause|reason|culprit|problem|issue|hypothesis|theory|suspect)s?\b|\b(?:probably|likely|possibly|perhaps|maybe|presumably|apparently|due to)\b|\b(?:seems?|appears?) to\b|\b(?:might|may|must|could) have\b/i
/**
 * A thing's subject (not I / we / you / let's) with a verb of what it is seen
 * to do ("`main.py` shows as uncovered", "The call returns None") or a
 * negated active verb ("Git doesn't show it", "The watcher can't see
 * renames"): what a thing does or does not do — an observation, not a
 * choice. A change described with "now" ("The handler now returns the
 * error") is what the agent made; a negated passive ("Built-in themes aren't
 * watched") states how the work was made; both stay.
 */
const OBSERVED_RE =
  /^(?!(?:i|we|you|let'?s?)\b)(?![^,;:]*\bnow\b)[^\s,;:]+(?:\s+(?!(?:that|which|who)\b)[^\s,;:]+){0,3}?\s+(?:doesn'?t|does not|didn'?t|did not|can'?t|cannot|won'?t|shows?|appears?|looks?|returns?|prints?|outputs?|displays?|says?|throws?|raises?|hangs?)\b/i
/**
 * A subordinate clause opening a sentence ("When we pass a relative path,
 * …", "Since nothing else differs, …"): the main clause after it is what the
 * sentence states.
 */
const SUBORDINATE_RE = /^(?:when|whenever|if|once|after|while|since|because|given that|as)\b[^,]{3,200},\s+/i
/** A leading subordinate clause that gives a reason ("Since nothing else differs, …"): the choice is the main clause. */
const REASON_LEAD_RE = /^(?:since|because|given that|as)\b[^,]{3,200},\s+(?=(?:i|we|let)\b)/i
/** A sentence's main clause: without a leading subordinate clause ({@link SUBORDINATE_RE}). */
const mainClause = (sentence: string): string => sentence.replace(SUBORDINATE_RE, "")

/**
 * A definition: a thing's subject, a copula and an article or a possessive
 * ("CliRunner is Click's built-in testing utility …", "The lock is a file
 * the build writes"): what a thing is — an explanation. The words that name
 * a choice as their subject ("the plan is a …", "the fix is …") and a change
 * described with "now" ("The default is now a …") stay.
 */
const DEFINITION_RE =
  /^(?!(?:i|we|you|let'?s?)\b)(?!(?:the|our|my)\s+(?:\w+\s+)?(?:plan|approach|fix|solution|choice|decision|idea|strategy|change)s?\b)(?![^,;:]*\bnow\b)[^\s,;:]+(?:\s+(?!(?:that|which|who)\b)[^\s,;:]+){0,3}?\s+(?:is|are|was|were)\s+(?:a|an|the|\w+'s)\s/i

/** A clause left open at its end ("The decision was", "The reason is to"): it names nothing. */
const UNFINISHED_RE = /\b(?:is|are|was|were|be|been|to|the|a|an|of)$/i
/**
 * A label in front of a statement ("Schema-Drift Detection: Because …",
 * "**Direct invocation approach** - Instead …"): a few words, a colon or a
 * dash, then a new sentence (a capital) — a heading of what follows, not a
 * clause of it ("Remove the flush - flush on submit instead" goes on in
 * lower case: one clause).
 *
 * @category constants
 */
export const LABEL_RE = /^[^\s:]+(?:\s+[^\s:]+){0,4}?\s*(?::|\s[-–—])\s+(?=\p{Lu})/u

/**
 * Whether a clause (before a reason word, or a whole sentence when `word` is
 * `""`) explains instead of deciding: addressed to the user, only a pointer,
 * a finding ({@link FINDING_RE}, {@link MISHAP_RE}), a diagnosis or a guess
 * ({@link HYPOTHESIS_RE}), left unfinished, or — with a cause
 * word (because, since) — a failure; the failure itself is kept under Failed
 * Approaches, and the fix it prompted by `Decisions`' fixes of failures.
 *
 * @category guards
 */
export const explains = (clause: string, word: string): boolean =>
  TO_THE_USER_RE.test(clause) ||
  [clause, mainClause(clause)].some(
    (main) => POINTER_RE.test(main) || FINDING_RE.test(main) || OBSERVED_RE.test(main) || DEFINITION_RE.test(main)
  ) ||
  MISHAP_RE.test(clause) ||
  (HYPOTHESIS_RE.test(clause) && !INTENT_RE.test(clause)) ||
  UNFINISHED_RE.test(clause.replace(/[\s:,;*_-]+$/, "")) ||
  (/^(?:because|since)$/i.test(word) && FAILURE_RE.test(clause))

/**
 * Whether a sentence chooses: not narration, not an explanation, and an
 * announced change ({@link INTENT_RE}), a choosing word ({@link CHOOSES_RE})
 * or the lead-in of a list of changes ({@link LEAD_IN_RE}).
 *
 * @category guards
 */
export const isChoice = (sentence: string): boolean => {
  if (LEAD_IN_RE.test(sentence)) return true
  const main = mainClause(sentence)
  return !isNarration(main) && !explains(sentence, "") && (INTENT_RE.test(main) || CHOOSES_RE.test(sentence))
}

/**
 * The choice a message states — its first sentence that chooses
 * ({@link isChoice}), without narration lead-ins or a leading reason
 * ({@link REASON_LEAD_RE}); one that opens a list ("Changes needed:", "I'll
 * take this plan:") with the list's items after it, joined by "; ", until a
 * narration sentence or `max` characters. `""` when no sentence chooses: an
 * answer or an explanation is not a decision, only the clause in it that
 * chooses is.
 *
 * @category getters
 */
export const choiceOf = (text: string, max: number): string => {
  const all = sentences(text).map((sentence) => sentence.replace(LABEL_RE, ""))
  const at = all.findIndex(isChoice)
  if (at < 0) return ""
  const first = withoutLeadIns(all[at]!.replace(REASON_LEAD_RE, ""))
  const leadIn = LEAD_IN_RE.test(all[at]!)
  if (!leadIn && !first.endsWith(":")) return first
  const items: Array<string> = []
  let length = first.length
  for (const sentence of all.slice(at + 1)) {
    if (isNarration(sentence) || length >= max) break
    items.push(sentence.replace(/[.;]$/, ""))
    length += sentence.length + 2
  }
  if (items.length > 0) return `${first} ${items.join("; ")}`
  return leadIn ? "" : first.replace(/:$/, ".")
}

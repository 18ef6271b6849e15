/**
 * Model ids as callers write them: provider prefixes (`anthropic/…`,
 * `openai:…`, Bedrock `us.anthropic.…`), dated snapshots
 * (`claude-sonnet-4-5-20250929`), Vertex `@` versions and Ollama `:` tags.
 * Normalization, prefix matching and "did you mean" suggestions for the
 * policy registry.
 *
 * @since 0.1.0
 */

const PROVIDER_PREFIXES = new Set([
  "openai",
  "anthropic",
  "google",
  "gemini",
  "vertex",
  "azure",
  "bedrock",
  "groq",
  "together",
  "fireworks",
  "openrouter",
  "ollama",
  "xai",
  "cerebras",
  "deepinfra",
  "huggingface",
  "lmstudio",
  "vllm"
])
const BEDROCK_PREFIX = /^(?:[a-z]{2,6}\.)?(?:anthropic|meta|mistral|deepseek|qwen|openai|google)\.(.+)$/
const BOUNDARY = new Set(["-", "_", ":", "@"])

/**
 * The forms of an id worth looking up, most literal first: lower-cased; the
 * part after the last `/` (`anthropic/claude-…`, `models/gemini-…`); without
 * a known `provider:` prefix (`openai:gpt-5`); without a Bedrock
 * `region.vendor.` prefix; and a Claude id written with dots as AI Gateway
 * and OpenRouter write it (`claude-sonnet-4.5` → `claude-sonnet-4-5`,
 * Anthropic's own ids use dashes).
 *
 * @category utils
 */
export const candidateIds = (modelId: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let id = modelId.trim().toLowerCase()
  out.push(id)
  id = id.slice(id.lastIndexOf("/") + 1)
  out.push(id)
  const colon = id.indexOf(":")
  if (colon > 0 && PROVIDER_PREFIXES.has(id.slice(0, colon))) id = id.slice(colon + 1)
  out.push(id)
  const bedrock = BEDROCK_PREFIX.exec(id)
  if (bedrock?.[1]) out.push(bedrock[1])
  const last = out.at(-1) ?? ""
  if (last.startsWith("claude-")) out.push(last.replace(/(\d)\.(\d)/g, "$1-$2"))
  return [...new Set(out)].filter((candidate) => candidate.length > 0)
}

/**
 * The canonical key for an id: its most stripped candidate form.
 *
 * @category utils
 */
export const normalizeId = (modelId: string): string => candidateIds(modelId).at(-1) ?? ""

/**
 * Whether `key` names `id`: equal, or a prefix of it ending on a boundary
 * character (`-`, `_`, `:`, `@`). A `.` is not a boundary, so `gpt-5` does
 * not answer for `gpt-5.1`.
 *
 * @category utils
 */
export const keyMatches = (id: string, key: string): boolean =>
  id === key || (id.startsWith(key) && BOUNDARY.has(id.charAt(key.length)))

const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * Length of `key` when it matches one of `candidates` ({@link keyMatches}), else -1.
 *
 * @category utils
 */
export const matchLength = (candidates: ReadonlyArray<string>, key: string): number =>
  candidates.some((candidate) => keyMatches(candidate, key)) ? key.length : -1

/**
 * The `count` known ids closest to `modelId` by edit distance, for
 * "unknown model" errors.
 *
 * @category utils
 */
export const nearestIds = (modelId: string, ids: ReadonlyArray<string>, count = 5): ReadonlyArray<string> => {
  const target = normalizeId(modelId)
  return [...new Set(ids)]
    .map((id) => ({ id, distance: editDistance(target, id) }))
    .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))
    .slice(0, count)
    .map((match) => match.id)
}

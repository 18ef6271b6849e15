/**
 * Exact tokenizers for the OpenAI BPE encodings (`o200k_base`, `cl100k_base`)
 * and the lookup from a {@link TokenizerId} / {@link ModelPolicy} to a
 * {@link Tokenizer}. Families without a public tokenizer get the calibrated
 * estimator of `Estimator.ts`.
 *
 * The exact backend of this (edge-safe) module is `gpt-tokenizer` (pure JS):
 * measured on the real pi transcript (`bench/measure.bench.ts`) with counts
 * identical to tiktoken and faster. The `tiktoken` backend (WASM bindings of
 * OpenAI's Rust tiktoken, the reference) lives in
 * `@context-engine/core/node` (`Tiktoken`), because its loader reads a WASM
 * file from disk.
 *
 * An encoding's rank table (gpt-tokenizer's `bpeRanks/<encoding>` module,
 * 1.2 MB for cl100k, 2.4 MB for o200k) is loaded on first use of that
 * encoding only — a run counting with o200k never loads cl100k (its table
 * held ≈5 MiB of heap once loaded; issue #13 req 6). {@link ensureLoaded}
 * loads it with a dynamic `import` (bundlers for edge runtimes see and bundle
 * it); the first `count` of an encoding not loaded yet loads it
 * synchronously where Node's `process.getBuiltinModule` is available (the
 * package's CommonJS build of the same table), and otherwise (an edge
 * runtime) fails with `Errors.EncodingNotLoaded` — the engines and the
 * middleware call {@link ensureLoaded} before counting. The encoder of an
 * encoding is built on its first `count`. Text is
 * encoded as ordinary text: special-token strings such as `<|endoftext|>`
 * inside a message count as the characters they are (tiktoken
 * `encode_ordinary`), so counting never throws. Text is encoded in chunks of
 * at most 1 KiB cut at piece boundaries (`TextChunks.ts`): exact for ordinary
 * text, linear in the length of long unbroken runs (base64, one repeated
 * letter) with at most 1 token of error per 1 KiB of such a run.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { GptEncoding } from "gpt-tokenizer/GptEncoding"
import * as Errors from "./Errors.ts"
import * as Estimator from "./Estimator.ts"
import type { ModelPolicy, TokenizerId } from "./ModelPolicy.ts"
import * as TextChunks from "./TextChunks.ts"
import { type Tokenizer, TokenizerService } from "./Tokenizer.ts"

/**
 * The exact BPE encodings this module provides.
 *
 * @category models
 */
export type Encoding = "o200k_base" | "cl100k_base"

/**
 * Which implementation counts an exact encoding.
 *
 * @category models
 */
export type Backend = "gpt-tokenizer" | "tiktoken"

/**
 * The default backend. `gpt-tokenizer` because on the pi transcript
 * (`/work/shared/transcripts/pi/before-compaction.jsonl`) it returns the same
 * counts as tiktoken for every message and is faster (numbers printed by
 * `node bench/run.ts measure`).
 *
 * @category constants
 */
export const defaultBackend: Backend = "gpt-tokenizer"

/**
 * An exact tokenizer that may hold native (WASM) memory.
 *
 * @category models
 */
export interface ExactTokenizer extends Tokenizer {
  readonly method: "exact"
  readonly encoding: Encoding
  readonly backend: Backend
  /** Releases WASM memory (tiktoken); a no-op for gpt-tokenizer. The tokenizer must not be used afterwards. */
  readonly free: () => void
}

/** A rank table as gpt-tokenizer's `bpeRanks/*` modules export it (rank → token text or bytes). */
type Ranks = ReturnType<Parameters<typeof GptEncoding.getEncodingApi>[1]>

const ranks = new Map<Encoding, Ranks>()
const gptEncodings = new Map<Encoding, GptEncoding>()

/** The rank tables as dynamic imports with literal specifiers, so bundlers include them (edge runtimes). */
const importRanks: Record<Encoding, () => Promise<{ readonly default: Ranks }>> = {
  o200k_base: () => import("gpt-tokenizer/bpeRanks/o200k_base"),
  cl100k_base: () => import("gpt-tokenizer/bpeRanks/cl100k_base")
}

/** Node: the CommonJS build of the rank table, loaded synchronously; undefined where there is no `process.getBuiltinModule`. */
const requireRanks = (encoding: Encoding): Ranks | undefined => {
  const node = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
  if (typeof node?.getBuiltinModule !== "function") return undefined
  type NodeModule = { createRequire: (from: string) => (id: string) => unknown }
  const load = (node.getBuiltinModule("node:module") as NodeModule).createRequire(import.meta.url)
  return (load(`gpt-tokenizer/bpeRanks/${encoding}`) as { default: Ranks }).default
}

/** The rank table of `encoding`: the loaded one, else the synchronous load (Node), kept; undefined where only `import` can load it. */
const loadedRanks = (encoding: Encoding): Ranks | undefined => {
  let table = ranks.get(encoding)
  if (table === undefined) {
    table = requireRanks(encoding)
    if (table !== undefined) ranks.set(encoding, table)
  }
  return table
}

const ranksOf = (encoding: Encoding): Ranks => {
  const table = loadedRanks(encoding)
  if (table === undefined) throw new Errors.EncodingNotLoaded({ encoding })
  return table
}

/**
 * Loads the rank table of `encoding` (once; later calls resolve at once), so
 * counting with it works on any runtime. Idempotent.
 *
 * @category loading
 */
export const ensureLoaded = async (encoding: Encoding): Promise<void> => {
  if (ranks.has(encoding)) return
  const table = (await importRanks[encoding]()).default
  if (!ranks.has(encoding)) ranks.set(encoding, table)
}

/**
 * Makes the tokenizer `id` ready to count: loads its rank table — at once
 * where it can be loaded synchronously (Node), else with a dynamic `import`
 * (edge runtimes). Nothing to load for an estimator or a loaded encoding.
 * Engines run it before every method (`EngineInput.guard`).
 *
 * @category loading
 */
export const ready = (id: TokenizerId): Effect.Effect<void> =>
  (id !== "o200k_base" && id !== "cl100k_base") || ranks.has(id)
    ? Effect.void
    : Effect.suspend(() => (loadedRanks(id) === undefined ? Effect.promise(() => ensureLoaded(id)) : Effect.void))

/**
 * The exact encodings whose rank tables this process has loaded, in load order.
 *
 * @category loading
 */
export const loadedEncodings = (): ReadonlyArray<Encoding> => [...ranks.keys()]

/** The parts of gpt-tokenizer's (4.0.0) `BytePairEncodingCore` that {@link bomExact} corrects. */
interface EncoderCore {
  tokenSplitRegex: RegExp
  getBpeRankFromBytes: (key: Uint8Array) => number | undefined
  readonly binarySearch: (key: Uint8Array) => number
  readonly bytePairNonUtfSortedEncoder: ReadonlyArray<readonly [Uint8Array, number]>
}

/**
 * Makes gpt-tokenizer count U+FEFF (the byte order mark, "zero width no-break
 * space") as tiktoken does; it counted "\uFEFF" as 2 tokens and
 * "\uFEFF\uFEFF" as 4 where tiktoken (OpenAI's reference) counts 1 each.
 * Two causes, both in gpt-tokenizer 4.0.0:
 *
 * - the rank of a byte sequence is looked up by its text decoded with a
 *   default `TextDecoder`, which drops a leading byte order mark, so the
 *   tokens that begin with one (o200k: "\uFEFF", "\uFEFFusing",
 *   "\uFEFFnamespace", …; stored as bytes in its rank table) are never merged:
 *   such sequences are looked up by their bytes instead;
 * - its split pattern's `\s` is JavaScript's, which includes U+FEFF, where
 *   tiktoken's (Rust `regex`, Unicode White_Space) does not: U+FEFF is taken
 *   out of `\s` (and put into `\S` and the "neither space, letter nor
 *   number" class).
 *
 * Returns false (and changes nothing) when the encoder's internals are not
 * the expected ones (another gpt-tokenizer version).
 */
const bomExact = (api: GptEncoding): boolean => {
  const core = (api as unknown as { bytePairEncodingCoreProcessor?: Partial<EncoderCore> })
    .bytePairEncodingCoreProcessor
  if (
    !(core?.tokenSplitRegex instanceof RegExp) ||
    typeof core.getBpeRankFromBytes !== "function" ||
    typeof core.binarySearch !== "function" ||
    !Array.isArray(core.bytePairNonUtfSortedEncoder)
  )
    return false
  const found = core as EncoderCore
  const byString = found.getBpeRankFromBytes.bind(found)
  found.getBpeRankFromBytes = (key) => {
    if (key[0] !== 0xef || key[1] !== 0xbb || key[2] !== 0xbf) return byString(key)
    const at = found.binarySearch(key)
    return at === -1 ? undefined : found.bytePairNonUtfSortedEncoder[at]![1]
  }
  // The "neither space, letter nor number" class gains U+FEFF; elsewhere `\s` loses it and `\S` gains it.
  const other = String.raw`[^\s\p{L}\p{N}]`
  found.tokenSplitRegex = new RegExp(
    found.tokenSplitRegex.source
      .split(other)
      .map((part) => part.replace(/\\[sS]/g, (sequence) => (sequence === "\\s" ? "[^\\S\\uFEFF]" : "[\\S\\uFEFF]")))
      .join(String.raw`(?:${other}|\uFEFF)`),
    found.tokenSplitRegex.flags
  )
  return true
}

// Building an encoder from its rank table costs ~300 ms, so it happens once, on first use.
const gptEncoding = (encoding: Encoding): GptEncoding => {
  let api = gptEncodings.get(encoding)
  if (api === undefined) {
    const table = ranksOf(encoding)
    api = GptEncoding.getEncodingApi(encoding, () => table)
    bomExact(api)
    gptEncodings.set(encoding, api)
  }
  return api
}

// Treat special-token text as ordinary text (tiktoken `encode_ordinary`).
const ordinary = { disallowedSpecial: new Set<string>() }

/**
 * Counts of large texts kept per tokenizer instance: a text of at least
 * `minChars` characters is often counted twice in a row (a strategy
 * truncating a tool output, then the measurer counting the message that
 * holds it), and counting is linear in its length. At most `maxChars`
 * characters of keys are held; the oldest go first. Own choice.
 *
 * @category constants
 */
export const largeTextCache = { minChars: 8192, maxChars: 2_000_000 } as const

/**
 * A `gpt-tokenizer` backed exact tokenizer. The encoder is loaded on the
 * first `count`; instances share it. Counts of large texts are kept
 * ({@link largeTextCache}).
 *
 * @category constructors
 */
export const gptTokenizer = (encoding: Encoding): ExactTokenizer => {
  let api: GptEncoding | undefined
  const large = new Map<string, number>()
  let largeChars = 0
  const countNow = (text: string): number => {
    api ??= gptEncoding(encoding)
    const encoder = api
    return TextChunks.sumOverChunks(text, (chunk) => encoder.countTokens(chunk, ordinary))
  }
  return {
    name: encoding,
    method: "exact",
    encoding,
    backend: "gpt-tokenizer",
    count: (text) => {
      if (text.length < largeTextCache.minChars) return text.length === 0 ? 0 : countNow(text)
      const known = large.get(text)
      if (known !== undefined) return known
      const tokens = countNow(text)
      if (text.length <= largeTextCache.maxChars) {
        for (const key of large.keys()) {
          if (largeChars + text.length <= largeTextCache.maxChars) break
          large.delete(key)
          largeChars -= key.length
        }
        large.set(text, tokens)
        largeChars += text.length
      }
      return tokens
    },
    knownCount: (text) => (text.length < largeTextCache.minChars ? undefined : large.get(text)),
    free: () => {}
  }
}

/**
 * An exact tokenizer for `encoding` with the {@link defaultBackend}. For the
 * `tiktoken` backend use `Tiktoken.make` from `@context-engine/core/node`.
 *
 * @category constructors
 */
export const make = (encoding: Encoding): ExactTokenizer => gptTokenizer(encoding)

const shared = new Map<TokenizerId, Tokenizer>()

/**
 * The tokenizer for a {@link TokenizerId}: exact `o200k_base` /
 * `cl100k_base` (default backend, shared instances), or the calibrated
 * estimator for `estimate:*`.
 *
 * @example
 * ```ts
 * import { Tokenizers } from "@context-engine/core"
 * Tokenizers.get("o200k_base").count("hello world") // 2
 * ```
 *
 * @category constructors
 */
export const get = (id: TokenizerId): Tokenizer => {
  let tokenizer = shared.get(id)
  if (tokenizer === undefined) {
    tokenizer =
      id === "o200k_base" || id === "cl100k_base"
        ? make(id)
        : Estimator.make(id === "estimate:anthropic" ? "anthropic" : id === "estimate:gemini" ? "gemini" : "generic")
    shared.set(id, tokenizer)
  }
  return tokenizer
}

/**
 * The tokenizer a model policy names (`policy.tokenizer`).
 *
 * @category constructors
 */
export const forPolicy = (policy: Pick<ModelPolicy, "tokenizer">): Tokenizer => get(policy.tokenizer)

/**
 * Provides {@link TokenizerService} for a tokenizer id (default backend).
 *
 * @category layers
 */
export const layer = (id: TokenizerId): Layer.Layer<TokenizerService> => Layer.succeed(TokenizerService, get(id))

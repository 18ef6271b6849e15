/**
 * Exact tokenizers for the OpenAI BPE encodings (`o200k_base`, `cl100k_base`)
 * and the lookup from a {@link TokenizerId} / {@link ModelPolicy} to a
 * {@link Tokenizer}. Families without a public tokenizer get the calibrated
 * estimator of `Estimator.ts`.
 *
 * Two exact backends:
 * - `gpt-tokenizer` (pure JS, default): measured on the real pi transcript
 *   (`bench/measure.bench.ts`) with counts identical to tiktoken and faster;
 * - `tiktoken` (WASM bindings of OpenAI's Rust tiktoken): the reference. Its
 *   encoders hold WASM memory that must be freed: use {@link tiktokenLayer}
 *   (freed when the layer's scope closes) or call `free()` on a
 *   {@link make}`("...", "tiktoken")` result.
 *
 * Encoders are loaded lazily on first use (loading o200k_base costs ~300 ms),
 * and text is encoded as ordinary text: special-token strings such as
 * `<|endoftext|>` inside a message count as the characters they are
 * (tiktoken `encode_ordinary`), so counting never throws. Text is encoded in
 * chunks of at most 1 KiB cut at piece boundaries (`TextChunks.ts`): exact
 * for ordinary text, linear in the length of long unbroken runs (base64,
 * one repeated letter) with at most 1 token of error per 1 KiB of such a run.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import { Effect, Layer } from "effect"
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

const require = createRequire(import.meta.url)

interface GptTokenizerModule {
  readonly countTokens: (text: string, options?: { readonly disallowedSpecial?: Set<string> }) => number
}

interface TiktokenEncoder {
  encode_ordinary(text: string): Uint32Array
  free(): void
}

interface TiktokenModule {
  readonly get_encoding: (encoding: Encoding) => TiktokenEncoder
}

const gptTokenizerModules = new Map<Encoding, GptTokenizerModule>()

const loadGptTokenizer = (encoding: Encoding): GptTokenizerModule => {
  let module = gptTokenizerModules.get(encoding)
  if (module === undefined) {
    module = require(`gpt-tokenizer/encoding/${encoding}`) as GptTokenizerModule
    gptTokenizerModules.set(encoding, module)
  }
  return module
}

// Treat special-token text as ordinary text (tiktoken `encode_ordinary`).
const ordinary = { disallowedSpecial: new Set<string>() }

/**
 * A `gpt-tokenizer` backed exact tokenizer. The encoder is loaded on the
 * first `count`; instances share it.
 *
 * @category constructors
 */
export const gptTokenizer = (encoding: Encoding): ExactTokenizer => {
  let module: GptTokenizerModule | undefined
  return {
    name: encoding,
    method: "exact",
    encoding,
    backend: "gpt-tokenizer",
    count: (text) => {
      if (text.length === 0) return 0
      module ??= loadGptTokenizer(encoding)
      const loaded = module
      return TextChunks.sumOverChunks(text, (chunk) => loaded.countTokens(chunk, ordinary))
    },
    free: () => {}
  }
}

/**
 * A `tiktoken` (WASM) backed exact tokenizer. It owns one encoder, created
 * on the first `count` and released by `free()`; after `free()` a new
 * `count` creates a fresh encoder rather than touching freed memory.
 *
 * @category constructors
 */
export const tiktoken = (encoding: Encoding): ExactTokenizer => {
  let encoder: TiktokenEncoder | undefined
  return {
    name: encoding,
    method: "exact",
    encoding,
    backend: "tiktoken",
    count: (text) => {
      if (text.length === 0) return 0
      encoder ??= (require("tiktoken") as TiktokenModule).get_encoding(encoding)
      const loaded = encoder
      return TextChunks.sumOverChunks(text, (chunk) => loaded.encode_ordinary(chunk).length)
    },
    free: () => {
      encoder?.free()
      encoder = undefined
    }
  }
}

/**
 * An exact tokenizer for `encoding` with the chosen backend
 * (default {@link defaultBackend}).
 *
 * @category constructors
 */
export const make = (encoding: Encoding, backend: Backend = defaultBackend): ExactTokenizer =>
  backend === "tiktoken" ? tiktoken(encoding) : gptTokenizer(encoding)

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

/**
 * Provides {@link TokenizerService} backed by a tiktoken (WASM) encoder that
 * is freed when the layer's scope closes.
 *
 * @category layers
 */
export const tiktokenLayer = (encoding: Encoding): Layer.Layer<TokenizerService> =>
  Layer.effect(
    TokenizerService,
    Effect.acquireRelease(
      Effect.sync(() => tiktoken(encoding)),
      (tokenizer) => Effect.sync(() => tokenizer.free())
    )
  )

/**
 * The `tiktoken` backend of the exact tokenizers: WASM bindings of OpenAI's
 * Rust tiktoken, the reference the default `gpt-tokenizer` backend is checked
 * against (`test/Tokenizers.test.ts`). Node only (its loader reads the WASM
 * file from disk), so it is exported from `@context-engine/core/node`.
 *
 * Its encoders hold WASM memory that must be freed: use {@link layer}
 * (freed when the layer's scope closes) or call `free()` on a {@link make}
 * result.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import { Effect, Layer } from "effect"
import type { Tiktoken } from "tiktoken"
import * as TextChunks from "./TextChunks.ts"
import { TokenizerService } from "./Tokenizer.ts"
import type { Encoding, ExactTokenizer } from "./Tokenizers.ts"

/**
 * `tiktoken`'s `get_encoding`, loaded on the first use: importing the package
 * compiles its 5.6 MB WASM module (≈ 13 MiB of RSS), which a process that
 * only imports `@context-engine/core/node` for its stores or policy files
 * (the CLI) never needs. `createRequire` rather than a static import for that
 * reason; the loader reads the WASM file from disk anyway, so `tiktoken` must
 * be installed either way.
 */
const getEncoding = (encoding: Encoding): Tiktoken =>
  (createRequire(import.meta.url)("tiktoken") as typeof import("tiktoken")).get_encoding(encoding)

/**
 * A `tiktoken` (WASM) backed exact tokenizer. It owns one encoder, created
 * on the first `count` and released by `free()`; after `free()` a new
 * `count` creates a fresh encoder rather than touching freed memory. Text is
 * encoded as ordinary text (`encode_ordinary`), so counting never throws.
 *
 * @example
 * ```ts
 * import { Tiktoken } from "@context-engine/core/node"
 * const tokenizer = Tiktoken.make("o200k_base")
 * tokenizer.count("hello world") // 2
 * tokenizer.free()
 * ```
 *
 * @category constructors
 */
export const make = (encoding: Encoding): ExactTokenizer => {
  let encoder: Tiktoken | undefined
  return {
    name: encoding,
    method: "exact",
    encoding,
    backend: "tiktoken",
    count: (text) => {
      if (text.length === 0) return 0
      encoder ??= getEncoding(encoding)
      const loaded = encoder
      // Bounded chunks, as the gpt-tokenizer backend (TextChunks.ts).
      return TextChunks.sumOverChunks(text, (chunk) => loaded.encode_ordinary(chunk).length)
    },
    free: () => {
      encoder?.free()
      encoder = undefined
    }
  }
}

/**
 * Provides `TokenizerService` backed by a tiktoken (WASM) encoder that is
 * freed when the layer's scope closes.
 *
 * @category layers
 */
export const layer = (encoding: Encoding): Layer.Layer<TokenizerService> =>
  Layer.effect(
    TokenizerService,
    Effect.acquireRelease(
      Effect.sync(() => make(encoding)),
      (tokenizer) => Effect.sync(() => tokenizer.free())
    )
  )

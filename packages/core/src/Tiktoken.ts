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
import { Effect, Layer } from "effect"
import { get_encoding, type Tiktoken } from "tiktoken"
import * as TextChunks from "./TextChunks.ts"
import { TokenizerService } from "./Tokenizer.ts"
import type { Encoding, ExactTokenizer } from "./Tokenizers.ts"

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
      encoder ??= get_encoding(encoding)
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

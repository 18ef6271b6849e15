import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Tiktoken from "../src/Tiktoken.ts"
import { TokenizerService } from "../src/Tokenizer.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import { messageTexts } from "./support/corpus.ts"
import { piMessages } from "./support/piTranscript.ts"

describe("Tokenizers", () => {
  it("gpt-tokenizer and tiktoken give identical o200k_base counts on every text of the pi transcript", () => {
    const js = Tokenizers.gptTokenizer("o200k_base")
    const wasm = Tiktoken.make("o200k_base")
    try {
      const texts = piMessages().flatMap(messageTexts)
      expect(texts.length).toBeGreaterThan(1000)
      const mismatches = texts.filter((text) => js.count(text) !== wasm.count(text))
      expect(mismatches).toEqual([])
    } finally {
      wasm.free()
    }
  }, 120_000)

  it("gpt-tokenizer and tiktoken agree on cl100k_base, and the two encodings differ", () => {
    const js = Tokenizers.gptTokenizer("cl100k_base")
    const wasm = Tiktoken.make("cl100k_base")
    const o200k = Tokenizers.gptTokenizer("o200k_base")
    try {
      const texts = piMessages().slice(0, 150).flatMap(messageTexts)
      let cl100kTotal = 0
      let o200kTotal = 0
      for (const text of texts) {
        expect(js.count(text)).toBe(wasm.count(text))
        cl100kTotal += js.count(text)
        o200kTotal += o200k.count(text)
      }
      expect(cl100kTotal).not.toBe(o200kTotal)
    } finally {
      wasm.free()
    }
  }, 60_000)

  it("property: the backends agree and never throw on arbitrary text (all Unicode planes, special tokens)", () => {
    const js = Tokenizers.gptTokenizer("o200k_base")
    const wasm = Tiktoken.make("o200k_base")
    try {
      const pieces = fc.oneof(
        fc.string({ unit: "grapheme", maxLength: 40 }),
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.constantFrom("<|endoftext|>", "<|im_start|>", "<|fim_prefix|>", "\r\n", "    ", "\t\t")
      )
      fc.assert(
        fc.property(fc.array(pieces, { maxLength: 8 }), (parts) => {
          const text = parts.join("")
          expect(js.count(text)).toBe(wasm.count(text))
        }),
        { numRuns: 400 }
      )
    } finally {
      wasm.free()
    }
  }, 60_000)

  it("counts the byte order mark (U+FEFF) as tiktoken does, in both encodings", () => {
    // The property above found "\uFEFF" (seed 1312480421 at 100× runs): gpt-tokenizer 4.0.0 counted it as 2 tokens
    // (it drops a leading byte order mark when it decodes a byte sequence to look up its rank, and its split
    // pattern's \s includes U+FEFF); tiktoken, the reference, as 1. Tokenizers.bomExact corrects both.
    const texts = [
      "\uFEFF",
      "\uFEFF\uFEFF",
      "\uFEFF\n",
      "\uFEFFusing System;\n",
      "\uFEFF  x",
      "a \uFEFF\uFEFF  \n\n b",
      "x\uFEFF//y"
    ]
    for (const encoding of ["o200k_base", "cl100k_base"] as const) {
      const js = Tokenizers.gptTokenizer(encoding)
      const wasm = Tiktoken.make(encoding)
      try {
        expect(wasm.count("\uFEFF")).toBe(1)
        expect(texts.map((text) => js.count(text))).toEqual(texts.map((text) => wasm.count(text)))
      } finally {
        wasm.free()
      }
    }
  })

  it("counts special-token text as ordinary text instead of throwing", () => {
    const text = "before <|endoftext|> after <|im_start|>"
    const js = Tokenizers.gptTokenizer("o200k_base")
    const wasm = Tiktoken.make("o200k_base")
    try {
      expect(js.count(text)).toBe(wasm.count(text))
      // As ordinary text the marker is several tokens, not one special token.
      expect(js.count("<|endoftext|>")).toBeGreaterThan(1)
    } finally {
      wasm.free()
    }
  })

  it("a freed tiktoken tokenizer creates a fresh encoder instead of using freed memory", () => {
    const wasm = Tiktoken.make("o200k_base")
    const before = wasm.count("hello world, hello tokens")
    wasm.free()
    wasm.free()
    expect(wasm.count("hello world, hello tokens")).toBe(before)
    wasm.free()
  }, 30_000)

  it("maps tokenizer ids and policies to exact tokenizers or estimators", () => {
    expect(Tokenizers.get("o200k_base").method).toBe("exact")
    expect(Tokenizers.get("cl100k_base").name).toBe("cl100k_base")
    expect(Tokenizers.get("o200k_base")).toBe(Tokenizers.get("o200k_base"))
    const anthropic = Tokenizers.forPolicy({ tokenizer: "estimate:anthropic" })
    expect(anthropic.method).toBe("estimate")
    expect(anthropic.name).toBe("estimate:anthropic")
    expect(Tokenizers.forPolicy({ tokenizer: "estimate:gemini" }).name).toBe("estimate:gemini")
    expect(Tokenizers.get("estimate:generic").count("")).toBe(0)
  })

  it("provides the TokenizerService through layers, including a scoped tiktoken layer", async () => {
    const program = Effect.gen(function* () {
      const tokenizer = yield* TokenizerService
      return [tokenizer.name, tokenizer.count("The quick brown fox")] as const
    })
    const viaDefault = await Effect.runPromise(Effect.provide(program, Tokenizers.layer("o200k_base")))
    const viaWasm = await Effect.runPromise(Effect.provide(program, Tiktoken.layer("o200k_base")))
    expect(viaDefault).toEqual(viaWasm)
    expect(viaDefault[0]).toBe("o200k_base")
    const estimate = await Effect.runPromise(
      Effect.provide(program, Layer.merge(Tokenizers.layer("estimate:anthropic"), Layer.empty))
    )
    expect(estimate[0]).toBe("estimate:anthropic")
  }, 30_000)
})

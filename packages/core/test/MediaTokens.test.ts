import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import * as Measurer from "../src/Measurer.ts"
import * as MediaTokens from "../src/MediaTokens.ts"
import type { Message } from "../src/Message.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import { loadCase } from "./support/shared.ts"

interface ImageCase {
  readonly images: ReadonlyArray<{ index: number; width: number; height: number }>
  readonly messages: ReadonlyArray<Message>
}

const c07 = loadCase<ImageCase>("C07")
const imageParts = c07.messages.flatMap((message) =>
  typeof message.content === "string" ? [] : message.content.filter((part) => part.type === "image")
)

describe("MediaTokens: published formulas (worked examples from the provider docs)", () => {
  it("Anthropic: w×h/750, downscaled to ≤1568 px long edge / ~1.15 MP", () => {
    // Anthropic vision docs table: 200×200 ≈ 54, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590 tokens.
    expect(MediaTokens.anthropicImageTokens({ width: 200, height: 200 })).toBeCloseTo(54, -1)
    expect(MediaTokens.anthropicImageTokens({ width: 1000, height: 1000 })).toBeCloseTo(1334, -1)
    expect(Math.abs(MediaTokens.anthropicImageTokens({ width: 1092, height: 1092 }) - 1590)).toBeLessThan(60)
    // Huge images are capped near ~1,600 tokens, never grow with pixels.
    expect(MediaTokens.anthropicImageTokens({ width: 8000, height: 6000 })).toBeLessThanOrEqual(1600)
  })

  it("OpenAI: 85 + 170 per 512-px tile after scaling; low detail = 85", () => {
    // OpenAI vision docs: 1024×1024 high → 765; 2048×4096 high → 1105; any low → 85.
    expect(MediaTokens.openaiImageTokens({ width: 1024, height: 1024 }, "high")).toBe(765)
    expect(MediaTokens.openaiImageTokens({ width: 2048, height: 4096 }, "high")).toBe(1105)
    expect(MediaTokens.openaiImageTokens({ width: 4096, height: 8192 }, "low")).toBe(85)
  })

  it("Gemini: 258 per image ≤384 px, else 258 per 768×768 tile", () => {
    expect(MediaTokens.geminiImageTokens({ width: 384, height: 384 })).toBe(258)
    expect(MediaTokens.geminiImageTokens({ width: 1536, height: 768 })).toBe(516)
  })
})

describe("C07: images are measured by pixels, not bytes", () => {
  it("reads the pixel dimensions the case declares from the base64 data", () => {
    expect(imageParts).toHaveLength(c07.images.length)
    for (const declared of c07.images) {
      const part = imageParts[declared.index]!
      expect(MediaTokens.imageDimensions(part.type === "image" ? part.image : undefined)).toEqual({
        width: declared.width,
        height: declared.height
      })
    }
  })

  it("the 1600×1200 image costs more than the byte-heavier 400×300 one, per the family formula", () => {
    const [large, small] = imageParts.map((part) => (part.type === "image" ? part.image : ""))
    // The case's premise: the small image has far more bytes.
    expect(String(small).length).toBeGreaterThan(String(large).length * 10)
    // Expected values computed by hand from the docs' formulas:
    // OpenAI: 1600×1200 → 1024×768 → 2×2 tiles → 85+680; 400×300 → 1 tile → 255.
    // Anthropic: 1600×1200 → ~1.15 MP → ~1533; 400×300 → 120000/750 = 160.
    // Gemini: 1600×1200 → 3×2 tiles → 1548; 400×300 → 1 tile → 258.
    const expected = { openai: [765, 255], anthropic: [1533, 160], gemini: [1548, 258] } as const
    for (const [family, [largeTokens, smallTokens]] of Object.entries(expected)) {
      const measurer = Measurer.make(Tokenizers.get("o200k_base"), { mediaFamily: family as MediaTokens.MediaFamily })
      const tokensOf = (image: unknown): number =>
        measurer.countMessage({ role: "user", content: [{ type: "image", image: image as string }] }).media ?? 0
      expect(Math.abs(tokensOf(large) - largeTokens) / largeTokens).toBeLessThan(0.02)
      expect(tokensOf(small)).toBe(smallTokens)
      expect(tokensOf(large)).toBeGreaterThan(tokensOf(small))
    }
  })

  it("reports media as its own category, not base64 length / 4 and not zero", () => {
    const measurer = Measurer.make(Tokenizers.get("estimate:anthropic"))
    const measurement = measurer.measure(ContextView.fromMessages(c07.messages))
    const base64Chars = imageParts.reduce(
      (sum, part) => sum + String(part.type === "image" ? part.image : "").length,
      0
    )
    expect(measurement.byCategory.media).toBeGreaterThan(0)
    expect(measurement.byCategory.media).toBeLessThan(base64Chars / 4 / 10)
    expect(measurement.byCategory.userText).toBeLessThan(50)
    expect(measurement.notes).toBeUndefined()
  })

  it("an image whose pixels cannot be read costs the documented default and the measurement says so", () => {
    const measurer = Measurer.make(Tokenizers.get("o200k_base"))
    const view = ContextView.fromMessages([
      { role: "user", content: [{ type: "image", image: new URL("https://example.com/screenshot.png") }] }
    ])
    const measurement = measurer.measure(view)
    expect(measurement.byCategory.media).toBe(MediaTokens.unknownImageTokens)
    expect(measurement.notes?.join(" ")).toMatch(/1 image.*default/)
  })

  it("files: text files are tokenized, PDFs cost per page, and both are estimates only when they must be", () => {
    const measurer = Measurer.make(Tokenizers.get("o200k_base"))
    const text = "export const answer = 42\n".repeat(40)
    const textFile = measurer.measure(
      ContextView.fromMessages([
        {
          role: "user",
          content: [{ type: "file", data: Buffer.from(text).toString("base64"), mediaType: "text/plain" }]
        }
      ])
    )
    expect(textFile.byCategory.media).toBe(Tokenizers.get("o200k_base").count(text))
    expect(textFile.notes).toBeUndefined()
    const pdf = "%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type /Page >>\n"
    const pdfFile = measurer.measure(
      ContextView.fromMessages([
        {
          role: "user",
          content: [{ type: "file", data: Buffer.from(pdf).toString("base64"), mediaType: "application/pdf" }]
        }
      ])
    )
    expect(pdfFile.byCategory.media).toBe(2 * MediaTokens.pdfPageTokens)
    expect(pdfFile.notes?.join(" ")).toMatch(/file/)
    // Gemini documents 258 tokens per PDF page.
    const gemini = Measurer.make(Tokenizers.get("estimate:gemini")).measure(
      ContextView.fromMessages([
        {
          role: "user",
          content: [{ type: "file", data: Buffer.from(pdf).toString("base64"), mediaType: "application/pdf" }]
        }
      ])
    )
    expect(gemini.byCategory.media).toBe(2 * 258)
  })
})

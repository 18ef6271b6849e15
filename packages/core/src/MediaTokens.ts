/**
 * Token cost of images and files, from pixel dimensions (never byte length)
 * with each provider family's published formula.
 *
 * - Anthropic, "Vision → Calculate image costs"
 *   (https://docs.anthropic.com/en/docs/build-with-claude/vision):
 *   `tokens = width × height / 750`, after resizing so the long edge is at
 *   most 1568 px and the image at most ~1.15 megapixels (~1,600 tokens).
 * - OpenAI, "Images and vision → Calculating costs"
 *   (https://platform.openai.com/docs/guides/images-vision): high detail
 *   scales the image to fit a 2048×2048 square, then so the shortest side is
 *   768 px, and costs 85 + 170 per 512-px tile; low detail costs 85.
 * - Gemini, "Understand and count tokens → images"
 *   (https://ai.google.dev/gemini-api/docs/tokens): 258 tokens when both
 *   sides are ≤ 384 px, otherwise 258 per 768×768 tile.
 *
 * @since 0.1.0
 */
import { imageSize } from "image-size"

/**
 * Whose media formula to apply. `generic` takes the largest of the three, so
 * a budget computed with it is never short.
 *
 * @category models
 */
export type MediaFamily = "anthropic" | "openai" | "gemini" | "generic"

/**
 * Pixel dimensions of an image.
 *
 * @category models
 */
export interface Dimensions {
  readonly width: number
  readonly height: number
}

/**
 * Tokens charged for an image whose pixels cannot be read (a URL, a provider
 * file reference, an unsupported format): 1,600 tokens, the largest per-image
 * cost of Anthropic's formula ("images … ~1,600 tokens" after downscaling),
 * which also bounds OpenAI gpt-4o high detail (at most 85 + 8 × 170 = 1,445)
 * and Gemini 3 `media_resolution_high` (1,120). Measurements that use it say
 * so in `notes`.
 *
 * @category constants
 */
export const unknownImageTokens = 1600

/** Anthropic: long edge limit in px (vision docs). @category constants */
export const anthropicMaxLongEdgePx = 1568
/** Anthropic: pixel-area limit (~1.15 MP, vision docs). @category constants */
export const anthropicMaxPixels = 1_150_000
/** Anthropic: pixels per token (vision docs: tokens = w × h / 750). @category constants */
export const anthropicPixelsPerToken = 750

/**
 * Anthropic image tokens: downscale to ≤ 1568 px long edge and ≤ ~1.15 MP,
 * then `ceil(w × h / 750)`.
 *
 * @category formulas
 */
export const anthropicImageTokens = ({ width, height }: Dimensions): number => {
  const scale = Math.min(
    1,
    anthropicMaxLongEdgePx / Math.max(width, height),
    Math.sqrt(anthropicMaxPixels / (width * height))
  )
  const scaledWidth = Math.floor(width * scale)
  const scaledHeight = Math.floor(height * scale)
  return Math.max(1, Math.ceil((scaledWidth * scaledHeight) / anthropicPixelsPerToken))
}

/** OpenAI: base tokens of every image (low detail costs only this). @category constants */
export const openaiBaseTokens = 85
/** OpenAI: tokens per 512-px tile at high detail. @category constants */
export const openaiTileTokens = 170

/**
 * OpenAI image tokens (gpt-4o / gpt-4.1 / o-series tile formula).
 * `detail: "low"` costs 85; `"high"` and `"auto"` use the tile formula
 * (`auto` may pick low, so high is the safe count).
 *
 * @category formulas
 */
export const openaiImageTokens = ({ width, height }: Dimensions, detail: "low" | "high" | "auto" = "auto"): number => {
  if (detail === "low") return openaiBaseTokens
  let w = width
  let h = height
  const fit = Math.min(1, 2048 / Math.max(w, h))
  w *= fit
  h *= fit
  const shortest = Math.min(w, h)
  if (shortest > 768) {
    w *= 768 / shortest
    h *= 768 / shortest
  }
  const tiles = Math.ceil(w / 512) * Math.ceil(h / 512)
  return openaiBaseTokens + openaiTileTokens * tiles
}

/** Gemini: tokens per image ≤ 384 px, and per 768-px tile. @category constants */
export const geminiTileTokens = 258

/**
 * Gemini image tokens: 258 when both sides ≤ 384 px, else 258 per 768×768 tile.
 *
 * @category formulas
 */
export const geminiImageTokens = ({ width, height }: Dimensions): number =>
  width <= 384 && height <= 384 ? geminiTileTokens : geminiTileTokens * Math.ceil(width / 768) * Math.ceil(height / 768)

/**
 * Image tokens for a family; `undefined` dimensions cost {@link unknownImageTokens}.
 *
 * @category formulas
 */
export const imageTokens = (
  family: MediaFamily,
  dimensions: Dimensions | undefined,
  detail?: "low" | "high" | "auto"
): number => {
  if (dimensions === undefined || dimensions.width <= 0 || dimensions.height <= 0) {
    return family === "openai" && detail === "low" ? openaiBaseTokens : unknownImageTokens
  }
  switch (family) {
    case "anthropic":
      return anthropicImageTokens(dimensions)
    case "openai":
      return openaiImageTokens(dimensions, detail)
    case "gemini":
      return geminiImageTokens(dimensions)
    case "generic":
      return Math.max(
        anthropicImageTokens(dimensions),
        openaiImageTokens(dimensions, detail),
        geminiImageTokens(dimensions)
      )
  }
}

const dataUrl = /^data:[^,]*?;base64,/
const remoteUrl = /^(?:https?|gs|s3|file):\/\//

/**
 * Bytes of inline image/file data, or `undefined` for URLs and references.
 * Accepts a base64 string (optionally a `data:` URL), bytes or an `ArrayBuffer`.
 *
 * @category decoding
 */
export const inlineBytes = (data: unknown): Uint8Array | undefined => {
  if (data instanceof Uint8Array) return data
  if (data instanceof ArrayBuffer) return new Uint8Array(data)
  if (typeof data !== "string" || remoteUrl.test(data)) return undefined
  const base64 = data.replace(dataUrl, "")
  return new Uint8Array(Buffer.from(base64, "base64"))
}

/**
 * Pixel dimensions of inline image data (PNG, JPEG, GIF, WebP, … via
 * `image-size`), or `undefined` when they cannot be read. EXIF rotation is
 * ignored (it swaps sides, which leaves all three formulas' areas unchanged
 * up to tiling).
 *
 * @category decoding
 */
export const imageDimensions = (data: unknown): Dimensions | undefined => {
  const bytes = inlineBytes(data)
  if (bytes === undefined || bytes.length === 0) return undefined
  try {
    const { width, height } = imageSize(bytes)
    return width > 0 && height > 0 ? { width, height } : undefined
  } catch {
    return undefined
  }
}

/**
 * Tokens per PDF page: 3,000, the top of Anthropic's published range
 * ("PDF support → Estimate your costs": each page typically uses 1,500–3,000
 * text tokens plus the page image), a conservative count for every family.
 *
 * @category constants
 */
export const pdfPageTokens = 3000

/**
 * Tokens per PDF page on Gemini: 258 ("Document understanding": each
 * document page is equivalent to 258 tokens).
 *
 * @category constants
 */
export const geminiPdfPageTokens = 258

/**
 * Tokens per PDF page for a family: {@link geminiPdfPageTokens} for Gemini,
 * otherwise {@link pdfPageTokens}.
 *
 * @category formulas
 */
export const pdfPageTokensFor = (family: MediaFamily): number =>
  family === "gemini" ? geminiPdfPageTokens : pdfPageTokens

/**
 * Tokens charged for a binary file whose content cannot be estimated
 * (unknown type, URL or provider reference): one PDF page's worth.
 *
 * @category constants
 */
export const unknownFileTokens = pdfPageTokens

const pdfPage = /\/Type\s*\/Page(?![a-zA-Z])/g

/**
 * Page count of an inline PDF, by counting `/Type /Page` objects; `undefined`
 * when none are visible (compressed object streams).
 *
 * @category decoding
 */
export const pdfPageCount = (bytes: Uint8Array): number | undefined => {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")
  const pages = text.match(pdfPage)?.length ?? 0
  return pages > 0 ? pages : undefined
}

/**
 * The size of a request body in bytes, for a route with a byte cap
 * (`ModelPolicy.maxRequestBodyBytes`, shared case C20): UTF-8 bytes of the
 * JSON of the messages and tool definitions, which is what dominates the
 * provider's serialized body (base64 images count by their characters, one
 * byte each). Field names of a provider's wire format differ by a few bytes
 * per part; {@link MARGIN_SHARE} of the cap covers them and the request's
 * own parameters.
 *
 * Linear in the content (one `JSON.stringify` and one pass over its
 * characters per message), cached per message object, and summed per view
 * lineage, so a step measures what it appends. Edge-safe: no `node:` import.
 *
 * @since 0.3.0
 */
import * as ArrayLineage from "./ArrayLineage.ts"
import type { ContextView, ToolDefinition } from "./ContextView.ts"
import type { Message } from "./Message.ts"

/**
 * Share of the byte cap kept free (our choice): provider wire formats wrap
 * each part in a few more bytes than our message JSON (e.g. OpenAI's
 * `data:image/png;base64,` prefix, 22 bytes per image), and the body carries
 * the model id, limits and options.
 *
 * @category constants
 */
export const MARGIN_SHARE = 0.05

/**
 * UTF-8 byte length of a string, without encoding it: 1 byte below U+0080,
 * 2 below U+0800, 4 for a surrogate pair, 3 otherwise (a lone surrogate is
 * sent as U+FFFD, 3 bytes).
 *
 * @category utils
 */
export const utf8Bytes = (text: string): number => {
  let bytes = text.length
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 2 // 4 bytes for the pair (2 UTF-16 units already counted)
        index++
      } else bytes += 2
    } else bytes += 2
  }
  return bytes
}

const messageCache = new WeakMap<object, number>()

/**
 * Bytes of one message's JSON (cached per message object).
 *
 * @category measurement
 */
export const messageBytes = (message: Message): number => {
  let bytes = messageCache.get(message)
  if (bytes === undefined) {
    bytes = utf8Bytes(JSON.stringify(message))
    messageCache.set(message, bytes)
  }
  return bytes
}

/**
 * Bytes of the tool definitions' JSON.
 *
 * @category measurement
 */
export const toolBytes = (tools: ReadonlyArray<ToolDefinition>): number =>
  tools.length === 0 ? 0 : utf8Bytes(JSON.stringify(tools))

// The messages' bytes of the longest view measured in each lineage (ArrayLineage.lineageOf), held weakly by the
// lineage: a route with a byte cap measures every step's view (ByteCap.isOver), and a view of the same lineage at
// least as long holds those messages first, so it adds only its new ones.
const byLineage = new WeakMap<object, { readonly length: number; readonly bytes: number }>()

const itemsBytes = (items: ContextView["items"]): number => {
  const lineage = ArrayLineage.lineageOf(items)
  const known = lineage === undefined ? undefined : byLineage.get(lineage)
  const start = known !== undefined && known.length <= items.length ? known.length : 0
  let bytes = start === 0 ? 0 : known!.bytes
  for (let index = start; index < items.length; index++) bytes += messageBytes(items[index]!.message)
  if (lineage !== undefined && items.length >= (known?.length ?? 0))
    byLineage.set(lineage, { length: items.length, bytes })
  return bytes
}

/**
 * Bytes of the body a view sends: its messages and tools as JSON arrays
 * (commas and brackets included). A view recorded as extending one
 * measured before (`ArrayLineage`: the request path's views) costs its new
 * messages only.
 *
 * @category measurement
 */
export const viewBytes = (view: ContextView): number =>
  2 + Math.max(0, view.items.length - 1) + itemsBytes(view.items) + toolBytes(view.tools)

/**
 * The bytes a request may use under a cap: the cap less {@link MARGIN_SHARE}.
 *
 * @category measurement
 */
export const budgetBytes = (maxRequestBodyBytes: number): number => Math.floor(maxRequestBodyBytes * (1 - MARGIN_SHARE))

/**
 * Body caps met in practice, largest first, in bytes: 32 MB (Anthropic
 * Messages request size limit), 10 MiB (AWS API Gateway payload quota),
 * 4 MiB (gRPC's default max receive message size, common behind gateways)
 * and 1 MiB (nginx's default `client_max_body_size`).
 *
 * @category constants
 */
export const COMMON_CAPS_BYTES: ReadonlyArray<number> = [32_000_000, 10 * 1024 * 1024, 4 * 1024 * 1024, 1024 * 1024]

/**
 * The cap to assume after a body of `rejectedBytes` was refused as too large
 * with no limit stated (HTTP 413): the largest {@link COMMON_CAPS_BYTES}
 * below it, else half of it.
 *
 * @category measurement
 */
export const learnedCap = (rejectedBytes: number): number =>
  COMMON_CAPS_BYTES.find((cap) => cap < rejectedBytes) ?? Math.max(1, Math.floor(rejectedBytes / 2))

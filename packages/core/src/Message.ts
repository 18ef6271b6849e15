/**
 * Messages in the shape of the Vercel AI SDK 7 `ModelMessage`
 * (`@ai-sdk/provider-utils` `src/types/*-model-message.ts`): system, user,
 * assistant and tool roles with text, image, file, reasoning, tool-call,
 * tool-result and tool-approval parts. A type-level test in
 * `packages/provider-adapters/test/ModelMessage.test.ts` proves that
 * `Message` and the AI SDK's `ModelMessage` are assignable both ways, so a
 * caller hands its `ModelMessage[]` to the engine without conversion.
 *
 * Core imports no provider SDK: the shapes are restated here as schemas.
 *
 * @since 0.1.0
 */
import { Schema, SchemaGetter } from "effect"

// ---------------------------------------------------------------------------
// JSON values and provider options
// ---------------------------------------------------------------------------

/**
 * A JSON value as the AI SDK types it (`JSONValue` of `@ai-sdk/provider`).
 *
 * @category models
 */
export type JsonValue =
  | null
  | string
  | number
  | boolean
  | { readonly [key: string]: JsonValue | undefined }
  | ReadonlyArray<JsonValue>

/**
 * Schema for {@link JsonValue}.
 *
 * @category schemas
 */
export const JsonValue: Schema.Codec<JsonValue> = Schema.Union([
  Schema.Null,
  Schema.String,
  // JSON has no NaN or ±Infinity (JSON.stringify writes them as null), so a
  // payload that holds one would reach the provider changed.
  Schema.Finite,
  Schema.Boolean,
  Schema.Array(Schema.suspend((): Schema.Codec<JsonValue> => JsonValue)),
  Schema.Record(Schema.String, Schema.UndefinedOr(Schema.suspend((): Schema.Codec<JsonValue> => JsonValue)))
])

/**
 * A JSON object (`JSONObject` of `@ai-sdk/provider`).
 *
 * @category schemas
 */
export const JsonObject = Schema.Record(Schema.String, Schema.UndefinedOr(JsonValue))

/**
 * @category models
 */
export type JsonObject = typeof JsonObject.Type

/**
 * Provider-specific options keyed by provider name, e.g.
 * `{ anthropic: { signature: "..." } }`. Reasoning signatures and cache-control
 * markers travel here, so strategies must keep this field intact.
 *
 * @category schemas
 */
export const ProviderOptions = Schema.Record(Schema.String, JsonObject)

/**
 * @category models
 */
export type ProviderOptions = typeof ProviderOptions.Type

const providerOptions = Schema.optionalKey(ProviderOptions)

/**
 * A provider-side reference to uploaded content, keyed by provider name.
 *
 * @category models
 */
export type ProviderReference = Record<string, string> & { type?: never }

const isProviderReference = (u: unknown): u is ProviderReference =>
  typeof u === "object" &&
  u !== null &&
  !Array.isArray(u) &&
  !(u instanceof Uint8Array) &&
  !(u instanceof URL) &&
  !(u instanceof ArrayBuffer) &&
  !("type" in u) &&
  Object.values(u).every((value) => typeof value === "string")

/**
 * Schema for {@link ProviderReference}.
 *
 * @category schemas
 */
export const ProviderReference = Schema.declare(isProviderReference, {
  identifier: "ProviderReference",
  expected: "an object of provider name → reference string, without a 'type' key",
  // Lets `Arbitrary.schema` generate references (property tests); candidates
  // with a `type` key fail the declaration's check and are discarded.
  toCodecArbitrary: () =>
    Schema.link<ProviderReference>()(Schema.Record(Schema.String, Schema.String), {
      decode: SchemaGetter.transform((record) => record as ProviderReference),
      encode: SchemaGetter.transform((reference) => reference)
    })
})

const Bytes = Schema.instanceOf(ArrayBuffer, {
  expected: "ArrayBuffer",
  // Lets `Arbitrary.schema` generate buffers (property tests).
  toCodecArbitrary: () =>
    Schema.link<ArrayBuffer>()(Schema.Uint8Array, {
      decode: SchemaGetter.transform((bytes) => bytes.slice().buffer as ArrayBuffer),
      encode: SchemaGetter.transform((buffer) => new Uint8Array(buffer))
    })
})

/**
 * Inline binary or base64 content (`DataContent`): a base64 string, bytes or
 * an `ArrayBuffer`. Persisted transcripts hold only the string form.
 *
 * @category schemas
 */
export const DataContent = Schema.Union([Schema.String, Schema.Uint8Array, Bytes])

// `Schema.URL` is `instanceOf(URL)` plus a string JSON codec and an arbitrary.
const Url = Schema.URL

/** @category schemas */
export const FileDataData = Schema.Struct({ type: Schema.Literal("data"), data: DataContent })
/** @category schemas */
export const FileDataUrl = Schema.Struct({
  type: Schema.Literal("url"),
  url: Url,
  originalUrl: Schema.optionalKey(Schema.String)
})
/** @category schemas */
export const FileDataReference = Schema.Struct({
  type: Schema.Literal("reference"),
  reference: ProviderReference
})
/** @category schemas */
export const FileDataText = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/**
 * Tagged file data (`FileData`).
 *
 * @category schemas
 */
export const FileData = Schema.Union([FileDataData, FileDataUrl, FileDataReference, FileDataText])

// ---------------------------------------------------------------------------
// Content parts
// ---------------------------------------------------------------------------

/** @category schemas */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  providerOptions
})
/** @category models */
export type TextPart = typeof TextPart.Type

/**
 * An image. Measured from its pixel dimensions, never its byte length.
 *
 * @category schemas
 */
export const ImagePart = Schema.Struct({
  type: Schema.Literal("image"),
  image: Schema.Union([DataContent, Url, ProviderReference]),
  mediaType: Schema.optionalKey(Schema.String),
  providerOptions
})
/** @category models */
export type ImagePart = typeof ImagePart.Type

/** @category schemas */
export const FilePart = Schema.Struct({
  type: Schema.Literal("file"),
  data: Schema.Union([FileData, DataContent, Url, ProviderReference]),
  filename: Schema.optionalKey(Schema.String),
  mediaType: Schema.String,
  providerOptions
})
/** @category models */
export type FilePart = typeof FilePart.Type

/**
 * Model reasoning ("thinking"). Anthropic's signature travels in
 * `providerOptions.anthropic.signature` and must be sent back unchanged.
 *
 * @category schemas
 */
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  providerOptions
})
/** @category models */
export type ReasoningPart = typeof ReasoningPart.Type

/** @category schemas */
export const ReasoningFilePart = Schema.Struct({
  type: Schema.Literal("reasoning-file"),
  data: Schema.Union([FileDataData, FileDataUrl, DataContent, Url]),
  mediaType: Schema.String,
  providerOptions
})
/** @category models */
export type ReasoningFilePart = typeof ReasoningFilePart.Type

/** @category schemas */
export const CustomPart = Schema.Struct({
  type: Schema.Literal("custom"),
  kind: Schema.TemplateLiteral([Schema.String, ".", Schema.String]),
  providerOptions
})
/** @category models */
export type CustomPart = typeof CustomPart.Type

/**
 * A tool call. `input` is the parsed JSON arguments; every call of a parallel
 * batch is its own part.
 *
 * @category schemas
 */
export const ToolCallPart = Schema.Struct({
  type: Schema.Literal("tool-call"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: Schema.Unknown,
  providerOptions,
  providerExecuted: Schema.optionalKey(Schema.Boolean)
})
/** @category models */
export type ToolCallPart = typeof ToolCallPart.Type

const fileId = Schema.Union([Schema.String, Schema.Record(Schema.String, Schema.String)])

/**
 * One item of a multi-part tool result (`output.type === "content"`).
 *
 * @category schemas
 */
export const ToolResultContentItem = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String, providerOptions }),
  Schema.Struct({
    type: Schema.Literal("file"),
    data: FileData,
    mediaType: Schema.String,
    filename: Schema.optionalKey(Schema.String),
    providerOptions
  }),
  Schema.Struct({
    type: Schema.Literal("file-data"),
    data: Schema.String,
    mediaType: Schema.String,
    filename: Schema.optionalKey(Schema.String),
    providerOptions
  }),
  Schema.Struct({
    type: Schema.Literal("file-url"),
    url: Schema.String,
    mediaType: Schema.optionalKey(Schema.String),
    providerOptions
  }),
  Schema.Struct({ type: Schema.Literal("file-id"), fileId, providerOptions }),
  Schema.Struct({
    type: Schema.Literal("file-reference"),
    providerReference: ProviderReference,
    providerOptions
  }),
  Schema.Struct({
    type: Schema.Literal("image-data"),
    data: Schema.String,
    mediaType: Schema.String,
    providerOptions
  }),
  Schema.Struct({ type: Schema.Literal("image-url"), url: Schema.String, providerOptions }),
  Schema.Struct({ type: Schema.Literal("image-file-id"), fileId, providerOptions }),
  Schema.Struct({
    type: Schema.Literal("image-file-reference"),
    providerReference: ProviderReference,
    providerOptions
  }),
  Schema.Struct({ type: Schema.Literal("custom"), providerOptions })
])
/** @category models */
export type ToolResultContentItem = typeof ToolResultContentItem.Type

/**
 * The output of a tool (`ToolResultOutput`).
 *
 * @category schemas
 */
export const ToolResultOutput = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), value: Schema.String, providerOptions }),
  Schema.Struct({ type: Schema.Literal("json"), value: JsonValue, providerOptions }),
  Schema.Struct({
    type: Schema.Literal("execution-denied"),
    reason: Schema.optionalKey(Schema.String),
    providerOptions
  }),
  Schema.Struct({ type: Schema.Literal("error-text"), value: Schema.String, providerOptions }),
  Schema.Struct({ type: Schema.Literal("error-json"), value: JsonValue, providerOptions }),
  Schema.Struct({
    type: Schema.Literal("content"),
    value: Schema.mutable(Schema.Array(ToolResultContentItem)),
    providerOptions
  })
])
/** @category models */
export type ToolResultOutput = typeof ToolResultOutput.Type

/** @category schemas */
export const ToolResultPart = Schema.Struct({
  type: Schema.Literal("tool-result"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  output: ToolResultOutput,
  providerOptions
})
/** @category models */
export type ToolResultPart = typeof ToolResultPart.Type

/** @category schemas */
export const ToolApprovalRequest = Schema.Struct({
  type: Schema.Literal("tool-approval-request"),
  approvalId: Schema.String,
  toolCallId: Schema.String,
  reason: Schema.optionalKey(Schema.String),
  isAutomatic: Schema.optionalKey(Schema.Boolean),
  signature: Schema.optionalKey(Schema.String),
  inputSchemaInput: Schema.optionalKey(Schema.Unknown)
})
/** @category models */
export type ToolApprovalRequest = typeof ToolApprovalRequest.Type

/** @category schemas */
export const ToolApprovalResponse = Schema.Struct({
  type: Schema.Literal("tool-approval-response"),
  approvalId: Schema.String,
  approved: Schema.Boolean,
  reason: Schema.optionalKey(Schema.String),
  providerExecuted: Schema.optionalKey(Schema.Boolean)
})
/** @category models */
export type ToolApprovalResponse = typeof ToolApprovalResponse.Type

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

/** @category schemas */
export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.String,
  providerOptions
})
/** @category models */
export type SystemMessage = typeof SystemMessage.Type

/** @category schemas */
export const UserContentPart = Schema.Union([TextPart, ImagePart, FilePart])
/** @category models */
export type UserContentPart = typeof UserContentPart.Type

/** @category schemas */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union([Schema.String, Schema.mutable(Schema.Array(UserContentPart))]),
  providerOptions
})
/** @category models */
export type UserMessage = typeof UserMessage.Type

/** @category schemas */
export const AssistantContentPart = Schema.Union([
  TextPart,
  CustomPart,
  FilePart,
  ReasoningPart,
  ReasoningFilePart,
  ToolCallPart,
  ToolResultPart,
  ToolApprovalRequest
])
/** @category models */
export type AssistantContentPart = typeof AssistantContentPart.Type

/** @category schemas */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Union([Schema.String, Schema.mutable(Schema.Array(AssistantContentPart))]),
  providerOptions
})
/** @category models */
export type AssistantMessage = typeof AssistantMessage.Type

/** @category schemas */
export const ToolContentPart = Schema.Union([ToolResultPart, ToolApprovalResponse])
/** @category models */
export type ToolContentPart = typeof ToolContentPart.Type

/** @category schemas */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: Schema.mutable(Schema.Array(ToolContentPart)),
  providerOptions
})
/** @category models */
export type ToolMessage = typeof ToolMessage.Type

/**
 * One message of a conversation: structurally the AI SDK's `ModelMessage`.
 *
 * @category schemas
 */
export const Message = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolMessage])

/**
 * @category models
 */
export type Message = typeof Message.Type

/**
 * Any content part that can appear in a message's `content` array.
 *
 * @category models
 */
export type ContentPart = UserContentPart | AssistantContentPart | ToolContentPart

/**
 * The parts of a message as an array (a string content becomes one text part).
 * Returns a new array; never mutates the message.
 *
 * @category utils
 */
export const parts = (message: Message): ReadonlyArray<ContentPart> =>
  typeof message.content === "string"
    ? message.content.length === 0
      ? []
      : [{ type: "text", text: message.content }]
    : message.content

/**
 * Tool-call ids of the calls in an assistant message, in order.
 *
 * @category utils
 */
export const toolCallIds = (message: Message): ReadonlyArray<string> =>
  message.role === "assistant" && typeof message.content !== "string"
    ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
    : []

/**
 * Tool-call ids answered by the tool results in a message, in order.
 *
 * @category utils
 */
export const toolResultIds = (message: Message): ReadonlyArray<string> =>
  typeof message.content === "string"
    ? []
    : (message.content as ReadonlyArray<ContentPart>).flatMap((part) =>
        part.type === "tool-result" ? [part.toolCallId] : []
      )

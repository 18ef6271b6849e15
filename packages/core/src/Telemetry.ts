/**
 * OpenTelemetry spans and events for what compaction did. Only
 * `@opentelemetry/api` is used: with no SDK registered every call is a no-op;
 * register any tracer provider (Node SDK, Vercel `@vercel/otel`, …) to
 * collect them. One module so engines, the pipeline and the middleware share
 * one vocabulary.
 *
 * Spans (tracer `@context-engine/core`):
 * - `context_engine.measure` — tokens per category of one request (the
 *   Promise face's `measure`, and every request the middleware / `prepareStep`
 *   assembles);
 * - `context_engine.compact` — one compaction: tokens before/after per
 *   category (`framing` is its own category: per-message wrappers and reply
 *   priming), discarded entries, kept tokens (content of the kept messages,
 *   framing excluded), fixed overhead, checkpoint
 *   generation, stages, failures; children `context_engine.stage` (one per
 *   stage, with its own tokens and duration), `context_engine.summarize` and
 *   `context_engine.validate`.
 *
 * Attributes use the GenAI semantic conventions where they define the
 * meaning (`gen_ai.request.model`, `gen_ai.provider.name`,
 * `gen_ai.operation.name`, `gen_ai.usage.input_tokens` /
 * `gen_ai.usage.output_tokens` on the summarize span;
 * opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans) and
 * `context_engine.*` for everything compaction-specific. Events
 * `context_engine.dropped`, `context_engine.kept` and
 * `context_engine.checkpoint` say what was covered and kept; checkpoint text
 * is redacted ({@link redact}) and capped at {@link MAX_EVENT_TEXT_BYTES}.
 *
 * @since 0.2.0
 */
import { type Attributes, context as otelContext, type Span, SpanStatusCode, trace } from "@opentelemetry/api"
import type { Checkpoint } from "./Checkpoint.ts"
import type { CompactionResult, EngineInput, StageReport } from "./ContextEngine.ts"
import { categories, type Measurement } from "./Measurement.ts"

/** Tracer name. @category constants */
export const TRACER_NAME = "@context-engine/core"

/**
 * Largest checkpoint text put in an event: 4,096 UTF-8 bytes, the cap the
 * issue asks for (Hermes and Research Copilot log summaries in the same
 * order of size); the event says when it was cut.
 *
 * @category constants
 */
export const MAX_EVENT_TEXT_BYTES = 4_096

/** Entry ids listed in a dropped/kept event before the list is cut. @category constants */
export const MAX_EVENT_IDS = 50

const tracer = () => trace.getTracer(TRACER_NAME)

// Secret shapes redacted from event text: provider keys (OpenAI `sk-`, Anthropic `sk-ant-`),
// GitHub tokens, AWS access key ids, JWTs, bearer tokens and `key=value` secrets; the same
// families gitleaks' default rules cover.
const SECRETS: ReadonlyArray<RegExp> = [
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b(Bearer)\s+[A-Za-z0-9._~+/-]{12,}=*/gi,
  /\b((?:api[_-]?key|secret|token|password|passwd)["']?\s*[:=]\s*["']?)[^\s"',;]{6,}/gi
]

/**
 * Text with secret-looking values replaced by `[REDACTED]`, cut to
 * `maxBytes` UTF-8 bytes (on a character boundary).
 *
 * @category utils
 */
export const redact = (
  text: string,
  maxBytes = MAX_EVENT_TEXT_BYTES
): { readonly text: string; readonly truncated: boolean } => {
  let out = text
  for (const pattern of SECRETS)
    out = out.replace(pattern, (match, prefix?: unknown) =>
      typeof prefix === "string" && match.startsWith(prefix) ? `${prefix} [REDACTED]`.replace("  ", " ") : "[REDACTED]"
    )
  const bytes = new TextEncoder().encode(out)
  if (bytes.length <= maxBytes) return { text: out, truncated: false }
  const cut = new TextDecoder().decode(bytes.slice(0, maxBytes)).replace(/\uFFFD$/, "")
  return { text: cut, truncated: true }
}

/**
 * A measurement as attributes: `context_engine.tokens.<prefix>.<category>`
 * and `.input`.
 *
 * @category utils
 */
export const measurementAttributes = (prefix: string, measurement: Measurement): Attributes => {
  const attributes: Attributes = { [`context_engine.tokens.${prefix}.input`]: measurement.inputTokens }
  for (const category of categories)
    attributes[`context_engine.tokens.${prefix}.${category}`] = measurement.byCategory[category]
  return attributes
}

const inputAttributes = (engine: string, input: EngineInput): Attributes => ({
  "gen_ai.request.model": input.policy.model,
  "context_engine.engine": engine,
  "context_engine.context_window_tokens": input.policy.contextWindowTokens,
  "context_engine.entries": input.entries.length
})

const measuredAttributes = (measurement: Measurement): Attributes => ({
  ...measurementAttributes("request", measurement),
  "context_engine.budget_tokens": measurement.budgetTokens,
  "context_engine.measure.method": measurement.method
})

/**
 * Runs `run` inside a `context_engine.measure` span and records the result.
 *
 * @category tracing
 */
export const measureSpan = <A extends Measurement>(engine: string, input: EngineInput, run: () => Promise<A>) =>
  tracer().startActiveSpan("context_engine.measure", { attributes: inputAttributes(engine, input) }, (span) =>
    run().then(
      (measurement) => {
        span.setAttributes(measuredAttributes(measurement))
        span.end()
        return measurement
      },
      (error: unknown) => fail(span, error)
    )
  )

/**
 * A finished `context_engine.measure` span for a measurement computed
 * elsewhere (the middleware's assembled request), started at `startMs` and
 * ended now; the same attributes as {@link measureSpan}.
 *
 * @category tracing
 */
export const recordMeasureSpan = (
  engine: string,
  input: EngineInput,
  measurement: Measurement,
  options: { readonly startMs?: number } = {}
): void => {
  const span = tracer().startSpan(
    "context_engine.measure",
    options.startMs !== undefined ? { startTime: options.startMs } : {}
  )
  // Once per request: attributes are built only when a tracer provider records (no-op otherwise).
  if (span.isRecording()) span.setAttributes({ ...inputAttributes(engine, input), ...measuredAttributes(measurement) })
  span.end()
}

const fail = (span: Span, error: unknown): never => {
  const tagged = error as { readonly _tag?: string; readonly message?: string }
  span.setAttribute("context_engine.failure", tagged._tag ?? "Error")
  span.setStatus({ code: SpanStatusCode.ERROR, message: tagged.message ?? String(error) })
  span.end()
  throw error
}

/**
 * Runs `run` inside a `context_engine.compact` span; on success records the
 * result ({@link recordCompaction}), on failure marks the span as an error
 * with the error's tag. `mode` is the rollout mode (`shadow`, `advisory`,
 * `active`) when the caller has one.
 *
 * @category tracing
 */
export const compactSpan = <A extends CompactionResult>(
  engine: string,
  input: EngineInput,
  run: () => Promise<A>,
  mode?: string
) =>
  tracer().startActiveSpan(
    "context_engine.compact",
    { attributes: { ...inputAttributes(engine, input), ...(mode ? { "context_engine.mode": mode } : {}) } },
    (span) =>
      run().then(
        (result) => {
          recordCompaction(span, input, result)
          span.end()
          return result
        },
        (error: unknown) => fail(span, error)
      )
  )

/**
 * A finished `context_engine.compact` span for a result computed elsewhere
 * (e.g. under a plug-in guard), started at `startMs` and ended now.
 *
 * @category tracing
 */
export const recordCompactionSpan = (
  engine: string,
  input: EngineInput,
  result: CompactionResult,
  options: { readonly mode?: string; readonly startMs?: number } = {}
): void => {
  const span = tracer().startSpan("context_engine.compact", {
    ...(options.startMs !== undefined ? { startTime: options.startMs } : {}),
    attributes: { ...inputAttributes(engine, input), ...(options.mode ? { "context_engine.mode": options.mode } : {}) }
  })
  otelContext.with(trace.setSpan(otelContext.active(), span), () => recordCompaction(span, input, result))
  span.end()
}

/**
 * Records a compaction result on its span: attributes, one child span per
 * stage, the summarize and validate spans, and the dropped / kept /
 * checkpoint events.
 *
 * @category tracing
 */
export const recordCompaction = (span: Span, input: EngineInput, result: CompactionResult): void => {
  const keptIds = new Set(result.view.items.map((item) => item.entryId))
  const messages = input.entries.filter((entry) => entry.kind === "message")
  const dropped = messages.filter((entry) => !keptIds.has(entry.id))
  const kept = messages.filter((entry) => keptIds.has(entry.id))
  const after = result.after.byCategory
  const fixedOverhead = after.system + after.toolSchemas + after.memory
  span.setAttributes({
    ...measurementAttributes("before", result.before),
    ...measurementAttributes("after", result.after),
    "context_engine.budget_tokens": result.after.budgetTokens,
    "context_engine.discarded_entries": dropped.length,
    "context_engine.kept_entries": kept.length,
    "context_engine.kept_tokens": result.after.inputTokens - after.checkpoint - fixedOverhead - after.framing,
    "context_engine.fixed_overhead_tokens": fixedOverhead,
    "context_engine.stages": result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage),
    "context_engine.fits": result.fits,
    "context_engine.failures": (result.failures ?? []).map((failure) => failure._tag),
    ...(result.checkpoint ? checkpointAttributes(result.checkpoint) : {})
  })
  stageSpans(span, result.stages)
  for (const failure of result.failures ?? [])
    span.addEvent("context_engine.failure", { "context_engine.failure": failure._tag, message: failure.message })
  span.addEvent("context_engine.dropped", {
    "context_engine.entry_count": dropped.length,
    "context_engine.entry_ids": dropped.slice(0, MAX_EVENT_IDS).map((entry) => entry.id)
  })
  span.addEvent("context_engine.kept", {
    "context_engine.entry_count": kept.length,
    "context_engine.first_kept_entry_id": result.checkpoint?.firstKeptEntryId ?? kept[0]?.id ?? "",
    "context_engine.entry_ids": kept.slice(0, MAX_EVENT_IDS).map((entry) => entry.id)
  })
  if (result.checkpoint) checkpointSpans(span, result.checkpoint, result.stages)
}

const checkpointAttributes = (checkpoint: Checkpoint): Attributes => ({
  "context_engine.checkpoint.id": checkpoint.id,
  "context_engine.checkpoint.generation": checkpoint.generation,
  "context_engine.checkpoint.tokens_before": checkpoint.tokensBefore,
  "context_engine.checkpoint.tokens_after": checkpoint.tokensAfter,
  "context_engine.checkpoint.first_kept_entry_id": checkpoint.firstKeptEntryId ?? ""
})

/** Child spans laid end to end before now, each as long as the stage took. */
const stageSpans = (parent: Span, stages: ReadonlyArray<StageReport>): void => {
  const context = trace.setSpan(otelContext.active(), parent)
  const total = stages.reduce((sum, stage) => sum + Math.max(0, stage.durationMs), 0)
  let startMs = Date.now() - total
  for (const stage of stages) {
    const endMs = startMs + Math.max(0, stage.durationMs)
    const child = tracer().startSpan(
      "context_engine.stage",
      {
        startTime: startMs,
        attributes: {
          "context_engine.stage": stage.stage,
          "context_engine.stage.status": stage.status,
          "context_engine.tokens.before.input": stage.tokensBefore,
          "context_engine.tokens.after.input": stage.tokensAfter,
          "context_engine.stage.edits": stage.edits,
          ...(stage.note ? { "context_engine.stage.note": stage.note } : {})
        }
      },
      context
    )
    child.end(endMs)
    startMs = endMs
  }
}

const checkpointSpans = (parent: Span, checkpoint: Checkpoint, stages: ReadonlyArray<StageReport>): void => {
  const context = trace.setSpan(otelContext.active(), parent)
  const summarizeStage = stages.find((stage) => /summar|checkpoint/.test(stage.stage))
  const endMs = Date.now()
  const summarizer = checkpoint.summarizer
  const summarize = tracer().startSpan(
    "context_engine.summarize",
    {
      startTime: endMs - Math.max(0, summarizeStage?.durationMs ?? 0),
      attributes: {
        "context_engine.summarizer.kind": summarizer.kind,
        "context_engine.summarizer.prompt_version": summarizer.promptVersion,
        ...(summarizer.model
          ? {
              "gen_ai.operation.name": "chat",
              "gen_ai.request.model": summarizer.model,
              ...(summarizer.model.includes(":") || summarizer.model.includes("/")
                ? { "gen_ai.provider.name": summarizer.model.split(/[:/]/)[0]! }
                : {})
            }
          : {}),
        ...checkpointAttributes(checkpoint)
      }
    },
    context
  )
  // The rendered text when the checkpoint carries it, else its structured sections as JSON.
  const { text, truncated } = redact(checkpoint.text ?? JSON.stringify(checkpoint.content ?? {}))
  summarize.addEvent("context_engine.checkpoint", {
    "context_engine.checkpoint.generation": checkpoint.generation,
    "context_engine.checkpoint.text": text,
    "context_engine.checkpoint.text_truncated": truncated
  })
  parent.addEvent("context_engine.checkpoint", {
    "context_engine.checkpoint.generation": checkpoint.generation,
    "context_engine.checkpoint.text": text,
    "context_engine.checkpoint.text_truncated": truncated
  })
  summarize.end(endMs)
  const validation = checkpoint.validation
  if (!validation) return
  const validate = tracer().startSpan(
    "context_engine.validate",
    {
      startTime: endMs,
      attributes: {
        "context_engine.validation.ok": validation.ok,
        "context_engine.validation.identifier_retention": validation.identifierRetention,
        "context_engine.validation.failed_checks": validation.checks
          .filter((check) => !check.ok)
          .map((check) => check.name)
      }
    },
    context
  )
  if (!validation.ok) validate.setStatus({ code: SpanStatusCode.ERROR, message: "checkpoint failed validation" })
  validate.end(endMs)
}

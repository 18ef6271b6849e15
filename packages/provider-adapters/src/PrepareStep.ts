/**
 * A `prepareStep` helper for applications that manage messages per step
 * (`generateText` / `streamText` / `ToolLoopAgent` option `prepareStep`)
 * instead of wrapping the model with {@link contextEngineMiddleware}.
 *
 * Each step it syncs the step's full history into the session transcript,
 * compacts when the engine says so, and returns `{ messages }` with the
 * assembled context (nothing when the messages need no change). The step's
 * `instructions` are measured as system overhead but not returned.
 *
 * AI SDK 7 carries a `messages` override forward to later steps
 * (`PrepareStepFunction` docs), so the next step's `messages` start with what
 * this helper returned; the helper recognises that prefix and reconstructs
 * the full history from its own record, so the transcript never branches.
 *
 * The usage of the previous step (`steps.at(-1).usage`) is recorded with
 * `recordOutcome` at the start of the next step. Overflow recovery needs a
 * hook around the model call: use the middleware for that.
 *
 * @since 0.1.0
 */
import type { Message } from "@context-engine/core"
import type { LanguageModel, ModelMessage, PrepareStepFunction, ToolSet } from "ai"
import { asSchema } from "ai"
import * as ContextController from "./ContextController.ts"

/**
 * Options: the controller options plus the tools the agent offers (their
 * schemas count as fixed overhead).
 *
 * @category models
 */
export interface PrepareStepOptions<TOOLS extends ToolSet = ToolSet> extends ContextController.ControllerOptions {
  /**
   * The same tools given to `generateText` / `streamText`. The AI SDK does
   * not hand them to `prepareStep`, so their schemas are counted as fixed
   * overhead only from here. The function returned is a
   * `PrepareStepFunction<TOOLS>`: a call with tools rejects (at compile time)
   * a helper made without them, whose count would miss their schemas.
   */
  readonly tools?: TOOLS
  /**
   * The `abortSignal` given to `generateText` / `streamText` (the AI SDK
   * does not hand it to `prepareStep`): compaction stops when it fires and
   * the step rejects with its reason, as through the middleware.
   */
  readonly abortSignal?: AbortSignal
}

const modelRef = (model: LanguageModel): ContextController.ModelRef =>
  typeof model === "string"
    ? { provider: "gateway", modelId: model }
    : { provider: (model as { provider: string }).provider, modelId: (model as { modelId: string }).modelId }

const instructionsAsMessages = (instructions: unknown): ReadonlyArray<Message.Message> => {
  if (instructions === undefined || instructions === null) return []
  if (typeof instructions === "string")
    return instructions.length > 0 ? [{ role: "system", content: instructions }] : []
  const list = Array.isArray(instructions) ? instructions : [instructions]
  return list.flatMap(
    (item): ReadonlyArray<Message.Message> =>
      typeof item === "string"
        ? [{ role: "system", content: item }]
        : typeof item === "object" && item !== null && "content" in item
          ? [{ role: "system", content: String((item as { content: unknown }).content) }]
          : []
  )
}

/**
 * Creates a `prepareStep` function.
 *
 * @category constructors
 * @example
 * ```ts
 * const abortSignal = AbortSignal.timeout(120_000)
 * const prepareStep = contextEnginePrepareStep({ engine, tools, abortSignal })
 * await generateText({ model, tools, messages, prepareStep, abortSignal, stopWhen: stepCountIs(100) })
 * ```
 */
export const contextEnginePrepareStep = <TOOLS extends ToolSet = ToolSet>(
  options: PrepareStepOptions<TOOLS>
): PrepareStepFunction<TOOLS> & { readonly controller: ContextController.ContextController } => {
  const controller = ContextController.make(options)
  const tools = Object.entries(options.tools ?? {}).map(([name, tool]) => {
    const schema = asSchema((tool as { inputSchema?: Parameters<typeof asSchema>[0] }).inputSchema)
    return {
      name,
      ...(typeof tool.description === "string" ? { description: tool.description } : {}),
      inputSchema: schema.jsonSchema as Message.JsonValue
    }
  })
  let lastReturned: ReadonlyArray<ModelMessage> | undefined
  let lastFull: ReadonlyArray<Message.Message> = []
  let previous: ContextController.Prepared | undefined

  const prepareStep = async ({
    model,
    messages,
    instructions,
    steps
  }: Parameters<PrepareStepFunction<TOOLS>>[0]): Promise<{ messages: Array<ModelMessage> } | undefined> => {
    const lastStep = steps.at(-1)
    if (previous !== undefined && lastStep !== undefined) {
      await controller.recordSuccess(previous, {
        inputTokens: lastStep.usage.inputTokens,
        outputTokens: lastStep.usage.outputTokens,
        cachedInputTokens: lastStep.usage.inputTokenDetails?.cacheReadTokens
      })
    }
    const carried =
      lastReturned !== undefined &&
      messages.length >= lastReturned.length &&
      lastReturned.every((message, index) => messages[index] === message)
    const full: ReadonlyArray<Message.Message> = carried
      ? [...lastFull, ...messages.slice(lastReturned!.length)]
      : messages
    const context = await controller
      .prepare(modelRef(model), full, tools, instructionsAsMessages(instructions), options.abortSignal)
      .catch(ContextController.unlessPolicyFailed)
    // Aborted during compaction: the step does not go out (the guarded compaction left the context as it was).
    options.abortSignal?.throwIfAborted()
    previous = context
    lastFull = full
    // Not rewritten, or the policy function failed (reported as `compaction-skipped`): the history as the app has it.
    if (context === undefined || !context.rewritten) {
      lastReturned = undefined
      // When the SDK carries an earlier override, give it the full history back.
      return carried ? { messages: [...full] as Array<ModelMessage> } : undefined
    }
    const sent = [...context.messages] as Array<ModelMessage>
    lastReturned = sent
    return { messages: sent }
  }
  return Object.assign(prepareStep as PrepareStepFunction<TOOLS>, { controller })
}

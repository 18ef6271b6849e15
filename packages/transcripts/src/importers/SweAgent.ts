/**
 * Importer for SWE-agent trajectories (`.traj`): one JSON object with
 * `history` (the messages the model saw), `trajectory` (steps), `info`.
 *
 * Both history styles:
 *
 * - function calling (SWE-agent ≥ 1.0): assistant messages carry OpenAI
 *   `tool_calls` and observations are `role: "tool"` with `tool_call_ids`;
 *   they become tool-call and tool-result parts;
 * - text actions (SWE-agent 0.x): the command is written in the assistant
 *   text (in a fenced block) and the observation is a user message. These
 *   stay text, as the model saw them; the parsed command is kept in
 *   `meta.action`, and no tool-call parts are invented.
 *
 * `agent`, `message_type`, `is_demo` and `thought` travel in `meta`;
 * `info` (model stats, exit status) becomes a final `swe-agent.info` event.
 *
 * @since 0.1.0
 */
import { isObject, meta } from "./EntryBuilder.ts"
import type { DocumentFormat } from "./Format.ts"
import * as OpenAIChat from "./OpenAIChat.ts"

/**
 * The SWE-agent trajectory importer.
 *
 * @category importers
 */
export const format: DocumentFormat = {
  id: "swe-agent",
  kind: "document",
  prefix: "swe",
  markers: "a JSON object with `history` and `trajectory`",
  detect: (document) => isObject(document) && Array.isArray(document.history) && "trajectory" in document,
  fromValue: (builder, document) => {
    const root = isObject(document) ? document : {}
    const history = Array.isArray(root.history) ? root.history : []
    const names = new Map<string, string>()
    const info = isObject(root.info) ? root.info : undefined
    builder.startSession(typeof info?.instance_id === "string" ? info.instance_id : "swe-agent")
    for (const [index, raw] of history.entries()) {
      if (!isObject(raw)) {
        builder.skip(0, `history[${index}] is not an object`)
        continue
      }
      const converted = OpenAIChat.toMessage(raw, index, names)
      if ("error" in converted) {
        builder.skip(0, `history[${index}]: ${converted.error}`)
        continue
      }
      builder.message(index, converted.message, {
        id: `swe:${index}`,
        meta: meta({
          agent: raw.agent,
          messageType: raw.message_type,
          isDemo: raw.is_demo,
          action: raw.action,
          thought: raw.thought === raw.content ? undefined : raw.thought
        })
      })
    }
    if (info !== undefined) builder.event(history.length, "swe-agent.info", meta(info), { id: "swe:info" })
  }
}

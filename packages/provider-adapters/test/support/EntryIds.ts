/**
 * Requests compared by the messages their transcript entry ids name.
 *
 * A request names transcript entries (offload markers: "… are in transcript
 * entry s:121 …", `context_restore` calls). Two sessions holding the same
 * messages can name them by other entry ids, legitimately:
 *
 * - a session that offloaded a result at an earlier step holds that edit
 *   entry before the later messages, while a fresh session records every
 *   message first (RequestPathSteps);
 * - a session whose `"sampled"` history check has not yet seen an older
 *   in-place edit has not branched there yet, so the later messages are still
 *   the entries of the branch before the edit, while `"full"` branched at once
 *   and recorded them anew (SampledVsFull; `MessageMatch.HistoryCheck`).
 *
 * Both name the same message: the one at the same position of the session's
 * active path, with the same content.
 */
import { createHash } from "node:crypto"
import type * as Session from "../../src/Session.ts"

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `value` with every object's keys in sorted order (equal messages built in another key order compare equal). */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value !== null && typeof value === "object"
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical((value as Record<string, unknown>)[key])])
        )
      : value

/** The first 12 hex digits of the SHA-256 of a message's canonical JSON. */
const digest = (message: unknown): string =>
  createHash("sha256")
    .update(JSON.stringify(canonical(message)))
    .digest("hex")
    .slice(0, 12)

/**
 * A JSON copy of `request` with every entry id of `session` that names a
 * message entry of its active path replaced by `message#<position>@<digest>`:
 * the position among the active path's message entries and a digest of the
 * message the entry holds (so an id naming a stale version of the message at
 * that position still differs). Other ids stay as they are, so an id naming a
 * message off the path, or anything else, still compares as itself.
 */
export const byNamedMessage = <A>(request: A, session: Session.Session): A => {
  const named = new Map<string, string>()
  for (const entry of session.entries())
    if (entry.kind === "message") named.set(entry.id, `message#${named.size}@${digest(entry.message)}`)
  // Session ids are `<sessionId>:<n>` (Session.nextId); not part of a longer token such as "lines:12".
  const id = new RegExp(`(?<![\\w.:-])${escaped(session.sessionId)}:\\d+(?!\\d)`, "g")
  return JSON.parse(JSON.stringify(request).replace(id, (found) => named.get(found) ?? found)) as A
}

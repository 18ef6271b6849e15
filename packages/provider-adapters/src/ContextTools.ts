/**
 * Context tools for AI SDK agents (DESIGN.md "Memory, offload and context
 * tools"; compactor's design): AI SDK `tool()` definitions bound to a
 * session (and its store) that let the model search every original, read or
 * restore a piece of one, offload an entry with its own note, and rewind a
 * finished stretch into its own summary.
 *
 * - `context_search {text, limit?}` — full-text search over every entry the
 *   session holds (every branch; offloaded, trimmed, covered by a
 *   checkpoint), through the store's index when it has one (SQLite FTS5),
 *   MiniSearch otherwise. Each hit names its entry id, where it stands and a
 *   ready `context_restore` call.
 * - `context_restore {entry, offset?, length?}` — with `offset`/`length`, or
 *   for an entry that is not edited: returns that piece of the original
 *   text. Without them, for an offloaded/trimmed/rewound entry: puts the
 *   original back in the view.
 * - `context_offload {entry, text}` — shows the model's note in place of an
 *   entry (tool pairing kept), with a pointer to the original.
 * - `context_rewind {from, to?, summary}` — replaces a finished stretch by
 *   the summary and an index of what it replaced (whole tool-call units,
 *   never the latest user message).
 *
 * Changes are view edits appended to the transcript, so they take effect
 * from the next step; the transcript keeps every original. Tool results are
 * JSON objects naming entry ids; a refused call returns `{ error }`.
 *
 * @since 0.1.0
 */
import { Entry, TranscriptSearch, type ViewEdit } from "@context-engine/core"
import { AgentEdits } from "@context-engine/engines"
import { jsonSchema, type ToolSet, tool } from "ai"
import * as ContextSearch from "./ContextSearch.ts"
import type * as Session from "./Session.ts"

/**
 * Options.
 *
 * @category models
 */
export interface ContextToolsOptions {
  /** The session the tools act on, or a function returning it (e.g. `() => controller.session(model)`). */
  readonly session: Session.Session | (() => Session.Session | Promise<Session.Session>)
  /**
   * The session's store (the one `Session.make` was given); its `search`
   * (`TranscriptSearch.Searchable`: SQLite FTS5, PostgreSQL full-text) is used
   * when it has one, else MiniSearch over the session's transcript.
   */
  readonly store?: Session.SessionStore & Partial<TranscriptSearch.Searchable>
  /** Characters a restore returns when no `length` is given (default `AgentEdits.DEFAULT_READ_CHARS`). */
  readonly readChars?: number
}

const schema = (properties: Record<string, unknown>, required: ReadonlyArray<string>) =>
  jsonSchema<Record<string, unknown>>({
    type: "object",
    properties: properties as never,
    required: [...required],
    additionalProperties: false
  })

const isError = (value: object): value is AgentEdits.AgentEditError => "error" in value

/** Appends edits to the session's active path as edit entries; returns their ids. */
const appendEdits = async (
  session: Session.Session,
  edits: ReadonlyArray<ViewEdit.ViewEdit>
): Promise<ReadonlyArray<string>> => {
  const timestamp = new Date().toISOString()
  const entries = Entry.chain(
    session.entries().at(-1)?.id ?? null,
    timestamp,
    edits.map((edit) => ({ id: session.nextId(), body: { kind: "edit" as const, edit } }))
  )
  await session.append(entries)
  return entries.map((entry) => entry.id)
}

/**
 * The four tools, bound to a session.
 *
 * @example
 * ```ts
 * const prepareStep = contextEnginePrepareStep({ engine, tools: myTools })
 * const tools = { ...myTools, ...contextTools({ session: () => prepareStep.controller.session(model) }) }
 * await generateText({ model, tools, prepareStep, messages, stopWhen: stepCountIs(50) })
 * ```
 *
 * @category constructors
 */
export const contextTools = (options: ContextToolsOptions): ToolSet => {
  const sessionOf = async (): Promise<Session.Session> =>
    typeof options.session === "function" ? await options.session() : options.session
  const searches = new WeakMap<Session.Session, ContextSearch.ContextSearch>()
  const searchOf = (session: Session.Session): ContextSearch.ContextSearch => {
    let search = searches.get(session)
    if (search === undefined) {
      search = TranscriptSearch.isSearchable(options.store)
        ? ContextSearch.fromStore(options.store, session.sessionId)
        : ContextSearch.inMemory(session.transcript)
      searches.set(session, search)
    }
    return search
  }
  const readChars = options.readChars ?? AgentEdits.DEFAULT_READ_CHARS

  return {
    context_search: tool({
      description:
        "Full-text search over everything in this conversation, including tool output that was offloaded, trimmed or summarized away. Returns entry ids with a snippet and a ready context_restore call.",
      inputSchema: schema(
        { text: { type: "string", description: "words to find" }, limit: { type: "integer", minimum: 1, maximum: 20 } },
        ["text"]
      ),
      execute: async (input) => {
        const session = await sessionOf()
        const text = String(input.text ?? "")
        const limit = typeof input.limit === "number" ? input.limit : TranscriptSearch.DEFAULT_LIMIT
        const hits = await searchOf(session).search(text, limit)
        const path = session.entries()
        const transcript = session.transcript()
        return {
          query: text,
          hits: hits.map((hit) => ({
            entry: hit.entryId,
            placement: AgentEdits.placement(path, transcript, hit.entryId),
            snippet: hit.snippet,
            restore: { entry: hit.entryId, offset: Math.max(0, hit.offset - 200), length: 2_000 }
          }))
        }
      }
    }),
    context_restore: tool({
      description:
        "Read a piece of an original entry (give offset and length, in characters), or, without them, put an offloaded, trimmed or rewound entry back into the context from the next step.",
      inputSchema: schema(
        {
          entry: { type: "string", description: "entry id" },
          offset: { type: "integer", minimum: 0 },
          length: { type: "integer", minimum: 1 }
        },
        ["entry"]
      ),
      execute: async (input) => {
        const session = await sessionOf()
        const entryId = String(input.entry ?? "")
        const ranged = input.offset !== undefined || input.length !== undefined
        if (!ranged && AgentEdits.placement(session.entries(), session.transcript(), entryId) === "edited") {
          const edit = AgentEdits.restoreEdit(session.entries(), entryId)
          if (isError(edit)) return edit
          const [editId] = await appendEdits(session, [edit])
          return {
            entry: entryId,
            restored: true,
            editEntry: editId,
            note: "the original is in the context from the next step"
          }
        }
        const piece = AgentEdits.read(
          session.transcript(),
          entryId,
          typeof input.offset === "number" ? input.offset : 0,
          typeof input.length === "number" ? input.length : readChars
        )
        return isError(piece) ? piece : { entry: entryId, ...piece }
      }
    }),
    context_offload: tool({
      description:
        "Replace an entry in the context with your own short note of what matters in it (from the next step). The original stays retrievable with context_restore.",
      inputSchema: schema(
        {
          entry: { type: "string", description: "entry id" },
          text: { type: "string", description: "the note to keep" }
        },
        ["entry", "text"]
      ),
      execute: async (input) => {
        const session = await sessionOf()
        const entryId = String(input.entry ?? "")
        const edit = AgentEdits.offloadEdit(session.entries(), entryId, String(input.text ?? ""))
        if (isError(edit)) return edit
        const [editId] = await appendEdits(session, [edit])
        return { entry: entryId, offloaded: true, editEntry: editId }
      }
    }),
    context_rewind: tool({
      description:
        "Collapse a finished stretch of the conversation (from entry id, to entry id or up to the latest request) into your own summary. An index of the replaced entries is kept; the originals stay searchable and restorable.",
      inputSchema: schema(
        {
          from: { type: "string", description: "first entry id of the finished stretch" },
          to: { type: "string", description: "last entry id (default: the last one before the latest request)" },
          summary: { type: "string", description: "what the stretch established: results, decisions, open items" }
        },
        ["from", "summary"]
      ),
      execute: async (input) => {
        const session = await sessionOf()
        const rewind = AgentEdits.rewindEdits(session.entries(), {
          from: String(input.from ?? ""),
          to: typeof input.to === "string" ? input.to : undefined,
          summary: String(input.summary ?? "")
        })
        if (isError(rewind)) return rewind
        await appendEdits(session, rewind.edits)
        return {
          rewound: true,
          from: rewind.fromEntryId,
          to: rewind.toEntryId,
          replacedEntries: rewind.replacedEntryIds,
          note: "from the next step the stretch is your summary plus an index; context_restore reads any original"
        }
      }
    })
  }
}

/**
 * A session as the AI SDK integration sees it: the transcript (append-only
 * entries) reconciled with the full message list the application sends on
 * every step, plus what was learned about the provider (the effective window
 * after an overflow).
 *
 * The AI SDK re-sends the whole history each step (`generateText`,
 * `streamText` and `ToolLoopAgent` append the response messages to the
 * prompt), as new objects each call. {@link Session.sync} finds the longest
 * prefix of the incoming messages that matches the transcript's active path
 * — by position and value (`MessageMatch`: pointer compares of the
 * leaves the AI SDK carries over, never hashing or re-serializing unchanged
 * messages; by default on a bounded sample of the held positions each step,
 * `MessageMatch.HistoryCheck`) — and appends only the rest, as sealed copies (`MessageSeal`:
 * frozen, so the measurer's caches need no in-place-edit check of the
 * session's messages; the caller's objects are never modified). When the application rewrote its history (the messages diverge), the
 * transcript keeps every old entry and the session continues on a new branch
 * whose `parentId` is the last matching message (Pi's session tree) — or,
 * when even the first message differs, on a new root (`BranchRoot`: the
 * entry is marked, so a reader of the store sees only the new history); edits
 * written later of the entries the branch keeps (e.g. an offloaded tool
 * result) are carried to it as new entries.
 *
 * A store that fails (an outage: any error but a stale write,
 * {@link isStaleWrite}) loses nothing and stops no request: the session holds
 * what it was given (synced messages, edits, events) as unstored, reports the
 * failure (`onStoreFailure`), and every later write stores the unstored
 * entries first, in order. Only a write that carries a checkpoint (a
 * compaction's commit) is stored before the session holds it: the store
 * refuses it whole and the compaction counts as failed.
 *
 * @since 0.1.0
 */
import {
  ActiveView,
  BranchRoot,
  Entry,
  type Message,
  MessageSeal,
  OverflowEvent,
  type ViewEdit
} from "@context-engine/core"
import { OverflowRecovery } from "@context-engine/engines"
import * as MessageMatch from "./MessageMatch.ts"
import * as SessionWrites from "./SessionWrites.ts"

export {
  isStaleWrite,
  type OnStoreFailure,
  type SessionStore,
  STORE_LOAD_TIMEOUT_MS,
  STORE_WRITE_TIMEOUT_MS,
  storeFailure
} from "./SessionWrites.ts"

/**
 * A session.
 *
 * @category models
 */
export interface Session {
  readonly sessionId: string
  /** The active path: entries of the current branch, oldest first. */
  readonly entries: () => ReadonlyArray<Entry.Entry>
  /** The message entries of the active path, oldest first (kept incrementally; do not mutate). */
  readonly messageEntries: () => ReadonlyArray<Entry.MessageEntry>
  /**
   * The messages of {@link messageEntries}, position by position (kept incrementally; do not mutate): comparing
   * a request with them reads one array, not every entry object.
   */
  readonly messages: () => ReadonlyArray<Message.Message>
  /** Every entry ever appended (all branches), oldest first. */
  readonly transcript: () => ReadonlyArray<Entry.Entry>
  /**
   * The generation the next checkpoint must carry: the highest in the whole transcript (every branch) + 1,
   * as the store requires (`ContextEngine.EngineInput.nextGeneration`); the active path alone may hold a lower one.
   */
  readonly nextGeneration: () => number
  /**
   * Appends the messages not yet in the active path; returns the new message entries. The session holds them
   * even when the store refuses them (an outage: reported, stored by a later write; see the module notes).
   */
  readonly sync: (messages: ReadonlyArray<Message.Message>) => Promise<ReadonlyArray<Entry.MessageEntry>>
  /**
   * Appends entries (edits, checkpoints, events) to the active path and the store. Entries with a checkpoint (a
   * compaction's commit) are stored first and rejected whole when the store refuses them; any other entries are
   * held as `sync`'s messages are.
   */
  readonly append: (entries: ReadonlyArray<Entry.Entry>) => Promise<void>
  /** A fresh entry id in this session. */
  readonly nextId: () => string
  /** The effective window learned for a model after an overflow, in tokens. */
  readonly learnedWindow: (modelId: string) => number | undefined
  /**
   * Records a learned window (keeps the smallest; ignores a value that is not
   * a finite number ≥ 1). The floor of `OverflowRecovery.minimumWindow` is
   * applied where the window is used (`OverflowRecovery.applyLearnedWindow`).
   */
  readonly learn: (modelId: string, windowTokens: number) => void
}

const isMessageEntry = (entry: Entry.Entry): entry is Entry.MessageEntry => entry.kind === "message"

/**
 * The entry with its message sealed (`MessageSeal`): the session's messages
 * cannot change under the measurer's caches, which then need no in-place-edit
 * check (per-step cost independent of the session's length).
 */
const sealed = (entry: Entry.Entry): Entry.Entry => {
  if (entry.kind !== "message") return entry
  const message = MessageSeal.seal(entry.message)
  return message === entry.message ? entry : { ...entry, message }
}

const isWindow = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 1

/**
 * The window a persisted `context-overflow` event teaches, or undefined when
 * it holds none. An event written by an older build from numbers that
 * contradict the measured request (the provider's count above
 * `OverflowRecovery.MAX_UNDERCOUNT_RATIO` × ours) learned a window scaled by
 * that bogus ratio; it is re-read as the reported limit, as
 * `OverflowRecovery.effectiveWindow` now does. The floor
 * (`OverflowRecovery.minimumWindow`) is applied where the window is used
 * (`OverflowRecovery.applyLearnedWindow`), since it depends on the policy.
 *
 * @category utils
 */
export const learnedFromEvent = (data: OverflowEvent.Data): number | undefined => {
  if (!isWindow(data.learnedWindowTokens)) return undefined
  const { limitTokens, requestedTokens, measuredInputTokens } = data
  if (
    isWindow(limitTokens) &&
    isWindow(requestedTokens) &&
    isWindow(measuredInputTokens) &&
    requestedTokens > measuredInputTokens * OverflowRecovery.MAX_UNDERCOUNT_RATIO
  )
    return Math.max(data.learnedWindowTokens, limitTokens)
  return data.learnedWindowTokens
}

/** The entry an edit names: the one it drops or replaces, or the one it inserts after. */
const editTarget = (edit: ViewEdit.ViewEdit): string => (edit.op === "insert" ? edit.afterEntryId : edit.entryId)

/**
 * The caller's id for the message at `position` (0-based) of the message list
 * `sync` was given — e.g. a replayed transcript's own entry ids, so that
 * checkpoints name the entries as the transcript does. `undefined`, or an id
 * the session already holds, falls back to the session's own
 * `<sessionId>:<n>` (ids stay unique).
 *
 * @category models
 */
export type MessageId = (position: number) => string | undefined

/**
 * Opens a session, loading its transcript from `store` when one is given.
 * With a store, the active path is the branch of the newest entry
 * (`ActiveView.branch`, the same walk every view uses). `messageId` names
 * the message entries `sync` appends ({@link MessageId}); without it they are
 * `<sessionId>:<n>`, as every other entry the session writes. `historyCheck`
 * says how much of the held history `sync` compares each step
 * (`MessageMatch.HistoryCheck`; default `"sampled"`; anything else throws
 * `Errors.InvalidInput`). `onStoreFailure` hears of each write the store
 * refused while the session kept its entries ({@link OnStoreFailure}; see the
 * module notes). A load that fails — throws, has not settled within
 * `STORE_LOAD_TIMEOUT_MS` (60 s), or answers with no `entries` array —
 * rejects with `PluginFailed` of kind `"store"` (`threw`, `timeout`,
 * `malformed`; `SessionWrites.load`): the controller then opens the session
 * in memory and tries the load again later (`ControllerSessions`).
 *
 * @category constructors
 */
export const make = async (
  sessionId: string,
  store?: SessionWrites.SessionStore,
  messageId?: MessageId | undefined,
  historyCheck?: MessageMatch.HistoryCheck,
  onStoreFailure?: SessionWrites.OnStoreFailure
): Promise<Session> => {
  const check = MessageMatch.historyCheckOf(historyCheck, "historyCheck")
  const all: Array<Entry.Entry> = store ? (await SessionWrites.load(store, sessionId)).map(sealed) : []
  let path = [...ActiveView.branch(all)]
  if (store) SessionWrites.checkLoaded(all, path)
  let maxGeneration = ActiveView.maxGeneration(all)
  // The message entries of the active path, kept in step with `path`, and their leaves for matching.
  let messageEntries: Array<Entry.MessageEntry> = path.filter(isMessageEntry)
  let messages = messageEntries.map((entry) => entry.message)
  const matcher = MessageMatch.make()
  for (const message of messages) matcher.push(message)
  // Positions of the active path's messages, and those an edit entry drops or replaces (the request does not send
  // them as the application's objects): the sampled history check compares these every step.
  const positionById = new Map<string, number>()
  messageEntries.forEach((entry, position) => {
    positionById.set(entry.id, position)
  })
  let watched = new Set<number>()
  const watch = (entry: Entry.Entry): void => {
    if (entry.kind !== "edit" || entry.edit.op === "insert") return
    const position = positionById.get(entry.edit.entryId)
    if (position !== undefined) watched.add(position)
  }
  for (const entry of path) watch(entry)
  let counter = all.length
  const ids = new Set(all.map((entry) => entry.id))
  const nextId = (): string => {
    let id: string
    do id = `${sessionId}:${++counter}`
    while (ids.has(id))
    ids.add(id)
    return id
  }
  const idOf = (position: number): string => {
    const given = messageId?.(position)
    if (given === undefined || ids.has(given)) return nextId()
    ids.add(given)
    return given
  }
  const learned = new Map<string, number>()
  const learn = (modelId: string, windowTokens: number): void => {
    if (!isWindow(windowTokens)) return
    learned.set(modelId, Math.min(learned.get(modelId) ?? Number.POSITIVE_INFINITY, Math.floor(windowTokens)))
  }
  // Windows learned in earlier runs, from the `context-overflow` events OverflowRecovery writes.
  for (const entry of all) {
    const data = OverflowEvent.decode(entry)
    const window = data === undefined ? undefined : learnedFromEvent(data)
    if (window !== undefined) learn(data!.model, window)
  }

  const storeWrites = SessionWrites.make(sessionId, store, onStoreFailure)

  const appendRaw = (entries: ReadonlyArray<Entry.Entry>): void => {
    for (const entry of entries) {
      all.push(entry)
      ids.add(entry.id)
      if (entry.kind === "checkpoint") maxGeneration = Math.max(maxGeneration, entry.checkpoint.generation)
      path.push(entry)
      watch(entry)
      if (entry.kind === "message") {
        positionById.set(entry.id, messageEntries.length)
        messageEntries.push(entry)
        messages.push(entry.message)
        matcher.push(entry.message)
      }
    }
  }

  // Writes run one at a time, in call order: each links its entries to the path every earlier write left (an append
  // stores before the session holds its entries, so a write started meanwhile would link to a stale end).
  let writes: Promise<unknown> = Promise.resolve()
  const serial = <A>(task: () => Promise<A>): Promise<A> => {
    const next = writes.then(task, task)
    writes = next.catch(() => undefined)
    return next
  }

  // The first entry of a path that starts over at the root while the transcript holds entries (the application
  // changed its first message): marked as a root, else readers of the store continue it from the transcript's last
  // entry and show the old history before the new one (`BranchRoot`).
  const rooted = <E extends Entry.Entry>(entry: E): E =>
    entry.parentId === null && path.length === 0 && all.length > 0 ? BranchRoot.mark(entry) : entry

  const sync = async (incoming: ReadonlyArray<Message.Message>): Promise<ReadonlyArray<Entry.MessageEntry>> => {
    const matched = matcher.checkedPrefix(incoming, (index) => messages[index]!, check, watched)
    const carried: Array<Entry.Entry> = []
    if (matched < messageEntries.length) {
      // Diverged: continue on a branch after the last matching message and the
      // non-message entries (edits, checkpoints) that directly follow it.
      const lastMatched = matched === 0 ? undefined : messageEntries[matched - 1]
      let end = lastMatched === undefined ? 0 : path.indexOf(lastMatched) + 1
      if (lastMatched !== undefined) while (end < path.length && path[end]!.kind !== "message") end++
      // Edits appended later of entries the branch keeps (an offload of a kept tool result, written after the
      // step's last message) stay in force: carried to the new branch as new entries (the old ones stay).
      const kept = new Set(path.slice(0, end).map((entry) => entry.id))
      const later = path
        .slice(end)
        .filter((entry): entry is Entry.EditEntry => entry.kind === "edit" && kept.has(editTarget(entry.edit)))
      path = path.slice(0, end)
      for (let position = matched; position < messageEntries.length; position++)
        positionById.delete(messageEntries[position]!.id)
      watched = new Set([...watched].filter((position) => position < matched))
      messageEntries = messageEntries.slice(0, matched)
      messages = messages.slice(0, matched)
      matcher.truncate(matched)
      if (later.length > 0) {
        const copies = Entry.chain(
          path.at(-1)?.id ?? null,
          new Date().toISOString(),
          later.map((entry) => ({
            id: nextId(),
            body: { kind: "edit" as const, edit: entry.edit }
          }))
        )
        appendRaw(copies)
        carried.push(...copies)
      }
    }
    const appended: Array<Entry.MessageEntry> = []
    for (let position = matched; position < incoming.length; position++) {
      const message = incoming[position]!
      const entry = rooted(
        Entry.make(
          { id: idOf(position), parentId: path.at(-1)?.id ?? null, timestamp: new Date().toISOString() },
          { kind: "message", message: MessageSeal.seal(message) }
        )
      )
      appendRaw([entry])
      appended.push(entry)
    }
    await storeWrites.storeHeld(carried.length === 0 ? appended : [...carried, ...appended])
    return appended
  }

  return {
    sessionId,
    entries: () => path,
    messageEntries: () => messageEntries,
    messages: () => messages,
    transcript: () => all,
    nextGeneration: () => maxGeneration + 1,
    sync: (incoming) => serial(() => sync(incoming)),
    append: (entries) =>
      serial(async () => {
        const linked = entries.map((entry, index) =>
          index > 0 || entry.parentId !== null
            ? entry
            : path.length > 0
              ? Entry.withParent(entry, path.at(-1)!.id)
              : rooted(entry)
        )
        if (linked.some((entry) => entry.kind === "checkpoint")) {
          // A compaction's commit is stored first: one the store refused never enters the session.
          await storeWrites.storeFirst(linked)
          appendRaw(linked)
          return
        }
        appendRaw(linked)
        await storeWrites.storeHeld(linked)
      }),
    nextId,
    learnedWindow: (modelId) => learned.get(modelId),
    learn
  }
}

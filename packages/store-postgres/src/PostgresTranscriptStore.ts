/**
 * The PostgreSQL transcript store: many processes (web workers, queued agent
 * runs, sub-agents) on one session, with the guarantees of the embedded
 * stores — it is core's `BackendTranscriptStore` over a PostgreSQL backend,
 * so validation, idempotent appends, the checkpoint compare-and-set and view
 * reconstruction are the very same code.
 *
 * Driver: `pg` (node-postgres), the kept pure-JavaScript driver. It lives in
 * this package, not in core, so core's entries never load it. (postgres.js
 * 3.4.9 was tried first: a connection terminated by the server mid-query
 * crashes the process from a timer callback — porsager/postgres#1154,
 * #1208 — which is exactly the failure this store must survive.)
 *
 * - **Exclusive write section**: one transaction that locks the session's
 *   row in `transcript_sessions` (`SELECT … FOR UPDATE`); writers of one
 *   session queue on it, across processes and machines. Inside, the store
 *   catches up on rows committed since it last looked and checks ids and the
 *   checkpoint generation before inserting.
 * - **Atomic commits**: every write of the section — an append, a checkpoint
 *   install, a whole compaction (`commitCompaction`) — commits in that one
 *   transaction or not at all. A lost connection or a killed process rolls
 *   it back on the server; the store forgets what it believed stored, and a
 *   retry writes.
 * - **One checkpoint per generation**: the compare-and-set runs under the
 *   row lock (a stale writer gets `CheckpointConflict`), and a unique index
 *   on `(session_id, generation)` guards it in the database itself.
 * - **Idempotent appends**: a retried entry with identical content is
 *   skipped; `(session_id, entry_id)` is unique.
 * - **Streaming reads**: `read` pulls rows in pages of {@link PAGE_ROWS} by
 *   `seq` (keyset); rows of a session are committed in `seq` order under the
 *   row lock, so a read is always a consistent prefix of the transcript.
 * - **Full-text search** over every stored entry (`search`), with a GIN
 *   index on the entry's searchable text.
 * - **Migrations** with a version ({@link PostgresMigrations}).
 *
 * Issues found in rows report the row's `seq` as the line.
 *
 * @since 0.1.0
 */
import {
  BackendTranscriptStore,
  type Entry,
  Errors,
  type TranscriptBackend,
  TranscriptStore
} from "@context-engine/core"
import { Effect, Layer } from "effect"
import pg from "pg"
import * as PostgresMigrations from "./PostgresMigrations.ts"
import * as PostgresSearch from "./PostgresSearch.ts"

/**
 * Options of the PostgreSQL store.
 *
 * @category models
 */
export interface Options {
  /** A connection URL, e.g. `postgres://user@127.0.0.1:5432/app` (usually `process.env.DATABASE_URL`). */
  readonly url: string
  /** The schema holding the store's tables (default `context_engine`); created when missing. */
  readonly schema?: string
  /** Most connections this store opens (default 4). */
  readonly maxConnections?: number
  /** Gives up connecting after this many seconds (default 10). */
  readonly connectTimeoutSeconds?: number
  /**
   * Called with the text of every statement of a write section before it is
   * sent: for tests that inject faults between statements, and for tracing.
   */
  readonly onQuery?: (query: string) => void
}

/** Rows a streaming read fetches per round trip. @category constants */
export const PAGE_ROWS = 500

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** Query text and parameters, as `pg` takes them. */
type Query = (text: string, values?: ReadonlyArray<unknown>) => Promise<pg.QueryResult>

/** What the writer stores of an entry's JSON text: its id, a checkpoint's generation and its searchable text. */
const rowsOf = (texts: ReadonlyArray<string>) => {
  const entries = texts.map((text) => JSON.parse(text) as Entry.Entry)
  return [
    entries.map((entry) => entry.id),
    entries.map((entry) => (entry.kind === "checkpoint" ? entry.checkpoint.generation : null)),
    texts,
    entries.map((entry) => PostgresSearch.searchableText(entry))
  ]
}

const connect = (options: Options, schema: string): pg.Pool => {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: (options.connectTimeoutSeconds ?? 10) * 1000,
    idleTimeoutMillis: 30_000,
    application_name: "context-engine",
    options: `-c search_path=${schema}`
  })
  // An idle connection that the server closes is dropped by the pool; it must not crash the process.
  pool.on("error", () => {})
  return pool
}

/**
 * Runs `body` in one transaction on one pooled connection. On failure the
 * transaction is rolled back; a connection that cannot even roll back (lost)
 * is destroyed instead of returned to the pool.
 */
const transact = async <A>(pool: pg.Pool, options: Options, body: (query: Query) => Promise<A>): Promise<A> => {
  const client = await pool.connect()
  const ignore = () => {}
  client.on("error", ignore)
  const query: Query = (text, values) => {
    options.onQuery?.(text)
    return client.query(text, values as Array<unknown>)
  }
  let broken = false
  try {
    await query("BEGIN")
    const result = await body(query)
    await query("COMMIT")
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      broken = true
    })
    throw error
  } finally {
    client.removeListener("error", ignore)
    client.release(broken)
  }
}

const toRecord = (row: { seq: string; json: string }): TranscriptBackend.RawRecord => ({
  line: Number(row.seq),
  text: row.json,
  torn: false
})

/**
 * Creates the PostgreSQL backend over a connected, migrated pool (for
 * {@link make} and tests).
 *
 * @category constructors
 */
export const makeBackend = (pool: pg.Pool, options: Options, describePrefix: string): TranscriptBackend.Backend => ({
  kind: "postgres",
  atomicWrites: true,
  describe: (sessionId) => `${describePrefix}#${sessionId}`,
  records: async function* (sessionId) {
    let after = 0
    for (;;) {
      const { rows } = await pool.query<{ seq: string; json: string }>(
        "SELECT seq, json FROM transcript_entries WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        [sessionId, after, PAGE_ROWS]
      )
      yield* rows.map(toRecord)
      if (rows.length < PAGE_ROWS) return
      after = Number(rows.at(-1)!.seq)
    }
  },
  exclusive: (sessionId, body) =>
    transact(pool, options, async (query) => {
      await query("INSERT INTO transcript_sessions (session_id) VALUES ($1) ON CONFLICT DO NOTHING", [sessionId])
      await query("SELECT 1 FROM transcript_sessions WHERE session_id = $1 FOR UPDATE", [sessionId])
      return body({
        readSince: async (cursor) => {
          const { rows } = await query(
            "SELECT seq, json FROM transcript_entries WHERE session_id = $1 AND seq > $2 ORDER BY seq",
            [sessionId, cursor.offset]
          )
          const last = rows.at(-1) as { seq: string } | undefined
          return {
            records: rows.map(toRecord),
            cursor: last === undefined ? cursor : { offset: Number(last.seq), line: Number(last.seq) },
            reset: false
          }
        },
        write: async (cursor, texts) => {
          const { rows } = await query(
            `INSERT INTO transcript_entries (session_id, entry_id, generation, json, search)
             SELECT $1, * FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[]) RETURNING seq`,
            [sessionId, ...rowsOf(texts)]
          )
          await query("UPDATE transcript_sessions SET updated_at = now() WHERE session_id = $1", [sessionId])
          // No argument spread: a batch may hold more rows than the call stack has room for.
          const seq = rows.reduce((max: number, row: { seq: string }) => Math.max(max, Number(row.seq)), cursor.offset)
          return { offset: seq, line: seq }
        }
      })
    }),
  listSessions: async () => {
    const { rows } = await pool.query<{ session_id: string; updated_at: Date }>(
      "SELECT session_id, updated_at FROM transcript_sessions ORDER BY session_id"
    )
    return rows.map((row) => ({ sessionId: row.session_id, updatedAt: row.updated_at.toISOString() }))
  },
  close: () => pool.end()
})

/**
 * A PostgreSQL store: the core store service, full-text search, and `close`.
 *
 * @category models
 */
export interface Made extends PostgresSearch.Searchable {
  readonly store: TranscriptStore.Service
  /** The migration version the schema is at. */
  readonly schemaVersion: number
  readonly close: () => Promise<void>
}

/**
 * Connects, migrates the schema and creates the store.
 *
 * @throws InvalidInput for a schema name that is not a lower-case SQL identifier.
 * @throws Error when the server cannot be reached or the schema is newer than this build.
 * @category constructors
 */
export const make = async (options: Options): Promise<Made> => {
  const schema = options.schema ?? "context_engine"
  if (!SCHEMA_NAME.test(schema)) {
    throw new Errors.InvalidInput({
      what: "schema",
      path: "schema",
      detail: `${schema} is not a lower-case SQL identifier`
    })
  }
  const pool = connect(options, schema)
  try {
    const client = await pool.connect()
    let schemaVersion: number
    try {
      schemaVersion = await PostgresMigrations.migrate(client, schema)
    } finally {
      client.release()
    }
    const url = new URL(options.url)
    const backend = makeBackend(pool, options, `postgres://${url.host}${url.pathname}?schema=${schema}`)
    return {
      store: BackendTranscriptStore.make(backend),
      schemaVersion,
      search: PostgresSearch.make(pool),
      close: backend.close
    }
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw error
  }
}

/**
 * A layer providing `TranscriptStore` backed by PostgreSQL; the pool closes
 * when the layer's scope closes.
 *
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<TranscriptStore.TranscriptStore, Error> =>
  Layer.effect(
    TranscriptStore.TranscriptStore,
    Effect.map(
      Effect.acquireRelease(Effect.tryPromise({ try: () => make(options), catch: (error) => error as Error }), (made) =>
        Effect.promise(made.close)
      ),
      (made) => made.store
    )
  )

/**
 * The Promise face of a PostgreSQL store, with `search`; call `close()` when done.
 *
 * @example
 * ```ts
 * const store = await PostgresTranscriptStore.open({ url: process.env.DATABASE_URL! })
 * await store.append("s1", [entry])
 * const hits = await store.search("s1", "ECONNREFUSED")
 * await store.close()
 * ```
 *
 * @category constructors
 */
export const open = async (
  options: Options
): Promise<TranscriptStore.AsyncTranscriptStore & PostgresSearch.Searchable> => {
  const made = await make(options)
  return { ...TranscriptStore.toAsync(made.store, made.close), search: made.search }
}

/**
 * Drops the store's schema and everything in it (tests, benchmarks,
 * throwaway sessions). Irreversible.
 *
 * @throws InvalidInput for a schema name that is not a lower-case SQL identifier.
 * @category destructors
 */
export const dropSchema = async (url: string, schema: string): Promise<void> => {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Errors.InvalidInput({
      what: "schema",
      path: "schema",
      detail: `${schema} is not a lower-case SQL identifier`
    })
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}

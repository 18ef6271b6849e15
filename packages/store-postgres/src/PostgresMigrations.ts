/**
 * Versioned schema migrations of the PostgreSQL transcript store. Each
 * migration has a version and runs once, in one transaction together with
 * the row recording it in `context_engine_migrations`, while the migrating
 * process holds a transaction-level advisory lock — so processes that start
 * together migrate once, and a failed migration leaves the schema as it was.
 *
 * A database migrated by a newer build (a version this build does not know)
 * is refused — `migrate` (and so `PostgresTranscriptStore.open`) rejects with
 * an `Error` naming both versions — rather than written with an older layout.
 *
 * @since 0.1.0
 */
import type { PoolClient } from "pg"

/**
 * One migration.
 *
 * @category models
 */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/**
 * Every migration, oldest first. Version 1: sessions, entries (the exact
 * stored JSON text, the entry id — unique per session, so an append can
 * never duplicate one — and the checkpoint generation — unique per session,
 * the database's own guard behind the store's compare-and-set), and a
 * `search` text column with a GIN full-text index (`simple` configuration:
 * no stemming; every run of characters other than letters, digits and `_`
 * separates words, as on the query side, so `src/db_pool.ts` matches
 * `db_pool`).
 *
 * @category constants
 */
export const MIGRATIONS: ReadonlyArray<Migration> = [
  {
    version: 1,
    name: "transcript entries, sessions and full-text search",
    statements: [
      `CREATE TABLE transcript_sessions (
        session_id text PRIMARY KEY,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE transcript_entries (
        seq bigserial PRIMARY KEY,
        session_id text NOT NULL REFERENCES transcript_sessions (session_id),
        entry_id text NOT NULL,
        generation integer,
        json text NOT NULL,
        search text NOT NULL DEFAULT '',
        search_vector tsvector GENERATED ALWAYS AS (
          to_tsvector('simple'::regconfig, regexp_replace(search, '[^[:alnum:]_]+', ' ', 'g'))
        ) STORED,
        UNIQUE (session_id, entry_id)
      )`,
      `CREATE INDEX transcript_entries_by_session ON transcript_entries (session_id, seq)`,
      `CREATE UNIQUE INDEX transcript_entries_generation ON transcript_entries (session_id, generation)
        WHERE generation IS NOT NULL`,
      `CREATE INDEX transcript_entries_search ON transcript_entries USING gin (search_vector)`
    ]
  }
]

/** Advisory lock key of migrations (any fixed 64-bit number; this one spells "ctxeng"). */
const MIGRATION_LOCK = 0x637478656e67

/**
 * Brings `schema` up to the latest version and returns it. `schema` must be
 * a validated identifier (it is quoted, not bound).
 *
 * @throws Error when the database is at a version newer than this build knows.
 * @category migrations
 */
export const migrate = async (client: PoolClient, schema: string): Promise<number> => {
  await client.query("BEGIN")
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK])
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    await client.query(`SET LOCAL search_path TO "${schema}"`)
    await client.query(`CREATE TABLE IF NOT EXISTS context_engine_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const { rows } = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM context_engine_migrations"
    )
    const current = rows[0]?.version ?? 0
    const latest = MIGRATIONS.at(-1)!.version
    if (current > latest) {
      throw new Error(`schema ${schema} is at migration ${current}; this build knows up to ${latest}`)
    }
    for (const migration of MIGRATIONS.filter((candidate) => candidate.version > current)) {
      for (const statement of migration.statements) await client.query(statement)
      await client.query("INSERT INTO context_engine_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name
      ])
    }
    await client.query("COMMIT")
    return latest
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  }
}

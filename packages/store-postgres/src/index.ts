/**
 * @context-engine/store-postgres: the PostgreSQL transcript store, for many
 * processes on one transcript. Its driver (`pg`, node-postgres) stays out of core.
 *
 * @example
 * ```ts
 * import { PostgresTranscriptStore } from "@context-engine/store-postgres"
 * const store = await PostgresTranscriptStore.open({ url: process.env.DATABASE_URL! })
 * ```
 *
 * @since 0.1.0
 */
export * as PostgresMigrations from "./PostgresMigrations.ts"
export * as PostgresSearch from "./PostgresSearch.ts"
export * as PostgresTranscriptStore from "./PostgresTranscriptStore.ts"

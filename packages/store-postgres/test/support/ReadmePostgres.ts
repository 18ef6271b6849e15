import { Entry } from "@context-engine/core"
import { PostgresTranscriptStore } from "@context-engine/store-postgres"

// Connects, and creates the schema `context_engine` and its tables (or migrates them) before it resolves.
const store = await PostgresTranscriptStore.open({ url: process.env.DATABASE_URL! })

const entries = Entry.chain(null, "2026-01-01T00:00:00.000Z", [
  { id: "m1", body: { kind: "message", message: { role: "user", content: "Why does pnpm test fail?" } } },
  { id: "m2", body: { kind: "message", message: { role: "assistant", content: "ECONNREFUSED on port 5432." } } }
])
await store.append("session-1", entries) // resolves once committed; a retried entry with the same content is skipped
const { view, checkpoint } = await store.activeView("session-1") // latest checkpoint + the tail after it
const hits = await store.search("session-1", "ECONNREFUSED") // full-text search over every stored entry
console.log(view.items.length, checkpoint?.checkpoint.generation, hits.length)
await store.close()

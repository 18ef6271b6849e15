import { Entry } from "@context-engine/core"
import { JsonlTranscriptStore } from "@context-engine/core/node"

const store = JsonlTranscriptStore.open({ directory: "./sessions" })
const entries = Entry.chain(null, "2026-01-01T00:00:00.000Z", [
  { id: "m1", body: { kind: "message", message: { role: "user", content: "Why does pnpm test fail?" } } }
])
await store.append("session-1", entries) // resolves after fsync; the same entries again are skipped
const { view, checkpoint } = await store.activeView("session-1") // latest checkpoint + the tail after it
console.log(view.items.length, checkpoint?.checkpoint.generation) // 1 undefined: no compaction yet
await store.close()

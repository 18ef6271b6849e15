/**
 * Child process of `PostgresCommitCrash.test.ts`: commits the compaction of
 * core's `compactionFixture.ts` onto a session the parent prepared, and
 * SIGKILLs itself just before sending the `killAt`-th statement of the
 * commit. Prints `statements <n>` and `done` when the commit finished first.
 *
 * `node commitKillChild.ts <url> <schema> <sessionId> <killAt> <messages>`
 */
import { compaction, conversation } from "../../../core/test/support/compactionFixture.ts"
import * as PostgresTranscriptStore from "../../src/PostgresTranscriptStore.ts"

const [url, schema, sessionId, killAtText, messagesText] = process.argv.slice(2)
const killAt = Number(killAtText)
let armed = false
let statements = 0
const store = await PostgresTranscriptStore.open({
  url: url!,
  schema: schema!,
  onQuery: () => {
    if (!armed) return
    statements++
    if (statements === killAt) process.kill(process.pid, "SIGKILL")
  }
})
await store.load(sessionId!)
armed = true
await store.commitCompaction(sessionId!, compaction(conversation(Number(messagesText)), 1, "c", 1500))
armed = false
process.stdout.write(`statements ${statements}\ndone\n`)
await store.close()

/**
 * Shell calls in the handoff's Done list say what they did: a long command
 * is shown by verbatim pieces with its long paths by their tail (the SQL of
 * a `sqlite3 /long/path/db.sqlite "…"` survives the cut), a query is a look
 * and not done work, an in-place edit by `sed -i` is an edit of its file,
 * and a throwaway script written by a here-document is told by the run that
 * follows it — in the full and in the short form of Done items.
 */
import { Checkpoint, CheckpointValidation, type Message } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import { fitToBudget } from "../src/checkpoint/Fit.ts"
import { shortDone } from "../src/checkpoint/Progress.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { CoveredItem } from "../src/Summarizer.ts"
import { calls, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const doneOf = (items: ReadonlyArray<CoveredItem>, maxTokens = 4_000): ReadonlyArray<string> =>
  ExtractiveSummarizer.summarizeSync({ covered: items, kept: [], maxTokens, countTokens: count }).progress.done

const bash = (id: string, command: string, output = "ok"): Array<Message.Message> => [
  calls({ id, name: "bash", input: { command } }),
  results({ id, name: "bash", text: output })
]

const DB = "/Users/me/Developer/BookMinder/specs/apple_books/fixtures/users/test_reader/Library/BKLibrary/lib.sqlite"

describe("shell calls in Done", () => {
  const session = withIds([
    user("Remove the duplicate rows from the fixture and fix the markdown tests."),
    ...bash("q1", `sqlite3 ${DB} "SELECT rowid, ZTITLE FROM ZBKLIBRARYASSET WHERE ZTITLE LIKE 'Extreme%'"`, "2|X\n3|X"),
    ...bash("d1", `sqlite3 ${DB} "DELETE FROM ZBKLIBRARYASSET WHERE ZTITLE LIKE 'Extreme%' AND rowid != 2"`, ""),
    ...bash("s1", "sed -i '' 's/new Markdown(\\(.*\\), 0, 0)/new Markdown(\\1, 0, 0, theme)/g' test/markdown.test.ts"),
    ...bash("s2", "sed -i '' '/undefined,$/d' test/markdown.test.ts"),
    ...bash(
      "p1",
      "cat > /tmp/fix_markdown.py << 'EOF'\nimport re\nprint('x')\nEOF\npython3 /tmp/fix_markdown.py",
      "Fixed!"
    ),
    ...bash("w1", "cd test && cat > /tmp/fix.sed << 'EOF'\ns/a/b/\nEOF\n")
  ])

  it("lists the change with its SQL, the file the sed runs edited and the script's run — not the query nor the script's writing", () => {
    expect(doneOf(session)).toEqual([
      `ran \`sqlite3\` …\`/BKLibrary/lib.sqlite "DELETE FROM ZBKLIBRARYASSET WHERE ZTITLE LIKE\`…`,
      "edited `test/markdown.test.ts` (2 edits)",
      "ran `python3 /tmp/fix_markdown.py` → Fixed!"
    ])
  })

  it("the short form shortens the command's paths before it cuts, and every quote is in the transcript", () => {
    const short = doneOf(session).map(shortDone)
    expect(short[0]).toBe(`ran \`sqlite3\` …\`/BKLibrary/lib.sqlite "DELETE FROM ZBKLIBRARYASSET WHERE\`…`)
    const source = session.map((item) => CheckpointValidation.messageText(item.message)).join("\n")
    for (const item of short) for (const [, quoted] of item.matchAll(/`([^`]*)`/g)) expect(source).toContain(quoted)
  })
})

describe("the short form of Done under a tight budget", () => {
  it("runs the short form no longer tells apart are listed once, at the newest, with their count", () => {
    const query = (order: string) =>
      `ran \`sqlite3 ${DB} "SELECT rowid, ZTITLE, ZAUTHOR FROM ZBKLIBRARYASSET ORDER BY ${order}"\` → 2 rows`
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: "Clean the fixture",
      progress: {
        done: [query("ZTITLE"), "edited `src/a.py`", query("ZAUTHOR"), "edited `src/b.py`"],
        inProgress: [],
        blocked: []
      },
      nextSteps: ["continue"]
    }
    expect(fitToBudget(content, 120, count).progress.done).toEqual([
      "edited `src/a.py`",
      `ran \`sqlite3\` …\`/BKLibrary/lib.sqlite "SELECT rowid, ZTITLE, ZAUTHOR FRO\`… (2 times)`,
      "edited `src/b.py`"
    ])
  })
})

const messagesOf = async (file: string): Promise<Array<CoveredItem>> =>
  (await Import.importFilePromise(transcript(file))).transcript.entries.flatMap((entry) =>
    entry.kind === "message" ? [{ entryId: entry.id, message: entry.message }] : []
  )

describe("real transcripts", () => {
  it("pi: the sed -i runs on markdown.test.ts are its edits, the fix scripts are told by their runs", async () => {
    const done = doneOf((await messagesOf("pi/large-session.jsonl")).slice(0, 200), 100_000)
    expect(done.filter((item) => /sed -i|cat > \/tmp/.test(item))).toEqual([])
    expect(done).toContainEqual(
      expect.stringMatching(/^edited `packages\/tui\/test\/markdown\.test\.ts` \(\d+ edits\)/)
    )
    expect(done).toContain("ran `python3 /tmp/fix_markdown3.py` → Fixed!")
  })

  it("Gemini CLI: the DELETE on the real library shows its SQL; the path no longer eats the line", async () => {
    // The session's fixture repair and its repetition on the real library (gem:3600 – gem:3900).
    const repair = (await messagesOf("gemini-cli-console/bookminder-day-016.md")).filter((item) => {
      const at = Number.parseInt(item.entryId.replace(/^\D+/, ""), 10)
      return at >= 3600 && at <= 3900
    })
    const done = doneOf(repair).map(shortDone)
    expect(done).toContain(`ran \`sqlite3\` …\`/BKLibrary/BKLibrary-1-091020131601.sqlite "DELETE FROM\`…`)
  })
})

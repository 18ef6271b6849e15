import { Checkpoint, CheckpointValidation, type Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"

const covered: Array<Message.Message> = [
  { role: "user", content: "Deploy the service described in config/service.yaml to port 8080" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "config/service.yaml" } }]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "port: 8080" } }
    ]
  }
]

const good = (): Checkpoint.CheckpointContent => ({
  ...Checkpoint.emptyContent(),
  goal: "Deploy the service described in config/service.yaml",
  progress: { done: ["read config/service.yaml"], inProgress: [], blocked: [] },
  nextSteps: ["deploy it on port 8080"],
  pendingUserAsks: ["Deploy the service described in config/service.yaml to port 8080"],
  identifiers: {
    paths: ["config/service.yaml"],
    ids: [],
    hashes: [],
    urls: [],
    ports: ["8080"],
    commands: [],
    errors: []
  },
  filesRead: ["config/service.yaml"]
})

const wrap = (content: Checkpoint.CheckpointContent | undefined, text?: string): Checkpoint.Checkpoint => ({
  id: "cp1",
  generation: 1,
  coveredRange: { fromEntryId: null, toEntryId: "e2" },
  firstKeptEntryId: null,
  tokensBefore: 100,
  tokensAfter: 10,
  summarizer: { kind: "extractive", promptVersion: "test" },
  ...(content ? { content } : {}),
  ...(text !== undefined ? { text } : {}),
  createdAt: new Date(0).toISOString()
})

const run = (checkpoint: Checkpoint.Checkpoint, extra: Partial<CheckpointValidation.ValidationInput> = {}) =>
  CheckpointValidation.validate({ checkpoint, covered, checkpointTokens: 50, replacedTokens: 500, ...extra })

const failed = (report: Checkpoint.ValidationReport) => CheckpointValidation.failedChecks(report)

describe("CheckpointValidation.validate", () => {
  it("accepts a complete checkpoint", () => {
    const report = run(wrap(good()), { requestTokens: 900, budgetTokens: 1000 })
    expect(failed(report)).toEqual([])
    expect(report.identifierRetention).toBe(1)
  })

  it("reports empty required sections", () => {
    expect(failed(run(wrap({ ...good(), goal: " ", nextSteps: [] })))).toContain("required-sections")
  })

  it("rejects error text as a summary", () => {
    expect(failed(run(wrap(undefined, "Error: 429 rate limit exceeded")))).toContain("not-error-text")
  })

  it("a goal quoting the user's own words is not error text, a refusal in the goal still is", () => {
    const said: Array<Message.Message> = [
      ...covered,
      {
        role: "user",
        content: "I cannot find the old log because the terminal only keeps the last one, look in .claude"
      }
    ]
    const quoting = { ...good(), goal: `${said[3]!.content as string} (e3)` }
    expect(failed(run(wrap(quoting), { covered: said }))).not.toContain("not-error-text")
    const refusal = { ...good(), goal: "I cannot summarize this conversation, it contains private data." }
    expect(failed(run(wrap(refusal), { covered: said }))).toContain("not-error-text")
  })

  it("reports each lost identifier and the retention ratio", () => {
    const lossy = {
      ...good(),
      goal: "Deploy the service",
      pendingUserAsks: ["Deploy the service"],
      nextSteps: ["deploy"],
      progress: { done: ["read the config"], inProgress: [], blocked: [] },
      identifiers: { ...good().identifiers, paths: [], ports: [] },
      filesRead: []
    }
    const report = run(wrap(lossy))
    expect(report.missing).toEqual(expect.arrayContaining(["identifier:config/service.yaml", "identifier:8080"]))
    expect(report.identifierRetention).toBe(0)
    expect(failed(report)).toContain("identifier-retention")
  })

  it("flags files and actions that are not in the transcript", () => {
    const invented = {
      ...good(),
      filesModified: ["src/secret.ts"],
      progress: { done: ["edited lib/other.ts"], inProgress: [], blocked: [] }
    }
    const report = run(wrap(invented))
    expect(failed(report)).toEqual(expect.arrayContaining(["no-invented-files", "no-invented-actions"]))
    expect(report.missing).toEqual(expect.arrayContaining(["file:src/secret.ts", "action:lib/other.ts"]))
  })

  it("requires the summary to be smaller and the next request to fit", () => {
    const report = run(wrap(good()), {
      checkpointTokens: 600,
      replacedTokens: 500,
      requestTokens: 1200,
      budgetTokens: 1000
    })
    expect(failed(report)).toEqual(expect.arrayContaining(["smaller-than-replaced", "next-request-fits"]))
  })

  it("requires the latest user ask to be represented", () => {
    const report = run(
      wrap({
        ...Checkpoint.emptyContent(),
        goal: "ship",
        progress: { done: ["read it"], inProgress: [], blocked: [] },
        nextSteps: ["go"]
      })
    )
    expect(failed(report)).toContain("latest-user-ask")
  })

  it("validates text-only (imported) checkpoints by their headings", () => {
    const text =
      "## Goal\nDeploy the service described in config/service.yaml to port 8080\n## Progress\n- read it\n## Next Steps\n1. deploy"
    expect(failed(run(wrap(undefined, text)))).toEqual([])
    expect(failed(run(wrap(undefined, "Deploy config/service.yaml on 8080")))).toContain("required-sections")
  })
})

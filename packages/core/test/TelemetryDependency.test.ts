import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { repoRoot } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"

/**
 * Core's `@opentelemetry/api` range must admit the API copy an application
 * registers its tracer provider with. The API keeps one global per major
 * version and hands a library whose API is newer than the registered one a
 * no-op tracer; the OpenTelemetry JS maintainers therefore ask libraries for
 * a caret range from the lowest version they need
 * (open-telemetry/opentelemetry-js#4832). QA session 4: with `^1.10.0`,
 * `npm i @opentelemetry/sdk-trace-base` (peer `>=1.3.0 <1.10.0`) installed
 * API 1.9.1 for the app and a nested 1.10.0 for core, and no span arrived.
 */
const version = (text: string): Array<number> => text.split(".").map(Number)
const below = (a: Array<number>, b: Array<number>): boolean => {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0)
  return false
}

describe("@opentelemetry/api dependency", () => {
  it("is a caret range from a version the OpenTelemetry SDK's peer range admits", () => {
    const core = JSON.parse(readFileSync(join(repoRoot, "packages/core/package.json"), "utf8"))
    const range: string = core.dependencies["@opentelemetry/api"]
    expect(range).toMatch(/^\^\d+\.\d+\.\d+$/)
    const lowest = version(range.slice(1))
    const require = createRequire(join(repoRoot, "package.json"))
    const sdk = JSON.parse(readFileSync(require.resolve("@opentelemetry/sdk-trace-base/package.json"), "utf8"))
    const peer: string = sdk.peerDependencies["@opentelemetry/api"]
    const lower = /^>=(\d+\.\d+\.\d+)/.exec(peer)?.[1]
    const upper = /<(\d+\.\d+\.\d+)$/.exec(peer)?.[1]
    expect(lower).toBeDefined()
    expect(below(lowest, version(lower!))).toBe(false)
    if (upper !== undefined) expect(below(lowest, version(upper))).toBe(true)
  })
})

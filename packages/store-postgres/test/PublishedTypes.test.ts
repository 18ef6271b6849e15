import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"

/**
 * The published declarations (`dist/*.d.ts`) keep the `pg` types the source
 * uses (`makeBackend(pool: pg.Pool, …)`, `Pool`, `PoolClient`), and `pg`
 * ships no types of its own: `@types/pg` must be a dependency, not a
 * devDependency. QA session 4: a TypeScript app installing the tarball with
 * `skipLibCheck: false` failed with TS7016 "Could not find a declaration file
 * for module 'pg'" in PostgresTranscriptStore.d.ts, PostgresSearch.d.ts and
 * PostgresMigrations.d.ts (TypeScript handbook, "Publishing": dependencies
 * of your declarations go in `dependencies`).
 */
describe("store-postgres package", () => {
  it("has @types/pg as a dependency while its sources use pg types", () => {
    const dir = join(repoRoot, "packages/store-postgres")
    const sources = readdirSync(join(dir, "src")).filter((file) => file.endsWith(".ts"))
    const usesPg = sources.some((file) => /from "pg"/.test(readFileSync(join(dir, "src", file), "utf8")))
    expect(usesPg).toBe(true)
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
      devDependencies?: Record<string, string>
    }
    expect(manifest.dependencies["@types/pg"]).toBeDefined()
    expect(manifest.devDependencies?.["@types/pg"]).toBeUndefined()
  })
})

/**
 * Child of `TokenizerLoading.test.ts`: records every rank table module
 * resolved (ESM `import` and `require` alike, through `module.registerHooks`),
 * then imports the core main entry and counts with one encoding, then the
 * other, printing one JSON line per step: `{ step, tables }`.
 */
import { registerHooks } from "node:module"

const tables: Array<string> = []
registerHooks({
  resolve: (specifier, context, next) => {
    const resolved = next(specifier, context)
    const table = /bpeRanks\/(\w+)\.js$/.exec(resolved.url)?.[1]
    if (table !== undefined && !tables.includes(table)) tables.push(table)
    return resolved
  }
})
const print = (step: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ step, tables: [...tables], ...extra })}\n`)

const { Tokenizers } = await import("../../src/index.ts")
print("imported")
print("o200k_base", { count: Tokenizers.get("o200k_base").count("hello world") })
print("cl100k_base", { count: Tokenizers.get("cl100k_base").count("hello world") })

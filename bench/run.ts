/**
 * `pnpm bench`: runs every `bench/*.bench.ts` module (each exports a default
 * async function that prints its own table of ratios against peers). Pass
 * names to run a subset: `pnpm bench measure pipeline`.
 */
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const wanted = process.argv.slice(2)
const files = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.startsWith(name)))
  .sort()

for (const file of files) {
  console.log(`\n=== ${file} ===`)
  const module = (await import(join(here, file))) as { default: () => Promise<void> }
  await module.default()
}

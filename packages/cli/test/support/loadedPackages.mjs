// `node --import ./loadedPackages.mjs …`: on exit, prints to stderr one line `LOADED <json>` with every package
// the process resolved (ESM imports and require alike, through module.registerHooks), so a test can assert what a
// command loads.
import { registerHooks } from "node:module"

const packages = new Set()
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//.exec(resolved.url)?.[1]
    const workspace = /\/packages\/([^/]+)\/(?:src|dist)\//.exec(resolved.url)?.[1]
    if (pkg !== undefined) packages.add(pkg)
    if (workspace !== undefined) packages.add(`@context-engine/${workspace}`)
    return resolved
  }
})
process.on("exit", () => {
  process.stderr.write(`\nLOADED ${JSON.stringify({ packages: [...packages].sort() })}\n`)
})

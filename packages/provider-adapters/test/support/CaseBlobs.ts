/**
 * The shared cases' `blobRule` (C20): `{{blob:NAME}}` placeholders expanded
 * into generated base64 payloads and log lines, each checked against the
 * case's `sha256`.
 */
import { createHash } from "node:crypto"

export interface BlobSpec {
  readonly kind: "base64" | "lines"
  readonly alphabet?: "base64" | "base64url"
  readonly prefix?: string
  readonly seed?: string
  readonly length?: number
  readonly count?: number
  readonly templates?: ReadonlyArray<string>
  readonly sha256: string
}

const sha256 = (data: string | Buffer): Buffer => createHash("sha256").update(data).digest()

const base64Blob = (spec: BlobSpec): string => {
  const prefix = spec.prefix ?? ""
  const bytesNeeded = ((spec.length! - prefix.length) / 4) * 3
  const chunks: Array<Buffer> = []
  let total = 0
  for (let index = 0; total < bytesNeeded; index++) {
    const chunk = sha256(`${spec.seed}:${index}`)
    chunks.push(chunk)
    total += chunk.length
  }
  const encoded = Buffer.concat(chunks)
    .subarray(0, bytesNeeded)
    .toString(spec.alphabet === "base64url" ? "base64url" : "base64")
  return prefix + encoded
}

const clock = (seconds: number): string => {
  const total = 9 * 3600 + seconds
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${pad(Math.floor(total / 3600) % 24)}:${pad(Math.floor(total / 60) % 60)}:${pad(total % 60)}`
}

const linesBlob = (spec: BlobSpec): string => {
  const templates = spec.templates!
  const lines: Array<string> = []
  for (let i = 1; i <= spec.count!; i++)
    lines.push(
      templates[(i - 1) % templates.length]!.replaceAll("{i}", String(i))
        .replaceAll("{a}", String((i * 7919) % 1000))
        .replaceAll("{b}", String((i * 104729) % 100000))
        .replaceAll("{t}", clock(11 * i))
    )
  return lines.join("\n")
}

/** The text of one blob; throws when it does not match the case's sha256. */
export const blobText = (name: string, spec: BlobSpec): string => {
  const text = spec.kind === "base64" ? base64Blob(spec) : linesBlob(spec)
  const digest = sha256(Buffer.from(text, "utf8")).toString("hex")
  if (digest !== spec.sha256) throw new Error(`blob ${name}: sha256 ${digest} is not the case's ${spec.sha256}`)
  return text
}

/** A deep copy of `value` with every `{{blob:NAME}}` replaced. */
export const expandBlobs = <A>(value: A, blobs: Readonly<Record<string, BlobSpec>>): A => {
  const texts = new Map<string, string>()
  const text = (name: string) => {
    let found = texts.get(name)
    if (found === undefined) {
      found = blobText(name, blobs[name]!)
      texts.set(name, found)
    }
    return found
  }
  const visit = (node: unknown): unknown => {
    if (typeof node === "string")
      return node.replace(/\{\{blob:([A-Za-z0-9_-]+)\}\}/g, (_match, name: string) => text(name))
    if (Array.isArray(node)) return node.map(visit)
    if (typeof node === "object" && node !== null)
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v)]))
    return node
  }
  return visit(value) as A
}

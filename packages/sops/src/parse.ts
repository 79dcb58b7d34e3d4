// Parsing and printing of sops stores (YAML, and JSON through the same parser: YAML is a superset).
import { type Document, type Node, isMap, isScalar, isSeq, parseAllDocuments } from 'yaml'
import { SopsError } from './errors.js'

export type SopsFormat = 'yaml' | 'json'

export function formatFromName(file: string): SopsFormat {
  return /\.json$/i.test(file) ? 'json' : 'yaml'
}

/**
 * Parses every document. Integers become bigints so int and float stay distinct (sops types them
 * apart) and large ints keep their digits. Error messages carry only the position, never source text.
 */
export function parseDocuments(text: string, file: string): Document[] {
  let docs: ReturnType<typeof parseAllDocuments>
  try {
    docs = parseAllDocuments(text, { intAsBigInt: true, prettyErrors: false, uniqueKeys: true })
  } catch {
    throw new SopsError('Malformed', file, 'cannot be parsed as YAML or JSON')
  }
  const list = Array.isArray(docs) ? docs : [docs]
  for (const doc of list) {
    const err = doc.errors[0]
    if (err) {
      const line = err.linePos?.[0]
      const where = line ? ` (line ${line.line}, column ${line.col})` : ''
      throw new SopsError('Malformed', file, `not valid ${formatFromName(file) === 'json' ? 'JSON' : 'YAML'}: ${err.code}${where}`)
    }
  }
  return list
}

export interface SerializeOptions {
  format: SopsFormat
}

/** Prints documents like sops does: YAML with 4-space indentation, JSON with tabs. */
export function serialize(docs: readonly Document[], { format }: SerializeOptions): string {
  if (format === 'json') {
    const first = docs[0]
    return `${jsonNode(first?.contents ?? null, '')}\n`
  }
  return docs
    .map((d, i) => {
      const s = d.toString({ indent: 4, indentSeq: true, lineWidth: 0 })
      return i > 0 && !s.startsWith('---') ? `---\n${s}` : s
    })
    .join('')
}

/** JSON in node order (never via JS objects, which would move "8006"-like keys first). */
function jsonNode(node: unknown, indent: string): string {
  const inner = `${indent}\t`
  if (node === null || node === undefined) return 'null'
  if (isMap(node)) {
    if (node.items.length === 0) return '{}'
    const parts = node.items.map((p) => {
      const key = isScalar(p.key) ? String(p.key.value) : String(p.key)
      return `${inner}${JSON.stringify(key)}: ${jsonNode(p.value, inner)}`
    })
    return `{\n${parts.join(',\n')}\n${indent}}`
  }
  if (isSeq(node)) {
    if (node.items.length === 0) return '[]'
    return `[\n${node.items.map((n) => `${inner}${jsonNode(n, inner)}`).join(',\n')}\n${indent}]`
  }
  if (isScalar(node)) return jsonScalar(node.value)
  throw new Error(`cannot print ${String((node as Node).constructor?.name)} as JSON`)
}

function jsonScalar(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : JSON.stringify(String(v))
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  return JSON.stringify(String(v))
}

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
      throw new SopsError(
        'Malformed',
        file,
        `not valid ${formatFromName(file) === 'json' ? 'JSON' : 'YAML'}: ${err.code}${where}`,
      )
    }
  }
  return list
}

export interface SerializeOptions {
  format: SopsFormat
  /** YAML indentation (default 4, as sops writes) and whether lists under a key are indented (default yes). */
  indent?: number
  indentSeq?: boolean
  /** JSON indentation unit (default a tab, as sops writes). */
  jsonIndent?: string
}

/** The indentation an existing file uses, so that rewriting it changes as few lines as possible. */
export function detectStyle(text: string, format: SopsFormat): Omit<SerializeOptions, 'format'> {
  const lines = text.split(/\r?\n/)
  if (format === 'json') {
    const m = lines.map((l) => /^([ \t]+)"/.exec(l)).find(Boolean)
    return m ? { jsonIndent: m[1] } : {}
  }
  const style: Omit<SerializeOptions, 'format'> = {}
  for (let i = 0; i + 1 < lines.length; i++) {
    const key = /^( *)[^\s#-][^#]*:\s*$/.exec(lines[i] as string)
    const next = /^( *)(- )?\S/.exec(lines[i + 1] as string)
    if (!key || !next) continue
    const depth = (next[1] as string).length - (key[1] as string).length
    if (next[2] === undefined && depth > 0 && style.indent === undefined) style.indent = depth
    if (next[2] !== undefined && style.indentSeq === undefined) style.indentSeq = depth > 0
    if (style.indent !== undefined && style.indentSeq !== undefined) break
  }
  return style
}

/** Prints documents like sops does: YAML with 4-space indentation, JSON with tabs (or the given style). */
export function serialize(docs: readonly Document[], opts: SerializeOptions): string {
  if (opts.format === 'json') {
    const first = docs[0]
    return `${jsonNode(first?.contents ?? null, '', opts.jsonIndent ?? '\t')}\n`
  }
  return docs
    .map((d, i) => {
      const s = d.toString({ indent: opts.indent ?? 4, indentSeq: opts.indentSeq ?? true, lineWidth: 0 })
      return i > 0 && !s.startsWith('---') ? `---\n${s}` : s
    })
    .join('')
}

/** JSON in node order (never via JS objects, which would move "8006"-like keys first). */
function jsonNode(node: unknown, indent: string, unit: string): string {
  const inner = `${indent}${unit}`
  if (node === null || node === undefined) return 'null'
  if (isMap(node)) {
    if (node.items.length === 0) return '{}'
    const parts = node.items.map((p) => {
      const key = isScalar(p.key) ? String(p.key.value) : String(p.key)
      return `${inner}${JSON.stringify(key)}: ${jsonNode(p.value, inner, unit)}`
    })
    return `{\n${parts.join(',\n')}\n${indent}}`
  }
  if (isSeq(node)) {
    if (node.items.length === 0) return '[]'
    return `[\n${node.items.map((n) => `${inner}${jsonNode(n, inner, unit)}`).join(',\n')}\n${indent}]`
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

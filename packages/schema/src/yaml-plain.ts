/**
 * A fast reader for the plain block YAML that manifests are almost always written in: block mappings and
 * sequences, one-line scalars, one-line lists of scalars (`[a, b]`), comments, `---` between documents. It answers only when it is sure to give
 * what the `yaml` library gives (the parser of record, which reads everything else, and every file this
 * one declines); anything outside the subset (flow collections, anchors, tags, block or multi-line
 * scalars, escapes, tabs, non-ASCII, duplicate keys, numbers other than plain integers...) returns
 * undefined. A property test compares the two on generated and mutated documents.
 *
 * Why it exists: on a cold process the library costs about 0.3 ms per manifest (most of `proxops validate`
 * on 1,000 manifests), this reader a small fraction of that.
 */
import type { Position } from './yaml.js'

export interface PlainDocument {
  value: unknown
  /** where the document's content starts (its first key or `-`) */
  start: Position
}

interface Line {
  /** 1-based line number */
  no: number
  indent: number
  /** the line without its indentation */
  text: string
}

/** Thrown inside the reader when the input leaves the subset; never escapes readPlainYaml. */
class Decline extends Error {}

const decline = (): never => {
  throw new Decline()
}

// Printable ASCII and newlines only: no tabs, CR, BOM or characters yaml treats specially.
const PLAIN_TEXT = /^[\x20-\x7e\n]*$/
const KEY = /^([A-Za-z0-9_][A-Za-z0-9_./~-]*):(?: +|$)/
// The yaml core schema's tests (yaml 2.x, schema "core", YAML 1.2).
const NULL = /^(?:~|[Nn]ull|NULL)?$/
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/
const NUMBER_LIKE = [
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
]
// Integers that are exactly a JavaScript number and written the one way yaml prints them back.
const SAFE_INT = /^-?(?:0|[1-9][0-9]{0,14})$/
// Characters that cannot start a plain scalar (or start one only in ways this reader does not follow).
const NOT_PLAIN_START = new Set([...'[]{}#&*!|>\'"%@`,?:-'])

/** The documents of `text`, or undefined when it uses anything outside the plain block subset. */
export function readPlainYaml(text: string): PlainDocument[] | undefined {
  if (!PLAIN_TEXT.test(text)) return undefined
  try {
    return readStream(text)
  } catch (err) {
    if (err instanceof Decline) return undefined
    throw err
  }
}

function readStream(text: string): PlainDocument[] {
  const docs: Line[][] = [[]]
  let no = 0
  for (const raw of text.split('\n')) {
    no++
    if (raw === '---') {
      docs.push([])
      continue
    }
    let indent = 0
    while (raw.charCodeAt(indent) === 32) indent++
    if (indent === raw.length || raw[indent] === '#') continue // blank or comment
    if (indent === 0 && (raw.startsWith('---') || raw.startsWith('...') || raw.startsWith('%'))) decline()
    docs[docs.length - 1]!.push({ no, indent, text: raw.slice(indent) })
  }
  // a leading `---` opens the first document; any other empty document is left to the library
  if (docs[0]!.length === 0 && docs.length > 1) docs.shift()
  return docs.map((lines) => {
    if (lines.length === 0 || lines[0]!.indent !== 0) decline()
    const reader = new BlockReader(lines)
    const value = reader.node(0)
    if (reader.at < lines.length) decline()
    return { value, start: { line: lines[0]!.no, column: 1 } }
  })
}

class BlockReader {
  at = 0
  constructor(private readonly lines: Line[]) {}

  private peek(): Line | undefined {
    return this.lines[this.at]
  }

  /** the mapping or sequence whose first line is the current one, at exactly `indent` */
  node(indent: number): unknown {
    const line = this.peek()!
    return isEntry(line.text) ? this.sequence(indent) : this.mapping(indent, line.text)
  }

  private sequence(indent: number): unknown[] {
    const items: unknown[] = []
    for (let line = this.peek(); line && line.indent === indent && isEntry(line.text); line = this.peek()) {
      const rest = line.text.slice(1).replace(/^ +/, '')
      if (rest === '' || isEntry(rest)) decline()
      const inner = indent + line.text.length - rest.length
      if (KEY.test(rest)) {
        items.push(this.mapping(inner, rest))
      } else {
        this.at++
        items.push(scalar(rest))
        this.noContinuation(indent)
      }
    }
    const next = this.peek()
    if (next && next.indent > indent) decline()
    return items
  }

  /** `first` is the text of the current line from the mapping's first key (it may follow a `- `) */
  private mapping(indent: number, first: string): Record<string, unknown> {
    const map: Record<string, unknown> = {}
    let text: string | undefined = first
    while (text !== undefined) {
      const m = KEY.exec(text) ?? decline()
      const key = m[1]!
      // keys must read as strings: `1: x` or `true: x` would become "1" or "true" only by conversion
      if (
        key.length > 1000 ||
        key === '__proto__' ||
        Object.hasOwn(map, key) ||
        (mayResolve(key) && typeof resolvePlain(key) !== 'string')
      )
        decline()
      this.at++
      const rest = stripComment(text.slice(m[0].length))
      if (rest !== '') {
        map[key] = scalar(rest)
        this.noContinuation(indent)
      } else {
        const next = this.peek()
        if (next && next.indent > indent) map[key] = this.node(next.indent)
        else if (next && next.indent === indent && isEntry(next.text)) map[key] = this.sequence(indent)
        else map[key] = null
      }
      const next = this.peek()
      if (next && next.indent > indent) decline()
      text = next && next.indent === indent && !isEntry(next.text) ? next.text : undefined
    }
    return map
  }

  /** a one-line scalar must not be followed by a more indented line (a continuation this reader skips) */
  private noContinuation(indent: number): void {
    const next = this.peek()
    if (next && next.indent > indent) decline()
  }
}

function isEntry(text: string): boolean {
  return text === '-' || text.startsWith('- ')
}

/** `value # comment` without the comment, for a value that is not quoted */
function stripComment(rest: string): string {
  if (rest.startsWith('#')) return ''
  if (rest.startsWith("'") || rest.startsWith('"')) return rest
  const hash = rest.indexOf(' #')
  return (hash < 0 ? rest : rest.slice(0, hash)).trimEnd()
}

function scalar(rest: string): unknown {
  const first = rest[0]!
  if (first === "'" || first === '"') return quoted(rest)
  const value = stripComment(rest)
  if (first === '[') return flowList(value)
  if (first === '-' && SAFE_INT.test(value)) return Number(value)
  if (NOT_PLAIN_START.has(first) || value.includes(': ') || value.endsWith(':') || value.includes(' #')) decline()
  return mayResolve(value) ? resolvePlain(value) : value
}

/**
 * Whether a plain scalar could be anything but a string: only text starting like null (`~`, `n`, `N`), a
 * boolean (`t`, `T`, `f`, `F`) or a number (a digit, a sign, `.`) can. Saves the tests below for most values.
 */
function mayResolve(value: string): boolean {
  const c = value.charCodeAt(0)
  return value === '' || (c >= 48 && c <= 57) || 'nN~tTfF+-.'.includes(value[0]!)
}

/** the core schema's reading of a plain scalar (declining the numbers this reader does not convert) */
function resolvePlain(value: string): unknown {
  if (NULL.test(value)) return null
  if (BOOL.test(value)) return value[0] === 't' || value[0] === 'T'
  if (SAFE_INT.test(value)) return Number(value)
  if (NUMBER_LIKE.some((re) => re.test(value))) decline()
  return value
}

/**
 * `[a, b, 'c']` on one line: scalars only, no nested collections, no empty entries or trailing comma, no
 * commas inside quotes (each entry is split at commas first).
 */
function flowList(value: string): unknown[] {
  if (!value.endsWith(']')) decline()
  const inner = value.slice(1, -1)
  if (inner.trim() === '') return []
  return inner.split(',').map((raw) => {
    const item = raw.trim()
    if (item === '' || /[[\]{}:#]/.test(item)) decline()
    const q = item[0]
    if (q === "'" || q === '"') {
      if (item.length < 2 || !item.endsWith(q)) decline()
      return quoted(item)
    }
    if (item.includes("'") || item.includes('"')) decline()
    return scalar(item)
  })
}

/** a quoted scalar that closes on its line, followed by nothing or a comment */
function quoted(rest: string): string {
  const q = rest[0]!
  let out = ''
  let i = 1
  for (;;) {
    const close = rest.indexOf(q, i)
    if (close < 0) decline()
    out += rest.slice(i, close)
    if (q === "'" && rest[close + 1] === "'") {
      out += "'"
      i = close + 2
      continue
    }
    i = close + 1
    break
  }
  if (q === '"' && out.includes('\\')) decline()
  const after = rest.slice(i)
  if (after.trim() !== '' && !/^ +#/.test(after)) decline()
  return out
}

/**
 * Parses one config file (`proxops.yaml`, `clusters/<name>/config.yaml` or a `--config` file) into a
 * typed, still unmerged RawConfigFile. Unknown keys and wrong types fail closed with the file, line and
 * field named. Pure: the caller reads the file.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml'
import { CliError } from '../errors.js'

export interface RawClusterEntry {
  baseUrl?: string
  nodes?: string[]
  secretsFile?: string
  secrets?: {
    pve?: { user?: string; tokenId?: string; token?: string; password?: string }
    git?: { token?: string }
  }
  auth?: string
  tls?: { ca?: string; fingerprint?: string; insecure?: boolean }
  disruption?: string
}

export interface RawConfigFile {
  /** absolute path of the file */
  file: string
  log?: { level?: string }
  pve?: {
    auth?: string
    user?: string
    tokenId?: string
    token?: string
    tokenValue?: string
    password?: string
    caFile?: string
    clusters?: Record<string, RawClusterEntry & { line?: number }>
  }
  git?: { url?: string; branch?: string; token?: string; path?: string }
  reconcile?: {
    pollInterval?: string
    taskTimeout?: string
    pruneBudget?: string
    pruneWindow?: { max?: string; period?: string }
    shutdownTimeout?: string
    disruption?: string
  }
  listen?: string
  dataDir?: string
  /** line of a dotted field, for error messages of later stages */
  lines: Readonly<Record<string, number>>
}

type Shape = { [key: string]: Shape | 'string' | 'boolean' | 'strings' | 'scalar' | 'clusters' }

const CLUSTER: Shape = {
  'base-url': 'string',
  nodes: 'strings',
  'secrets-file': 'string',
  secrets: {
    pve: { user: 'string', 'token-id': 'string', token: 'string', password: 'string' },
    git: { token: 'string' },
  },
  auth: 'string',
  tls: { ca: 'string', fingerprint: 'string', insecure: 'boolean' },
  disruption: 'string',
}

const FILE: Shape = {
  log: { level: 'string' },
  pve: {
    auth: 'string',
    user: 'string',
    'token-id': 'string',
    token: 'string',
    'token-value': 'string',
    password: 'string',
    'ca-file': 'string',
    clusters: 'clusters',
  },
  git: { url: 'string', branch: 'string', token: 'string', path: 'string' },
  reconcile: {
    'poll-interval': 'scalar',
    'task-timeout': 'scalar',
    'prune-budget': 'scalar',
    'prune-window': { max: 'scalar', period: 'scalar' },
    'shutdown-timeout': 'scalar',
    disruption: 'string',
  },
  listen: 'string',
  'data-dir': 'string',
}

export function parseConfigFile(file: string, text: string): RawConfigFile {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true })
  const first = doc.errors[0]
  if (first) {
    const line = first.linePos?.[0]?.line
    throw new CliError(
      'CONFIG_PARSE',
      `malformed YAML: ${(first.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}`,
      line ? { file, line } : { file },
    )
  }
  const lines: Record<string, number> = {}
  const lineOf = (node: Node | null | undefined): number | undefined =>
    node?.range ? lineCounter.linePos(node.range[0]).line : undefined
  const fail = (field: string, node: Node | null | undefined, message: string): never => {
    const line = lineOf(node)
    throw new CliError('CONFIG_INVALID', message, line ? { file, line, field } : { file, field })
  }

  const walk = (node: Node | null | undefined, shape: Shape, prefix: string): Record<string, unknown> => {
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return {}
    if (!isMap(node)) return fail(prefix || '(document)', node, 'must be a mapping')
    const out: Record<string, unknown> = {}
    for (const pair of node.items as Pair<Node, Node>[]) {
      const key = isScalar(pair.key) ? String(pair.key.value) : ''
      const field = prefix ? `${prefix}.${key}` : key
      const want = shape[key]
      if (want === undefined) {
        fail(field, pair.key, `unknown field (allowed: ${Object.keys(shape).join(', ')})`)
      }
      const line = lineOf(pair.key)
      if (line) lines[field] = line
      const value = pair.value
      const name = camel(key)
      if (want === 'string') out[name] = scalar(field, value, 'string')
      else if (want === 'scalar') out[name] = scalar(field, value, 'scalar')
      else if (want === 'boolean') out[name] = scalar(field, value, 'boolean')
      else if (want === 'strings') out[name] = strings(field, value)
      else if (want === 'clusters') out[name] = clusters(field, value)
      else out[name] = walk(value, want as Shape, field)
    }
    return out
  }

  const scalar = (field: string, node: Node | null | undefined, want: 'string' | 'boolean' | 'scalar'): unknown => {
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return undefined
    if (!isScalar(node)) return fail(field, node, `must be a ${want === 'boolean' ? 'boolean' : 'single value'}`)
    const value = node.value
    if (want === 'boolean') {
      if (typeof value !== 'boolean') return fail(field, node, 'must be true or false')
      return value
    }
    if (want === 'string' && typeof value !== 'string') return fail(field, node, 'must be a string (quote it)')
    if (typeof value !== 'string' && typeof value !== 'number') return fail(field, node, 'must be a string or a number')
    return String(value)
  }

  const strings = (field: string, node: Node | null | undefined): string[] | undefined => {
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return undefined
    if (!isSeq(node)) return fail(field, node, 'must be a list of strings')
    return node.items.map((item, index) => {
      if (!isScalar(item) || typeof item.value !== 'string')
        return fail(`${field}[${index}]`, item as Node, 'must be a string')
      return item.value
    })
  }

  const clusters = (field: string, node: Node | null | undefined): Record<string, unknown> => {
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return {}
    if (!isMap(node)) return fail(field, node, 'must be a mapping of cluster name to cluster entry')
    const out: Record<string, unknown> = {}
    for (const pair of node.items as Pair<Node, Node>[]) {
      const name = isScalar(pair.key) ? String(pair.key.value) : ''
      const entry = walk(pair.value, CLUSTER, `${field}.${name}`)
      out[name] = { ...entry, line: lineOf(pair.key) }
    }
    return out
  }

  const raw = walk(doc.contents, FILE, '') as Omit<RawConfigFile, 'file' | 'lines'>
  return { ...raw, file, lines }
}

function camel(key: string): string {
  return key.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())
}

/**
 * Safe YAML reading with positions: duplicate keys rejected, alias expansion bounded, unknown tags refused,
 * every document's fields locatable by path (1-based line and column).
 */
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  visit,
  type Document,
  type Node,
} from 'yaml'
import type { ErrorCode } from './errors.js'
import type { PathKey } from './kinds/contract.js'

export interface Position {
  line: number
  column: number
}

export interface YamlProblem extends Position {
  code: ErrorCode
  message: string
}

export interface YamlDocument {
  /** 0-based index of the document in its file (counting empty ones) */
  index: number
  /** the document as plain data (null for an empty document) */
  value: unknown
  /** where the document's content starts */
  start: Position
  /** position of the node at `path`, or of its nearest existing ancestor; `key: true` prefers the map key */
  locate(path: readonly PathKey[], options?: { key?: boolean }): Position
}

export interface YamlFile {
  documents: YamlDocument[]
  problems: YamlProblem[]
}

export interface YamlLimits {
  /** maximum alias resolutions per document (yaml's maxAliasCount); default 100 */
  maxAliasCount?: number
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')
}

interface ParsedStream {
  docs: Document.Parsed[]
  pos(offset: number): Position
}

function parseStream(text: string): ParsedStream {
  const lineCounter = new LineCounter()
  const docs = parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: true,
    merge: false,
    prettyErrors: true,
    strict: true,
  })
  return {
    // parseAllDocuments returns an EmptyStream (an array with no documents) for empty input
    docs: Array.isArray(docs) ? docs : [docs],
    pos(offset) {
      const p = lineCounter.linePos(offset)
      return { line: p.line, column: p.col }
    },
  }
}

/**
 * Documents keep only the text, not the syntax tree: locate() is needed for problems only, and a
 * repository's worth of retained trees made the garbage collector the loader's main cost. The first
 * locate() of a file parses it again (same text, same options, so the same nodes and positions).
 */
function lazyTree(text: string): () => ParsedStream {
  let reparsed: ParsedStream | undefined
  return () => (reparsed ??= parseStream(text))
}

export function parseYaml(text: string, limits: YamlLimits = {}): YamlFile {
  const tree = lazyTree(text)
  const maxAliasCount = limits.maxAliasCount ?? 100
  const { docs: list, pos } = parseStream(text)
  const problems: YamlProblem[] = []
  const documents: YamlDocument[] = []
  list.forEach((doc: Document.Parsed, index) => {
    let failed = false
    for (const e of [...doc.errors, ...doc.warnings]) {
      failed = true
      const at = e.linePos?.[0] ?? pos(e.pos[0])
      problems.push({
        code: e.code === 'DUPLICATE_KEY' ? 'yaml-duplicate-key' : 'yaml-syntax',
        line: at.line,
        column: 'col' in at ? at.col : at.column,
        message:
          e.code === 'DUPLICATE_KEY'
            ? `${firstLine(e.message)}: remove or rename the repeated key`
            : firstLine(e.message),
      })
    }
    if (failed) return
    const contents = doc.contents as Node | null
    const start = contents?.range ? pos(contents.range[0]) : pos(doc.range[0])
    // A mapping key that is itself a mapping or list (`? [a]`) has no meaning in a manifest, and converting
    // it would make yaml print a process warning: report it instead.
    let complexKey: Position | undefined
    visit(doc, {
      Pair(_, pair) {
        if (pair.key !== null && !isScalar(pair.key) && !isAlias(pair.key)) {
          const range = (pair.key as Node).range
          complexKey = range ? pos(range[0]) : start
          return visit.BREAK
        }
        return undefined
      },
    })
    if (complexKey) {
      problems.push({
        code: 'yaml-syntax',
        ...complexKey,
        message: 'a mapping key must be a plain value, not a mapping or a list',
      })
      return
    }
    let value: unknown
    try {
      value = doc.toJS({ maxAliasCount })
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      let at = start
      visit(doc, {
        Alias(_, node) {
          if (node.range) at = pos(node.range[0])
          return visit.BREAK
        },
      })
      problems.push(
        /excessive alias count/i.test(message)
          ? {
              code: 'yaml-alias-limit',
              ...at,
              message: `YAML aliases expand beyond the limit of ${maxAliasCount}: write the values out instead of nesting aliases`,
            }
          : { code: 'yaml-syntax', ...at, message: firstLine(message) },
      )
      return
    }
    documents.push(document(index, value, start, tree))
  })
  return { documents, problems }
}

/**
 * A parsed document. `index` counts every document of the file (empty ones too), so that it also indexes
 * the re-parsed stream that locate() walks.
 */
function document(index: number, value: unknown, start: Position, tree: () => ParsedStream): YamlDocument {
  return {
    index,
    value,
    start,
    locate(path, options = {}) {
      // Scalars point at their value; collections at their key (`spec:`), list items at their `-` entry;
      // a missing field at the nearest existing parent.
      const { docs: again, pos } = tree()
      let node: unknown = again[index]!.contents
      let best = start
      for (let i = 0; i < path.length; i++) {
        const key = path[i]!
        const isLast = i === path.length - 1
        if (isMap(node)) {
          const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(key))
          if (!pair) return best
          const keyNode = pair.key as Node
          if (keyNode.range) best = pos(keyNode.range[0])
          if (isLast && options.key) return best
          node = pair.value
          const valueNode = pair.value as Node | null
          if (isLast && valueNode?.range && (isScalar(valueNode) || isAlias(valueNode))) return pos(valueNode.range[0])
        } else if (isSeq(node) && typeof key === 'number') {
          const item = node.items[key] as Node | undefined
          if (!item) return best
          node = item
          if (item.range) best = pos(item.range[0])
        } else {
          return best
        }
      }
      return best
    },
  }
}

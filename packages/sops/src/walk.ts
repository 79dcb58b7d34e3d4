// Walks yaml Document nodes in file order, the way sops.go walkBranch/walkSlice does: key order and
// sequence order are kept, list indices are not part of the path, nulls are skipped, and the `sops`
// key of each document is left out. Plain JS objects are never walked (they reorder "8006"-like keys).
import {
  type Document,
  type Node,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
  isAlias,
  isMap,
  isScalar,
  isSeq,
} from 'yaml'
import { SopsError } from './errors.js'

/** A comment holder: one `commentBefore`/`comment` field, with the path sops uses as its AAD. */
export interface CommentSlot {
  path: readonly string[]
  get(): string
  set(text: string): void
}

export interface Visitor {
  leaf(scalar: Scalar, path: readonly string[]): void
  comment?(slot: CommentSlot): void
}

type Commented = { commentBefore?: string | null; comment?: string | null }

function comments(holder: Commented, path: readonly string[], v: Visitor): void {
  if (!v.comment) return
  for (const field of ['commentBefore', 'comment'] as const) {
    if (holder[field]) v.comment({ path, get: () => holder[field] ?? '', set: (t) => void (holder[field] = t) })
  }
}

export function walkDocuments(docs: readonly Document[], file: string, v: Visitor): void {
  for (const doc of docs) {
    comments(doc, [], v)
    const root: unknown = doc.contents
    if (root === null || root === undefined || (isScalar(root) && root.value === null)) continue
    if (!isMap(root)) throw new SopsError('Malformed', file, 'the top level of a document must be a mapping')
    walkMap(root, [], true, file, v)
  }
}

export function stringKey(key: unknown, path: readonly string[], file: string): string {
  if (isScalar(key) && typeof key.value === 'string') return key.value
  throw new SopsError('Malformed', file, 'non-string map key (quote keys such as "8006")', { path })
}

function walkMap(map: YAMLMap, path: readonly string[], top: boolean, file: string, v: Visitor): void {
  comments(map, path, v)
  for (const pair of map.items) {
    const key = stringKey(pair.key, path, file)
    if (top && key === 'sops') continue
    if (isScalar(pair.key)) comments(pair.key, path, v)
    walkValue(pair.value, [...path, key], path, file, v)
  }
}

function walkSeq(seq: YAMLSeq, path: readonly string[], file: string, v: Visitor): void {
  comments(seq, path, v)
  for (const item of seq.items) walkValue(item, path, path, file, v)
}

function walkValue(
  node: unknown,
  path: readonly string[],
  container: readonly string[],
  file: string,
  v: Visitor,
): void {
  if (node === null || node === undefined) return
  if (isAlias(node)) throw new SopsError('Unsupported', file, 'YAML aliases are not supported', { path })
  if (isScalar(node)) {
    comments(node, container, v)
    if (node.value !== null && node.value !== undefined) v.leaf(node, path)
    return
  }
  if (isMap(node)) return walkMap(node, path, false, file, v)
  if (isSeq(node)) return walkSeq(node, path, file, v)
  throw new SopsError('Malformed', file, `unexpected node ${String((node as Node).constructor?.name)}`, { path })
}

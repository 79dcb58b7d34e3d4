// The result of a decryption: values as Secrets, looked up by key path; printing it shows (sensitive).
import { inspect } from 'node:util'
import { type Document, type Scalar, isMap, isScalar, isSeq } from 'yaml'
import { type SopsFormat, serialize } from './parse.js'
import { type LeafValue, SENSITIVE, Secret } from './secret.js'
import type { LeafInfo } from './tree.js'
import { stringKey } from './walk.js'

export type PlainNode =
  | { readonly kind: 'map'; readonly entries: ReadonlyArray<readonly [string, PlainNode]> }
  | { readonly kind: 'seq'; readonly items: readonly PlainNode[] }
  | { readonly kind: 'leaf'; readonly secret: Secret }
  | { readonly kind: 'null' }

/** A revealed value: maps as plain objects (note: JS lists integer-like keys first), ints beyond 2^53 as bigint. */
export type RevealedValue = LeafValue | null | RevealedValue[] | { [key: string]: RevealedValue }

export type KeyPath = string | readonly string[]

/** `a.b.c` splits on dots; pass an array for keys that contain dots. */
export function toKeyPath(path: KeyPath): readonly string[] {
  return typeof path === 'string' ? (path === '' ? [] : path.split('.')) : path
}

function plainNode(
  node: unknown,
  leaves: ReadonlyMap<Scalar, LeafInfo>,
  file: string,
  path: readonly string[],
  top: boolean,
): PlainNode {
  if (isMap(node)) {
    const entries: (readonly [string, PlainNode])[] = []
    for (const pair of node.items) {
      const key = stringKey(pair.key, path, file)
      if (top && key === 'sops') continue
      entries.push([key, plainNode(pair.value, leaves, file, [...path, key], false)])
    }
    return { kind: 'map', entries }
  }
  if (isSeq(node)) return { kind: 'seq', items: node.items.map((n) => plainNode(n, leaves, file, path, false)) }
  if (isScalar(node) && node.value !== null && node.value !== undefined) {
    const info = leaves.get(node)
    if (info) return { kind: 'leaf', secret: new Secret(info.value, info.type, info.encrypted) }
    return { kind: 'leaf', secret: new Secret(String(node.value), 'str', false) }
  }
  return { kind: 'null' }
}

function reveal(node: PlainNode): RevealedValue {
  switch (node.kind) {
    case 'null':
      return null
    case 'leaf':
      return node.secret.reveal()
    case 'seq':
      return node.items.map(reveal)
    case 'map': {
      const out: { [key: string]: RevealedValue } = {}
      for (const [k, v] of node.entries)
        Object.defineProperty(out, k, { value: reveal(v), enumerable: true, writable: true, configurable: true })
      return out
    }
  }
}

export interface DecryptedInit {
  file: string
  format: SopsFormat
  docs: Document[]
  leaves: ReadonlyMap<Scalar, LeafInfo>
  recipients: readonly string[]
  lastModified: string
  undecryptedComments: number
}

export class DecryptedDocument {
  readonly file: string
  readonly format: SopsFormat
  /** The file's age recipients (public keys). */
  readonly recipients: readonly string[]
  readonly lastModified: string
  /** Encrypted comments that could not be decrypted (sops only warns about these). */
  readonly undecryptedComments: number
  readonly #docs: Document[]
  readonly #roots: PlainNode[]

  constructor(init: DecryptedInit) {
    this.file = init.file
    this.format = init.format
    this.recipients = Object.freeze([...init.recipients])
    this.lastModified = init.lastModified
    this.undecryptedComments = init.undecryptedComments
    this.#docs = init.docs
    for (const d of init.docs) {
      // The plaintext view carries no metadata.
      if (isMap(d.contents))
        d.contents.items = d.contents.items.filter((p) => !(isScalar(p.key) && p.key.value === 'sops'))
    }
    this.#roots = init.docs.map((d) => plainNode(d.contents, init.leaves, init.file, [], true))
  }

  /** Number of YAML documents; lookups use the first. */
  get documentCount(): number {
    return this.#roots.length
  }

  /** The node at a key path of the first document (maps by key; a list is a leaf of the path). */
  node(path: KeyPath): PlainNode | undefined {
    let cur: PlainNode | undefined = this.#roots[0]
    for (const key of toKeyPath(path)) {
      if (cur?.kind !== 'map') return undefined
      cur = cur.entries.find(([k]) => k === key)?.[1]
    }
    return cur
  }

  /** The value at a key path, or undefined when the path is missing, null or not a scalar. */
  get(path: KeyPath): Secret | undefined {
    const n = this.node(path)
    return n?.kind === 'leaf' ? n.secret : undefined
  }

  has(path: KeyPath): boolean {
    return this.node(path) !== undefined
  }

  /** Keys of the mapping at a path, in file order (key names are not secret in sops files). */
  keys(path: KeyPath = []): string[] {
    const n = this.node(path)
    return n?.kind === 'map' ? n.entries.map(([k]) => k) : []
  }

  /** Explicitly reveals the first document as plain JS data. */
  reveal(): RevealedValue {
    const root = this.#roots[0]
    return root ? reveal(root) : null
  }

  revealDocuments(): RevealedValue[] {
    return this.#roots.map(reveal)
  }

  /** Explicitly reveals the whole plaintext in the file's format, like `sops --decrypt`. */
  revealText(): string {
    return serialize(this.#docs, { format: this.format })
  }

  toString(): string {
    return SENSITIVE
  }
  toJSON(): string {
    return SENSITIVE
  }
  [inspect.custom](): string {
    return `DecryptedDocument(${this.file}) ${SENSITIVE}`
  }
}

// Random documents for round-trip property tests, built as ordered models (never JS objects, whose
// integer-like keys would be reordered) and printed as YAML or JSON text.
import { fc } from '@fast-check/vitest'
import { Document, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import type { PlainNode } from '../document.js'

export type Model =
  | { k: 'map'; entries: [string, Model][] }
  | { k: 'seq'; items: Model[] }
  | { k: 'str'; v: string }
  | { k: 'int'; v: bigint }
  | { k: 'float'; v: number }
  | { k: 'bool'; v: boolean }
  | { k: 'null' }

const specialKeys = [
  '8006',
  '10',
  '0',
  '007',
  '-1',
  '1.5',
  'true',
  'null',
  '~',
  'a_unencrypted',
  'é',
  '日本',
  'key with space',
  'x:y',
  'data',
]
const specialStrings = [
  '',
  ' leading',
  'trailing ',
  '123',
  '1.5',
  'true',
  'False',
  'null',
  '~',
  '- x',
  '#hash',
  'a: b',
  '\t tab',
  'line\r\nwin',
  'ends\n',
  '"q"',
  "'",
  'ENC',
  '🦀 ünïcödé',
]

const key = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.constantFrom(...specialKeys))
const str = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.array(fc.string({ unit: 'grapheme', maxLength: 10 }), { minLength: 2, maxLength: 4 }).map((a) => a.join('\n')),
  fc.constantFrom(...specialStrings),
)
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })

export function modelArb(json: boolean): fc.Arbitrary<Model> {
  const float = fc
    .double({ noNaN: json, noDefaultInfinity: json })
    .filter((x) => !Number.isInteger(x) || (!json && !Number.isFinite(x)))
  const leaf: fc.Arbitrary<Model> = fc.oneof(
    str.map((v) => ({ k: 'str' as const, v })),
    int64.map((v) => ({ k: 'int' as const, v })),
    float.map((v) => ({ k: 'float' as const, v })),
    fc.boolean().map((v) => ({ k: 'bool' as const, v })),
    fc.constant({ k: 'null' as const }),
  )
  const { node } = fc.letrec<{ node: Model; map: Model; seq: Model }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('map'), tie('seq')),
    map: fc
      .uniqueArray(fc.tuple(key, tie('node')), { selector: ([k]) => k, maxLength: 5 })
      .map((entries) => ({ k: 'map' as const, entries })),
    seq: fc.array(tie('node'), { maxLength: 4 }).map((items) => ({ k: 'seq' as const, items })),
  }))
  return fc
    .uniqueArray(
      fc.tuple(
        key.filter((k) => k !== 'sops'),
        node,
      ),
      { selector: ([k]) => k, maxLength: 6 },
    )
    .map((entries) => ({ k: 'map' as const, entries }))
}

function toNode(m: Model): unknown {
  switch (m.k) {
    case 'map': {
      const map = new YAMLMap()
      for (const [k, v] of m.entries) map.items.push(new Pair(new Scalar(k), toNode(v)))
      return map
    }
    case 'seq': {
      const seq = new YAMLSeq()
      seq.items = m.items.map(toNode)
      return seq
    }
    case 'null':
      return new Scalar(null)
    default:
      return new Scalar(m.v)
  }
}

export function toYamlText(m: Model): string {
  const doc = new Document()
  doc.contents = toNode(m) as YAMLMap
  return doc.toString()
}

export function toJsonText(m: Model): string {
  switch (m.k) {
    case 'map':
      return `{${m.entries.map(([k, v]) => `${JSON.stringify(k)}: ${toJsonText(v)}`).join(', ')}}`
    case 'seq':
      return `[${m.items.map(toJsonText).join(', ')}]`
    case 'str':
      return JSON.stringify(m.v)
    case 'int':
      return m.v.toString()
    case 'float':
      return JSON.stringify(m.v)
    case 'bool':
      return String(m.v)
    case 'null':
      return 'null'
  }
}

/** The decrypted tree in the model's shape, for comparison. */
export function fromPlain(n: PlainNode): Model {
  switch (n.kind) {
    case 'map':
      return { k: 'map', entries: n.entries.map(([k, v]) => [k, fromPlain(v)]) }
    case 'seq':
      return { k: 'seq', items: n.items.map(fromPlain) }
    case 'null':
      return { k: 'null' }
    case 'leaf': {
      const v = n.secret.reveal()
      switch (n.secret.type) {
        case 'int':
          return { k: 'int', v: BigInt(v) }
        case 'float':
          return { k: 'float', v: v as number }
        case 'bool':
          return { k: 'bool', v: v as boolean }
        default:
          return { k: 'str', v: String(v) }
      }
    }
  }
}

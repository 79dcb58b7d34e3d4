import { fc, test } from '@fast-check/vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { readPlainYaml } from './yaml-plain.js'
import { parseWithLibrary } from './yaml.js'

/** The library's reading of `text`, in the fast reader's terms (undefined when the library reports problems). */
function library(text: string): { value: unknown; start: unknown }[] | undefined {
  const f = parseWithLibrary(text)
  if (f.problems.length > 0) return undefined
  return f.documents.map((d) => ({ value: d.value, start: d.start }))
}

/** The property: whenever the fast reader answers, it answers exactly what the library does. */
function agrees(text: string): boolean {
  const fast = readPlainYaml(text)
  if (fast === undefined) return false
  expect({ text, docs: fast }).toStrictEqual({ text, docs: library(text) })
  return true
}

const manifest = `apiVersion: proxops/v1alpha1
kind: VM
metadata:
  name: web-1 # the first one
  labels:
    tier: 'front end'
spec:
  node: pve1
  vmid: 2000
  onboot: true
  description: "a \\"quoted\\" word"
  memory: 1024MiB
  disks:
  - storage: local-lvm
    size: 24GiB
  -   storage: fast
      size: 8GiB

  networks:
    - bridge: vmbr0
      firewall: false
  tags:
    - web
    - 'db'
  cloudInit: ~
  empty:
`

describe('readPlainYaml', () => {
  it('reads a typical manifest exactly as the library does', () => {
    const text = manifest.replace('"a \\"quoted\\" word"', '"a plain word"')
    expect(agrees(text)).toBe(true)
    expect(readPlainYaml(text)![0]!.value).toMatchObject({
      metadata: { name: 'web-1', labels: { tier: 'front end' } },
      spec: {
        vmid: 2000,
        onboot: true,
        memory: '1024MiB',
        disks: [
          { storage: 'local-lvm', size: '24GiB' },
          { storage: 'fast', size: '8GiB' },
        ],
        tags: ['web', 'db'],
        cloudInit: null,
        empty: null,
      },
    })
  })

  it('reads several documents and reports where each starts', () => {
    const text = '---\na: 1\n---\n# two\n- x\n- y: 2\n  z: http://h:8006/p\n'
    expect(agrees(text)).toBe(true)
    expect(readPlainYaml(text)!.map((d) => d.start)).toEqual([
      { line: 2, column: 1 },
      { line: 5, column: 1 },
    ])
  })

  it('reads one-line flow lists of scalars', () => {
    const text = 'nodes: [pve1, pve2,pve3]   # all\nempty: [ ]\nmixed:\n  - [1, true, ~, \'a b\', "c"]\n'
    expect(agrees(text)).toBe(true)
    expect(readPlainYaml(text)![0]!.value).toEqual({
      nodes: ['pve1', 'pve2', 'pve3'],
      empty: [],
      mixed: [[1, true, null, 'a b', 'c']],
    })
  })

  it('reads every example manifest as the library does, and takes the fast path for all of them', () => {
    const examples = fileURLToPath(new URL('../../../examples/repository', import.meta.url))
    const files = readdirSync(examples, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.yaml') && !f.split(/[\\/]/).includes('node_modules'))
      .map((f) => join(examples, f))
    expect(files.length).toBeGreaterThan(10)
    for (const file of files) {
      const text = readFileSync(file, 'utf8')
      const rel = relative(examples, file)
      const fast = agrees(text)
      // manifests and compositions are plain block YAML; SOPS files (long encrypted strings) may go either way
      if (!rel.includes('sops') && rel !== 'proxops.yaml') expect({ rel, fast }).toEqual({ rel, fast: true })
    }
  })

  it.each([
    ['an escape in a double-quoted string', manifest],
    ['a nested flow collection', 'a: [[1], 2]\n'],
    ['a flow mapping', 'a: {b: 1}\n'],
    ['a flow list over two lines', 'a: [1,\n  2]\n'],
    ['a trailing comma in a flow list', 'a: [1, 2, ]\n'],
    ['an anchor', 'a: &x 1\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a block scalar', 'a: |\n  text\n'],
    ['a multi-line plain scalar', 'a: one\n  two\n'],
    ['a float', 'a: 1.5\n'],
    ['an octal-looking integer', 'a: 0755\n'],
    ['a plain scalar starting with a dash', 'a: -x\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a tab', 'a:\t1\n'],
    ['CRLF line ends', 'a: 1\r\n'],
    ['non-ASCII text', 'a: café\n'],
    ['an empty document', 'a: 1\n---\n'],
    ['an empty file', ''],
    ['a top-level scalar', 'hello\n'],
    ['an indented top level', '  a: 1\n'],
    ['a key without a space after the colon', 'a:1\n'],
    ['a quoted key', "'a': 1\n"],
    ['a nested mapping on one line', 'a: b: c\n'],
    ['a document end marker', 'a: 1\n...\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['a __proto__ key', '__proto__: 1\n'],
    ['a bad indentation', 'a:\n    b: 1\n  c: 2\n'],
  ])('leaves %s to the library', (_, text) => {
    expect(readPlainYaml(text)).toBeUndefined()
  })
})

// ---- differential properties -------------------------------------------------------------------------

// Scalar text drawn from characters that decide how YAML reads a scalar.
const tricky = fc.string({ unit: fc.constantFrom(...'ab0123456789 :#-\'".~xoeE+_/tTrufalsnNL\\'), maxLength: 12 })
const key = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z0-9][a-zA-Z0-9_.~-]{0,8}$/), weight: 4 },
  { arbitrary: tricky, weight: 1 },
)
const scalar = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-zA-Z0-9][a-zA-Z0-9 ./~:#'"-]{0,10}$/), weight: 6 },
  { arbitrary: tricky, weight: 2 },
  { arbitrary: fc.integer(), weight: 2 },
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  { arbitrary: fc.constantFrom('1024MiB', '24GiB', 'local-lvm', 'x86-64-v2-AES', 'https://pve:8006'), weight: 2 },
)
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { maxDepth: 3, withCrossShrink: true },
    { arbitrary: scalar, weight: 3 },
    fc.array(tie('v'), { minLength: 1, maxLength: 3 }),
    fc.dictionary(key, tie('v'), { minKeys: 1, maxKeys: 3 }),
    fc.constantFrom([], {}),
  ),
})).v
const document = fc.oneof(
  fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }),
  fc.array(value, { minLength: 1, maxLength: 4 }),
)

// The library's own printer, in the styles people write by hand.
const printed = fc
  .tuple(
    fc.array(document, { minLength: 1, maxLength: 3 }),
    fc.integer({ min: 2, max: 4 }),
    fc.boolean(),
    fc.constantFrom('PLAIN', 'QUOTE_SINGLE', 'QUOTE_DOUBLE'),
  )
  .map(([docs, indent, indentSeq, defaultStringType]) =>
    docs
      .map((d) =>
        stringify(d, {
          indent,
          indentSeq,
          defaultStringType: defaultStringType as 'PLAIN',
          defaultKeyType: 'PLAIN',
          collectionStyle: 'block',
          lineWidth: 0,
        }),
      )
      .join('---\n'),
  )

// Line-level edits that push text towards the edges of the subset.
const edit = fc.tuple(
  fc.nat(),
  fc.nat(),
  fc.constantFrom(' ', '  ', '- ', ': ', ':', '#', ' #c', "'", '"', '---', '\n', '\n  ', '~', '0', '-', 'x'),
)
const mutated = fc.tuple(printed, fc.array(edit, { maxLength: 3 })).map(([text, edits]) => {
  let t = text
  for (const [at, del, insert] of edits) {
    const i = at % (t.length + 1)
    t = t.slice(0, i) + insert + t.slice(i + (del % 3))
  }
  return t
})

// Manifests as people write them: every one of these must take the fast path.
const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/).filter((w) => !/^(?:true|false|null)$/.test(w))
const realistic = fc
  .tuple(
    fc.dictionary(
      word,
      fc.oneof(
        word,
        fc.nat(),
        fc.boolean(),
        fc.array(word, { minLength: 1, maxLength: 3 }),
        fc.dictionary(word, fc.oneof(word, fc.nat()), { minKeys: 1, maxKeys: 3 }),
      ),
      { minKeys: 1, maxKeys: 6 },
    ),
    fc.integer({ min: 2, max: 4 }),
    fc.boolean(),
  )
  .map(([d, indent, indentSeq]) => stringify(d, { indent, indentSeq, lineWidth: 0 }))

describe('readPlainYaml agrees with the yaml library', () => {
  const answered = { printed: 0, mutated: 0 }

  test.prop([printed], { numRuns: 3000 })('on documents the library printed', (text) => {
    if (agrees(text)) answered.printed++
  })

  test.prop([mutated], { numRuns: 3000 })('on mutated documents', (text) => {
    if (agrees(text)) answered.mutated++
  })

  it('and the comparisons above did exercise the fast path', () => {
    expect(answered.printed).toBeGreaterThan(100)
    expect(answered.mutated).toBeGreaterThan(50)
  })

  test.prop([realistic], { numRuns: 500 })('on manifests as people write them, always answering', (text) => {
    expect(agrees(text)).toBe(true)
  })

  // one-line flow lists, with the spacing, quoting and stray characters people type
  const flowItem = fc.oneof(
    word,
    fc.nat().map(String),
    tricky,
    tricky.map((t) => `'${t}'`),
    tricky.map((t) => `"${t}"`),
    fc.constantFrom('', ' ', '[x]', '{a: 1}', 'a: b', '#c'),
  )
  const flowText = fc
    .array(
      fc.tuple(
        word,
        fc.array(fc.tuple(fc.constantFrom('', ' ', '  '), flowItem, fc.constantFrom('', ' ')), { maxLength: 4 }),
        fc.constantFrom('', ' # c', ' ,', ']'),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((entries) =>
      entries
        .map(([k, items, tail]) => `${k}: [${items.map(([a, v, b]) => `${a}${v}${b}`).join(',')}]${tail}\n`)
        .join(''),
    )
  test.prop([flowText], { numRuns: 3000 })('on one-line flow lists', (text) => {
    agrees(text)
  })

  test.prop([fc.string({ unit: fc.constantFrom(...'a1 :-#\'"\n~.[],'), maxLength: 40 })], { numRuns: 3000 })(
    'on short arbitrary text',
    (text) => {
      agrees(text)
    },
  )
})

import { describe, expect, it } from 'vitest'
import { parseYaml } from './yaml.js'

describe('parseYaml', () => {
  it('reads several documents, keeping empty ones as null', () => {
    const f = parseYaml('a: 1\n---\n# nothing\n---\nb: [1, 2]\n')
    expect(f.problems).toEqual([])
    expect(f.documents.map((d) => [d.index, d.value])).toEqual([
      [0, { a: 1 }],
      [1, null],
      [2, { b: [1, 2] }],
    ])
    expect(f.documents[2]!.start).toEqual({ line: 5, column: 1 })
  })

  it('an empty file has no documents', () => {
    expect(parseYaml('')).toEqual({ documents: [], problems: [] })
  })

  it('rejects duplicate keys with their position', () => {
    const f = parseYaml('spec:\n  vmid: 1\n  vmid: 2\n')
    expect(f.problems).toEqual([
      { code: 'yaml-duplicate-key', line: 3, column: 3, message: expect.stringContaining('remove or rename') },
    ])
    expect(f.documents).toEqual([])
  })

  it('bounds alias expansion', () => {
    const bomb =
      'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n'
    const f = parseYaml(bomb, { maxAliasCount: 20 })
    expect(f.problems).toMatchObject([{ code: 'yaml-alias-limit', line: 2, column: 8 }])
    expect(parseYaml('a: &a 1\nb: *a\n').documents[0]!.value).toEqual({ a: 1, b: 1 })
  })

  it('reports syntax errors, unknown tags and unresolved aliases', () => {
    expect(parseYaml('a: [1\n').problems[0]).toMatchObject({ code: 'yaml-syntax', line: 2 })
    expect(parseYaml('a: !secret x\n').problems[0]).toMatchObject({ code: 'yaml-syntax', line: 1, column: 4 })
    expect(parseYaml('a: *nope\n').problems[0]).toMatchObject({ code: 'yaml-syntax', line: 1, column: 4 })
  })

  it('does not interpret merge keys', () => {
    const f = parseYaml('base: &b {x: 1}\nchild:\n  <<: *b\n')
    expect(f.documents[0]!.value).toEqual({ base: { x: 1 }, child: { '<<': { x: 1 } } })
  })

  it('locates values, keys, list items and the nearest parent of a missing field', () => {
    const [doc] = parseYaml('kind: VM\nspec:\n  disks:\n    - storage: local\n      size: 8G\n').documents
    expect(doc!.locate(['spec', 'disks', 0, 'size'])).toEqual({ line: 5, column: 13 })
    expect(doc!.locate(['spec', 'disks', 0, 'size'], { key: true })).toEqual({ line: 5, column: 7 })
    expect(doc!.locate(['spec', 'disks', 0])).toEqual({ line: 4, column: 7 })
    expect(doc!.locate(['spec', 'memory'])).toEqual({ line: 2, column: 1 })
    expect(doc!.locate(['spec', 'disks', 3, 'size'])).toEqual({ line: 3, column: 3 })
    expect(doc!.locate(['spec'])).toEqual({ line: 2, column: 1 })
    expect(doc!.locate([])).toEqual({ line: 1, column: 1 })
  })
})

describe('locate in files of several documents', () => {
  it('finds positions in the right document, in any order of calls', () => {
    const text = 'a: 1\n---\nbroken: [\n---\nspec:\n  b: 2\n---\nspec:\n  c: [x, y]\n'
    const f = parseYaml(text)
    expect(f.problems).toHaveLength(1)
    const [first, third, fourth] = f.documents
    expect([first!.index, third!.index, fourth!.index]).toEqual([0, 2, 3])
    expect(fourth!.locate(['spec', 'c', 1])).toEqual({ line: 9, column: 10 })
    expect(third!.locate(['spec', 'b'])).toEqual({ line: 6, column: 6 })
    expect(first!.locate(['a'], { key: true })).toEqual({ line: 1, column: 1 })
    expect(fourth!.locate(['spec', 'c'], { key: true })).toEqual({ line: 9, column: 3 })
  })
})

describe('complex mapping keys', () => {
  it('reports a mapping or list used as a key, with its position, and prints no process warning', () => {
    const warnings: string[] = []
    const onWarning = (w: Error): void => void warnings.push(w.message)
    process.on('warning', onWarning)
    try {
      const file = parseYaml('spec:\n  ok: 1\n? [a, b]\n: value\n')
      expect(file.documents).toEqual([])
      expect(file.problems).toEqual([
        {
          code: 'yaml-syntax',
          line: 3,
          column: 3,
          message: 'a mapping key must be a plain value, not a mapping or a list',
        },
      ])
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).toEqual([])
  })
})

/**
 * Fuzzing the repository side: manifest YAML, compositions (paths and symlinks) and cluster configs.
 * Whatever the input, the loader answers with coded, positioned errors: never a throw, never a read
 * outside the repository root. fast-check prints the seed and the shrunk counterexample on failure.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import { fc, test } from '@fast-check/vitest'
import { afterAll, describe, expect } from 'vitest'
import { loadRepository, nodeFs, parseManifest, parseYaml, type RepoFs } from '@proxops/schema'
import { runs } from './soak.js'

const work = mkdtempSync(join(tmpdir(), 'proxops-fuzz-repo-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
let seq = 0

/** A file-system port that records every path the loader touches. */
function spyFs(): { fs: RepoFs; touched: string[] } {
  const touched: string[] = []
  const fs = new Proxy(nodeFs, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        for (const a of args) if (typeof a === 'string') touched.push(resolve(a))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
  return { fs, touched }
}

const CODE = /^[a-z][a-z0-9-]*$/

function expectCoded(
  errors: readonly { code: string; file: string; line: number; column: number; message: string }[],
): void {
  for (const e of errors) {
    expect(e.code).toMatch(CODE)
    expect(typeof e.file).toBe('string')
    expect(e.file.startsWith('/')).toBe(false)
    expect(e.line).toBeGreaterThanOrEqual(0)
    expect(e.message.length).toBeGreaterThan(0)
  }
}

const yamlish = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.stringMatching(/^(?:[a-z-]{1,8}: ?(?:[\w"'[\]{},:&*!|>-]{0,12})?\n {0,4}){1,12}$/),
  fc.constantFrom(
    'a: &x [*x]',
    'a: &a [1]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nd: [*c, *c, *c, *c]',
    'kind: VM\nkind: LXC',
    '---\n---\n',
    '\ufeffkind: vm',
    'spec: !!binary aGk=',
    '? [a]\n: b',
  ),
)

describe('manifest YAML fuzzing', () => {
  test.prop([yamlish], { numRuns: runs(2000) })(
    'parseYaml and parseManifest never throw; problems are coded',
    (text) => {
      const file = parseYaml(text, { maxAliasCount: 50 })
      for (const d of file.documents ?? []) {
        const r = parseManifest(d.value ?? null)
        if (!r.ok) for (const i of r.issues) expect(i.code).toMatch(CODE)
      }
    },
  )

  test.prop([fc.jsonValue({ maxDepth: 4 })], { numRuns: runs(2000) })(
    'parseManifest on arbitrary JSON values answers ok or coded issues',
    (doc) => {
      const r = parseManifest(doc)
      if (!r.ok) {
        expect(r.issues.length).toBeGreaterThan(0)
        for (const i of r.issues) expect(i.code).toMatch(CODE)
      }
    },
  )
})

const segment = fc.constantFrom(
  '..',
  '.',
  'vm',
  'base',
  'clusters',
  'x.yaml',
  'a.yml',
  'outside.yaml',
  '',
  'etc',
  'passwd',
  '%2e%2e',
)
const relPath = fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => s.join('/'))

describe('composition fuzzing', () => {
  test.prop(
    [
      fc.array(fc.oneof(relPath, fc.constant('/etc/passwd'), fc.string({ maxLength: 40 })), { maxLength: 8 }),
      fc.array(fc.tuple(relPath, fc.oneof(relPath, fc.constant('/etc'), fc.constant('../../..'))), { maxLength: 4 }),
      fc.option(yamlish, { nil: undefined }),
    ],
    { numRuns: runs(150) },
  )(
    'the loader never reads outside the root and reports every problem with a code',
    async (entries, links, extraConfig) => {
      const root = join(work, `r${seq++}`)
      mkdirSync(join(root, 'clusters', 'c1'), { recursive: true })
      mkdirSync(join(root, 'vm'), { recursive: true })
      writeFileSync(join(work, 'outside.yaml'), 'apiVersion: proxops/v1alpha1\nkind: VM\nmetadata: {name: outside}\n')
      writeFileSync(
        join(root, 'clusters', 'c1', 'config.yaml'),
        extraConfig ??
          'pve:\n  clusters:\n    c1:\n      base-url: https://pve.example.invalid:8006\n      nodes: [pve1]\n',
      )
      writeFileSync(
        join(root, 'clusters', 'c1', 'resources.yaml'),
        `resources:\n${entries.map((e) => `  - ${JSON.stringify(e)}`).join('\n')}\n`,
      )
      for (const [from, to] of links) {
        const at = join(root, from)
        if (!at.startsWith(root + sep)) continue
        try {
          mkdirSync(dirname(at), { recursive: true })
          symlinkSync(to, at)
        } catch {
          // an existing path or an impossible link: the tree is what it is
        }
      }
      const { fs, touched } = spyFs()
      const model = await loadRepository({ root, fs })
      expectCoded(model.errors)
      const real = realpathSync(root)
      for (const p of touched)
        expect(p === real || p === root || p.startsWith(real + sep) || p.startsWith(root + sep), `read ${p}`).toBe(true)
    },
  )
})

import { describe, expect, it } from 'vitest'
import { keyOf, levels, prerequisites } from './deps.js'
import type { Manifest } from '@proxops/schema'
import { PlanInputError } from '../errors.js'
import { artifact, lxc, vm } from '../fixtures.test.helpers.js'

const withDeps = <M extends Manifest>(m: M, deps: string): M => ({
  ...m,
  metadata: { ...m.metadata, annotations: { 'proxops/depends-on': deps } },
})
const index = (...ms: Manifest[]) => new Map(ms.map((m) => [keyOf(m.kind, m.metadata.name), m]))

describe('dependency model', () => {
  it('collects structured edges and the depends-on annotation with kind aliases', () => {
    const m = withDeps(
      vm('web', 100, { clone: 'golden', disks: [], hardware: { cdrom: { iso: 'debian', media: 'cdrom' } } }),
      ' tvm:other , , LXC:db',
    )
    expect(prerequisites(m)).toEqual(['ISO/debian', 'LXC/db', 'TemplateVM/golden', 'TemplateVM/other'])
    expect(prerequisites(lxc('ct', 200))).toEqual(['CTTemplate/debian-12'])
  })

  it('levels: 0 without prerequisites, else 1 + the highest', () => {
    const l = levels(
      index(artifact('CTTemplate', 'debian-12', 'd.tar.zst'), lxc('db', 200), withDeps(vm('web', 100), 'LXC:db')),
    )
    expect([...l].map(([k, v]) => [k, v.level])).toEqual([
      ['CTTemplate/debian-12', 0],
      ['LXC/db', 1],
      ['VM/web', 2],
    ])
  })

  it('rejects cycles (showing the path), unknown targets and malformed items', () => {
    const a = withDeps(vm('a', 100), 'VM:b')
    const b = withDeps(vm('b', 101), 'VM:a')
    expect(() => levels(index(a, b))).toThrow(/cycle VM\/a → VM\/b → VM\/a/)
    expect(() => levels(index(withDeps(vm('a', 100), 'VM:nope')))).toThrow(PlanInputError)
    expect(() => prerequisites(withDeps(vm('a', 100), 'Bogus:x'))).toThrow(/invalid proxops\/depends-on/)
  })
})

import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { buildGraph, referencesOf, type ResourceKey } from './graph.js'
import { parseManifest } from './manifest/parse.js'
import { clone, validManifests } from './test-support/manifests.js'

const g = (edges: Record<string, string[]>) =>
  buildGraph(Object.keys(edges) as ResourceKey[], new Map(Object.entries(edges)) as Map<ResourceKey, ResourceKey[]>)

describe('buildGraph', () => {
  it('levels: 0 without prerequisites, else 1 + the deepest', () => {
    const graph = g({
      'ISO/i': [],
      'DiskImage/d': [],
      'TemplateVM/t': ['DiskImage/d'],
      'VM/v': ['TemplateVM/t', 'ISO/i'],
    })
    expect([...graph.level]).toEqual([
      ['DiskImage/d', 0],
      ['ISO/i', 0],
      ['TemplateVM/t', 1],
      ['VM/v', 2],
    ])
    expect(graph.order).toEqual(['DiskImage/d', 'ISO/i', 'TemplateVM/t', 'VM/v'])
    expect(graph.dependants.get('DiskImage/d')).toEqual(['TemplateVM/t'])
    expect(graph.dependsOn.get('VM/v')).toEqual(['ISO/i', 'TemplateVM/t'])
    expect(graph.cycles).toEqual([])
  })

  it('reports each cycle once, as a path from its smallest key', () => {
    const graph = g({ 'VM/a': ['VM/b'], 'VM/b': ['VM/c'], 'VM/c': ['VM/a'], 'ISO/x': ['ISO/x'], 'LXC/ok': [] })
    expect(graph.cycles).toEqual([
      ['ISO/x', 'ISO/x'],
      ['VM/a', 'VM/b', 'VM/c', 'VM/a'],
    ])
  })

  it('ignores edges to unknown keys (the loader reports them)', () => {
    expect(g({ 'VM/a': ['ISO/missing'] }).dependsOn.get('VM/a')).toEqual([])
  })

  test.prop([fc.array(fc.tuple(fc.nat(9), fc.nat(9)), { maxLength: 30 })])(
    'acyclic graphs order prerequisites first',
    (pairs) => {
      // only edges from higher to lower numbers: always acyclic
      const edges: Record<string, string[]> = {}
      for (let i = 0; i < 10; i++) edges[`VM/n${i}`] = []
      for (const [a, b] of pairs) if (a > b) edges[`VM/n${a}`]!.push(`VM/n${b}`)
      const graph = g(edges)
      expect(graph.cycles).toEqual([])
      const pos = new Map(graph.order.map((k, i) => [k, i]))
      for (const [k, deps] of graph.dependsOn)
        for (const d of deps) {
          expect(pos.get(d)!).toBeLessThan(pos.get(k)!)
          expect(graph.level.get(d)!).toBeLessThan(graph.level.get(k)!)
        }
    },
  )

  test.prop([fc.array(fc.tuple(fc.nat(5), fc.nat(5)), { minLength: 1, maxLength: 15 })])(
    'a graph has a cycle iff some reported path closes',
    (pairs) => {
      const edges: Record<string, string[]> = {}
      for (let i = 0; i < 6; i++) edges[`VM/n${i}`] = []
      for (const [a, b] of pairs) edges[`VM/n${a}`]!.push(`VM/n${b}`)
      const graph = g(edges)
      for (const cycle of graph.cycles) {
        expect(cycle[0]).toBe(cycle[cycle.length - 1])
        for (let i = 0; i + 1 < cycle.length; i++) expect(graph.dependsOn.get(cycle[i]!)).toContain(cycle[i + 1])
      }
      // no cycle reported => a topological order exists
      if (graph.cycles.length === 0) {
        const pos = new Map(graph.order.map((k, i) => [k, i]))
        for (const [k, deps] of graph.dependsOn) for (const d of deps) expect(pos.get(d)!).toBeLessThan(pos.get(k)!)
      }
    },
  )
})

describe('referencesOf', () => {
  it('finds the structured references and the annotation', () => {
    const vm = clone(validManifests.VM)
    vm.metadata.annotations = { 'proxops/depends-on': 'LXC:cache-01, ctt:debian-base' }
    vm.spec.hardware = { cdrom: { iso: 'talos' } }
    vm.spec.disks = [{ storage: 'local-lvm', image: 'debian-13-cloud' }]
    const r = parseManifest(vm)
    if (!r.ok) throw new Error(JSON.stringify(r.issues))
    expect(referencesOf(r.manifest).map((x) => `${x.via} ${x.kind}/${x.name} ${x.path.join('.')}`)).toEqual([
      'cdrom ISO/talos spec.hardware.cdrom.iso',
      'disk-image DiskImage/debian-13-cloud spec.disks.0.image',
      'annotation LXC/cache-01 metadata.annotations.proxops/depends-on',
      'annotation CTTemplate/debian-base metadata.annotations.proxops/depends-on',
    ])
    const none = clone(validManifests.VM)
    none.spec.hardware = { cdrom: { iso: 'none' } }
    const r2 = parseManifest(none)
    expect(r2.ok && referencesOf(r2.manifest)).toEqual([])
    const ct = parseManifest(clone(validManifests.LXC))
    expect(ct.ok && referencesOf(ct.manifest).map((x) => x.kind)).toEqual(['CTTemplate'])
  })
})

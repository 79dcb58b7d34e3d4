import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { buildGraph, clusterDependencies, poolNeeded, referencesOf, resourceKey, type ResourceKey } from './graph.js'
import { isGuestKind, KIND_ALIASES, KIND_ROOT_OF, KINDS, type Kind } from './kinds.js'
import { loadRepository } from './loader/load.js'
import { parseManifest } from './manifest/parse.js'
import { clone, validManifests } from './test-support/manifests.js'
import { memoryFs } from './test-support/memory-fs.js'
import { clusterConfig } from './test-support/repo.js'

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
      // a NIC's bridge may be a vnet: a VNet declaring it is a prerequisite, none is the node's own bridge
      'vnet VNet/vmbr0 spec.networks.0.bridge',
      'storage Storage/local-lvm spec.disks.0.storage',
      'annotation LXC/cache-01 metadata.annotations.proxops/depends-on',
      'annotation CTTemplate/debian-base metadata.annotations.proxops/depends-on',
    ])
    const none = clone(validManifests.VM)
    none.spec.hardware = { cdrom: { iso: 'none' } }
    const r2 = parseManifest(none)
    expect(r2.ok && referencesOf(r2.manifest).map((x) => x.kind)).toEqual(['VNet', 'Storage'])
    const ct = parseManifest(clone(validManifests.LXC))
    expect(ct.ok && referencesOf(ct.manifest).map((x) => x.kind)).toEqual(['CTTemplate', 'VNet', 'Storage'])
  })
})

describe('clusterDependencies', () => {
  const parsed = (doc: unknown) => {
    const r = parseManifest(doc)
    if (!r.ok) throw new Error(JSON.stringify(r.issues))
    return r.manifest
  }
  const named = (
    kind: keyof typeof validManifests,
    name: string,
    spec: Record<string, unknown> = {},
    deps?: string,
  ) => {
    const m = clone(validManifests[kind])
    m.metadata = { name, ...(deps === undefined ? {} : { annotations: { 'proxops/depends-on': deps } }) }
    Object.assign(m.spec, spec)
    return parsed(m)
  }

  it('has an edge for every pool a manifest needs, when a Pool of the cluster declares it by spec.id', () => {
    const { graph, references, problems } = clusterDependencies([
      named('Pool', 'web-pool', { id: 'web' }),
      named('Pool', 'blue', { id: 'web/blue' }),
      named('VM', 'app', { pool: 'web/blue' }),
      named('BackupJob', 'nightly', { selection: { pool: 'web' } }),
      named('VM', 'other', { vmid: 401, pool: 'pve-own' }),
    ])
    expect(problems).toEqual([])
    expect(graph.dependsOn.get('Pool/blue')).toEqual(['Pool/web-pool'])
    expect(graph.dependsOn.get('VM/app')).toEqual(['Pool/blue'])
    expect(graph.dependsOn.get('BackupJob/nightly')).toEqual(['Pool/web-pool'])
    // a pool no Pool declares is PVE's own: no edge, no problem
    expect(graph.dependsOn.get('VM/other')).toEqual([])
    expect(references.get('VM/other')).toEqual([
      {
        kind: 'Pool',
        name: 'pve-own',
        via: 'pool',
        path: ['spec', 'pool'],
        identity: 'pool:pve-own',
        target: undefined,
      },
      {
        kind: 'VNet',
        name: 'vmbr0',
        via: 'vnet',
        path: ['spec', 'networks', 0, 'bridge'],
        identity: 'sdn-vnet:vmbr0',
        target: undefined,
      },
      // its disk's storage: no Storage declares local-lvm, so it is PVE's own (no edge)
      {
        kind: 'Storage',
        name: 'local-lvm',
        via: 'storage',
        path: ['spec', 'disks', 0, 'storage'],
        identity: 'storage:local-lvm',
        target: undefined,
      },
    ])
    expect(graph.level.get('VM/app')).toBe(2)
  })

  it('reads depends-on naming any kind, a BackupJob too; reports unknown targets and cycles with the manifest', () => {
    const ok = clusterDependencies([
      named('BackupJob', 'nightly'),
      named('VM', 'app', {}, 'backupjob:nightly'),
      named('BackupJob', 'weekly', {}, 'VM:app'),
    ])
    expect(ok.problems).toEqual([])
    expect(ok.graph.order).toEqual(['BackupJob/nightly', 'VM/app', 'BackupJob/weekly'])
    const bad = clusterDependencies([
      named('VM', 'a', {}, 'VM:b'),
      named('VM', 'b', { vmid: 401 }, 'VM:a'),
      named('ISO', 'x', {}, 'Pool:nope'),
    ])
    expect(bad.problems).toEqual([
      {
        code: 'dependency-unknown',
        key: 'ISO/x',
        path: ['metadata', 'annotations', 'proxops/depends-on'],
        message: 'depends on Pool/nope, which is not in this cluster',
      },
      {
        code: 'dependency-cycle',
        key: 'VM/a',
        path: ['metadata', 'annotations', 'proxops/depends-on'],
        message: 'dependency cycle: VM/a → VM/b → VM/a; remove one of these dependencies',
      },
    ])
  })

  it('reports a malformed depends-on (a manifest built by hand, not parsed)', () => {
    const m = named('VM', 'a')
    const { problems } = clusterDependencies([
      { ...m, metadata: { ...m.metadata, annotations: { 'proxops/depends-on': 'Nope:x' } } },
    ])
    expect(problems.map((p) => [p.code, p.key])).toEqual([['annotation-invalid', 'VM/a']])
  })
})

describe('validate and plan read one graph', () => {
  /**
   * one generated manifest: its kind, its `proxops/depends-on` items, the pool it names and one structured link
   * (by the index of another generated manifest: mostly an earlier one of the right kind, sometimes not)
   */
  const item = fc.record({
    kind: fc.constantFrom(...KINDS),
    deps: fc.array(
      fc.record({
        at: fc.nat(8),
        earlier: fc.nat(5).map((n) => n > 0),
        kind: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 6 },
          { arbitrary: fc.constantFrom(...KINDS), weight: 1 },
        ),
        alias: fc.nat(2),
        upper: fc.boolean(),
      }),
      { maxLength: 3 },
    ),
    pool: fc.option(fc.nat(3), { nil: undefined }),
    link: fc.constantFrom('none', 'none', 'cdrom', 'image', 'clone'),
    target: fc.nat(8),
  })
  type Item = typeof item extends fc.Arbitrary<infer T> ? T : never

  function document(items: readonly Item[], i: number): Record<string, unknown> {
    const it = items[i]!
    const m = clone(validManifests[it.kind])
    m.metadata = { name: `n${i}` }
    // an earlier manifest, else a later one or (past the end) nothing
    const pick = (at: number, earlier: boolean) => (earlier && i > 0 ? at % i : i + 1 + (at % (items.length - i)))
    const deps = it.deps.map((d) => {
      const j = pick(d.at, d.earlier)
      const kind = d.kind ?? items[j]?.kind ?? 'VM'
      const spellings = KIND_ALIASES[kind]
      const spelling = spellings[d.alias % spellings.length]!
      return `${d.upper ? spelling.toUpperCase() : spelling.toLowerCase()}:n${j}`
    })
    if (deps.length > 0) m.metadata.annotations = { 'proxops/depends-on': deps.join(', ') }
    // mostly an earlier manifest of the kind the field names (no link when there is none); now and then any
    const linked = (kind: Kind): string | undefined => {
      const fit = items.flatMap((x, j) => (j < i && x.kind === kind ? [j] : []))
      if (it.target >= 6) return `n${pick(it.target, false)}`
      return fit.length === 0 ? undefined : `n${fit[it.target % fit.length]}`
    }
    // a pool one of the generated Pools declares (`p<index>`), else one PVE has of its own
    const pools = items.flatMap((x, j) => (x.kind === 'Pool' && j !== i ? [j] : []))
    const pool =
      it.pool === undefined ? undefined : `p${pools.length > 0 && it.pool < 3 ? pools[it.pool % pools.length] : 'own'}`
    if (isGuestKind(it.kind)) {
      m.spec.vmid = 100 + i
      if (pool !== undefined) m.spec.pool = pool
    }
    if (it.kind === 'VM' || it.kind === 'TemplateVM') {
      const iso = it.link === 'cdrom' ? linked('ISO') : undefined
      const image = it.link === 'image' ? linked('DiskImage') : undefined
      const source = it.link === 'clone' && it.kind === 'VM' ? linked('TemplateVM') : undefined
      if (iso !== undefined) m.spec.hardware = { cdrom: { iso } }
      if (image !== undefined) m.spec.disks = [{ storage: 'local-lvm', image }]
      if (source !== undefined) {
        m.spec.clone = source
        m.spec.disks = []
      }
    } else if (it.kind === 'LXC' || it.kind === 'TemplateCT') {
      const source = it.link === 'clone' && it.kind === 'LXC' ? linked('TemplateCT') : undefined
      if (source !== undefined) {
        delete m.spec.template
        m.spec.clone = source
      } else m.spec.template = linked('CTTemplate') ?? 'n0'
    } else if (it.kind === 'ISO' || it.kind === 'CTTemplate' || it.kind === 'DiskImage') {
      m.spec.filename = `f${i}.${it.kind === 'ISO' ? 'iso' : it.kind === 'DiskImage' ? 'qcow2' : 'tar.zst'}`
    } else if (it.kind === 'BackupJob') {
      if (pool !== undefined) m.spec.selection = { pool }
    } else if (it.kind === 'Pool') {
      m.spec.id = pool === undefined || pool === 'pown' ? `p${i}` : `${pool}/s${i}`
    }
    return m
  }

  // the first is a CTTemplate, so that containers have a template to name
  const cluster = fc
    .array(item, { minLength: 0, maxLength: 8 })
    .map((xs): Item[] => [{ kind: 'CTTemplate', deps: [], pool: undefined, link: 'none', target: 0 }, ...xs])

  test.prop([cluster], { numRuns: 100 })(
    'what validate accepts, plan() orders; a cycle validate reports, plan() reports',
    async (items) => {
      const files: Record<string, string> = { 'clusters/c/config.yaml': clusterConfig('c', ['pve1']) }
      const listed: string[] = []
      items.forEach((it, i) => {
        const file = `${KIND_ROOT_OF[it.kind]}/c/m${i}.yaml`
        files[file] = JSON.stringify(document(items, i))
        listed.push(`../../${file}`)
      })
      files['clusters/c/resources.yaml'] = JSON.stringify(listed)
      const model = await loadRepository({ root: '/repo', fs: memoryFs(files) })
      const manifests = model.clusters[0]!.index.resources.map((r) => r.manifest)
      const { graph, problems } = clusterDependencies(manifests)

      const graphErrors = model.errors.filter(
        (e) =>
          e.code === 'dependency-unknown' ||
          e.code === 'dependency-kind' ||
          e.code === 'dependency-cycle' ||
          (e.code === 'clone-invalid' && e.message.includes('cannot clone itself')),
      )
      expect(problems.length === 0, JSON.stringify({ graphErrors, problems })).toBe(graphErrors.length === 0)
      const cycles = (xs: ReadonlyArray<{ code: string; message: string }>) =>
        xs.filter((x) => x.code === 'dependency-cycle').map((x) => x.message)
      expect(cycles(graphErrors).sort()).toEqual(cycles(problems).sort())
      if (problems.length > 0) return
      // accepted: every reference to a declared manifest (a pool by its id) is an edge the levels respect
      const declared = new Set(manifests.map((m) => resourceKey(m.kind, m.metadata.name)))
      const pools = new Map(
        manifests.flatMap((m) => (m.kind === 'Pool' ? [[m.spec.id, resourceKey('Pool', m.metadata.name)]] : [])),
      )
      const before = (key: ResourceKey, target: ResourceKey) => {
        expect(declared.has(target), `${key} → ${target}`).toBe(true)
        expect(graph.dependsOn.get(key)).toContain(target)
        expect(graph.level.get(target)!).toBeLessThan(graph.level.get(key)!)
      }
      for (const m of manifests) {
        const key = resourceKey(m.kind, m.metadata.name)
        for (const ref of referencesOf(m)) if (ref.identity === undefined) before(key, resourceKey(ref.kind, ref.name))
        // a guest's pool, a nested pool's parent, a backup job's pool: when declared here, created first
        const pool = pools.get(poolNeeded(m)?.id ?? '')
        if (pool !== undefined) before(key, pool)
      }
    },
  )
})

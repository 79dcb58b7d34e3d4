/**
 * Property tests: generated valid manifests validate (and normalise consistently); each mutation that breaks
 * one rule is rejected with that rule's code at that field; the loader never reads outside the root.
 */
import { afterAll, describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { join, relative, sep, isAbsolute } from 'node:path'
import {
  KIND_ALIASES,
  KINDS,
  type Kind,
  loadRepository,
  nodeFs,
  parseManifest,
  type RepoFs,
  MiB,
  GiB,
} from '../src/index.js'
import { clusterConfig, isoYaml, tempRepo, vmYaml } from '../src/test-support/repo.js'

// ---------------------------------------------------------------- arbitraries of valid manifests

const nameArb = fc
  .array(fc.stringMatching(/^[a-z0-9]{1,6}$/), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join('-'))
  .filter((n) => n.length <= 63)
const nodeArb = fc.constantFrom('pve1', 'pve2', 'pve3', 'edge1')
const storageArb = fc.constantFrom('local', 'local-lvm', 'local-zfs', 'ceph_pool.1')
const vmidArb = fc.integer({ min: 100, max: 999_999_999 })
const spelling = (kind: Kind) =>
  fc
    .tuple(
      fc.constantFrom(...KIND_ALIASES[kind]),
      fc.constantFrom<'keep' | 'lower' | 'upper'>('keep', 'lower', 'upper'),
    )
    .map(([s, c]) => (c === 'lower' ? s.toLowerCase() : c === 'upper' ? s.toUpperCase() : s))
const binaryMiB = fc.integer({ min: 1, max: 1 << 20 }).chain((mib) =>
  fc.constantFrom<[string | number, number]>(
    [`${mib}MiB`, mib],
    [`${mib}Mi`, mib],
    [mib * MiB, mib],
    ...(mib % 1024 === 0
      ? ([
          [`${mib / 1024}GiB`, mib],
          [`${mib / 1024}gi`, mib],
        ] as Array<[string, number]>)
      : []),
  ),
)
const tagsArb = fc.array(fc.stringMatching(/^[a-z0-9_][a-z0-9_.+-]{0,20}$/), { maxLength: 4 })

/** a generated document of kind `r.kind` named `r.name`, with what its memory and disk sizes must normalise to */
const generated = (
  r: { kind: string; name: string },
  spec: object,
  memoryMiB: number | undefined,
  diskBytes: number[],
) => ({
  doc: { apiVersion: 'proxops/v1alpha1', kind: r.kind, metadata: { name: r.name }, spec },
  memoryMiB,
  diskBytes,
})

const vmArb = (template: boolean) =>
  fc
    .record({
      name: nameArb,
      kind: spelling(template ? 'TemplateVM' : 'VM'),
      node: nodeArb,
      vmid: vmidArb,
      memory: binaryMiB,
      cores: fc.integer({ min: 1, max: 128 }),
      disks: fc.array(
        fc.record({ storage: storageArb, gib: fc.integer({ min: 1, max: 4096 }), iothread: fc.boolean() }),
        { minLength: 1, maxLength: 4 },
      ),
      nics: fc.array(
        fc.record({
          bridge: fc.constantFrom('vmbr0', 'vmbr1'),
          vlan: fc.option(fc.integer({ min: 1, max: 4094 }), { nil: undefined }),
        }),
        { maxLength: 3 },
      ),
      tags: tagsArb,
      state: template ? fc.constant(undefined) : fc.option(fc.constantFrom('started', 'stopped'), { nil: undefined }),
    })
    .map((r) =>
      generated(
        r,
        {
          node: r.node,
          vmid: r.vmid,
          ...(r.state ? { state: r.state } : {}),
          memory: r.memory[0],
          cpu: { type: 'host', cores: r.cores },
          disks: r.disks.map((d) => ({ storage: d.storage, size: `${d.gib}GiB`, iothread: d.iothread })),
          networks: r.nics.map((n) => ({ bridge: n.bridge, ...(n.vlan ? { vlan: n.vlan } : {}) })),
          tags: r.tags,
        },
        r.memory[1],
        r.disks.map((d) => d.gib * GiB),
      ),
    )

const lxcArb = (template: boolean) =>
  fc
    .record({
      name: nameArb,
      kind: spelling(template ? 'TemplateCT' : 'LXC'),
      node: nodeArb,
      vmid: vmidArb,
      template: nameArb,
      memory: binaryMiB,
      swap: fc.option(fc.integer({ min: 0, max: 65536 }), { nil: undefined }),
      root: fc.integer({ min: 1, max: 1024 }),
      mps: fc.array(fc.integer({ min: 1, max: 512 }), { maxLength: 3 }),
    })
    .map((r) =>
      generated(
        r,
        {
          node: r.node,
          vmid: r.vmid,
          template: r.template,
          memory: r.memory[0],
          ...(r.swap !== undefined ? { swap: `${r.swap}MiB` } : {}),
          cpu: { cores: 1 },
          root: { storage: 'local-lvm', size: `${r.root}GiB` },
          'mount-points': r.mps.map((g, i) => ({ storage: 'local-zfs', size: `${g}GiB`, 'mount-point': `/data${i}` })),
          networks: [{ bridge: 'vmbr0', ip: 'dhcp' }],
        },
        r.memory[1],
        [r.root * GiB],
      ),
    )

const EXT: Record<'ISO' | 'CTTemplate' | 'DiskImage', string[]> = {
  ISO: ['.iso', '.img', '.ISO'],
  CTTemplate: ['.tar', '.tar.zst', '.tar.xz', '.tar.gz'],
  DiskImage: ['.qcow2', '.vmdk', '.raw'],
}
const artifactArb = (kind: 'ISO' | 'CTTemplate' | 'DiskImage') =>
  fc
    .record({
      name: nameArb,
      kind: spelling(kind),
      nodes: fc.uniqueArray(nodeArb, { minLength: 1, maxLength: 4 }),
      stem: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,30}$/),
      ext: fc.constantFrom(...EXT[kind]),
      https: fc.boolean(),
    })
    .map((r) =>
      generated(
        r,
        {
          nodes: r.nodes,
          storage: 'local',
          filename: `${r.stem}${r.ext}`,
          url: `${r.https ? 'https' : 'http'}://downloads.example.invalid/${r.stem}${r.ext}`,
        },
        undefined,
        [] as number[],
      ),
    )

const anyManifest = fc.oneof(
  vmArb(false),
  vmArb(true),
  lxcArb(false),
  lxcArb(true),
  artifactArb('ISO'),
  artifactArb('CTTemplate'),
  artifactArb('DiskImage'),
)

describe('generated valid manifests', () => {
  test.prop([anyManifest], { numRuns: 300 })('validate and normalise', ({ doc, memoryMiB, diskBytes }) => {
    const r = parseManifest(structuredClone(doc))
    if (!r.ok) throw new Error(JSON.stringify(r.issues))
    expect(KINDS).toContain(r.manifest.kind)
    const spec = r.manifest.spec as any
    if (memoryMiB !== undefined) expect(spec.memory).toBe(memoryMiB)
    if (spec.disks) expect(spec.disks.map((d: { size: number }) => d.size)).toEqual(diskBytes)
    if (spec.root) expect(spec.root.size).toBe(diskBytes[0])
    if (spec.state) expect(['started', 'stopped']).toContain(spec.state)
    if (r.manifest.kind === 'TemplateVM' || r.manifest.kind === 'TemplateCT') expect(spec.state).toBe('stopped')
  })
})

// ---------------------------------------------------------------- mutations

type Doc = any
interface Mutation {
  name: string
  applies: (d: Doc) => boolean
  mutate: (d: Doc) => void
  code: string
  path: string
}
const isGuest = (d: Doc) => 'vmid' in d.spec
const isVm = (d: Doc) => 'disks' in d.spec
const isCt = (d: Doc) => 'root' in d.spec
const isArtifact = (d: Doc) => 'url' in d.spec

const mutations: Mutation[] = [
  {
    name: 'apiVersion',
    applies: () => true,
    mutate: (d) => (d.apiVersion = 'proxops/v2'),
    code: 'api-version',
    path: 'apiVersion',
  },
  { name: 'kind', applies: () => true, mutate: (d) => (d.kind = 'Widget'), code: 'kind-unknown', path: 'kind' },
  {
    name: 'name',
    applies: () => true,
    mutate: (d) => (d.metadata.name = `${d.metadata.name}_X`),
    code: 'name-invalid',
    path: 'metadata.name',
  },
  {
    name: 'unknown spec field',
    applies: () => true,
    mutate: (d) => (d.spec.bogus = 1),
    code: 'field-unknown',
    path: 'spec.bogus',
  },
  { name: 'vmid', applies: isGuest, mutate: (d) => (d.spec.vmid = 42), code: 'vmid-range', path: 'spec.vmid' },
  {
    name: 'node',
    applies: isGuest,
    mutate: (d) => (d.spec.node = 'pve/1'),
    code: 'node-name-invalid',
    path: 'spec.node',
  },
  {
    name: 'decimal memory',
    applies: isGuest,
    mutate: (d) => (d.spec.memory = '3G'),
    code: 'quantity-not-whole-mib',
    path: 'spec.memory',
  },
  {
    name: 'bad quantity',
    applies: isGuest,
    mutate: (d) => (d.spec.memory = '2.5GiB'),
    code: 'quantity-invalid',
    path: 'spec.memory',
  },
  {
    name: 'state',
    applies: isGuest,
    mutate: (d) => (d.spec.state = 'paused'),
    code: 'state-invalid',
    path: 'spec.state',
  },
  {
    name: 'template started',
    applies: (d) => isGuest(d) && /^(templatevm|tvm|template|templatect|tct)$/i.test(d.kind),
    mutate: (d) => (d.spec.state = 'started'),
    code: 'template-state',
    path: 'spec.state',
  },
  {
    name: 'extra tags',
    applies: isGuest,
    mutate: (d) => (d.spec.extra = { tags: 'x' }),
    code: 'extra-reserved-key',
    path: 'spec.extra.tags',
  },
  {
    name: 'extra unused',
    applies: isGuest,
    mutate: (d) => (d.spec.extra = { unused0: 'local-lvm:vm-1-disk-0' }),
    code: 'extra-reserved-key',
    path: 'spec.extra.unused0',
  },
  {
    name: 'tag',
    applies: isGuest,
    mutate: (d) => (d.spec.tags = ['has space']),
    code: 'tag-invalid',
    path: 'spec.tags.0',
  },
  {
    name: 'disk size decimal',
    applies: isVm,
    mutate: (d) => (d.spec.disks[0].size = '10G'),
    code: 'quantity-not-whole-mib',
    path: 'spec.disks.0.size',
  },
  {
    name: 'disk size + image',
    applies: isVm,
    mutate: (d) => (d.spec.disks[0].image = 'img'),
    code: 'disk-size-with-image',
    path: 'spec.disks.0.size',
  },
  {
    name: 'disk neither',
    applies: isVm,
    mutate: (d) => delete d.spec.disks[0].size,
    code: 'disk-size-missing',
    path: 'spec.disks.0',
  },
  {
    name: 'ssd on virtio',
    applies: isVm,
    mutate: (d) => Object.assign(d.spec.disks[0], { interface: 'virtio0', ssd: true }),
    code: 'ssd-bus',
    path: 'spec.disks.0.ssd',
  },
  { name: 'no disks', applies: isVm, mutate: (d) => (d.spec.disks = []), code: 'disks-required', path: 'spec' },
  { name: 'missing cpu', applies: isGuest, mutate: (d) => delete d.spec.cpu, code: 'field-required', path: 'spec.cpu' },
  {
    name: 'root size',
    applies: isCt,
    mutate: (d) => (d.spec.root.size = 'huge'),
    code: 'quantity-invalid',
    path: 'spec.root.size',
  },
  {
    name: 'bind mount /etc',
    applies: isCt,
    mutate: (d) => (d.spec['bind-mounts'] = [{ 'host-path': '/etc', 'mount-point': '/x' }]),
    code: 'bind-mount-host-path',
    path: 'spec.bind-mounts.0.host-path',
  },
  {
    name: 'extension',
    applies: isArtifact,
    mutate: (d) => (d.spec.filename = 'file.exe'),
    code: 'filename-extension',
    path: 'spec.filename',
  },
  {
    name: 'filename path',
    applies: isArtifact,
    mutate: (d) => (d.spec.filename = `../${d.spec.filename}`),
    code: 'filename-invalid',
    path: 'spec.filename',
  },
  {
    name: 'url',
    applies: isArtifact,
    mutate: (d) => (d.spec.url = 'file:///etc/passwd'),
    code: 'url-invalid',
    path: 'spec.url',
  },
  {
    name: 'storage',
    applies: isArtifact,
    mutate: (d) => (d.spec.storage = 'my storage'),
    code: 'storage-id-invalid',
    path: 'spec.storage',
  },
  {
    name: 'checksum half',
    applies: isArtifact,
    mutate: (d) => (d.spec.checksum = { value: 'ab' }),
    code: 'checksum-incomplete',
    path: 'spec.checksum',
  },
]

describe('mutated manifests', () => {
  test.prop([anyManifest, fc.nat()], { numRuns: 400 })(
    "are rejected with the rule's code at the field",
    ({ doc }, pick) => {
      const applicable = mutations.filter((m) => m.applies(doc))
      const mutation = applicable[pick % applicable.length]!
      const d = structuredClone(doc)
      mutation.mutate(d)
      const r = parseManifest(d)
      expect(r.ok, mutation.name).toBe(false)
      const found = r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join('.')}`)
      expect(found, mutation.name).toContain(`${mutation.code} ${mutation.path}`)
    },
  )
})

// ---------------------------------------------------------------- the loader never reads outside the root

const repos: Array<ReturnType<typeof tempRepo>> = []
afterAll(() => repos.forEach((r) => r.cleanup()))

describe('root boundary', () => {
  const segment = fc.constantFrom(
    '..',
    '.',
    'vm',
    'base',
    'iso',
    'x.yaml',
    'inside.yaml',
    'out',
    'out.yaml',
    'secret.yaml',
    'link',
    'dirlink',
    'clusters',
    'lab',
    'repo',
  )
  const entryArb = fc.oneof(
    fc.array(segment, { minLength: 1, maxLength: 7 }).map((s) => s.join('/')),
    fc.constantFrom(
      '/etc/passwd',
      '../../../secret.yaml',
      '../../vm/base/link.yaml',
      '../../vm/dirlink/secret.yaml',
      '../../vm/base/x.yaml',
    ),
  )
  test.prop([fc.array(entryArb, { maxLength: 8 })], { numRuns: 60 })(
    'every file read is inside the root',
    async (entries) => {
      const repo = tempRepo({
        'clusters/lab/config.yaml': clusterConfig('lab'),
        'clusters/lab/resources.yaml': `resources:\n${entries.map((e) => `  - ${JSON.stringify(e)}\n`).join('')}`,
        'vm/base/x.yaml': vmYaml('x', 100),
        'iso/base/inside.yaml': isoYaml('inside'),
      })
      repos.push(repo)
      repo.write('../secret.yaml', vmYaml('secret', 101))
      repo.write('../out/secret.yaml', vmYaml('secret', 102))
      repo.link('vm/base/link.yaml', join(repo.dir, 'secret.yaml'))
      repo.link('vm/dirlink', join(repo.dir, 'out'))
      const opened: string[] = []
      const listed: string[] = []
      const fs: RepoFs = {
        ...nodeFs,
        readFile: async (p) => {
          opened.push(p)
          return nodeFs.readFile(p)
        },
        readdir: async (p) => {
          listed.push(p)
          return nodeFs.readdir(p)
        },
      }
      const model = await loadRepository({ root: repo.root, fs })
      const inside = (p: string) => {
        const r = relative(repo.root, p)
        return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !isAbsolute(r))
      }
      for (const p of [...opened, ...listed]) expect(inside(p), p).toBe(true)
      // and nothing from outside made it into the model
      for (const c of model.clusters)
        for (const r of c.index.resources) expect(r.manifest.metadata.name).not.toBe('secret')
    },
  )
})

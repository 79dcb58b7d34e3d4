/**
 * adopt reads a guest's HA resource back as spec.ha: the adopted manifest plans no HA change (apply then adopt
 * then plan is empty), the power state is what HA requests, and what spec.ha cannot say is a gap, never a
 * silent drop.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest, type Manifest } from '@proxops/schema'
import type { HaItem } from '@proxops/pve-client/wire'
import type { LiveGuest, LiveHa, LiveInventory } from '../../inventory.js'
import { adopt } from '../../adopt/adopt.js'
import { plan } from '../../plan/plan.js'
import { DEFAULT_POLICY, type Plan } from '../../plan-types.js'

const VM = (vmid: number, running: boolean, type: 'qemu' | 'lxc' = 'qemu'): LiveGuest => ({
  type,
  node: 'pve1',
  vmid,
  name: `g${vmid}`,
  template: false,
  status: running ? 'running' : 'stopped',
  tags: ['proxops'],
  digest: 'd0',
  config:
    type === 'qemu'
      ? {
          tags: 'proxops',
          name: `g${vmid}`,
          memory: '1024',
          cores: '1',
          cpu: 'host',
          scsi0: `local-lvm:vm-${vmid}-disk-0,size=4G`,
        }
      : {
          tags: 'proxops',
          hostname: `g${vmid}`,
          memory: '512',
          cores: '1',
          rootfs: `local-lvm:vm-${vmid}-disk-0,size=4G`,
        },
  pending: {},
  pendingDeletes: [],
})

const inventory = (guests: LiveGuest[], ha: LiveHa | { unreadable: string }): LiveInventory => ({
  cluster: 'lab',
  pveVersion: 'form' in ha && ha.form === 'groups' ? '8.4.1' : '9.1.1',
  nodes: [
    { node: 'pve1', online: true },
    { node: 'pve2', online: true },
  ],
  guests,
  unknownGuests: [],
  storages: [],
  volumes: [{ node: 'pve1', storage: 'local', volid: 'local:vztmpl/deb.tar.zst', content: 'vztmpl' }],
  unreadableStorages: [],
  firewalls: [],
  backupJobs: { known: [] },
  heldVmids: [],
  pools: { known: [] },
  ha: 'unreadable' in ha ? ha : { known: ha },
})

function adoptThenPlan(live: LiveInventory): { plan: Plan; result: ReturnType<typeof adopt> } {
  const result = adopt(live, { cluster: 'lab' })
  const manifests: Manifest[] = []
  for (const file of result.files) {
    const doc = file.document as { kind: string; spec: Record<string, unknown> }
    if (doc.kind === 'LXC') doc.spec.template = 'deb-tar-zst'
    const parsed = parseManifest(doc)
    if (!parsed.ok) throw new Error(`${file.path}: ${JSON.stringify(parsed.issues)}`)
    manifests.push(parsed.manifest)
  }
  const p = plan({ cluster: 'lab', manifests }, live, {
    ...DEFAULT_POLICY,
    nodes: ['pve1', 'pve2'],
    pruneBudget: 'unlimited',
  })
  return { plan: p, result }
}

const spec = (r: ReturnType<typeof adopt>, vmid: number) =>
  r.files.find((f) => f.vmid === vmid)?.document.spec as Record<string, unknown>

describe('adopt spec.ha', () => {
  it('a guest without an HA resource gets no spec.ha; unreadable HA makes the file incomplete', () => {
    const none = adopt(inventory([VM(100, true)], { form: 'rules', resources: [], preferences: [] }), {
      cluster: 'lab',
    })
    expect(spec(none, 100).ha).toBeUndefined()
    expect(none.incomplete).toEqual([])
    const unreadable = adopt(inventory([VM(100, true)], { unreadable: '403 Permission check failed' }), {
      cluster: 'lab',
    })
    expect(spec(unreadable, 100).ha).toBeUndefined()
    expect(unreadable.incomplete).toEqual([
      {
        path: 'vm/lab/g100.yaml',
        reason:
          'spec.ha: the HA configuration could not be read (403 Permission check failed); adopt again to learn whether vm:100 is an HA resource',
      },
    ])
  })

  it('PVE 9: resource and own node-affinity rule become spec.ha; the plan is only the ownership claim', () => {
    const ha: LiveHa = {
      form: 'rules',
      resources: [{ sid: 'vm:100', type: 'vm', state: 'started', max_restart: '3', comment: 'web tier' }],
      preferences: [
        { rule: 'proxops-vm-100', type: 'node-affinity', resources: 'vm:100', nodes: 'pve2:1,pve1:2', strict: '1' },
      ],
    }
    const { plan: p, result } = adoptThenPlan(inventory([VM(100, true)], ha))
    expect(spec(result, 100).state).toBe('started')
    expect(spec(result, 100).ha).toEqual({ max_restart: 3, nodes: { pve1: 2, pve2: 1 }, strict: true })
    expect(result.gaps).toContainEqual({
      kind: 'VM',
      node: 'pve1',
      id: '100',
      field: 'ha.comment',
      value: 'web tier',
      note: 'the first apply replaces the resource comment with the ownership marker',
    })
    // the claim: the marker on the resource and its rule, nothing else
    expect(p.actions.map((a) => [a.kind, a.type, a.diffs.map((d) => d.field)])).toEqual([
      ['HA', 'update', ['spec.ha.ownership', 'spec.ha.ownership']],
    ])
  })

  it('PVE 8: a shared group is a gap and stays; the own group is adopted; disabled and ignored states', () => {
    const ha: LiveHa = {
      form: 'groups',
      resources: [
        { sid: 'vm:100', state: 'started', group: 'web', comment: 'proxops: VM/g100' },
        { sid: 'vm:101', state: 'disabled', group: 'proxops-vm-101', comment: 'proxops: VM/g101' },
        { sid: 'ct:102', state: 'ignored', max_relocate: '0', comment: 'proxops: LXC/g102' },
      ],
      preferences: [
        { group: 'web', nodes: 'pve1,pve2', comment: 'shared' },
        { group: 'proxops-vm-101', nodes: 'pve1:5', restricted: '1', comment: 'proxops: VM/g101' },
      ],
    }
    const { plan: p, result } = adoptThenPlan(inventory([VM(100, true), VM(101, false), VM(102, true, 'lxc')], ha))
    expect(spec(result, 100).ha).toEqual({})
    expect(result.gaps.find((g) => g.id === '100')).toMatchObject({ field: 'ha.group', value: 'web' })
    expect(spec(result, 101)).toMatchObject({
      state: 'stopped',
      ha: { state: 'disabled', nodes: { pve1: 5 }, strict: true },
    })
    expect(spec(result, 102)).toMatchObject({ state: 'started', ha: { state: 'ignored', max_relocate: 0 } })
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
  })

  it('the power state is what HA requests: a stopped guest HA wants started is adopted started, with a warning', () => {
    const ha: LiveHa = { form: 'rules', resources: [{ sid: 'vm:100', comment: 'proxops: VM/g100' }], preferences: [] }
    const { result } = adoptThenPlan(inventory([VM(100, false)], ha))
    expect(spec(result, 100)).toMatchObject({ state: 'started', ha: {} })
    expect(result.warnings).toContain(
      'vm:100 on pve1: HA requests started but the guest is stopped; adopted as spec.state: started',
    )
  })

  it('a guest HA moved off its preferred node is adopted incomplete (its node must have the highest priority)', () => {
    const ha: LiveHa = {
      form: 'rules',
      resources: [{ sid: 'vm:100', state: 'started', comment: 'proxops: VM/g100' }],
      preferences: [{ rule: 'proxops-vm-100', type: 'node-affinity', resources: 'vm:100', nodes: 'pve1:1,pve2:2' }],
    }
    const result = adopt(inventory([VM(100, true)], ha), { cluster: 'lab' })
    expect(spec(result, 100).ha).toEqual({ nodes: { pve1: 1, pve2: 2 } })
    expect(result.resourcesLines).not.toContain('- ../../vm/lab/g100.yaml')
    expect(result.incomplete).toContainEqual({
      path: 'vm/lab/g100.yaml',
      reason: expect.stringContaining('spec.node pve1 must be listed with the highest priority (2)') as string,
    })
  })

  it('options spec.ha cannot express are gaps (failback off, resource-affinity rules)', () => {
    const ha: LiveHa = {
      form: 'rules',
      resources: [{ sid: 'vm:100', state: 'started', failback: '0', comment: 'proxops: VM/g100' }],
      preferences: [
        { rule: 'keep-apart', type: 'resource-affinity', resources: 'vm:100,vm:200', affinity: 'negative' },
      ],
    }
    const result = adopt(inventory([VM(100, true)], ha), { cluster: 'lab' })
    expect(result.gaps.filter((g) => g.id === '100').map((g) => [g.field, g.value])).toEqual([
      ['ha.failback', '0'],
      ['ha.rule keep-apart', 'resource-affinity vm:100,vm:200'],
    ])
  })

  const nodeMap = fc
    .record({ top: fc.integer({ min: 1, max: 1000 }), other: fc.option(fc.integer({ min: 0, max: 1000 })) })
    .map(({ top, other }) => (other === null ? { pve1: top } : { pve1: Math.max(top, other), pve2: other }))

  test.prop([
    fc.constantFrom('groups' as const, 'rules' as const),
    fc.constantFrom('started', 'stopped', 'disabled', 'ignored', undefined),
    fc.boolean(),
    fc.integer({ min: 0, max: 10 }),
    fc.integer({ min: 0, max: 10 }),
    fc.option(nodeMap),
    fc.boolean(),
  ])(
    'an owned HA resource adopted plans nothing (any state, counters, preference, form)',
    (form, state, running, restart, relocate, nodes, strict) => {
      const marker = 'proxops: VM/g100'
      const resource: Record<string, string> = {
        sid: 'vm:100',
        max_restart: String(restart),
        max_relocate: String(relocate),
        comment: marker,
      }
      if (state) resource.state = state
      const nodeList = nodes
        ? Object.entries(nodes)
            .map(([n, p]) => `${n}:${p}`)
            .join(',')
        : undefined
      if (form === 'groups' && nodeList) resource.group = 'proxops-vm-100'
      const preferences: HaItem[] = !nodeList
        ? []
        : form === 'groups'
          ? [{ group: 'proxops-vm-100', nodes: nodeList, restricted: strict ? '1' : '0', comment: marker }]
          : [
              {
                rule: 'proxops-vm-100',
                type: 'node-affinity',
                resources: 'vm:100',
                nodes: nodeList,
                strict: strict ? '1' : '0',
                comment: marker,
              },
            ]
      // a guest in the state HA requests (HA converged)
      const on = state === undefined || state === 'started' ? true : state === 'ignored' ? running : false
      const { plan: p } = adoptThenPlan(inventory([VM(100, on)], { form, resources: [resource], preferences }))
      expect(p.actions).toEqual([])
      expect(p.anomalies).toEqual([])
    },
  )
})

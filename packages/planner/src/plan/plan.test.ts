import { describe, expect, it } from 'vitest'
import { artifact, desired, GiB, guest, inventory, lookup, lxc, policy, SECRETS, vm } from '../fixtures.test.helpers.js'
import { plan } from './plan.js'
import type { DesiredState } from '../desired.js'
import type { LiveInventory } from '../inventory.js'
import type { Policy } from '../plan-types.js'
import { simConverge } from '../test-support/sim.js'
import { serializePlan } from '../serialize.js'

/** one apply of `d` on a fresh simulator loaded with `inv`: the plan it ran, what PVE shows after, the next plan */
const converge = (d: DesiredState, inv?: LiveInventory, pol: Policy = policy()) =>
  simConverge(d, pol, { ...(inv ? { seed: inv } : {}), secrets: lookup })

describe('create and converge', () => {
  it('creates an absent VM with the ownership tag and start=1, then plans nothing', async () => {
    const { first, second } = await converge(desired(vm('web', 100)))
    expect(first.actions.map((a) => a.type)).toEqual(['create'])
    const req = first.actions[0]?.requests[0]
    expect(req).toMatchObject({ call: 'createGuest', node: 'pve1', guest: 'qemu' })
    expect((req as { params: Record<string, unknown> }).params).toMatchObject({
      vmid: 100,
      start: 1,
      tags: 'proxops',
      scsi0: 'local-lvm:32',
      net0: 'virtio,bridge=vmbr0',
      memory: 2048,
    })
    expect(second.actions).toEqual([])
    expect(second.anomalies).toEqual([])
  })

  it('creates an LXC after its CTTemplate download, with the dependency recorded', async () => {
    const { first, second } = await converge(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('ct', 200)),
    )
    expect(first.actions.map((a) => `${a.kind}:${a.type}`)).toEqual(['CTTemplate:download', 'LXC:create'])
    const create = first.actions[1]
    expect(create?.dependsOn).toEqual([first.actions[0]?.id])
    expect(create?.requires).toEqual(['CTTemplate/pve1/local/debian-12.tar.zst'])
    expect((create?.requests[0] as { params: Record<string, unknown> }).params.ostemplate).toBe(
      'local:vztmpl/debian-12.tar.zst',
    )
    expect(second.actions).toEqual([])
  })

  it('14.6: a started LXC is created without start=1 and started by a request of its own (pve-container forks vzstart apart)', () => {
    const p = plan(
      desired(
        artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'),
        lxc('ct', 200),
        lxc('off', 201, { state: 'stopped' }),
      ),
      inventory(),
      policy(),
      { secrets: lookup },
    )
    const calls = (vmid: number) => p.actions.find((a) => a.vmid === vmid)!.requests.map((r) => r.call)
    expect(calls(200)).toEqual(['createGuest', 'start'])
    expect(calls(201)).toEqual(['createGuest'])
    for (const vmid of [200, 201])
      expect(
        (p.actions.find((a) => a.vmid === vmid)!.requests[0] as { params: Record<string, unknown> }).params.start,
      ).toBeUndefined()
  })

  it('keeps secrets out of the plan (refs only), yet converges', async () => {
    const d = desired(
      vm('ci', 101, {
        hardware: { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } },
        'cloud-init-data': {
          'ci-user': 'ops',
          'ssh-key-refs': ['cloud-init.ssh-keys.alice'],
          'ci-password-ref': 'cloud-init.passwords.default',
        },
      }),
    )
    const { first, second } = await converge(d)
    const text = serializePlan(first)
    for (const v of Object.values(SECRETS)) expect(text).not.toContain(v)
    expect(text).toContain('cloud-init.ssh-keys.alice')
    expect(second.actions).toEqual([])
  })
})

describe('disks', () => {
  it('VMDiskSizeDriftIsAnomalyNotWrite: a shrink is an anomaly, never a write', () => {
    const live = guest(100, {
      name: 'web',
      memory: '2048',
      cpu: 'host',
      cores: '2',
      scsi0: 'local-lvm:vm-100-disk-0,size=64G',
      net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0',
      tags: 'proxops',
    })
    const p = plan(desired(vm('web', 100, { state: 'stopped' })), inventory([live]), policy())
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['volume-shrink', 'scsi0']])
  })

  it('grows a disk with a resize and never writes the create form over the live volume', () => {
    const live = guest(100, {
      name: 'web',
      memory: '2048',
      cpu: 'host',
      cores: '2',
      scsi0: 'local-lvm:vm-100-disk-0,size=16G',
      net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0',
      tags: 'proxops',
    })
    const p = plan(
      desired(
        vm('web', 100, {
          state: 'stopped',
          disks: [{ storage: 'local-lvm', size: 32 * GiB, interface: 'scsi0', iothread: false }],
        }),
      ),
      inventory([live]),
      policy(),
    )
    expect(p.actions.map((a) => a.type)).toEqual(['resize'])
    expect(p.actions[0]?.requests[0]).toMatchObject({ call: 'resizeDisk', disk: 'scsi0', size: '32G', digest: 'd100' })
  })
})

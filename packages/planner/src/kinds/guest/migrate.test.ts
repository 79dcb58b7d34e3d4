/**
 * Moving guests against the simulator's migration (qemu-server migrate_vm / PVE::QemuMigrate, pve-container
 * migrate_vm / PVE::LXC::Migrate, pve-ha-manager select_service_node), with the real client: a changed
 * spec.node is one migrate action with PVE's disruption class, what PVE would refuse is blocked in the plan, a
 * guest moved by hand is moved back, an HA guest stays where HA put it, and the next plan is empty.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { artifact, desired, lxc, policy, vm } from '../../fixtures.test.helpers.js'
import { simApply, simCycle, withSim, type SimPve } from '../../test-support/sim.js'
import type { Plan, Policy } from '../../plan-types.js'
import { planMigration } from './migrate.js'
import { guest } from '../../fixtures.test.helpers.js'

const pol = policy({ pruneRatioLimit: 1 })
const tmpl = artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst')
const onNode = <M extends { spec: { node: string } }>(m: M, node: string): M => ({ ...m, spec: { ...m.spec, node } })
const migrates = (p: Plan) => p.actions.filter((a) => a.type === 'migrate')

async function nodeOf(env: SimPve, vmid: number): Promise<string | undefined> {
  const rows = await env.client.clusterResources('vm')
  return rows.find((r) => r.vmid === vmid)?.node
}

/** one apply that must end ok, then a dry run that must plan nothing */
async function converge(env: SimPve, ms: Parameters<typeof desired>, p: Policy = pol): Promise<Plan> {
  const applied = await simApply(env, desired(...ms), p)
  const next = await simCycle(env, desired(...ms), p)
  expect(next.plan.actions).toEqual([])
  expect(next.plan.anomalies).toEqual([])
  return applied.plan
}

describe('migration (qemu-server migrate_vm, pve-container migrate_vm)', () => {
  it('a running VM with a local disk moves online (hotplug) with its disk (PVE::QemuMigrate phase1 scan_local_volumes)', async () => {
    await withSim(undefined, async (env) => {
      const web = vm('web', 100, { state: 'started' })
      await converge(env, [web])
      const moved = onNode(web, 'pve2')
      const plan = await converge(env, [moved])
      expect(plan.actions.map((a) => [a.type, a.disruption])).toEqual([['migrate', 'hotplug']])
      const [m] = migrates(plan)
      expect(m?.requests).toEqual([
        {
          call: 'migrate',
          node: 'pve1',
          guest: 'qemu',
          vmid: 100,
          target: 'pve2',
          params: { target: 'pve2', online: 1, 'with-local-disks': 1 },
        },
      ])
      expect(m?.diffs).toContainEqual({
        field: 'spec.node',
        key: 'scsi0',
        before: 'local-lvm:vm-100-disk-0',
        after: 'local-lvm on pve2',
      })
      expect(await nodeOf(env, 100)).toBe('pve2')
      expect((await env.client.guestStatus('pve2', 'qemu', 100)).status).toBe('running')
    })
  })

  it('a stopped VM moves offline (disruption none) and a running container restart-migrates (reboot) (PVE::LXC::Migrate)', async () => {
    await withSim(undefined, async (env) => {
      const cold = vm('cold', 101, { state: 'stopped' })
      const ct = lxc('ct', 102, { state: 'started' })
      await converge(env, [tmpl, cold, ct])
      const plan = await converge(env, [tmpl, onNode(cold, 'pve3'), onNode(ct, 'pve2')])
      expect(plan.actions.map((a) => [a.vmid, a.type, a.disruption])).toEqual([
        [101, 'migrate', 'none'],
        [102, 'migrate', 'reboot'],
      ])
      expect(migrates(plan)[1]?.requests[0]).toMatchObject({ params: { target: 'pve2', restart: 1 } })
      expect(await nodeOf(env, 101)).toBe('pve3')
      expect(await nodeOf(env, 102)).toBe('pve2')
      expect((await env.client.guestStatus('pve2', 'lxc', 102)).status).toBe('running')
    })
  })

  it('a guest moved by hand is moved back, and the disruption policy holds back an online move', async () => {
    await withSim(undefined, async (env) => {
      const web = vm('web', 100, { state: 'started' })
      await converge(env, [web])
      await env.client.waitTaskOk(
        await env.client.migrateGuest('pve1', 'qemu', 100, { target: 'pve3', online: 1, 'with-local-disks': 1 }),
      )
      expect(await nodeOf(env, 100)).toBe('pve3')
      const held = await simCycle(env, desired(web), { ...pol, disruption: 'none' })
      expect(held.plan.actions).toEqual([])
      expect(held.plan.skips).toMatchObject([{ code: 'disruption', vmid: 100 }])
      const plan = await converge(env, [web])
      expect(migrates(plan).map((a) => a.requests[0])).toMatchObject([{ node: 'pve3', target: 'pve1' }])
      expect(await nodeOf(env, 100)).toBe('pve1')
    })
  })

  it('a raw hostpci device blocks the move in the plan (check_local_resources), and nothing is sent', async () => {
    await withSim(undefined, async (env) => {
      const gpu = vm('gpu', 103, {
        state: 'stopped',
        hardware: { 'pci-devices': [{ slot: 'hostpci0', device: '0000:17:00', pcie: false }] },
      })
      await converge(env, [gpu])
      const cycle = await simCycle(env, desired(onNode(gpu, 'pve2')), pol)
      expect(cycle.plan.actions).toEqual([])
      expect(cycle.plan.anomalies).toMatchObject([
        { code: 'migration-refused', field: 'spec.node', message: expect.stringContaining('hostpci0') },
      ])
    })
  })

  it('a cloned VM moves like any other (its clone source only matters at create); a new clone away from its template is blocked (source-node)', async () => {
    await withSim(undefined, async (env) => {
      const tpl = vm('base', 9000, {}, 'TemplateVM')
      const web = vm('web', 108, { clone: 'base', disks: [], state: 'started' })
      await converge(env, [tpl, web])
      const plan = await converge(env, [tpl, onNode(web, 'pve2')])
      expect(plan.actions.map((a) => [a.vmid, a.type])).toEqual([[108, 'migrate']])
      expect(await nodeOf(env, 108)).toBe('pve2')
      const fresh = onNode(vm('api', 109, { clone: 'base', disks: [] }), 'pve2')
      const cycle = await simCycle(env, desired(tpl, onNode(web, 'pve2'), fresh), pol)
      expect(cycle.plan.actions).toEqual([])
      expect(cycle.plan.anomalies).toEqual([
        expect.objectContaining({
          code: 'source-node',
          address: 'VM/pve2/109(api)',
          message:
            'clone source TemplateVM/base is on node pve1, and PVE clones a template on its own node: create the guest on pve1 (it can move to pve2 once it exists), or declare a template on pve2',
        }),
      ])
    })
  })

  it('guests made from a disk image or a container template on another node move; a new one there is blocked (source-node)', async () => {
    await withSim(undefined, async (env) => {
      env.sim.control.setRemoteFile('https://example.org/debian.qcow2', { content: 'qcow2 bytes' })
      const img = artifact('DiskImage', 'cloud', 'debian.qcow2', ['pve1'], 'local')
      const seeded = vm('seeded', 111, {
        disks: [{ storage: 'local-lvm', image: 'cloud', interface: 'scsi0', iothread: false }],
      })
      const ct = lxc('ct', 112)
      await converge(env, [img, tmpl, seeded, ct])
      const plan = await converge(env, [img, tmpl, onNode(seeded, 'pve2'), onNode(ct, 'pve2')])
      expect(plan.actions.map((a) => [a.vmid, a.type])).toEqual([
        [111, 'migrate'],
        [112, 'migrate'],
      ])
      const fresh = onNode(lxc('ct2', 113), 'pve2')
      const cycle = await simCycle(env, desired(img, tmpl, onNode(seeded, 'pve2'), onNode(ct, 'pve2'), fresh), pol)
      expect(cycle.plan.actions).toEqual([])
      expect(cycle.plan.anomalies).toMatchObject([
        {
          code: 'source-node',
          address: 'LXC/pve2/113(ct2)',
          message:
            'CTTemplate/debian-12 is not declared on node pve2 (its nodes: pve1), and the guest is created from it there: add pve2 to its spec.nodes, or create the guest on one of its nodes (it can move to pve2 once it exists)',
        },
      ])
    })
  })

  it('a local ISO in the CD drive: the manifest that empties the drive gets one action, eject then migrate (scan_local_volumes)', async () => {
    await withSim(undefined, async (env) => {
      const iso = artifact('ISO', 'debian', 'debian.iso', ['pve1', 'pve2'])
      const web = vm('web', 105, { state: 'started', hardware: { cdrom: { iso: 'debian', media: 'cdrom' } } })
      await converge(env, [iso, web])
      // the newcomer's first try: only spec.node changes; the refusal says what to change
      const first = await simCycle(env, desired(iso, onNode(web, 'pve2')), pol)
      expect(first.plan.actions).toEqual([])
      expect(first.plan.anomalies).toMatchObject([
        {
          code: 'migration-refused',
          message: expect.stringContaining(
            'ide2 holds the local ISO local:iso/debian.iso, which PVE does not migrate: set spec.hardware.cdrom to {iso: none} in the same commit',
          ),
        },
      ])
      const moved = onNode(
        vm('web', 105, { state: 'started', hardware: { cdrom: { iso: 'none', media: 'cdrom' } } }),
        'pve2',
      )
      const plan = await converge(env, [iso, moved])
      expect(plan.actions.map((a) => [a.type, a.disruption])).toEqual([['migrate', 'hotplug']])
      expect(migrates(plan)[0]?.requests.map((r) => r.call)).toEqual(['updateConfig', 'migrate'])
      expect(migrates(plan)[0]?.requests[0]).toMatchObject({ params: { ide2: 'none,media=cdrom' } })
      expect(await nodeOf(env, 105)).toBe('pve2')
      expect((await env.client.guestConfig('pve2', 'qemu', 105)).values.ide2).toBe('none,media=cdrom')
    })
  })

  it('a running VM with a snapshot of a local disk is blocked, saying which snapshot to delete; nothing is sent (scan_local_volumes)', async () => {
    await withSim(undefined, async (env) => {
      const web = vm('web', 106, { state: 'started' })
      await converge(env, [web])
      await env.client.waitTaskOk(await env.client.createSnapshot('pve1', 'qemu', 106, 'proxops-20261201T193000Z'))
      const cycle = await simCycle(env, desired(onNode(web, 'pve2')), pol)
      expect(cycle.plan.actions).toEqual([])
      expect(cycle.plan.anomalies).toEqual([
        expect.objectContaining({
          code: 'migration-refused',
          message: expect.stringContaining(
            'scsi0 (local-lvm:vm-106-disk-0) is referenced by snapshot proxops-20261201T193000Z (a ProxOps safety snapshot), and PVE cannot migrate a local disk with a snapshot while the VM runs: delete it once no longer needed (qm delsnapshot 106 proxops-20261201T193000Z)',
          ),
        }),
      ])
      // stopped, on lvmthin, it is still refused (non-migratable snapshot exists); deleted, it moves
      await env.client.waitTaskOk(await env.client.deleteSnapshot('pve1', 'qemu', 106, 'proxops-20261201T193000Z'))
      await converge(env, [onNode(web, 'pve2')])
      expect(await nodeOf(env, 106)).toBe('pve2')
    })
  })

  it('a VM with a cloud-init drive on local storage moves with it (the drive is generated, not an ISO)', async () => {
    await withSim(undefined, async (env) => {
      const ci = vm('ci', 107, {
        state: 'started',
        hardware: { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } },
      })
      await converge(env, [ci])
      const plan = await converge(env, [onNode(ci, 'pve2')])
      expect(plan.actions.map((a) => a.type)).toEqual(['migrate'])
      expect(await nodeOf(env, 107)).toBe('pve2')
    })
  })

  it('an HA guest HA relocated after a node failure stays where HA put it (select_service_node, recover_fenced_service)', async () => {
    await withSim(undefined, async (env) => {
      const shared = vm('ha', 104, {
        state: 'started',
        disks: [],
        ha: { max_restart: 1, max_relocate: 1, strict: false },
      })
      await converge(env, [shared])
      env.sim.control.failNode('pve1', { fenceDelayMs: 0, agentLockMs: 0 })
      // the HA manager fences pve1 and recovers the service on another node
      for (let i = 0; i < 50 && (await nodeOf(env, 104)) === 'pve1'; i++) await new Promise((r) => setTimeout(r, 5))
      const now = await nodeOf(env, 104)
      expect(now).not.toBe('pve1')
      const cycle = await simCycle(env, desired(shared), pol)
      expect(cycle.plan.actions.filter((a) => a.vmid === 104 && a.type === 'migrate')).toEqual([])
      expect(cycle.plan.anomalies).toEqual([])
      expect(cycle.plan.gaps).toContainEqual(expect.objectContaining({ field: 'spec.node', placedOn: now }))
    })
  })
})

describe('planMigration (pure)', () => {
  const base = {
    resource: 'VM:web',
    address: 'VM/pve2/100(web)',
    kind: 'VM' as const,
    name: 'web',
    node: 'pve2',
    vmid: 100,
    tier: 0 as const,
    level: 0,
  }
  const storages = ['pve1', 'pve2'].map((node) => ({
    node,
    storage: 'local-lvm',
    type: 'lvmthin',
    content: ['images', 'rootdir'],
    active: true,
    enabled: true,
    shared: false,
  }))
  const input = (over: Partial<Parameters<typeof planMigration>[0]> = {}) => ({
    g: guest(100, { scsi0: 'local-lvm:vm-100-disk-0,size=8G' }, { status: 'running' }),
    type: 'qemu' as const,
    target: 'pve2',
    base,
    owned: [],
    policy: 'allow' as const,
    storages,
    check: {
      vmid: 100,
      node: 'pve1',
      check: {
        known: {
          running: true,
          allowedNodes: ['pve2'],
          notAllowed: {},
          localDisks: [{ volid: 'local-lvm:vm-100-disk-0', cdrom: false, drive: 'scsi0' }],
          localResources: [],
          mappedResources: [],
        },
      },
    },
    targetDown: false,
    ...over,
  })

  it('an offline target, a storage the target lacks and an unread check are never a migrate action', () => {
    expect(planMigration(input({ targetDown: true }))).toEqual({
      refused: ['target node pve2 is offline or unknown: bring it back, or set spec.node to a node that is online'],
    })
    expect(planMigration(input({ storages: storages.slice(0, 1) }))).toMatchObject({
      refused: [expect.stringContaining("storage 'local-lvm' is not available on node 'pve2'")],
    })
    expect(planMigration(input({ check: { vmid: 100, node: 'pve1', check: { unreadable: '403' } } }))).toMatchObject({
      skip: { code: 'unknown' },
    })
  })

  it('a local ISO in a CD drive is refused (scan_local_volumes: local cdrom image)', () => {
    const i = input()
    const known = {
      ...(i.check.check as { known: object }).known,
      localDisks: [{ volid: 'local:iso/x.iso', cdrom: true, drive: 'ide2' }],
    }
    expect(planMigration({ ...i, check: { vmid: 100, node: 'pve1', check: { known } } as never })).toMatchObject({
      refused: [
        expect.stringContaining(
          'ide2 holds the local ISO local:iso/x.iso, which PVE does not migrate; spec.hardware.cdrom is not declared, so ProxOps leaves the drive alone: set spec.hardware.cdrom to {iso: none}',
        ),
      ],
    })
  })

  // scan_local_volumes, over any mix of local disks, snapshots and CD drives: a running VM never moves a local disk a
  // snapshot references, every snapshot in the way is named with its delete command, and an ISO is ejected (before
  // the move, in the same action) exactly when the manifest declares its drive empty
  const disk = fc.record({
    slot: fc.constantFrom('scsi0', 'scsi1', 'virtio0'),
    storage: fc.constantFrom('local-lvm', 'local-zfs'),
    snapshots: fc.uniqueArray(fc.constantFrom('before', 'proxops-20261201T193000Z', 'weekly'), { maxLength: 2 }),
  })
  const cd = fc.record({ declared: fc.constantFrom('none', 'iso', 'absent'), snapshot: fc.boolean() })
  test.prop([
    fc.uniqueArray(disk, { selector: (d) => d.slot, maxLength: 3 }),
    fc.option(cd, { nil: undefined }),
    fc.boolean(),
  ])('snapshots and ISOs: refused with the command, or moved with the eject first', (disks, cdrom, running) => {
    const i = input()
    const stores = ['pve1', 'pve2'].flatMap((node) =>
      [
        ['local-lvm', 'lvmthin'],
        ['local-zfs', 'zfspool'],
      ].map(([storage, type]) => ({ ...storages[0]!, node, storage: storage!, type: type! })),
    )
    const localDisks = [
      ...disks.map((d) => ({
        volid: `${d.storage}:vm-100-disk-${d.slot}`,
        cdrom: false,
        drive: d.slot,
        ...(d.snapshots.length > 0 ? { snapshots: [...d.snapshots].sort() } : {}),
      })),
      ...(cdrom
        ? [
            {
              volid: 'local:iso/x.iso',
              cdrom: true,
              drive: 'ide2',
              ...(cdrom.snapshot ? { snapshots: ['weekly'] } : {}),
            },
          ]
        : []),
    ]
    const owned =
      cdrom === undefined || cdrom.declared === 'absent'
        ? []
        : [
            {
              key: 'ide2',
              field: 'spec.hardware.cdrom',
              create: cdrom.declared === 'none' ? 'none,media=cdrom' : 'local:iso/x.iso,media=cdrom',
              compare: () => [],
            },
          ]
    const known = { ...(i.check.check as { known: object }).known, running, localDisks }
    const outcome = planMigration({
      ...i,
      g: guest(100, {}, { status: running ? 'running' : 'stopped' }),
      owned,
      storages: stores,
      check: { vmid: 100, node: 'pve1', check: { known } } as never,
    })
    const blocking = disks.filter((d) => d.snapshots.length > 0 && (running || d.storage !== 'local-zfs'))
    const isoStuck = cdrom !== undefined && (cdrom.declared !== 'none' || cdrom.snapshot)
    if (blocking.length > 0 || isoStuck) {
      expect(outcome).toHaveProperty('refused')
      const text = (outcome as { refused: string[] }).refused.join('\n')
      for (const d of blocking) for (const n of d.snapshots) expect(text).toContain(`qm delsnapshot 100 ${n}`)
      if (isoStuck) expect(text).toContain('ide2 holds the local ISO local:iso/x.iso')
      return
    }
    if (!('draft' in outcome)) return expect.fail(`not a move: ${JSON.stringify(outcome)}`)
    const calls = outcome.draft.requests
    if (cdrom !== undefined) {
      expect(calls.map((r) => r.call)).toEqual(['updateConfig', 'migrate'])
      expect(calls[0]).toMatchObject({ params: { ide2: 'none,media=cdrom' } })
    } else expect(calls.map((r) => r.call)).toEqual(['migrate'])
  })
})

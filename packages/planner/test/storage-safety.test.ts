/**
 * ProxOps and PVE storages: what a prune frees, lock timeouts on storages, templates that linked clones still
 * use, and how storages are listed and artifacts fetched (docs/safety.md).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { useEnv, small, testVm, actionLines, adminCall, cycle, failures, manifest } from './helpers.js'

const env = useEnv()
beforeAll(async () => {
  // an admin's NFS share for guest disks and ISOs, visible on every node
  await adminCall(env, 'POST', '/storage', {
    storage: 'nas',
    type: 'nfs',
    server: '10.0.0.5',
    export: '/export/pve',
    content: 'images,iso',
  })
  // and an RBD pool for guest disks
  await adminCall(env, 'POST', '/storage', { storage: 'ceph', type: 'rbd', pool: 'vms', content: 'images' })
})

const PRUNE_ALL = {
  allowEmpty: ['VM' as const, 'TemplateVM' as const],
  pruneRatioLimit: 1,
  pruneBudget: 'unlimited' as const,
}

const vm = (vmid: number, spec: Record<string, unknown> = {}) =>
  testVm(vmid, { ...small('4GiB'), networks: undefined, state: 'stopped', ...spec })

const volids = async (node: string, storage: string): Promise<string[]> =>
  ((await adminCall(env, 'GET', `/nodes/${node}/storage/${storage}/content`)) as { volid: string }[]).map(
    (v) => v.volid,
  )

describe('prunes (issue 14 item 2: never destroy-unreferenced-disks)', () => {
  it("a prune leaves a vm-<vmid>-* volume the guest does not reference (another cluster's, on a shared storage)", async () => {
    expect(failures((await cycle(env, [vm(150)])).report)).toEqual([])
    // a volume named after the vmid that the guest's config does not reference
    await adminCall(env, 'POST', '/nodes/pve1/storage/local-lvm/content', {
      vmid: 150,
      filename: 'vm-150-disk-7',
      size: '1G',
    })
    const pruned = await cycle(env, [], { policy: PRUNE_ALL })
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(150)).toBeUndefined()
    const left = await volids('pve1', 'local-lvm')
    expect(left).toContain('local-lvm:vm-150-disk-7')
    expect(left).not.toContain('local-lvm:vm-150-disk-0')
    expect(env.sim.stats.count('DELETE', '/nodes/pve1/qemu/150')).toBe(1)
  })
})

describe('cluster-lock timeouts (issue 14 item 4)', () => {
  it('a create that meets `cfs-lock storage-<id> ... got lock request timeout` is retried with the lock backoff and succeeds', async () => {
    env.sim.control.setStorageLockContention('nas', true)
    // the other node releases the lock once our first attempt has failed on it
    const release = setInterval(() => {
      if (
        env.sim.control
          .tasks()
          .some((t) => t.type === 'qmcreate' && t.id === '160' && /cfs-lock 'storage-nas'/.test(t.exitstatus ?? ''))
      ) {
        env.sim.control.setStorageLockContention('nas', false)
        clearInterval(release)
      }
    }, 5)
    try {
      const created = await cycle(env, [vm(160, { disks: [{ storage: 'nas', size: '4GiB' }] })], {
        execute: { lockRetryDelayMs: 100 },
      })
      expect(failures(created.report)).toEqual([])
      const attempts = env.sim.control.tasks().filter((t) => t.type === 'qmcreate' && t.id === '160')
      expect(attempts.map((t) => t.exitstatus)).toEqual([
        `unable to create VM 160 - cfs-lock 'storage-nas' error: got lock request timeout`,
        'OK',
      ])
      expect(env.sim.control.guest(160)?.config.scsi0).toMatch(/^nas:160\/vm-160-disk-0\.raw,/)
    } finally {
      clearInterval(release)
      env.sim.control.setStorageLockContention('nas', false)
    }
  })
})

describe('templates with linked clones (issue 14 item 8)', () => {
  const tvm = (vmid: number, storage: string) =>
    manifest({
      kind: 'TemplateVM',
      metadata: { name: `tvm${vmid}` },
      spec: { node: 'pve1', vmid, memory: '1GiB', cpu: { type: 'host', cores: 1 }, disks: [{ storage, size: '4GiB' }] },
    })
  /** an admin's linked clone of a template, re-tagged so it is not ProxOps' own */
  async function linkedClone(template: number, newid: number): Promise<void> {
    const upid = (await adminCall(env, 'POST', `/nodes/pve1/qemu/${template}/clone`, { newid })) as string
    await env.client.waitTask({ node: 'pve1', upid }, { timeoutMs: 5000, pollIntervalMs: 10 })
    await adminCall(env, 'PUT', `/nodes/pve1/qemu/${newid}/config`, { tags: 'handmade' })
  }

  it('a prune that would remove a template a linked clone still uses is an anomaly, not a failing delete', async () => {
    expect(failures((await cycle(env, [tvm(9100, 'ceph')])).report)).toEqual([])
    await linkedClone(9100, 9101)
    expect(env.sim.control.guest(9101)?.config.scsi0).toMatch(/^ceph:base-9100-disk-0\/vm-9101-disk-0,/)
    const pruned = await cycle(env, [], { policy: PRUNE_ALL })
    expect(pruned.plan.actions.filter((a) => a.type === 'delete').map((a) => a.vmid)).not.toContain(9100)
    expect(pruned.plan.anomalies.find((a) => a.code === 'template-linked-clones')).toMatchObject({
      address: 'TemplateVM/pve1/9100(tvm9100)',
      message: expect.stringContaining('qemu 9101'),
    })
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(9100)?.config.template).toBe('1')
  })

  it('on lvmthin the clone does not name its base: PVE destroys the template, so the prune goes ahead', async () => {
    expect(failures((await cycle(env, [tvm(9110, 'local-lvm')])).report)).toEqual([])
    await linkedClone(9110, 9111)
    const pruned = await cycle(env, [], { policy: PRUNE_ALL })
    expect(pruned.plan.anomalies.filter((a) => a.code === 'template-linked-clones').map((a) => a.address)).toEqual([
      'TemplateVM/pve1/9100(tvm9100)',
    ])
    expect(pruned.plan.actions.filter((a) => a.type === 'delete').map((a) => a.vmid)).toContain(9110)
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(9110)).toBeUndefined()
    expect(env.sim.control.guest(9111)).toBeDefined()
  })
})

describe('storage listings and shared artifacts (issue 14 item 12)', () => {
  const NO_PRUNE = { pruneBudget: 0 }
  const CONTENT = '/nodes/{node}/storage/{storage}/content'
  const nasIso = (nodes: string[]) =>
    manifest({
      kind: 'ISO',
      metadata: { name: 'nas-alpine' },
      spec: { nodes, storage: 'nas', filename: 'alpine-nas.iso', url: 'https://images.example/alpine-nas.iso' },
    })

  it('lists storages with content= only: a cycle never runs qemu-img info on the disks of a file storage (PVE::Storage::volume_list)', async () => {
    // guest disks on the NFS share: an unfiltered content listing would inspect each of them
    expect(
      failures(
        (await cycle(env, [vm(160, { disks: [{ storage: 'nas', size: '4GiB' }] })], { policy: NO_PRUNE })).report,
      ),
    ).toEqual([])
    const runs = env.sim.control.imageInfoRuns()
    const listings = env.sim.stats.count('GET', CONTENT)
    const dry = await cycle(env, [vm(160, { disks: [{ storage: 'nas', size: '4GiB' }] }), nasIso(['pve1'])], {
      dryRun: true,
      policy: NO_PRUNE,
    })
    expect(dry.plan.actions.map((a) => a.type)).toEqual(['download'])
    expect(env.sim.control.imageInfoRuns()).toBe(runs)
    // iso content only, on the storages that hold it: the shared `nas` once, `local` on each node
    expect(env.sim.stats.count('GET', CONTENT) - listings).toBe(4)
    // a repository without artifacts lists no storage content at all
    await cycle(env, [vm(160, { disks: [{ storage: 'nas', size: '4GiB' }] })], { dryRun: true, policy: NO_PRUNE })
    expect(env.sim.stats.count('GET', CONTENT) - listings).toBe(4)
    expect(env.sim.control.imageInfoRuns()).toBe(runs)
  })

  it('an ISO on a shared storage for three nodes is downloaded once, on the first node; the others see it', async () => {
    const desired = [nasIso(['pve2', 'pve1', 'pve3'])]
    const downloads = env.sim.stats.count('POST', '/nodes/{node}/storage/{storage}/download-url')
    const first = await cycle(env, desired, { policy: NO_PRUNE })
    expect(actionLines(first.plan)).toEqual(['download ISO/pve2/nas/alpine-nas.iso'])
    expect(first.plan.actions[0]?.reason).toBe(
      'ISO alpine-nas.iso not present on shared storage nas; will download once, on pve2',
    )
    expect(failures(first.report)).toEqual([])
    expect(env.sim.stats.count('POST', '/nodes/{node}/storage/{storage}/download-url') - downloads).toBe(1)
    const again = await cycle(env, desired, { dryRun: true, policy: NO_PRUNE })
    expect(again.plan.actions).toEqual([])
    expect(again.live.volumes.filter((v) => v.volid === 'nas:iso/alpine-nas.iso').map((v) => v.node)).toEqual([
      'pve1',
      'pve2',
      'pve3',
    ])
  })
})

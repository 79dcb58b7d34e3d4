/**
 * ProxOps and PVE storages: what a prune frees, lock timeouts on storages, templates that linked clones still
 * use, and how storages are listed and artifacts fetched (docs/safety.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminCall, cycle, failures, manifest, startEnv, type Env } from './helpers.js'

let env: Env
beforeAll(async () => {
  env = await startEnv()
  // an admin's NFS share for guest disks and ISOs, visible on every node
  await adminCall(env, 'POST', '/storage', {
    storage: 'nas',
    type: 'nfs',
    server: '10.0.0.5',
    export: '/export/pve',
    content: 'images,iso',
  })
})
afterAll(async () => {
  await env?.close()
})

const PRUNE_ALL = {
  allowEmpty: ['VM' as const, 'TemplateVM' as const],
  pruneRatioLimit: 1,
  pruneBudget: 'unlimited' as const,
}

const vm = (vmid: number, spec: Record<string, unknown> = {}) =>
  manifest({
    kind: 'VM',
    metadata: { name: `vm${vmid}` },
    spec: {
      node: 'pve1',
      vmid,
      memory: '1GiB',
      cpu: { type: 'host', cores: 1 },
      disks: [{ storage: 'local-lvm', size: '4GiB' }],
      state: 'stopped',
      ...spec,
    },
  })

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

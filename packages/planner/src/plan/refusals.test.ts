/**
 * Refusals PVE would make for a reason `diff` can see are blocked objects in the plan, not failed actions in
 * apply (docs/safety.md, "Refusals ProxOps foresees"): each case runs reconcile() against the simulator, whose
 * handlers refuse these writes as PVE does, and checks that the plan blocks the object with PVE's reason and that
 * apply writes nothing for it.
 */
import { expect, it } from 'vitest'
import type { Manifest } from '@proxops/schema'
import { artifact, desired, lxc, policy, vm } from '../fixtures.test.helpers.js'
import { reconcile } from '../reconcile/reconcile.js'
import { failures, simPve, type SimPve } from '../test-support/sim.js'

const pol = policy({ nodes: [] })

async function applied(env: SimPve, manifests: Manifest[]) {
  return reconcile({
    desired: desired(...manifests),
    reader: env.client,
    writer: env.client,
    policy: pol,
    execute: { confirmAttempts: 1, confirmDelayMs: 0 },
  })
}

const ct = lxc('web', 120)
const onStorage = (m: ReturnType<typeof vm>, storage: string): Manifest =>
  ({ ...m, spec: { ...m.spec, disks: m.spec.disks.map((d) => ({ ...d, storage })) } }) as Manifest
const tpl = artifact('CTTemplate', 'debian-12', 'debian-12-standard_12.7-1_amd64.tar.zst')

it.each([
  [
    'a container root on a storage without rootdir (a stock `local`; create_vm $check_and_activate_storage)',
    [tpl, { ...ct, spec: { ...ct.spec, root: { ...ct.spec.root, storage: 'local' } } } as Manifest],
    'LXC/pve1/120(web)',
    /rootfs: storage 'local' does not support container directories/,
  ],
  [
    'a VM disk on a storage without images (qemu-server create_disks)',
    [onStorage(vm('app', 130), 'local')],
    'VM/pve1/130(app)',
    /scsi0: storage 'local' does not support vm images/,
  ],
  [
    'a VM disk on a storage the node does not have (storage_check_enabled)',
    [onStorage(vm('app', 131), 'nowhere')],
    'VM/pve1/131(app)',
    /storage 'nowhere' does not exist, is disabled or is not available on node 'pve1'/,
  ],
  [
    'an ISO on a storage not configured for iso (download_url)',
    [artifact('ISO', 'installer', 'installer.iso', ['pve1'], 'local-lvm')],
    'ISO/pve1/local-lvm/installer.iso',
    /storage 'local-lvm' is not configured for content-type 'iso'/,
  ],
])('%s is blocked in diff and apply writes nothing for it', async (_, manifests, address, reason) => {
  const env = simPve({ taskDurationMs: 5 })
  try {
    env.sim.control.addVolume('pve1', 'local', {
      filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
      content: 'vztmpl',
    })
    const before = env.sim.stats.requests.filter((r) => r.method !== 'GET').length
    const { plan, report } = await applied(env, manifests)
    const blocked = plan.anomalies.filter((a) => a.address === address)
    expect(blocked.map((a) => a.code)).toEqual(['storage-refused'])
    expect(blocked[0]?.message).toMatch(reason)
    expect(plan.actions.filter((a) => a.address === address)).toEqual([])
    expect(failures(report)).toEqual([])
    expect(env.sim.stats.requests.filter((r) => r.method !== 'GET').length).toBe(before)
  } finally {
    await env.close()
  }
})

it('a node-affinity rule with priorities over a guest in a resource-affinity rule is blocked (check_single_priority_node_affinity_in_resource_affinity_rules)', async () => {
  const env = simPve({ taskDurationMs: 5, as: 'root@pam' })
  try {
    const a = vm('a', 140, { state: 'stopped' })
    const b = vm('b', 141, { state: 'stopped' })
    await applied(env, [a, b])
    for (const sid of ['vm:140', 'vm:141'])
      await env.client.request('POST', '/cluster/ha/resources', { params: { sid, state: 'stopped' } })
    await env.client.request('POST', '/cluster/ha/rules', {
      params: { rule: 'together', type: 'resource-affinity', affinity: 'positive', resources: 'vm:140,vm:141' },
    })
    const ha = { max_restart: 1, max_relocate: 1, strict: false, state: 'stopped', nodes: { pve1: 2, pve2: 1 } }
    const { plan, report } = await applied(env, [{ ...a, spec: { ...a.spec, ha } } as Manifest, b])
    expect(plan.anomalies.map((x) => [x.code, x.address])).toEqual([['ha-conflict', 'VM/pve1/140(a)']])
    expect(plan.anomalies[0]?.message).toMatch(/check_single_priority_node_affinity_in_resource_affinity_rules/)
    expect(plan.actions).toEqual([])
    expect(failures(report)).toEqual([])
    // the same priorities on one level are accepted and converge
    const flat = { ...ha, nodes: { pve1: 1, pve2: 1 } }
    const ok = await applied(env, [{ ...a, spec: { ...a.spec, ha: flat } } as Manifest, b])
    expect(failures(ok.report)).toEqual([])
    expect(ok.plan.anomalies).toEqual([])
  } finally {
    await env.close()
  }
})

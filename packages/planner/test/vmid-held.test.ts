/**
 * vmids are cluster-wide (issue 14 item 7): a desired vmid held by a guest that the plan cannot see as a guest of
 * its own, on a node outside the allowlist or hidden from the token (no VM.Audit), blocks the create with an
 * anomaly, never a create that fails with PVE's `already exists` every cycle. PVE::API2::Cluster nextid checks
 * the cluster's full vmlist for any caller; observe() probes it for the vmids nothing lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { apidocForTests } from '@proxops/pve-sim'
import { DEFAULT_POLICY, observe, plan } from '../src/index.js'
import { guestVmids } from '../src/desired.js'
import { actionLines, adminCall, startEnv, testVm, type Env } from './helpers.js'

let env: Env
let restricted: PveClient
beforeAll(async () => {
  if (!apidocForTests()) return
  env = await startEnv({ nodes: ['pve1', 'pve2'] })
  for (const [vmid, node, name] of [
    [555, 'pve1', 'hidden'],
    [556, 'pve2', 'elsewhere'],
  ] as const)
    await adminCall(env, 'POST', `/nodes/${node}/qemu`, { vmid, name, memory: 512 })
  env.sim.control.settle()
  // a user who may do everything but see guest 555 (NoAccess on its path wins over the inherited role)
  await adminCall(env, 'POST', '/access/users', { userid: 'ops@pve' })
  const token = (await adminCall(env, 'POST', '/access/users/ops@pve/token/proxops', { privsep: 0 })) as {
    value: string
  }
  await adminCall(env, 'PUT', '/access/acl', { path: '/', roles: 'Administrator', users: 'ops@pve' })
  await adminCall(env, 'PUT', '/access/acl', { path: '/vms/555', roles: 'NoAccess', users: 'ops@pve' })
  restricted = createPveClient({
    baseUrl: env.sim.url,
    auth: { type: 'token', tokenId: 'ops@pve!proxops', secret: token.value },
    tls: env.sim.fingerprint !== undefined ? { fingerprint: env.sim.fingerprint } : {},
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  })
})
afterAll(async () => {
  await restricted?.close()
  await env?.close()
})

const vm = (vmid: number) =>
  testVm(vmid, {
    memory: '512MiB',
    cpu: { type: 'host', cores: 1 },
    disks: [{ storage: 'local-lvm', size: '4GiB' }],
  })

// the simulator checks a route's permissions from the API schema, so NoAccess on /vms/555 needs it
describe.skipIf(!apidocForTests())('vmids held outside what the token or the allowlist shows (issue 14 item 7)', () => {
  it('VmidHeldByAnInvisibleGuestOrOutsideTheAllowlistIsAnAnomalyNotACreate', async () => {
    const desired = { cluster: 'homelab', manifests: [vm(555), vm(556), vm(557)] }
    // the token does not see 555 at all
    expect((await restricted.clusterResources('vm')).map((r) => r.vmid)).toEqual([556])
    const live = await observe('homelab', restricted, { nodes: ['pve1'], vmids: guestVmids(desired) })
    expect(live.guests).toEqual([])
    expect(live.heldVmids).toEqual([{ vmid: 555 }, { vmid: 556, node: 'pve2', type: 'qemu', name: 'elsewhere' }])
    const p = plan(desired, live, { ...DEFAULT_POLICY, nodes: ['pve1'] })
    expect(actionLines(p)).toEqual(['create VM/pve1/557(vm557)'])
    expect(p.anomalies.map((a) => [a.code, a.address, a.message])).toEqual([
      [
        'vmid-taken',
        'VM/pve1/555(vm555)',
        expect.stringContaining('vmid 555 is held by a guest this token cannot see'),
      ],
      ['node-mismatch', 'VM/pve1/556(vm556)', expect.stringContaining('exists on node pve2, outside')],
    ])
  })
})

/**
 * What a prune's destroy (purge) takes with it, planned: PVE::VZDump::Plugin::remove_vmid_from_backup_jobs and
 * pve-ha-manager's purge on the simulator, through reconcile() as the CLI runs it. No cycle fails because PVE
 * already did what the plan meant to do, nothing this entry does not own is deleted, and the next plan is empty.
 */
import { expect, it } from 'vitest'
import { backupJob, desired, policy, vm } from '../../fixtures.test.helpers.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { failures, simPve, type SimPve } from '../../test-support/sim.js'
import type { Manifest } from '@proxops/schema'

const pol = policy({ nodes: [], pruneRatioLimit: 1, pruneBudget: 'unlimited' })

async function cycle(env: SimPve, manifests: Manifest[], over = {}) {
  const p = { ...pol, ...over }
  const { plan, report } = await reconcile({
    desired: desired(...manifests),
    reader: env.client,
    writer: env.client,
    policy: p,
    execute: { confirmAttempts: 1, confirmDelayMs: 0 },
  })
  return {
    plan,
    report,
    next: (await reconcile({ desired: desired(...manifests), reader: env.client, policy: p })).plan,
  }
}

const web = (vmid: number) => vm(`web-${vmid}`, vmid, { state: 'stopped' })

it('remove_vmid_from_backup_jobs: an owned job that names only the pruned guest is deleted first, then the guest', async () => {
  const env = simPve({ taskDurationMs: 5 })
  try {
    const job = backupJob('solo', { selection: { vmids: [101] } })
    await cycle(env, [web(101), web(102), job, backupJob('both', { selection: { vmids: [101, 102] } })])
    // git drops guest 101 and the job that backs only it up; `both` stays declared with guest 102 alone
    const { plan, report, next } = await cycle(env, [web(102), backupJob('both', { selection: { vmids: [102] } })])
    const del = plan.actions.find((a) => a.type === 'delete' && a.vmid === 101)
    expect(del?.reason).toMatch(/PVE's destroy also deletes backup job solo \(it names no other guest\)/)
    expect(del?.dependsOn).toEqual(['BackupJob/solo#delete'])
    expect(failures(report)).toEqual([])
    expect(next.actions).toEqual([])
    expect(await env.client.get('/cluster/backup')).toEqual([expect.objectContaining({ id: 'both', vmid: '102' })])
  } finally {
    await env.close()
  }
})

it('a hand-made job that names only the guest holds the prune back (purge-effect), and nothing is deleted', async () => {
  const env = simPve({ taskDurationMs: 5 })
  try {
    await cycle(env, [web(101), web(102)])
    await env.client.request('POST', '/cluster/backup', {
      params: { id: 'admins', schedule: 'daily', storage: 'local', vmid: '101', comment: 'made by hand' },
    })
    const { plan, report } = await cycle(env, [web(102)])
    expect(plan.actions).toEqual([])
    expect(plan.anomalies.map((a) => [a.code, a.address])).toEqual([['purge-effect', 'VM/pve1/101(web-101)']])
    expect(plan.anomalies[0]?.message).toMatch(/would delete backup job admins, which ProxOps does not own/)
    expect(report?.results ?? []).toEqual([])
    expect((await env.client.get('/cluster/backup')) as unknown[]).toHaveLength(1)
  } finally {
    await env.close()
  }
})

it('one budget: a guest whose destroy would delete an owned job waits while that job is over the budget', async () => {
  const env = simPve({ taskDurationMs: 5 })
  try {
    const keep = backupJob('keep', { selection: { vmids: [102] } })
    await cycle(env, [web(101), web(102), keep, backupJob('solo', { selection: { vmids: [101] } })])
    const { plan, report } = await cycle(env, [web(102), keep], { pruneBudget: 0 })
    expect(plan.actions).toEqual([])
    const codes = plan.skips.map((s) => [s.address, s.code])
    expect(codes).toContainEqual(['BackupJob/solo', 'prune-budget'])
    expect(codes).toContainEqual(['VM/pve1/101(web-101)', 'prune-budget'])
    expect(failures(report)).toEqual([])
    // with room for both, one cycle converges
    const both = await cycle(env, [web(102), keep], { pruneBudget: 2 })
    expect(both.plan.actions.map((a) => `${a.type} ${a.address}`)).toEqual([
      'delete BackupJob/solo',
      'delete VM/pve1/101(web-101)',
    ])
    expect(failures(both.report)).toEqual([])
    expect(both.next.actions).toEqual([])
  } finally {
    await env.close()
  }
})

it('HA purge: an owned resource and rule go with the guest; a hand-made rule that names only it holds the prune back', async () => {
  const env = simPve({ taskDurationMs: 5, as: 'root@pam' })
  try {
    const ha = {
      ...web(101),
      spec: { ...web(101).spec, ha: { max_restart: 1, max_relocate: 1, strict: false, nodes: { pve1: 1 } } },
    } as Manifest
    await cycle(env, [ha, web(102)])
    const owned = await cycle(env, [web(102)])
    const del = owned.plan.actions.find((a) => a.type === 'delete')
    expect(del?.reason).toMatch(
      /removes HA resource vm:101 and deletes HA rule proxops-vm-101 \(it names no other resource\)/,
    )
    expect(failures(owned.report)).toEqual([])
    expect(owned.next.actions).toEqual([])
    expect(await env.client.get('/cluster/ha/rules')).toEqual([])

    await cycle(env, [web(103), web(102)])
    await env.client.request('POST', '/cluster/ha/resources', { params: { sid: 'vm:103' } })
    await env.client.request('POST', '/cluster/ha/rules', {
      params: { rule: 'pin', type: 'node-affinity', resources: 'vm:103', nodes: 'pve1' },
    })
    const held = await cycle(env, [web(102)])
    expect(held.plan.actions).toEqual([])
    expect(held.plan.anomalies.map((a) => a.code)).toEqual(['purge-effect'])
    expect(held.plan.anomalies[0]?.message).toMatch(/would delete HA rule pin, which ProxOps does not own/)
  } finally {
    await env.close()
  }
})

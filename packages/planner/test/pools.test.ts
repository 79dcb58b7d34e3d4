/**
 * Pools against the simulator (pve-manager PVE::API2::Pool, qemu-server create_vm / clone_vm with `pool`,
 * remove_vm_access on destroy): create with the guest, move between pools, comment drift, apply-then-plan is
 * empty, and a prune that waits for the guests in the pool and never takes a pool holding someone else's guest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { small, testVm, actionLines, adminCall, cycle, failures, manifest, startEnv, type Env } from './helpers.js'

const vm = (vmid: number, spec: Record<string, unknown> = {}) =>
  testVm(vmid, { state: 'stopped', memory: '512MiB', ...small('1GiB'), networks: undefined, ...spec }, `p${vmid}`)
const pool = (name: string, spec: Record<string, unknown> = {}) => manifest({ kind: 'Pool', metadata: { name }, spec })
const members = async (env: Env, poolid: string) =>
  ((await adminCall(env, 'GET', '/pools', { poolid })) as { members: { vmid?: number }[] }[])[0]!.members.map(
    (m) => m.vmid,
  )
const prune = { pruneBudget: 'unlimited' as const, pruneRatioLimit: 1 }

describe('pools against the simulator', () => {
  let env: Env
  beforeAll(async () => {
    env = await startEnv()
  })
  afterAll(async () => {
    await env?.close()
  })

  it('creates pools and guests in them, moves a guest, fixes the comment, then plans nothing', async () => {
    const desired = [pool('web', { comment: 'front' }), pool('blue', { id: 'web/blue' }), vm(501, { pool: 'web/blue' })]
    const first = await cycle(env, desired)
    expect(actionLines(first.plan)).toEqual(['create Pool/web', 'create Pool/web/blue', 'create VM/pve1/501(p501)'])
    expect(failures(first.report)).toEqual([])
    expect(await members(env, 'web/blue')).toEqual([501])
    expect(actionLines((await cycle(env, desired, { dryRun: true })).plan)).toEqual([])

    // drift by hand: the comment loses its marker and the guest moves away
    await adminCall(env, 'POST', '/pools', { poolid: 'manual' })
    await adminCall(env, 'PUT', '/pools', { poolid: 'web', comment: 'edited' })
    await adminCall(env, 'PUT', '/pools', { poolid: 'manual', vms: '501', 'allow-move': 1 })
    const drift = await cycle(env, desired)
    expect(actionLines(drift.plan)).toEqual(['update Pool/web', 'Pool join VM/pve1/501(p501)'])
    expect(failures(drift.report)).toEqual([])
    expect(await members(env, 'web/blue')).toEqual([501])
    expect((await adminCall(env, 'GET', '/pools', { poolid: 'web' })) as unknown[]).toEqual([
      expect.objectContaining({ comment: 'managed-by=proxops front' }),
    ])
    expect(actionLines((await cycle(env, desired, { dryRun: true })).plan)).toEqual([])
  })

  it('prunes an owned pool after its owned guest; keeps one that holds a guest ProxOps does not own', async () => {
    await adminCall(env, 'POST', '/nodes/pve1/qemu', { vmid: 590, memory: 256, pool: 'manual' })
    const desired = [pool('keep'), vm(502, { pool: 'keep' }), pool('old'), vm(503, { pool: 'old' }), pool('busy')]
    expect(failures((await cycle(env, desired)).report)).toEqual([])
    await adminCall(env, 'PUT', '/pools', { poolid: 'busy', vms: '590', 'allow-move': 1 })

    const after = await cycle(env, [pool('keep'), vm(502, { pool: 'keep' })], { policy: prune })
    expect(actionLines(after.plan)).toEqual([
      'delete VM/pve1/501(p501)',
      'delete VM/pve1/503(p503)',
      'delete Pool/web/blue',
      'delete Pool/old',
      'delete Pool/web',
    ])
    const deps = (address: string) => after.plan.actions.find((a) => a.address === address)?.dependsOn
    expect(deps('Pool/web/blue')).toEqual(['VM/pve1/501(p501)#delete'])
    expect(deps('Pool/web')).toEqual(['Pool/web/blue#delete'])
    expect(after.plan.skips.filter((s) => s.kind === 'Pool').map((s) => [s.code, s.address, s.message])).toEqual([
      ['prune-guard', 'Pool/busy', expect.stringContaining('it contains guest 590, which this plan does not prune')],
      ['untagged', 'Pool/manual', expect.stringContaining('never touched')],
    ])
    expect(failures(after.report)).toEqual([])
    const left = ((await adminCall(env, 'GET', '/pools')) as { poolid: string }[]).map((p) => p.poolid)
    expect(left).toEqual(['busy', 'keep', 'manual'])
    // busy stays while 590 is in it: the plan says so and does not claim convergence
    const next = await cycle(env, [pool('keep'), vm(502, { pool: 'keep' })], { policy: prune, dryRun: true })
    expect(actionLines(next.plan)).toEqual([])
    expect(next.plan.skips.map((s) => [s.code, s.address])).toContainEqual(['prune-guard', 'Pool/busy'])
  })
})

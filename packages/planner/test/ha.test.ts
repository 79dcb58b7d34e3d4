/**
 * spec.ha against the simulator (pve-ha-manager's resources, groups on 8.4 and rules on 9.1, the CRM acting one
 * cycle after a request): create with the guest, power through the requested state, drift, preference change,
 * removal only of what ProxOps marked, and apply-then-plan is empty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apidocForTests } from '@proxops/pve-sim'
import { small, testVm, actionLines, adminCall, cycle, failures, startEnv, type Env } from './helpers.js'

const vm = (vmid: number, spec: Record<string, unknown> = {}) =>
  testVm(vmid, { ...small('4GiB'), networks: undefined, ...spec }, `ha${vmid}`)

const resource = async (env: Env, sid: string) =>
  ((await adminCall(env, 'GET', '/cluster/ha/resources')) as Record<string, unknown>[]).find((r) => r.sid === sid)

describe.each([
  ['9.1', 'rules'],
  ['8.4', 'groups'],
] as const)('spec.ha on PVE %s (node preference as %s)', (version, form) => {
  let env: Env
  const skip = version === '8.4' && !apidocForTests('8.4')
  beforeAll(async () => {
    if (!skip) env = await startEnv({ pveVersion: version, haLagMs: 40 })
  })
  afterAll(async () => {
    await env?.close()
  })

  it.skipIf(skip)('creates the guest stopped, then its resource requests started and the CRM starts it', async () => {
    const desired = [vm(301, { ha: { max_restart: 2, nodes: { pve1: 2, pve2: 1 } } })]
    const first = await cycle(env, desired)
    expect(actionLines(first.plan)).toEqual(['create VM/pve1/301(ha301)', 'HA create VM/pve1/301(ha301)'])
    // the create does not start the guest: its HA resource does (a direct start would be a hastart anyway)
    expect(first.plan.actions[0]!.requests.map((r) => r.call)).toEqual(['createGuest'])
    expect(failures(first.report)).toEqual([])
    expect(env.sim.control.guest(301)?.status).toBe('running')
    expect(await resource(env, 'vm:301')).toMatchObject({
      state: 'started',
      max_restart: 2,
      comment: 'proxops: VM/ha301',
      ...(form === 'groups' ? { group: 'proxops-vm-301' } : {}),
    })
    const prefs = (await adminCall(env, 'GET', `/cluster/ha/${form}`)) as Record<string, unknown>[]
    expect(prefs.map((p) => [p.group ?? p.rule, p.nodes])).toEqual([
      [
        'proxops-vm-301',
        form === 'groups' ? expect.stringMatching(/^(pve1:2,pve2:1|pve2:1,pve1:2)$/) : 'pve1:2,pve2:1',
      ],
    ])
    // apply then plan is empty
    expect(actionLines((await cycle(env, desired, { dryRun: true })).plan)).toEqual([])
  })

  it.skipIf(skip)(
    'a declared stop is a requested state, not a shutdown; drift in the resource is corrected',
    async () => {
      const stopped = [vm(301, { state: 'stopped', ha: { max_restart: 2, nodes: { pve1: 2, pve2: 1 } } })]
      const p = await cycle(env, stopped)
      expect(actionLines(p.plan)).toEqual(['HA update VM/pve1/301(ha301)'])
      expect(p.plan.actions[0]!.disruption).toBe('stop')
      expect(p.plan.actions[0]!.requests.map((r) => r.call)).toEqual(['haWrite'])
      expect(failures(p.report)).toEqual([])
      expect(env.sim.control.guest(301)?.status).toBe('stopped')
      // an admin edits the resource: max_restart is owned, so it is put back
      await adminCall(env, 'PUT', '/cluster/ha/resources/vm:301', { max_restart: 5 })
      const drift = await cycle(env, stopped)
      expect(drift.plan.actions[0]?.diffs).toEqual([
        { field: 'spec.ha.max_restart', key: 'max_restart', before: '5', after: '2' },
      ])
      expect((await resource(env, 'vm:301'))?.max_restart).toBe(2)
      // a new preference: the group / rule is rewritten in place
      const moved = [vm(301, { state: 'stopped', ha: { max_restart: 2, nodes: { pve1: 3 }, strict: true } })]
      const pref = await cycle(env, moved)
      expect(failures(pref.report)).toEqual([])
      const prefs = (await adminCall(env, 'GET', `/cluster/ha/${form}`)) as Record<string, unknown>[]
      expect(prefs.map((x) => [x.nodes, x.restricted ?? x.strict])).toEqual([['pve1:3', 1]])
      expect(actionLines((await cycle(env, moved, { dryRun: true })).plan)).toEqual([])
    },
  )

  it.skipIf(skip)(
    'spec.ha removed: the owned resource and preference go (within the budget); an unowned one stays',
    async () => {
      const plain = [vm(301, { state: 'stopped' })]
      const none = await cycle(env, plain, { policy: { pruneBudget: 0 } })
      expect(actionLines(none.plan)).toEqual([])
      expect(none.plan.skips.map((s) => s.code)).toEqual(['prune-budget'])
      const removed = await cycle(env, plain)
      expect(actionLines(removed.plan)).toEqual(['HA delete VM/pve1/301(ha301)'])
      expect(failures(removed.report)).toEqual([])
      expect(await resource(env, 'vm:301')).toBeUndefined()
      expect(await adminCall(env, 'GET', `/cluster/ha/${form}`)).toEqual([])
      // an admin's own resource on a declared guest is never removed
      await adminCall(env, 'POST', '/cluster/ha/resources', { sid: 'vm:301', state: 'stopped', comment: 'ops team' })
      expect(actionLines((await cycle(env, plain, { dryRun: true })).plan)).toEqual([])
    },
  )
})

/**
 * TemplateVM and TemplateCT lifecycles against the simulator: create + mark, idempotent,
 * no power verbs, drift corrected, mark-template over a plain guest, anomaly for a VM desired over a
 * template, and prune.
 */
import { describe, expect, it } from 'vitest'
import { useEnv, actionLines, cycle, failures, manifest } from './helpers.js'

const env = useEnv()

const ctt = manifest({
  kind: 'CTTemplate',
  metadata: { name: 'debian' },
  spec: {
    nodes: ['pve1'],
    storage: 'local',
    filename: 'debian-12.tar.zst',
    url: 'https://images.example/debian-12.tar.zst',
  },
})

const tct = (vmid: number, memory = '512MiB', kind = 'TemplateCT') =>
  manifest({
    kind,
    metadata: { name: `tct${vmid}` },
    spec: {
      node: 'pve1',
      vmid,
      template: 'debian',
      memory,
      cpu: { cores: 1 },
      root: { storage: 'local-lvm', size: '4GiB' },
      networks: [{ bridge: 'vmbr0' }],
    },
  })

const tvm = (vmid: number, kind = 'TemplateVM', memory = '1GiB') =>
  manifest({
    kind,
    metadata: { name: `tvm${vmid}` },
    spec: {
      node: 'pve2',
      vmid,
      memory,
      cpu: { type: 'host', cores: 1 },
      disks: [{ storage: 'local-lvm', size: '4GiB' }],
      networks: [{ bridge: 'vmbr0' }],
    },
  })

const powerTypes = ['start', 'stop', 'restart', 'shutdown-then-update']

describe('template kinds (simulator)', () => {
  it('TemplateCT: creates and marks, stays idempotent without power verbs, corrects drift, prunes (E2ETemplateCTCreateMarksAndIsIdempotent)', async () => {
    const desired = [ctt, tct(800)]
    const first = await cycle(env, desired)
    expect(failures(first.report)).toEqual([])
    expect(actionLines(first.plan)).toEqual([
      'download CTTemplate/pve1/local/debian-12.tar.zst',
      'create TemplateCT/pve1/800(tct800)',
    ])
    const g = env.sim.control.guest(800)!
    expect(g).toMatchObject({ type: 'lxc', status: 'stopped' })
    expect(g.config.template).toBe('1')
    expect(g.config.tags).toBe('proxops')
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    env.sim.control.driftSet(800, 'memory', '1024')
    const drift = await cycle(env, desired)
    expect(drift.plan.actions.map((a) => a.type).filter((t) => powerTypes.includes(t))).toEqual([])
    expect(failures(drift.report)).toEqual([])
    expect(env.sim.control.guest(800)!.config.memory).toBe('512')
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    const pruned = await cycle(env, [ctt], { policy: { allowEmpty: ['TemplateCT'], pruneRatioLimit: 1 } })
    expect(pruned.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 800'])
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(800)).toBeUndefined()
  })

  it('TemplateVM desired over a plain tagged VM marks it; a VM desired over a template is an anomaly (E2E_VMDesiredAgainstLiveNonTemplateMarksIt, E2E_VMDesiredButPVEIsTemplateSurfacesAnomaly)', async () => {
    expect(failures((await cycle(env, [tvm(810, 'VM')], { policy: { pruneBudget: 0 } })).report)).toEqual([])
    expect(env.sim.control.guest(810)!.status).toBe('running')
    const marked = await cycle(env, [tvm(810)], { policy: { pruneBudget: 0 } })
    expect(marked.plan.actions.map((a) => a.type)).toContain('mark-template')
    expect(failures(marked.report)).toEqual([])
    expect(env.sim.control.guest(810)).toMatchObject({
      status: 'stopped',
      config: expect.objectContaining({ template: '1' }),
    })
    expect((await cycle(env, [tvm(810)], { policy: { pruneBudget: 0 }, dryRun: true })).plan.actions).toEqual([])

    const wrongKind = await cycle(env, [tvm(810, 'VM')], { policy: { pruneBudget: 0 }, dryRun: true })
    expect(wrongKind.plan.actions.filter((a) => a.vmid === 810)).toEqual([])
    expect(wrongKind.plan.anomalies.map((a) => a.code)).toContain('kind-mismatch')
    expect(wrongKind.plan.anomalies.find((a) => a.code === 'kind-mismatch')!.message).toMatch(/template/i)

    const pruned = await cycle(env, [], { policy: { allowEmpty: ['TemplateVM', 'VM'], pruneRatioLimit: 1 } })
    expect(pruned.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 810'])
    expect(pruned.plan.actions[0]!.requests.map((r) => r.call)).toEqual(['deleteGuest'])
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(810)).toBeUndefined()
  })
})

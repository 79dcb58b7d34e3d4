import { describe, expect, it } from 'vitest'
import type { Report } from '@proxops/planner'
import { cycleResult, objectStates } from './status-model.js'
import { fixturePlan } from './render/fixtures.test-support.js'
import { paint } from './render/color.js'
import { renderStatus } from './render/status-text.js'
import { cycle } from './daemon/status-page.test-support.js'

const desired = [
  { kind: 'VM', name: 'web', node: 'pve1', vmid: 100, addresses: ['VM/pve1/100(web)'] },
  { kind: 'VM', name: 'db', node: 'pve2', vmid: 101, addresses: ['VM/pve2/101(db)'] },
  { kind: 'VM', name: 'idle', node: 'pve1', vmid: 105, addresses: ['VM/pve1/105(idle)'] },
]

function report(statuses: Record<string, 'ok' | 'failed' | 'skipped'>): Report {
  const plan = fixturePlan()
  const results = plan.actions.map((a) => ({
    id: a.id,
    address: a.address,
    kind: a.kind,
    type: a.type,
    node: a.node,
    status: statuses[a.id] ?? 'ok',
    ...(statuses[a.id] === 'failed' ? { error: 'boom' } : {}),
    ...(statuses[a.id] === 'skipped' ? { skip: { code: 'cancelled' as never, reason: 'cancelled' } } : {}),
    tasks: [],
    durationMs: 10,
  }))
  const failed = results.filter((r) => r.status === 'failed').length
  const skipped = results.filter((r) => r.status === 'skipped').length
  return {
    cluster: 'homelab',
    results,
    summary: { actions: results.length, ok: results.length - failed - skipped, failed, skipped },
    cancelled: false,
    complete: failed + skipped === 0,
  }
}

describe('objectStates', () => {
  it('dry run: drift for planned objects, converged for the rest, prunes listed by address', () => {
    const states = objectStates('homelab', desired, fixturePlan())
    expect(states.map((s) => [s.kind, s.name, s.state])).toEqual([
      ['LXC', 'LXC/pve3/300', 'drift'],
      ['VM', 'db', 'drift'],
      ['VM', 'idle', 'converged'],
      ['VM', 'web', 'drift'],
    ])
    expect(cycleResult(fixturePlan())).toBe('drift')
    // no actions is not converged while the fixture's anomaly and pending change stand
    expect(cycleResult({ ...fixturePlan(), actions: [] })).toBe('blocked')
    expect(cycleResult({ ...fixturePlan(), actions: [], anomalies: [], pending: [] })).toBe('converged')
  })

  it("a guest's HA, firewall and pool actions are the guest's row, labelled by their kind", () => {
    const web = fixturePlan().actions[0]!
    const ha = { ...web, id: `${web.address}#ha-create`, kind: 'HA' as const }
    const fw = { ...web, id: `${web.address}#firewall`, kind: 'GuestFirewall' as const, type: 'update' as const }
    const states = objectStates('homelab', desired, { ...fixturePlan(), actions: [web, ha, fw] })
    expect(states.find((s) => s.name === 'web')).toMatchObject({
      kind: 'VM',
      state: 'drift',
      action: 'create+HA create+GuestFirewall update',
    })
    expect(states.map((s) => s.kind)).not.toContain('HA')
  })

  it('objects that cannot be converged this cycle are blocked, with the reason', () => {
    const plan = {
      ...fixturePlan([]),
      anomalies: [],
      pending: [],
      skips: [
        {
          code: 'node-offline' as const,
          address: 'VM/pve2/101(db)',
          kind: 'VM' as const,
          node: 'pve2',
          vmid: 101,
          message: 'node pve2 is offline',
        },
        {
          code: 'prune-budget' as const,
          address: 'VM/pve1/120(old)',
          kind: 'VM' as const,
          node: 'pve1',
          vmid: 120,
          message: 'prune budget spent',
        },
      ],
    }
    const states = objectStates('homelab', desired, plan)
    expect(states.find((s) => s.name === 'db')).toMatchObject({
      state: 'blocked',
      blocked: 'node-offline',
      reason: 'node pve2 is offline',
    })
    expect(states.find((s) => s.name === 'VM/pve1/120(old)')).toMatchObject({
      state: 'blocked',
      blocked: 'prune-deferred',
    })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(cycleResult(plan)).toBe('blocked')
  })

  it('after execute: converged, failed with the error, pruned; incomplete when anything failed', () => {
    const r = report({ 'VM/pve2/101(db)#shutdown-then-update': 'failed' })
    const states = objectStates('homelab', desired, fixturePlan(), r)
    expect(states.find((s) => s.name === 'db')).toMatchObject({ state: 'failed', error: 'boom' })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(states.find((s) => s.name === 'LXC/pve3/300')?.state).toBe('pruned')
    expect(cycleResult(fixturePlan(), r)).toBe('incomplete')
    // every action ran, yet the anomaly and the pending change remain: blocked, not converged
    expect(cycleResult(fixturePlan(), report({}))).toBe('blocked')
    expect(cycleResult({ ...fixturePlan(), anomalies: [], pending: [] }, report({}))).toBe('converged')
    expect(cycleResult(fixturePlan(), report({ 'VM/pve1/100(web)#create': 'skipped' }))).toBe('incomplete')
  })
})

describe('rows say what the planner says (issue 30, item 5)', () => {
  const cwide = [
    { kind: 'Pool', name: 'web', node: '-', addresses: ['Pool/web-tier'] },
    { kind: 'BackupJob', name: 'nightly', addresses: ['BackupJob/nightly-job'] },
  ]

  it('a Pool or BackupJob with an owned-elsewhere anomaly is blocked, matched by its address, not by its name', () => {
    const plan = {
      ...fixturePlan([]),
      pending: [],
      anomalies: [
        {
          code: 'owned-elsewhere' as const,
          address: 'Pool/web-tier',
          kind: 'Pool' as const,
          message: 'pool web-tier: other',
        },
        {
          code: 'owned-elsewhere' as const,
          address: 'BackupJob/nightly-job',
          kind: 'BackupJob' as const,
          message: 'job nightly-job: other',
        },
      ],
    }
    const states = objectStates('homelab', cwide, plan)
    expect(states.map((s) => [s.kind, s.name, s.state, s.blocked, s.reason])).toEqual([
      ['BackupJob', 'nightly', 'blocked', 'anomaly', 'job nightly-job: other'],
      ['Pool', 'web', 'blocked', 'anomaly', 'pool web-tier: other'],
    ])
    expect(cycleResult(plan)).toBe('blocked')
  })

  it('an object whose actions all ran stays blocked while the planner reports an anomaly on it', () => {
    const r = report({})
    const states = objectStates('homelab', desired, fixturePlan(), r)
    // the fixture's live-only-slot anomaly on db: the update ran, net1 is still there
    expect(states.find((s) => s.name === 'db')).toMatchObject({
      state: 'blocked',
      blocked: 'anomaly',
      action: 'shutdown-then-update',
    })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
  })

  it('a blocked address no manifest claims gets a row of its own; another guest of the same name is not the object', () => {
    const plan = {
      ...fixturePlan([]),
      anomalies: [],
      pending: [],
      skips: [
        {
          code: 'unknown' as const,
          address: 'VM/pve3/300(web)',
          kind: 'VM' as const,
          node: 'pve3',
          vmid: 300,
          message: 'config unreadable',
        },
      ],
    }
    const states = objectStates('homelab', desired, plan)
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(states.find((s) => s.name === 'VM/pve3/300(web)')).toMatchObject({
      kind: 'VM',
      node: 'pve3',
      vmid: 300,
      state: 'blocked',
      blocked: 'unknown',
    })
  })
})

describe('unmanaged live keys in status', () => {
  // the plan's unmanaged gaps (plan/keys.ts in the planner), as plan() lists them for one guest
  const unmanagedPlan = () => {
    const plan = fixturePlan([])
    return {
      ...plan,
      anomalies: [],
      pending: [],
      gaps: [
        ...plan.gaps,
        {
          address: 'VM/pve2/101(db)',
          field: 'args',
          note: 'unmanaged, ...',
          unmanaged: true as const,
          executes: 'raw arguments',
        },
        { address: 'VM/pve2/101(db)', field: 'cpulimit', note: 'unmanaged: ...', unmanaged: true as const },
        {
          address: 'VM/pve2/101(db)',
          field: 'hookscript',
          note: 'unmanaged, ...',
          unmanaged: true as const,
          executes: 'a hook',
        },
        // a TemplateVM of the same name is another object
        { address: 'TemplateVM/pve1/900(db)', field: 'onboot', note: 'unmanaged: ...', unmanaged: true as const },
      ],
    }
  }

  it('each object lists its unmanaged keys, the executing ones with what they do; still converged', () => {
    const plan = unmanagedPlan()
    const states = objectStates('homelab', desired, plan)
    expect(states.find((s) => s.name === 'db')).toEqual({
      cluster: 'homelab',
      kind: 'VM',
      name: 'db',
      node: 'pve2',
      vmid: 101,
      state: 'converged',
      unmanaged: [
        { key: 'args', executes: 'raw arguments' },
        { key: 'cpulimit' },
        { key: 'hookscript', executes: 'a hook' },
      ],
    })
    // spec.extra's gap is a gap of its own, not an unmanaged key
    expect(states.find((s) => s.name === 'web')?.unmanaged).toBeUndefined()
    expect(cycleResult(plan)).toBe('converged')
  })

  it('the text table prints them under the row: ordinary keys on one line, each executing key called out', () => {
    const plan = unmanagedPlan()
    const objects = objectStates('homelab', desired, plan)
    const text = renderStatus(
      [
        cycle({
          cluster: 'homelab',
          commit: undefined,
          startedAt: '',
          finishedAt: '',
          mode: 'dry-run',
          result: cycleResult(plan),
          unmanaged: 4,
          objects,
        }),
      ],
      paint(false),
    )
    const lines = text.split('\n')
    expect(lines[1]).toMatch(/ blocked=0 unmanaged=4$/)
    const row = lines.findIndex((l) => /^ {2}VM +db +101 +converged$/.test(l))
    expect(lines.slice(row + 1, row + 4)).toEqual([
      '      unmanaged (set on PVE, not in git): cpulimit',
      '      UNMANAGED, EXECUTES: args: raw arguments; review it',
      '      UNMANAGED, EXECUTES: hookscript: a hook; review it',
    ])
    expect(lines[row + 4]).toMatch(/^ {2}VM +idle /)
  })
})

describe('a guest HA placed on another node than its spec.node', () => {
  it('is converged, with the node it is on and why, in the row and its text', () => {
    const plan = {
      ...fixturePlan([]),
      anomalies: [],
      pending: [],
      gaps: [
        {
          address: 'VM/pve2/101(db)',
          field: 'spec.node',
          note: 'on node pve1, where HA placed it (vm:101)',
          placedOn: 'pve1',
        },
      ],
    }
    const db = objectStates('homelab', desired, plan).find((s) => s.name === 'db')
    expect(db).toMatchObject({
      state: 'converged',
      placedOn: 'pve1',
      reason: 'on node pve1, where HA placed it (vm:101)',
    })
    const web = objectStates('homelab', desired, plan).find((s) => s.name === 'web')
    expect(web?.placedOn).toBeUndefined()
    const objects = objectStates('homelab', desired, plan)
    const homelab = cycle({
      cluster: 'homelab',
      commit: undefined,
      startedAt: '',
      finishedAt: '',
      mode: 'dry-run',
      result: cycleResult(plan),
      objects,
    })
    expect(homelab.result).toBe('converged')
    expect(renderStatus([homelab], paint(false))).toMatch(
      /VM +db +101 +converged\n {6}on node pve1: on node pve1, where HA placed it \(vm:101\)\n/,
    )
  })
})

/** Status documents for the status page's tests: one cluster cycle of each kind, every row state in one. */
import type { ClusterCycle, ObjectStatus } from '../status-model.js'
import { CycleHistory } from './history.js'
import { statusDocument, type DaemonView, type StatusDocument } from './status-document.js'

export const COMMIT = '0123456789abcdef0123456789abcdef01234567'

export function cycle(over: Partial<ClusterCycle> = {}): ClusterCycle {
  return {
    cluster: 'lab',
    commit: COMMIT,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:02.500Z',
    mode: 'apply',
    result: 'converged',
    actions: { planned: 0, ok: 0, failed: 0, skipped: 0 },
    pruned: 0,
    pruneDeferred: 0,
    anomalies: 0,
    skips: 0,
    unmanaged: 0,
    blocked: 0,
    blockedByReason: {},
    desiredStale: false,
    objects: [],
    plannedActions: [],
    findings: [],
    ...over,
  }
}

export const row = (o: Partial<ObjectStatus> & Pick<ObjectStatus, 'name' | 'state'>): ObjectStatus => ({
  cluster: 'lab',
  kind: 'VM',
  node: 'pve1',
  ...o,
})

/** a daemon that ran `cycles` of each cluster, the last one of each kept */
export function documentOf(cycles: readonly ClusterCycle[], over: Partial<DaemonView> = {}): StatusDocument {
  const history = new CycleHistory()
  for (const c of cycles) history.record(c)
  const last = new Map(cycles.map((c) => [c.cluster, c]))
  return statusDocument(
    {
      clusters: [...new Set(cycles.map((c) => c.cluster))].sort(),
      pollIntervalMs: 30_000,
      startedAt: Date.parse('2026-01-01T00:00:00.000Z'),
      commit: COMMIT,
      desiredStale: false,
      cycles: last,
      lastSuccess: new Map([...last.keys()].map((c) => [c, Date.parse('2026-01-01T00:00:02.500Z')])),
      history: (c) => history.of(c),
      stopping: false,
      ...over,
    },
    Date.parse('2026-01-01T00:00:12.500Z'),
  )
}

/** every state a row can show, with a plan and findings */
export function mixedCycle(secret = 'no-secret-here'): ClusterCycle {
  return cycle({
    result: 'incomplete',
    actions: { planned: 2, ok: 1, failed: 1, skipped: 0 },
    anomalies: 1,
    blocked: 2,
    blockedByReason: { anomaly: 1, unknown: 1 },
    objects: [
      row({ name: 'web', vmid: 100, state: 'converged' }),
      row({ name: 'app', vmid: 101, state: 'converged', action: 'update', reason: 'memory' }),
      row({ name: 'db', vmid: 102, state: 'failed', action: 'update', error: `PVE 500: ${secret} refused` }),
      row({ name: 'cache', vmid: 103, state: 'blocked', blocked: 'unknown', reason: 'config unreadable' }),
      row({
        kind: 'Pool',
        name: 'web-tier',
        node: '-',
        state: 'blocked',
        blocked: 'anomaly',
        reason: "pool web-tier carries another cluster entry's marker",
        unmanaged: [{ key: 'hookscript', executes: 'a hook script' }, { key: 'cpulimit' }],
      }),
    ],
    plannedActions: [
      {
        address: 'VM/pve1/101(app)',
        kind: 'VM',
        type: 'update',
        disruption: 'hotplug',
        reason: 'drift (memory)',
        result: 'ok',
      },
      {
        address: 'VM/pve1/102(db)',
        kind: 'VM',
        type: 'update',
        disruption: 'reboot',
        reason: 'drift (cores)',
        result: 'failed',
        detail: `PVE 500: ${secret} refused`,
      },
    ],
    findings: [
      { type: 'anomaly', code: 'owned-elsewhere', address: 'Pool/web-tier', message: `marker of edge ${secret}` },
      { type: 'gap', code: 'spec.extra', address: 'VM/pve1/100(web)', message: 'sent on create only' },
    ],
  })
}

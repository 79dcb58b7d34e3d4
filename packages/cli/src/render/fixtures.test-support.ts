/** A small hand-written plan that exercises every section of the renderers. */
import { PLAN_FORMAT_VERSION, type Action, type Plan } from '@proxops/planner'

const base = { tier: 0 as const, level: 0, dependsOn: [], requires: [], requests: [] }

export const ACTIONS: Action[] = [
  {
    ...base,
    id: 'VM/pve1/100(web)#create',
    address: 'VM/pve1/100(web)',
    kind: 'VM',
    name: 'web',
    node: 'pve1',
    vmid: 100,
    type: 'create',
    reason: 'VM/web: not on PVE',
    diffs: [
      { field: 'spec.memory', key: 'memory', after: '2048' },
      { field: 'spec.cloud-init-data.ci-password-ref', key: 'cipassword', after: '(sensitive)' },
    ],
    disruption: 'none',
  },
  {
    ...base,
    id: 'VM/pve2/101(db)#shutdown-then-update',
    address: 'VM/pve2/101(db)',
    kind: 'VM',
    name: 'db',
    node: 'pve2',
    vmid: 101,
    type: 'shutdown-then-update',
    reason: 'VM/db: config drift (memory, tags)',
    diffs: [
      { field: 'spec.memory', key: 'memory', before: '1024', after: '4096' },
      { field: 'spec.description', key: 'description', before: 'a | b' },
    ],
    disruption: 'reboot',
    digest: 'abc',
  },
  {
    ...base,
    tier: 9,
    id: 'LXC/pve3/300#delete',
    address: 'LXC/pve3/300',
    kind: 'LXC',
    node: 'pve3',
    vmid: 300,
    type: 'delete',
    reason: 'owned by proxops, not in git',
    diffs: [],
    disruption: 'stop',
  },
]

export function fixturePlan(actions: readonly Action[] = ACTIONS): Plan {
  return {
    format_version: PLAN_FORMAT_VERSION,
    cluster: 'homelab',
    commit: '0123456789abcdef0123456789abcdef01234567',
    policy: { pruneBudget: 3, disruption: 'allow', ownershipTag: 'proxops' },
    actions,
    anomalies: [
      {
        code: 'live-only-slot',
        address: 'VM/pve2/101(db)',
        kind: 'VM',
        field: 'net1',
        message: 'net1 exists on PVE but not in git',
      },
    ],
    skips: [
      {
        code: 'untagged',
        address: 'VM/pve1/150(manual)',
        kind: 'VM',
        node: 'pve1',
        vmid: 150,
        message: 'no proxops tag',
      },
    ],
    pending: [{ address: 'VM/pve2/101(db)', keys: ['cores'], message: 'applied at next restart' }],
    gaps: [{ address: 'VM/pve1/100(web)', field: 'spec.extra', note: 'sent on create only' }],
    summary: {
      create: 1,
      update: 1,
      resize: 0,
      power: 0,
      markTemplate: 0,
      snapshot: 0,
      delete: 1,
      download: 0,
      anomalies: 1,
      skips: 1,
      pending: 1,
      actions: actions.length,
    },
  }
}

/**
 * What points at a guest reaches only guests this entry manages (managed.ts): a declared guest whose vmid is held
 * by another entry's guest, or by an untagged guest of another name, gets no HA resource, firewall write or pool
 * membership, and a backup job may not select it; the guest kind's verdict is the one every kind follows.
 */
import { fc, test } from '@fast-check/vitest'
import { expect } from 'vitest'
import { backupJob, desired, inventory, orphan, policy, pool, vm } from '../fixtures.test.helpers.js'
import type { LivePool } from '../inventory.js'
import { plan } from '../plan/plan.js'

const ha = { max_restart: 1, max_relocate: 1, strict: false }
const firewall = {
  enable: true,
  rules: [{ direction: 'in', action: 'ACCEPT', proto: 'tcp', dport: '22', enable: true }],
  ipsets: [],
  aliases: [],
}
const web: LivePool = { poolid: 'web', comment: 'managed-by=proxops.a', vmids: [], storages: [] }

const holder = fc.constantFrom('none', 'theirs', 'untagged-other-name')

test.prop([fc.array(holder, { minLength: 1, maxLength: 6 })], { numRuns: 100 })(
  "a declared guest whose vmid another entry's or an untagged guest holds is reached by nothing this entry writes",
  (holders) => {
    const vmids = holders.map((_, i) => 100 + i)
    const manifests = vmids.map((vmid) =>
      vm(`g${vmid}`, vmid, { ha, firewall, pool: 'web', state: 'stopped' } as never),
    )
    const live = holders.flatMap((h, i) =>
      h === 'theirs'
        ? [orphan(100 + i, 'proxops;proxops.b')]
        : h === 'untagged-other-name'
          ? [orphan(100 + i, '')]
          : [],
    )
    const foreign = new Set(vmids.filter((_, i) => holders[i] !== 'none'))
    const job = backupJob('nightly', { selection: { vmids } })
    const p = plan(
      desired(...manifests, pool('web'), job),
      inventory(live, { pools: { known: [web] } }),
      policy({ clusterEntry: 'a' }),
    )
    for (const a of p.actions) if (a.vmid !== undefined) expect(foreign.has(a.vmid), `${a.id}`).toBe(false)
    const jobWritten = p.actions.some((a) => a.kind === 'BackupJob')
    expect(jobWritten).toBe(foreign.size === 0)
    if (foreign.size > 0)
      for (const vmid of foreign)
        expect(p.anomalies.find((a) => a.code === 'unmanaged-selection')?.message).toContain(`${vmid} (`)
  },
)

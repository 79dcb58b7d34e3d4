/**
 * What PVE changes beside the guest when ProxOps destroys it (every prune sends `purge=1`, docs/safety.md):
 *   - pve-access-control `remove_vm_access`: the ACLs on `/vms/<vmid>` and the guest's pool membership (on
 *     every destroy);
 *   - pve-guest-common `PVE::VZDump::Plugin::remove_vmid_from_backup_jobs` (purge): the vmid leaves every backup
 *     job's `vmid` list (a job left with none is deleted) or else its `exclude` list;
 *   - the HA resource goes (`purge`), and pve-ha-manager takes the sid out of every rule, deleting a rule left
 *     empty.
 * The plan expects these: the prune's reason lists them (but the ACLs, which every destroy removes and ProxOps
 * does not manage), a job PVE would delete is deleted by the plan first
 * (within the budget), and a prune whose purge would delete an object this entry does not own is held back
 * (ProxOps deletes only what it owns). Pure.
 */
import { splitList, type HaItem } from '@proxops/pve-client/wire'
import type { LiveBackupJob, LiveGuest, LiveInventory } from '../../inventory.js'
import type { Policy } from '../../plan-types.js'
import { commentOwner } from '../../kit/ownership.js'
import { backupAddress } from '../../kit/draft.js'
import { haOwned, haSid } from '../ha/plan.js'

export interface DestroyEffects {
  /** what PVE changes, for the prune's reason, in a fixed order */
  notes: string[]
  /** backup jobs PVE deletes with the guest that this entry owns and git no longer declares (their delete ids) */
  ownedJobDeletes: string[]
  /** why the prune is held back: PVE would delete something this entry does not own, or that git declares */
  refusals: string[]
}

export function destroyEffects(
  g: LiveGuest,
  live: Pick<LiveInventory, 'backupJobs' | 'ha' | 'pools'>,
  policy: Policy,
  declaredJobs: ReadonlySet<string>,
): DestroyEffects {
  const out: DestroyEffects = { notes: [], ownedJobDeletes: [], refusals: [] }
  const vmid = String(g.vmid)
  if ('known' in live.backupJobs) {
    const edited: string[] = []
    for (const job of live.backupJobs.known) {
      const list = job.values.vmid !== undefined ? 'vmid' : job.values.exclude !== undefined ? 'exclude' : undefined
      if (list === undefined || !splitList(job.values[list]).includes(vmid)) continue
      if (list === 'exclude' || splitList(job.values.vmid).some((v) => v !== vmid)) {
        edited.push(job.id)
        continue
      }
      out.notes.push(`deletes backup job ${job.id} (it names no other guest)`)
      const owner = jobOwner(job, policy)
      if (owner !== 'self')
        out.refusals.push(
          `destroying it would delete backup job ${job.id}, which ${owner === 'other' ? 'another cluster entry owns' : 'ProxOps does not own'} (remove_vmid_from_backup_jobs: the job names no other guest); add a guest to the job or delete it by hand`,
        )
      else if (declaredJobs.has(job.id))
        out.refusals.push(
          `destroying it would delete backup job ${job.id}, which git declares (it names no other guest)`,
        )
      else out.ownedJobDeletes.push(`${backupAddress(job.id)}#delete`)
    }
    if (edited.length > 0)
      out.notes.push(`removes it from backup job${edited.length > 1 ? 's' : ''} ${edited.join(', ')}`)
  }
  if ('known' in live.ha) {
    const sid = haSid(g.type, g.vmid)
    if (live.ha.known.resources.some((r) => r.sid === sid)) out.notes.push(`removes HA resource ${sid}`)
    for (const rule of live.ha.known.preferences) {
      if (rule.rule === undefined || !emptiedBy(rule, sid)) continue
      out.notes.push(`deletes HA rule ${rule.rule} (it names no other resource)`)
      if (!haOwned(rule, policy.ownershipTag))
        out.refusals.push(
          `destroying it would delete HA rule ${rule.rule}, which ProxOps does not own (it names no other resource); remove ${sid} from it or delete it by hand`,
        )
    }
  }
  if ('known' in live.pools) {
    const pool = live.pools.known.find((p) => p.vmids.includes(g.vmid))
    if (pool) out.notes.push(`removes it from pool ${pool.poolid}`)
  }
  return out
}

const jobOwner = (job: LiveBackupJob, policy: Policy) => commentOwner(job.values.comment, policy)

/** a 9.x rule whose resources are this sid alone (pve-ha-manager deletes it when the resource goes) */
const emptiedBy = (rule: HaItem, sid: string): boolean => {
  const resources = splitList(rule.resources)
  return resources.length > 0 && resources.every((r) => r === sid)
}

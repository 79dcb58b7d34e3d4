/**
 * The object kinds, in the order plan() runs them: the guest kind first (the kinds that live on a guest plan
 * against what it planned), then the others; a guest's firewall, HA resource and pool membership are written
 * after its own actions in this order. Adding a kind is a folder under `kinds/` and a line here.
 */
import { planArtifacts } from './artifact/plan.js'
import { planBackupJobs } from './backup-job/plan.js'
import { planFirewalls } from './firewall/plan.js'
import { planGuests } from './guest/plan.js'
import { planHa } from './ha/plan.js'
import type { Kind } from './kind.js'
import type { Runners } from '../execute/task-call.js'
import { artifactRunners } from './artifact/run.js'
import { backupJobRunners } from './backup-job/run.js'
import { firewallRunners } from './firewall/run.js'
import { guestRunners } from './guest/run.js'
import { haRunners } from './ha/run.js'
import { poolRunners } from './pool/run.js'
import type { Action } from '../plan-types.js'
import { confirmArtifact } from './artifact/confirm.js'
import { readStorages } from './artifact/read.js'
import { confirmBackupJob } from './backup-job/confirm.js'
import { readBackupJobsOf } from './backup-job/read.js'
import { confirmFirewall } from './firewall/confirm.js'
import { readFirewallsOf } from './firewall/read.js'
import { confirmGuest } from './guest/confirm.js'
import { readGuests } from './guest/read.js'
import { confirmHa } from './ha/confirm.js'
import { readHaOf } from './ha/read.js'
import { confirmPool } from './pool/confirm.js'
import { readPoolsOf } from './pool/read.js'
import { planPools } from './pool/plan.js'

export const KINDS: readonly Kind[] = [
  { name: 'guest', read: readGuests, plan: planGuests, run: guestRunners, confirm: confirmGuest },
  { name: 'artifact', read: readStorages, plan: planArtifacts, run: artifactRunners, confirm: confirmArtifact },
  { name: 'firewall', read: readFirewallsOf, plan: planFirewalls, run: firewallRunners, confirm: confirmFirewall },
  { name: 'ha', read: readHaOf, plan: planHa, run: haRunners, confirm: confirmHa },
  { name: 'pool', read: readPoolsOf, plan: planPools, run: poolRunners, confirm: confirmPool },
  {
    name: 'backup-job',
    read: readBackupJobsOf,
    plan: planBackupJobs,
    run: backupJobRunners,
    confirm: confirmBackupJob,
  },
]

const byName = new Map(KINDS.map((k) => [k.name, k]))

/** The kind an action belongs to: the one that planned it (its confirm reads the object back). */
export function kindOf(action: Pick<Action, 'kind' | 'type'>): Kind {
  const name =
    action.type === 'ha-create' || action.type === 'ha-update' || action.type === 'ha-delete'
      ? 'ha'
      : action.type === 'firewall'
        ? 'firewall'
        : action.type === 'pool' || action.kind === 'Pool'
          ? 'pool'
          : action.kind === 'BackupJob'
            ? 'backup-job'
            : action.kind === 'ISO' || action.kind === 'CTTemplate' || action.kind === 'DiskImage'
              ? 'artifact'
              : 'guest'
  return byName.get(name) as Kind
}

export const confirmOf = (action: Action): Kind['confirm'] => kindOf(action).confirm

/** Every request's runner, from the kind that sends it (each call belongs to one kind). */
export const RUNNERS: Runners = Object.assign({}, ...KINDS.map((k) => k.run)) as Runners

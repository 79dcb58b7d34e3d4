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
import { planPools } from './pool/plan.js'

export const KINDS: readonly Kind[] = [
  { name: 'guest', plan: planGuests },
  { name: 'artifact', plan: planArtifacts },
  { name: 'firewall', plan: planFirewalls },
  { name: 'ha', plan: planHa },
  { name: 'pool', plan: planPools },
  { name: 'backup-job', plan: planBackupJobs },
]

import { idIdentity, type Identity } from '../contract.js'
import type { BackupJobManifest } from './types.js'

/** A BackupJob declares the job of its `spec.id` in `/cluster/backup` (jobs.cfg's `vzdump:` sections). */
export function backupJobIdentity(m: BackupJobManifest): Identity[] {
  return idIdentity(
    `backup-job:${m.spec.id}`,
    `PVE backup job id ${JSON.stringify(m.spec.id)}`,
    m,
    'backup-job-id-duplicate',
  )
}

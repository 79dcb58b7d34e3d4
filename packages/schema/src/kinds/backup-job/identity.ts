import type { Identity } from '../contract.js'
import type { BackupJobManifest } from './types.js'

/** A BackupJob declares the job of its `spec.id` in `/cluster/backup` (jobs.cfg's `vzdump:` sections). */
export function backupJobIdentity(m: BackupJobManifest): Identity[] {
  return [
    {
      key: `backup-job:${m.spec.id}`,
      label: `PVE backup job id ${JSON.stringify(m.spec.id)}`,
      path: m.spec.id === m.metadata.name ? ['metadata', 'name'] : ['spec', 'id'],
      code: 'backup-job-id-duplicate',
    },
  ]
}
